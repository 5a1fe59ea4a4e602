"""`twinlab analyze`'s options are checked in one place, once per run: the command turns its flags, as typed,
into an Options and checks nothing itself; analysis/options.py `check_options` checks them (and reads the
command line's text forms) for the command, `api.report` and the pipeline alike. Each check the command used
to make on its own still refuses the same bad value: exit 2, one message naming the flag, no traceback,
nothing written, no data read."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from analysis import api, options
from analysis.options import API, COMMAND_LINE, Options, check_options
from tests.project.test_shared_checks import cli
from tests.support import design_synthetic as ds

ROOT = Path(__file__).resolve().parents[2]
F = "correct ~ head_number + (1 | subject)"


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("checked_once")
    ds.agreement_judgments(root / "humans", n_subjects=4, n_items=8)
    return root / "humans"


@pytest.fixture()
def calls(monkeypatch) -> list[Options]:
    """Every call of check_options in this test, wherever a module bound the name (the API, the pipeline)."""
    seen: list[Options] = []
    real = options.check_options

    def counting(opt: Options, *args, **kwargs) -> Options:
        seen.append(opt)
        return real(opt, *args, **kwargs)

    for module in [m for name, m in list(sys.modules.items()) if name.split(".")[0] == "analysis"]:
        if getattr(module, "check_options", None) is real:
            monkeypatch.setattr(module, "check_options", counting)
    return seen


def test_analyze_checks_its_options_once(data, tmp_path, calls):
    code, said = cli("analyze", str(data), "--out", str(tmp_path / "o"), "--no-mixed", "--n-boot", "10",
                     "--by", "head_number, attractor_number", "--rt-trim", "150,2500")
    assert code == 0, said
    assert len(calls) == 1 and calls[0].by == ["head_number", "attractor_number"]
    assert calls[0].rt_trim == (150.0, 2500.0)


def test_the_api_checks_what_it_is_given_once(data, tmp_path, calls):
    from analysis.load import load
    from analysis.pipeline import run_analysis, run_loaded

    api.report(data, tmp_path / "paths", mixed=False, n_boot=10)
    assert len(calls) == 1
    api.report(api.load_sessions(data), tmp_path / "frame", mixed=False, n_boot=10)
    assert len(calls) == 2
    run_analysis([data], tmp_path / "run", Options(n_boot=10, mixed=False, show_progress=False))
    assert len(calls) == 3
    df, info = load([data])
    run_loaded(df, info, tmp_path / "loaded", Options(n_boot=10, mixed=False, show_progress=False))
    assert len(calls) == 4
    with pytest.raises(api.InputError, match=r"rt_trim \(--rt-trim\)"):
        api.report(data, tmp_path / "bad", rt_trim=(3000, 200))
    assert len(calls) == 5 and not (tmp_path / "bad").exists()


def test_the_command_lines_text_forms_read_as_the_apis_values():
    typed = check_options(Options(by="a, b", rt_trim="150, 2500", word_rt_range="120,4000", blocks="Test",
                                  gap_pairs=["direct=>meta:question", "x:y"]), COMMAND_LINE)
    given = check_options(Options(by=["a", "b"], rt_trim=(150, 2500), word_rt_range=(120, 4000), blocks="test",
                                  gap_pairs=[("direct", "meta:question"), ("x", "y")]), API)
    assert typed == given and typed.rt_trim == (150.0, 2500.0) and typed.gap_pairs[0] == ("direct", "meta:question")
    assert check_options(Options(by=""), COMMAND_LINE).by == []


@pytest.mark.parametrize("args, said", [
    (["--format", "csv"], "--format must be auto, twinlab or lakretz, not 'csv'"),
    (["--n-boot", "0"], "--n-boot must be from 1 to 100000"),
    (["--n-boot", "1000000000"], "--n-boot must be from 1 to 100000"),
    (["--rejected-rule", "lenient"], "--rejected-rule must be paper or strict, not 'lenient'"),
    (["--focus", "attractor=a,attractor=b"], "--focus 'attractor=a,attractor=b' names factor 'attractor' twice"),
    (["--focus", "PSP"], "--focus: focus 'PSP' must be STRUCTURE:CONDITION"),
    (["--blocks", "some"], "--blocks 'some': use test (the default), training,test or all"),
    (["--by", ","], "--by names no column"),
    (["--by", "head_number,head_number"], "--by names 'head_number' twice (head_number, head_number)"),
    (["--family", "poisson"], "--family must be auto, binomial, gaussian or ordinal, not 'poisson'"),
    (["--region", "verb"], "--region/--word choose the rows of the formula: give a --formula too"),
    (["--formula", F, "--region", "verb", "--word", "2"], "--region and --word: give one of them"),
    (["--formula", F, "--word", "-1"], "--word must be 0 or more, not -1"),
    (["--word-rt-range", "5000,100"], "--word-rt-range '5000,100': give LOW,HIGH in ms"),
    (["--word-rt-range", "100"], "--word-rt-range '100': give LOW,HIGH in ms"),
    (["--formula", F, "--no-mixed"], "--formula is fitted by R (lme4) and --no-mixed means no R"),
    (["--formula", "correct ~ (1 | subject"], "--formula: "),
    (["--model-copies", "merged"], "--model-copies must be merge or subjects, not 'merged'"),
    (["--rt-trim", "3000,200"], "--rt-trim '3000,200': give LOW,HIGH in ms"),
    (["--rt-trim", "200,x"], "--rt-trim '200,x': give LOW,HIGH in ms"),
    (["--rt-sd", "-1"], "--rt-sd must be a finite number >= 0 (0: off), not -1.0"),
    (["--gap", "nothing"], "--gap 'nothing': write LOW=>HIGH"),
    (["--gap", "direct:meta:question"], "--gap 'direct:meta:question': more than one ':'"),
])
def test_each_check_the_command_made_itself_still_refuses(data, tmp_path, monkeypatch, calls, args, said):
    import analysis.pipeline

    def no_load(*a, **k):
        raise AssertionError("the data were read: the option was not refused before any work")

    monkeypatch.setattr(analysis.pipeline, "load", no_load)
    out = tmp_path / "o"
    code, text = cli("analyze", str(data), "--out", str(out), *args)
    assert code == 2 and f"error: {said}" in text, text
    assert "Traceback" not in text and not out.exists() and len(calls) == 1


def test_the_results_folder_is_still_checked_before_any_work(data, tmp_path):
    f = tmp_path / "file"
    f.write_text("x", encoding="utf-8")
    code, text = cli("analyze", str(data), "--out", str(f), "--no-mixed")
    assert code == 2 and f"error: --out {f} is a file, not a folder" in text
    (tmp_path / "earlier").mkdir()
    (tmp_path / "earlier" / "results.json").write_text("{}", encoding="utf-8")
    code, text = cli("analyze", str(data), "--out", str(tmp_path / "earlier"), "--no-mixed")
    assert code == 2 and "holds the results of an earlier analysis; pass --force" in text


def _analyze() -> ast.FunctionDef:
    tree = ast.parse((ROOT / "analysis" / "cli.py").read_text(encoding="utf-8"))
    return next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "analyze")


def test_the_command_checks_nothing_itself():
    tree = ast.parse((ROOT / "analysis" / "cli.py").read_text(encoding="utf-8"))
    assert not [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Assert)]  # never input validation
    fn = _analyze()
    handled = {id(c) for h in ast.walk(fn) if isinstance(h, ast.ExceptHandler) for c in ast.walk(h)}
    fails = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "fail"]
    assert fails and all(id(c) in handled for c in fails)  # it only reports what the API refused
    called = {getattr(n.func, "id", getattr(n.func, "attr", "")) for n in ast.walk(fn) if isinstance(n, ast.Call)}
    assert not {c for c in called if c.startswith(("check", "_check", "parse", "distinct", "whole"))}, called
