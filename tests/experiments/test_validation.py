"""Every command checks all of its input before it starts work.

Commands run in-process through typer's CliRunner: a clean refusal is exit code 2 with one message
naming the file, field, line or option; a traceback would surface as another exception.
"""
from __future__ import annotations

import csv
import io
import json
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from experiments.cli import app
from experiments.design_compiler import compile_sequence
from experiments.psychopy_names import COLOR_NAMES, KEY_NAMES, check_color, check_key
from experiments.session import SessionWriter
from experiments.spec import bundled_spec_path, load_spec
from experiments.spec_model import MAX_BLOCK_TRIALS
from stimuli.files import StimulusFileError, load_items, save_items
from studies.lakretz2021.stimuli.generate import generate_items

RUN = CliRunner()
SPEC_TEXT = bundled_spec_path("lakretz2021_nested").read_text(encoding="utf-8")


def invoke(*args: str, limit_s: float = 10.0):
    t0 = time.monotonic()
    r = RUN.invoke(app, list(args))
    took = time.monotonic() - t0
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise AssertionError(f"traceback for {args}: {r.exception!r}\n{r.output}")
    assert took < limit_s, f"{args} took {took:.1f} s"
    return r


def refused(*args: str, match: str) -> str:
    r = invoke(*args)
    text = " ".join(r.output.split())
    assert r.exit_code == 2, f"exit {r.exit_code} for {args}: {text}"
    assert match in text, text
    return text


def spec_with(tmp_path: Path, name: str, change) -> str:
    data = yaml.safe_load(SPEC_TEXT)
    change(data)
    p = tmp_path / f"{name}.yaml"
    p.write_text(yaml.safe_dump(data), encoding="utf-8")
    return str(p)


# ---- the spec file itself -------------------------------------------------------------------
def test_spec_that_is_not_utf8_text_names_line_and_byte(tmp_path):
    p = tmp_path / "latin1.yaml"
    p.write_bytes(SPEC_TEXT.encode() + "description: café\n".encode("latin-1"))
    line = SPEC_TEXT.count("\n") + 1
    refused("validate", str(p), match=f"line {line}, column 17: byte 0xe9 is not UTF-8")


def test_folder_or_binary_file_as_spec(tmp_path):
    refused("validate", str(tmp_path), match="is a folder, not a spec file")
    p = tmp_path / "x.yaml"
    p.write_bytes(bytes(range(256)))
    refused("plan", str(p), "-s", "S1", match="is a binary file")


def test_duplicate_yaml_key_is_refused_with_both_lines(tmp_path):
    p = tmp_path / "dup.yaml"
    p.write_text(SPEC_TEXT + "\nseed: 5\nseed: 6\n", encoding="utf-8")
    first = SPEC_TEXT.splitlines().index(next(x for x in SPEC_TEXT.splitlines() if x.startswith("seed:"))) + 1
    text = refused("validate", str(p), match="key 'seed' appears twice")
    assert f"first on line {first}" in text and f"dup.yaml\", line {SPEC_TEXT.count(chr(10)) + 2}" in text


@pytest.mark.parametrize("path,value,match", [
    (["feedback", "correct_color"], "notacolour", "not a colour PsychoPy knows"),
    (["feedback", "incorrect_color"], "none", "invisible"),
    (["task", "response_key"], "foo", "not a PsychoPy key name"),
    (["task", "response_key"], "Space", "PsychoPy names it 'space'"),
    (["task", "response_key"], "escape", "both 'escape'"),
    (["blocks", 0, "repetitions"], True, "valid integer"),
    (["blocks", 0, "repetitions"], 1e30, "valid integer"),
    (["blocks", 0, "trials"], 1e15, "valid integer"),
    (["blocks", 0, "trials"], 100000, f"less than or equal to {MAX_BLOCK_TRIALS}"),
    (["blocks", 1, "repetitions"], 1000, "design holds"),
    (["timing", "word_ms"], float("nan"), "finite number"),
    (["participant_fields"], ["", "age"], "must be a name"),
    (["participant_fields"], ["age", "age"], "repeated: age"),
])
def test_spec_values_that_cannot_work(tmp_path, path, value, match):
    def change(d):
        x = d
        for k in path[:-1]:
            x = x[k]
        x[path[-1]] = value
    spec = spec_with(tmp_path, "s", change)
    refused("validate", spec, match=match)
    refused("plan", spec, "-s", "S1", match=match)


