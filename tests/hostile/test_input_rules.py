"""One helper for each input bug that kept coming back (stimuli/input_rules.py), and a grep of the
product code that keeps the raw patterns out: `.isdigit()` (true for '²', which `int()` refuses),
`csv.field_size_limit(` outside the helper, and a `read_text(encoding="utf-8")` of a file people write (no BOM
tolerance); the CSV field limit raised at each entry point (the CLI's start, the APIs' entry functions), never by
an import.

Also the cases that brought them back: a models file from a spreadsheet (BOM), a step '²', a model named
`=cmd|...` (a formula in three tables), slurm numbers nan/inf/90.5, and a session whose kept column
holds 70,000 characters, read back by `analyze` in a fresh process (Python's default field limit is
131,072 characters, so without the helper every row would be dropped as torn).
"""
from __future__ import annotations

import ast
import re
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from stimuli import input_rules as R

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("analysis", "experiments", "kinds", "model_subjects", "participants", "reproductions", "stimuli", "studies")
HELPER = ROOT / "stimuli" / "input_rules.py"


def product_files() -> list[Path]:
    return sorted(f for pkg in PRODUCT for f in (ROOT / pkg).rglob("*.py") if "node_modules" not in f.parts)


def _code_lines(f: Path) -> list[tuple[int, str, str]]:
    """(line number, code, whole line) of the code: the code without its comment; docstrings left out
    (they may name a pattern)."""
    src = f.read_text(encoding="utf-8")
    docs = set()
    for node in ast.walk(ast.parse(src)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and \
                isinstance(getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str):
            docs.update(range(body[0].lineno, body[0].end_lineno + 1))
    return [(i, line.split("#", 1)[0], line) for i, line in enumerate(src.splitlines(), start=1) if i not in docs]


def test_the_product_code_holds_none_of_the_raw_patterns():
    assert len(product_files()) > 100  # the grep reads the real tree
    found = []
    for f in product_files():
        rel = f.relative_to(ROOT)
        lines = _code_lines(f)
        for i, t, whole in lines:
            if ".isdigit()" in t:
                found.append(f"{rel}:{i}: .isdigit() (use input_rules.ascii_int / is_ascii_digits)")
            if "csv.field_size_limit(" in t and f != HELPER:
                found.append(f"{rel}:{i}: csv.field_size_limit( (the limit is set once, in stimuli/input_rules.py)")
            if 'read_text(encoding="utf-8")' in t and not re.search(r"json\.loads\(|tomllib|# own_file", whole):
                found.append(f'{rel}:{i}: read_text(encoding="utf-8") of a file people write '
                             "(use input_rules.read_user_text: BOM-tolerant, bounded)")
    assert not found, "\n".join(found)


def test_the_grep_finds_what_it_looks_for(tmp_path):
    """The pattern check itself: a line with each raw pattern is reported, a comment is not."""
    f = tmp_path / "bad.py"
    f.write_text('x = "2".isdigit()  # .isdigit() in a comment is fine\n', encoding="utf-8")
    assert [t for _, t, _ in _code_lines(f) if ".isdigit()" in t] == ['x = "2".isdigit()  ']


def test_the_helpers():
    assert "²".isdigit() and R.ascii_int("²") is None and not R.is_ascii_digits("²")
    assert R.ascii_int("٣") is None and R.ascii_int("") is None and R.ascii_int(True) is None
    assert R.ascii_int(" 12 ") == 12 and R.ascii_int(" 12 ", strip=False) is None and R.ascii_int("-3") is None
    assert R.ascii_int("-3", signed=True) == -3 and R.ascii_int(7) == 7
    assert ([R.finite_number(v) for v in (1, 2.5, float("nan"), float("inf"), True, "3")]
            == [1.0, 2.5, None, None, None, None])
    assert [R.whole_number(v) for v in (90, 90.0, 90.5, float("nan"), False)] == [90, 90, None, None, None]
    for cell in ("=cmd|' /C calc'!A0", "@SUM(A1)", "+x", "-2+3+cmd|' /C calc'!A0", "\tx"):
        assert R.starts_like_formula(cell) and R.spreadsheet_safe(cell) == "'" + cell, cell
    for cell in ("-0.5", "-0.50 [-0.81, -0.20]", "a=b", "word", "", 3.5):
        assert R.spreadsheet_safe(cell) == cell, cell
    assert R.name_problem("=cmd|x") and R.name_problem("@x") and R.name_problem("ok-model_1") is None
    import csv

    R.raise_csv_field_limit()
    assert csv.field_size_limit() == R.CSV_FIELD_LIMIT >= 64 * 1024 * 1024


@pytest.mark.parametrize("entry, raised", [
    ("import stimuli.input_rules, experiments.session, analysis.load", False),  # an import changes nothing
    ("import experiments.cli", True),  # the CLI's start
    ("from analysis.load import load\ntry:\n    load([sys.argv[1]])\nexcept Exception:\n    "
     "pass", True),  # an API entry
])
def test_the_csv_field_limit_is_raised_by_the_entry_points_not_by_imports(tmp_path, entry, raised):
    code = f"import csv, sys\n{entry}\nprint(csv.field_size_limit())"
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120,
                         cwd=ROOT, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout.split()[-1]) == (R.CSV_FIELD_LIMIT if raised else 131_072), out.stdout


