"""Every check of an analysis lives in the function the API, the CLI and the pipeline all
call (analysis/options.py: check_options; analysis/stats/formula_checks.py: check_fit_request), so the API
refuses what `twinlab analyze` refuses: a named error (a ValueError the CLI turns into exit 2), never a
numpy/pandas traceback or a silently different analysis. A fit the user asked for that fails is an error
(exit 2) or a failure at the top of the report and in the exit status (1), never a note with exit 0."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import api
from analysis.options import InputError
from analysis.stats import formula as fm
from tests.support import design_synthetic as ds

F = "correct ~ head_number + (1 | subject)"


def cli(*args: str) -> tuple[int, str]:
    """`twinlab ARGS` in this process (the app itself; the subprocess path is tested in
    tests/hostile/test_hostile_results.py): the exit code and the output as one line."""
    from typer.testing import CliRunner

    from experiments.cli import app

    r = CliRunner().invoke(app, list(args))
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    return r.exit_code, " ".join(r.output.split())


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("shared_checks")
    ds.agreement_judgments(root / "humans", n_subjects=4, n_items=8)
    return root / "humans"


@pytest.fixture(scope="module")
def df(data) -> pd.DataFrame:
    return api.load_sessions(data)


@pytest.mark.parametrize("options, named", [
    ({"rt_trim": (3000, 200)}, "rt_trim (--rt-trim)"),
    ({"rt_sd": -1}, "rt_sd (--rt-sd)"),
    ({"rt_sd": float("inf")}, "rt_sd (--rt-sd)"),
    ({"word_rt_range": (5000, 100)}, "word_rt_range (--word-rt-range)"),
    ({"model_copies": "merged"}, "model_copies (--model-copies)"),
    ({"n_boot": 200.0}, "n_boot (--n-boot) must be a whole number"),
    ({"n_boot": True}, "n_boot (--n-boot) must be a whole number"),
    ({"seed": -1}, "seed (--seed) must be from 0"),
    ({"word": 2.7, "formula": F}, "word (--word) must be a whole number"),
    ({"focus": "PSP"}, "focus (--focus)"),
])
def test_report_refuses_what_analyze_refuses_before_any_work(data, tmp_path, options, named):
    out = tmp_path / "out"
    with pytest.raises(InputError, match=named.replace("(", r"\(").replace(")", r"\)")):
        api.report(data, out, mixed=bool(options.get("formula")), **options)
    assert not out.exists()  # refused before any folder is made


def test_the_other_api_functions_share_the_rules(data, df):
    with pytest.raises(InputError, match=r"model_copies \(--model-copies\) must be merge or subjects, not 'merged'"):
        api.load_sessions(data / "no such folder", model_copies="merged")  # before any file is read
    for bad, named in (({"n_boot": 200.0}, "n_boot"), ({"seed": -1}, "seed"), ({"seed": 1.0}, "seed")):
        with pytest.raises(InputError, match=named):
            api.rates(df, **bad)
    with pytest.raises(InputError, match=r"word \(--word\) must be a whole number \(an int\), not 2.7"):
        api.fit(df, F, word=2.7)  # it used to fit word 2
    with pytest.raises(InputError, match="give one of them"):
        api.fit(df, F, region="object", word=2)
    # a duplicated column, an infinite outcome: named, not a pandas traceback
    dup = df.copy()
    dup.insert(len(dup.columns), "correct", df["correct"], allow_duplicates=True)
    with pytest.raises(InputError, match="column 'correct' appears 2 times"):
        api.rates(dup)
    inf = df.assign(score=np.where(np.arange(len(df)) == 3, np.inf, 1.0))
    inf.attrs = dict(df.attrs)
    with pytest.raises(InputError, match=r"outcome 'score' holds 1 infinite value"):
        api.rates(inf, outcome="score")


def test_analyze_seed_minus_one_is_refused(data, tmp_path):
    code, out = cli("analyze", str(data), "--out", str(tmp_path / "o"), "--no-mixed", "--seed", "-1")
    assert code == 2 and "error: --seed must be from 0" in out and "Traceback" not in out


@pytest.mark.parametrize("formula, named", [
    ("correct ~ 0 + (1 | subject)", "estimates no fixed effect"),
    ("correct ~ -1", "estimates no fixed effect"),
    ("response ~ head_number + (1 | subject)", "the response 'response' is text (e.g. 'yes')"),
    ("rt_ms ~ log(head_number) + (1 | subject)", "log() of 'head_number', which is a design factor"),
    ("correct ~ scale(response) + (1 | subject)", "scale() of 'response', which is a text column"),
])
def test_a_fit_that_cannot_give_the_result_asked_is_refused_before_r(df, formula, named):
    with pytest.raises(fm.FormulaError, match=named.replace("(", r"\(").replace(")", r"\)")):
        api.fit(df, formula)


def test_an_infinite_response_is_refused_before_r(df):
    bad = df.assign(rt_ms=df["rt_ms"].astype(float).where(np.arange(len(df)) != 2, np.inf))
    bad.attrs = dict(df.attrs)
    with pytest.raises(fm.FormulaError, match="holds 1 infinite value"):
        api.fit(bad, "rt_ms ~ head_number + (1 | subject)")
    # what still fits: an intercept-only model, 0 + a term, a numeric column inside log()
    for ok in ("correct ~ 1 + (1 | subject)", "correct ~ 0 + head_number", "correct ~ log(rt_ms)"):
        from analysis.stats.formula_checks import check_fit_request

        check_fit_request(fm.parse(ok), df)


def test_analyze_refuses_them_with_exit_2_and_writes_no_results(data, tmp_path):
    out = tmp_path / "o"
    code, said = cli("analyze", str(data), "--out", str(out), "--formula", "correct ~ 0 + (1 | subject)")
    assert code == 2 and "error: --formula 'correct ~ 0 + (1 | subject)' estimates no fixed effect" in said
    assert not (out / "results.json").exists()


def _with_a_failing_group(root: Path) -> Path:
    """People, plus one model group whose rows hold one level of head_number (lme4 cannot fit a contrast of
    one level): the people's fit works, the model group's fails."""
    ds.agreement_judgments(root, n_subjects=4, n_items=8)
    for p in ds.agreement_judgments(root, n_subjects=2, n_items=8, kind="model", protocol="direct", model="m"):
        text = p.read_text(encoding="utf-8").replace(",pl,", ",sg,")
        p.write_text(text, encoding="utf-8")
    return root


@pytest.mark.r
@pytest.mark.slow
def test_a_group_not_fitted_is_a_failure_at_the_top_and_exit_1(r_ready, tmp_path):
    data = _with_a_failing_group(tmp_path / "d")
    out = tmp_path / "o"
    code, said = cli("analyze", str(data), "--out", str(out), "--n-boot", "10", "--formula",
                     "correct ~ head_number + (1 | subject)", "--model-copies", "subjects")
    assert code == 1 and "failed: --formula" in said, said
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert len(res["failures"]) == 1 and "group m · none · direct: not fitted" in res["failures"][0]
    assert not any("not fitted" in n for n in res["skipped"])  # a failure, not a note
    page = (out / "report.html").read_text(encoding="utf-8")
    top = page.index("Failed: a result you asked for could not be computed")
    assert top < page.index("<h2") and "group m · none · direct: not fitted" in page[top:page.index("<h2")]
    assert "Your model — human" in page  # the fit that worked is shown


def test_a_session_table_naming_a_column_twice_is_refused(data, tmp_path):
    import shutil

    src = sorted((data / "data").glob("*_data.csv"))[0]
    shutil.copy(src.with_suffix(".json"), tmp_path / src.with_suffix(".json").name)
    lines = src.read_text(encoding="utf-8").splitlines()
    lines = [ln + ("," + ln.split(",")[0]) for ln in lines]  # subject_id again, as the last column
    (tmp_path / src.name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    from analysis.load import LoadError

    with pytest.raises(LoadError, match="column 'subject_id' appears more than once in the header"):
        api.load_sessions(tmp_path)