def test_block_larger_than_the_stimulus_pool_says_so_at_once(tmp_path):
    items = generate_items("long_nested", "test", 2, 1) + generate_items("long_nested", "training", 2, 1)
    stim = save_items(items, tmp_path / "small.csv")

    def change(d):
        d["stimuli"] = {"file": str(stim)}
        d["blocks"] = [dict(b, structures=["long_nested"], trials=4) for b in d["blocks"]]
        d["blocks"][1]["trials"] = 50
    spec = spec_with(tmp_path, "big", change)
    n_test = sum(i.lexicon == "test" for i in items)
    refused("validate", spec, match=f"needs 50 items (50 trials) but stimulus file {stim} holds only {n_test} items")
    refused("plan", spec, "-s", "S1", match="an item is shown at most once per subject")


@pytest.mark.slow  # ~5-10 s
def test_long_block_compiles_quickly_and_in_order(tmp_path):
    """Beyond the size the plain greedy finishes, the guided shuffle orders the block (was: minutes, then a failure)."""
    spec = spec_with(tmp_path, "long", lambda d: d["blocks"][1].update(trials=1000))
    r = invoke("plan", spec, "-s", "S1", "-o", str(tmp_path / "seq.csv"), limit_s=30)
    assert r.exit_code == 0, r.output
    seq = compile_sequence(load_spec(spec), "S1")
    test = [t for t in seq if t.block == "test"]
    assert len(test) == 1000
    run = longest = 0
    for t in test:
        run = run + 1 if t.study_record.violation_position != "none" else 0
        longest = max(longest, run)
    assert longest <= 3


def test_unorderable_block_explains_the_count(tmp_path):
    spec = spec_with(tmp_path, "v", lambda d: d["blocks"][1].update(max_consecutive_violations=1, grammatical_weight=0,
                                                                     versions=["grammatical", "inner", "outer"]))
    refused("validate", spec, match="cannot be ordered with at most 1 violations in a row")
    refused("plan", spec, "-s", "S1", match="cannot be ordered with at most 1 violations in a row")


# ---- stimulus files -------------------------------------------------------------------------
def _stim_rows(tmp_path):
    items = generate_items("long_nested", "test", 3, 1) + generate_items("long_nested", "training", 3, 1)
    path = save_items(items, tmp_path / "stim.csv")
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    return rows[0], rows[1:]


def test_validate_reads_the_whole_stimulus_file_and_names_every_bad_row(tmp_path):
    header, rows = _stim_rows(tmp_path)
    col = {c: k for k, c in enumerate(header)}
    bad = [r[:] for r in rows]
    words = bad[0][col["sentence"]].split()
    bad[0][col["inner_alternative"]] = words[int(bad[0][col["inner_index"]])].rstrip(".")  # alternative == word
    bad[1][col["inner_index"]] = "0"  # 'The' (a determiner)
    bad[2][col["condition"]] = "PXP"
    for r in bad[3:]:  # the rest broken too: more than the 20 shown in full
        r[col["outer_index"]] = "99"
    path = tmp_path / "bad.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([header] + bad)

    def change(d):
        d["stimuli"] = {"file": str(path)}
        d["blocks"] = [dict(b, structures=["long_nested"], trials=2) for b in d["blocks"]]
    text = refused("validate", spec_with(tmp_path, "s", change), match=f"{len(bad)} bad row(s)")
    assert "line 2: inner_alternative" in text and "is the word at inner_index" in text
    assert "line 3: inner_index 0 points at the determiner 'The'" in text
    assert "line 4: condition 'PXP'" in text
    assert f"on line(s) 22-{len(bad) + 1}" in text  # every bad line named


@pytest.mark.parametrize("content,match", [
    (b"item_id,structure\n\xff\n", "byte 0xff is not UTF-8"),
    (b"\x00\x01\x02", "binary file"),
    (None, "is a folder"),
])
def test_unreadable_stimulus_files(tmp_path, content, match):
    p = tmp_path / "s.csv"
    if content is None:
        p.mkdir()
    else:
        p.write_bytes(content)
    with pytest.raises(StimulusFileError, match=match):
        load_items(p)