def test_tables_are_written_spreadsheet_safe(tmp_path):
    from analysis.report.results_folder import Results

    folder = Results(tmp_path)
    folder.table("t", pd.DataFrame({"model": ["=cmd|' /C calc'!A0", "SmolLM2"], "estimate": [-0.5, 0.25],
                                    "ci": ["-0.9 [-1.2, -0.6]", "0.1 [0.0, 0.2]"]}), "t")
    lines = (tmp_path / "tables" / "t.csv").read_text(encoding="utf-8").splitlines()
    assert lines[1] == "'=cmd|' /C calc'!A0,-0.5,\"-0.9 [-1.2, -0.6]\"", lines
    assert lines[2] == 'SmolLM2,0.25,"0.1 [0.0, 0.2]"', lines


# ---- the models file (reproduce hu-frank2024 --models) ----------------------------------------------------
def test_models_file_bom_digits_formula_names_and_size(tmp_path):
    from reproductions.common import ReproError
    from reproductions.hu_frank.models_file import MAX_MODELS, read_models_file

    bom = tmp_path / "models.csv"  # "CSV UTF-8" as a spreadsheet saves it
    bom.write_bytes(b"\xef\xbb\xbfpath,family,size,step\nckpt/a,t5,60M,1000\n")
    [e] = read_models_file(bom)
    assert (e.path, e.family, e.size, e.step) == ("ckpt/a", "t5", 60e6, 1000)
    cases = {"ckpt/a,t5,60M,\u00b2\n": "line 2.step: '²' is not a whole number",
             "ckpt/a,t5,60M,\u0663\n": "line 2.step: '٣' is not a whole number",
             "ckpt/a,=cmd|' /C calc'!A0,60M,1\n": "line 2.family: \"=cmd|' /C calc'!A0\" starts with '='",
             "=cmd|x,t5,60M,1\n": "line 2.name: '=cmd|x step 1' starts with '='"}
    for body, message in cases.items():
        bad = tmp_path / "bad.csv"
        bad.write_text("path,family,size,step\n" + body, encoding="utf-8")
        with pytest.raises(ReproError, match=re.escape(message)):
            read_models_file(bad)
    named = tmp_path / "named.yaml"
    named.write_text("models:\n  - {path: ckpt/a, family: t5, name: '@SUM(A1)'}\n", encoding="utf-8")
    with pytest.raises(ReproError, match=r"models\[0\]\.name: '@SUM\(A1\)' starts with '@'"):
        read_models_file(named)
    big = tmp_path / "big.csv"  # 100,000 rows: refused at once (the duplicate check was quadratic)
    big.write_text("path,family\n" + "".join(f"m{i},f\n" for i in range(100_000)), encoding="utf-8")
    t0 = time.perf_counter()
    with pytest.raises(ReproError, match=f"more than {MAX_MODELS} models"):
        read_models_file(big)
    ok = tmp_path / "ok.csv"  # the most allowed, read in linear time
    ok.write_text("path,family\n" + "".join(f"m{i},f\n" for i in range(MAX_MODELS)), encoding="utf-8")
    assert len(read_models_file(ok)) == MAX_MODELS
    assert time.perf_counter() - t0 < 2.0


# ---- slurm numbers (sweep) ----------------------------------------------------------------------------
@pytest.mark.parametrize("key,value,ok", [("timeout_min", 90.5, False), ("timeout_min", float("nan"), False),
                                          ("timeout_min", 90, True), ("mem_gb", float("inf"), False),
                                          ("mem_gb", float("nan"), False), ("mem_gb", 7.5, True),
                                          ("gpus_per_node", 0, True), ("cpus_per_task", True, False),
                                          ("nodes", "2", False)])
def test_slurm_numbers_are_finite_and_whole(key, value, ok):
    from experiments.options import OptionError
    from model_subjects.sweep import check_slurm_number

    if ok:
        check_slurm_number(key, value)
    else:
        with pytest.raises(OptionError, match=f"slurm.{key}"):
            check_slurm_number(key, value)


# ---- the CSV field limit: a session of long kept columns survives analyze's torn-row check --------------
def test_a_session_with_a_70000_character_cell_is_read_whole_in_a_fresh_process(tmp_path):
    """Written by the one session writer, read back by `analysis.load` in a new process (whose csv module
    starts at 131,072 characters): every row is kept, none is called torn."""
    from experiments.design_compiler import compile_sequence
    from experiments.session import SessionWriter
    from experiments.spec import load_spec
    from participants.rows import trial_row
    from participants.rsvp import TrialResult

    spec = load_spec("lakretz2021_nested")
    seq = compile_sequence(spec, "P1")
    long_text = "word " * 30_000  # 150,000 characters in one cell
    w = SessionWriter.create(tmp_path, experiment=spec.name, subject_id="P1", session=1, subject_kind="human",
                             spec_hash=seq.spec_hash, sequence_hash=seq.sequence_hash, n_trials=len(seq))
    for t in seq.trials[:3]:
        r = TrialResult(response="violation", correct=True, rt_ms=400.0, rt_sentence_end_ms=-100.0,
                        word_onsets_ms=[0.0] * len(t.words), word_durations_ms=[250.0] * len(t.words),
                        feedback_shown=True, feedback_text=long_text, started_at="t0", ended_at="t1",
                        iti_onset=0.0, extra={"timing_mode": "frames"})
        w.append(trial_row(t, r, seq, subject_id="P1", session=1))
    w.close("running")
    assert len(long_text) > 131_072 and long_text.strip() in w.csv_path.read_text(encoding="utf-8")
    code = ("import sys, csv; from analysis.load import load; df, info = load([sys.argv[1]]); "
            "print(len(df), max(df['feedback_text'].str.len()), len(info.notes))")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120,
                         cwd=ROOT, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr[-2000:]
    rows, longest, _notes = out.stdout.split()
    assert int(rows) == 3 and int(longest) >= len(long_text.strip()), out.stdout