def test_row_with_a_stray_delimiter(tmp_path):
    header, rows = _stim_rows(tmp_path)
    p = tmp_path / "s.csv"
    p.write_text(",".join(header) + "\n" + ",".join(rows[0] + ["x", "y"]) + "\n", encoding="utf-8")
    with pytest.raises(StimulusFileError, match="line 2: has .* cells but the header has"):
        load_items(p)


# ---- options --------------------------------------------------------------------------------
@pytest.mark.parametrize("opts,match", [
    (["--trials", "-1"], "--trials must be 1 or more"),
    (["--trials", "0"], "--trials must be 1 or more"),
    (["--batch-size", "0"], "--batch-size must be from 1 to 65536, got 0"),
    (["--batch-size", "many"], "--batch-size must be a positive whole number or 'auto'"),
    (["--batch-size", "100000"], "--batch-size must be from 1 to 65536"),
    (["--session", "-1"], "--session must be from 1"),
    (["--max-new-tokens", "0"], "--max-new-tokens must be from 1"),
    (["--threads", "-1"], "--threads must be from 0"),
    (["--device", "tpu"], "--device must be cpu, cuda"),
    (["--dtype", "float8"], "--dtype must be one of"),
    (["--subject-prefix", "m-"], "--subject-prefix 'm-' must be letters and digits"),
    (["--protocol", "nonsense"], "unknown protocol 'nonsense'"),
    (["--context", "fewshot:nonsense"], "nonsense"),
])
def test_run_model_options_refused_before_the_model_loads(tmp_path, opts, match):
    refused("run-model", "lakretz2021_nested", "-o", str(tmp_path / "out"), *opts, match=match)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("opts,match", [
    (["--trials", "0"], "--trials must be 1 or more"),
    (["--session", "-1"], "--session must be from 1"),
    (["--participant", "P 1"], "--participant 'P 1' must be letters and digits"),
    (["--autopilot-accuracy", "2"], "--autopilot-accuracy must be from 0 to 1"),
])
def test_run_human_shares_the_option_rules(tmp_path, opts, match):
    args = ["run-human", "lakretz2021_nested", "-o", str(tmp_path / "out")]
    if "--participant" not in opts:
        args += ["--participant", "P1"]
    refused(*args, *opts, match=match)


def test_a_text_file_as_model_is_named_as_a_file(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("hello")
    refused("run-model", "lakretz2021_nested", "-o", str(tmp_path / "o"), "--model", str(p),
            match="is a file but not a .gguf model")


def test_out_that_is_a_file(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    refused("run-model", "lakretz2021_nested", "-o", str(f), match="is a file, not a folder")
    refused("plan", "lakretz2021_nested", "-s", "S1", "-o", str(tmp_path), match="is a folder")


# ---- the PsychoPy names, checked against the installed PsychoPy ----------------------------------
def test_key_and_colour_lists_are_psychopys_own():
    pytest.importorskip("psychopy")
    import psychopy.colors as pc
    from psychopy.hardware import keyboard as kb

    everywhere = set(kb.keyNamesWin.values()) & set(kb.keyNamesMac.values()) & set(kb.keyNamesLinux.values())
    assert KEY_NAMES == everywhere
    assert COLOR_NAMES == set(pc.colorNames) - {"none", "transparent"}
    assert check_key("space") is None and check_key("spacebar") is not None
    assert check_color("DarkGreen") is None and check_color("#00aa00") is None and check_color("#0a0") is not None


# ---- analyze: sessions with nothing to analyse ---------------------------------------------------
def human_session(root: Path, sid: str, n: int, status: str = "completed") -> Path:
    from participants.rows import trial_row
    from participants.rsvp import TrialResult

    exp = load_spec("lakretz2021_nested")
    seq = compile_sequence(exp, sid)
    w = SessionWriter.create(root, experiment=exp.name, subject_id=sid, session=1, subject_kind="human",
                             spec_hash=seq.spec_hash, sequence_hash=seq.sequence_hash, n_trials=len(seq))
    for i in range(n):
        t = seq[i]
        ok = i % 3 != 0
        resp = t.study_record.correct_response if ok else (
            {"violation": "no_violation"}.get(t.study_record.correct_response, "violation"))
        w.append(trial_row(t, TrialResult(response=resp, correct=ok, rt_ms=400.0, rt_sentence_end_ms=1.0,
                                          word_onsets_ms=[], word_durations_ms=[], feedback_shown=True,
                                          feedback_text="x", started_at="t0", ended_at="t1", iti_onset=0.0,
                                          extra={}), seq, subject_id=sid, session=1))
    w.close(status)
    return w.csv_path


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    root = tmp_path_factory.mktemp("sessions")
    good = [human_session(root / "good", sid, 60) for sid in ("P1", "P2")]
    header_only = human_session(root / "h", "P3", 0, "aborted")  # killed during the instructions
    training_only = human_session(root / "t", "P4", 5)  # the README's --trials 5 check
    torn = human_session(root / "torn", "P5", 60)
    data = torn.read_bytes()
    torn.write_bytes(data[:-40])
    empty = root / "e" / "study-x_subject-P6_session-1_data.csv"
    empty.parent.mkdir(parents=True)
    empty.write_text("")
    return {"good": good, "header_only": header_only, "training_only": training_only, "torn": torn, "empty": empty}


@pytest.mark.slow  # a full report (figures): ~20 s on a small shared CPU
def test_analyze_skips_sessions_without_trials_and_reports_the_rest(sessions, tmp_path):
    out = tmp_path / "out"
    args = [str(p) for p in sessions["good"]] + [str(sessions[k]) for k in ("header_only", "training_only", "torn",
                                                                           "empty")]
    r = invoke("analyze", *args, "-o", str(out), "--no-mixed", "--n-boot", "20", limit_s=120)
    assert r.exit_code == 0, r.output
    results = json.loads((out / "results.json").read_text())
    notes = " ".join(results["notes"])
    assert f"{sessions['header_only'].name}: skipped, holds no complete trial" in notes
    assert (f"{sessions['training_only'].name} (subject P4, session 1): skipped, it holds only training trials (5)"
            in notes)
    assert f"{sessions['empty'].name}: skipped, the file is empty" in notes
    assert f"{sessions['torn'].name}: dropped a partly written row 60" in notes
    assert (out / "report.html").exists()
    sizes = next(t for n, t in results["tables"].items() if n == "sample_sizes")
    assert sizes["rows"] == 1  # one group (human); 3 subjects: P1, P2 and the torn P5
    import pandas as pd

    ss = pd.read_csv(out / sizes["file"])
    assert int(ss["subjects"].iloc[0]) == 3 and int(ss["trials"].iloc[0]) == 60 + 60 + 59


@pytest.mark.parametrize("which,match", [("header_only", "holds no complete trial"),
                                         ("training_only", "only training trials"),
                                         ("empty", "the file is empty")])
def test_analyze_with_nothing_left_is_one_clear_error(sessions, tmp_path, which, match):
    refused("analyze", str(sessions[which]), "-o", str(tmp_path / "o"), "--no-mixed", match=match)


@pytest.mark.parametrize("args,match", [
    (["stimuli", "generate", "--per-condition", "-1"], "--per-condition must be from 1 to 10000"),
    (["stimuli", "generate", "--per-condition", "1000000000"], "--per-condition must be from 1 to 10000"),
    (["analyze", "DATA", "--n-boot", "-5"], "--n-boot must be from 1 to 100000"),
    (["analyze", "DATA", "--n-boot", "1000000000"], "--n-boot must be from 1 to 100000"),
])
def test_sizes_of_other_commands_are_bounded(tmp_path, args, match):
    """A negative count used to write an empty file; a huge one ran for minutes (bootstrap) or forever."""
    args = [str(tmp_path) if a == "DATA" else a for a in args]
    refused(*args, "-o", str(tmp_path / "out.csv"), match=match)
    assert not (tmp_path / "out.csv").exists()


def test_out_of_stimuli_generate_and_analyze_checked(tmp_path):
    refused("stimuli", "generate", "-o", str(tmp_path), "--per-condition", "2", match="is a folder; give a file name")
    f = tmp_path / "f.csv"
    f.write_text("x")
    refused("analyze", str(f), "-o", str(f), match="is a file, not a folder")


def test_sweep_file_read_like_a_spec(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"spec: lakretz2021_nested\n\xff\n")
    refused("sweep", str(bad), "--dry-run", match="line 2, column 1: byte 0xff is not UTF-8")
    dup = tmp_path / "dup.yaml"
    dup.write_text("spec: lakretz2021_nested\nmodels: [a]\nmodels: [b]\n", encoding="utf-8")
    refused("sweep", str(dup), "--dry-run", match="key 'models' appears twice")
