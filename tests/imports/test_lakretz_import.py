"""`twinlab import lakretz2021` on fixtures in the release's exact format (tests/fixtures/lakretz2021/).

The fixtures are invented trials written by tests/support/lakretz_synthetic.py; its trial
objects are the ground truth here (what the log says, independently of the importer's parsing).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from analysis.load import load
from experiments.cli import app
from tests.support.lakretz_synthetic import VERBS, write_fixtures

FIX = Path(__file__).parent.parent / "fixtures" / "lakretz2021"
TABLE = FIX / "dataframe_results_all_trials.csv"


def run(*args: str):
    return CliRunner().invoke(app, ["import", "lakretz2021", *args])


def flat(text: str) -> str:
    """Output without line breaks or spaces (the console may wrap long paths anywhere)."""
    return "".join(text.split())


@pytest.fixture(scope="module")
def truth(tmp_path_factory):
    return write_fixtures(tmp_path_factory.mktemp("regen")).trials


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    out = tmp_path_factory.mktemp("imp") / "out"
    r = run("--results", str(TABLE), "--logs", str(FIX / "logs"), "--out", str(out))
    assert r.exit_code == 0, r.output
    df, info = load([out], keep_outliers=True)
    df["x"] = df["extra"].map(json.loads)
    return out, df, info, r.output


def test_committed_fixtures_are_what_the_generator_writes(tmp_path):
    rel = write_fixtures(tmp_path)
    made = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    committed = sorted(p.relative_to(FIX) for p in FIX.rglob("*") if p.is_file())
    assert made == committed
    for p in made:
        assert (tmp_path / p).read_bytes() == (FIX / p).read_bytes(), p
    assert len(rel.log_files) == 8


def test_sessions_rows_and_order_follow_the_logs(imported, truth):
    out, df, _, output = imported
    sizes = df.groupby(["subject_id", "session"]).size().to_dict()
    assert sizes == {("L101", 1): 24, ("L101", 2): 24, ("L102", 1): 24, ("L102", 2): 25, ("L103", 1): 24,
                     ("L103", 2): 11, ("L104", 2): 24, ("L7", 1): 12}
    for (sid, sess), g in df.groupby(["subject_id", "session"]):
        t = [tr for tr in truth if f"L{tr.subject}" == sid and tr.session == sess]
        assert g["trial_index"].tolist() == list(range(len(t)))
        assert g["x"].map(lambda e: e["log_trial"]).tolist() == [tr.trial for tr in t]
        assert g["words"].tolist() == [" ".join(tr.units if tr.finished else tr.units[:5]) for tr in t]
        assert g["condition"].tolist() == [tr.condition for tr in t]
    assert set(df.loc[df["subject_id"] == "L7", "block"]) == {"training"}
    assert set(df.loc[df["subject_id"] != "L7", "block"]) == {"main"}
    assert "168" in output and "131" in output


def test_answers_timing_and_early_presses_match_the_generated_trials(imported, truth):
    _, df, _, _ = imported
    by_key = {(f"L{t.subject}", t.session, t.trial): t for t in truth}
    n_key = n_multi = 0
    for row in df.itertuples():
        t = by_key[(row.subject_id, row.session, row.x["log_trial"])]
        if not t.finished:
            assert row.x["unfinished"] and pd.isna(row.correct) and pd.isna(row.response)
            continue
        assert row.response == {"VIOLATION": "violation", "ACCEPTABLE": "no_violation", "": "none"}[t.panel]
        assert row.x["outcome"] == t.outcome
        expect_correct = None if t.outcome.endswith("_DDC") else t.outcome.startswith("CORRECT")
        assert (None if pd.isna(row.correct) else bool(row.correct)) == expect_correct
        if t.panel:
            assert row.rt_ms == pytest.approx(t.panel_rt * 1000, abs=1e-6)
        else:
            assert pd.isna(row.rt_ms)
        onsets = json.loads(row.word_onsets_ms)
        assert onsets == pytest.approx([(o - t.fix_time) * 1000 for o in t.onsets], abs=0.051)
        assert json.loads(row.word_durations_ms) == pytest.approx([246.2] * len(t.units), abs=0.11)
        if any(" " in u for u in t.units):
            assert json.loads(row.rsvp_units) == t.units
        if t.key_slide is None:
            assert pd.isna(row.early_response) and row.x["key_presses"] == 0
        else:
            n_key += 1
            assert row.early_response == "violation"
            assert row.early_response_unit == t.key_slide - 1
            assert row.x["early_response_phase"] == t.key_phase
            assert row.early_response_ms == pytest.approx((t.key_time - t.onsets[0]) * 1000, abs=1e-6)
        assert row.x["release_rt_s"] == pytest.approx(t.release_rt)
        assert row.response_mode == "panel" and bool(row.feedback_shown)
        if t.trial_type == "Violation":
            n_multi += 1
            assert row.critical_word in {v for verb in VERBS for v in verb[:2]}
            words = row.words.split()
            assert words[int(row.critical_index)] == row.critical_word
    assert n_key > 5 and n_multi > 10


def test_every_table_row_matches_and_unmatched_log_trials_are_flagged(imported):
    out, df, _, _ = imported
    matches = df["x"].map(lambda e: e["match"]).value_counts().to_dict()
    assert matches == {"exact": 131, "subject_not_in_table": 24, "training": 12, "unfinished": 1}
    table_lines = sorted(df["x"].map(lambda e: e.get("table_line")).dropna().astype(int))
    assert table_lines == list(range(2, 133))
    summary = json.loads((out / "import_lakretz2021.json").read_text())
    assert summary["matched"]["exact"] == 131 and summary["matched"]["of which interchangeable twins"] == 2
    assert summary["unmatched"]["log trials of subjects not in the table"] == 24
    side = json.loads((out / "data" / "study-lakretz2021_subject-L103_session-2_data.json").read_text())
    assert side["status"] == "incomplete" and side["order_known"] is True and side["is_outlier"] is False
    side = json.loads((out / "data" / "study-lakretz2021_subject-L101_session-1_data.json").read_text())
    assert side["is_outlier"] is True and side["response_mode"] == "panel" and side["in_results_table"] is True
    for pilot in ("L7_session-1", "L104_session-2"):
        s = json.loads((out / "data" / f"study-lakretz2021_subject-{pilot}_data.json").read_text())
        assert s["in_results_table"] is False and s["is_outlier"] is None
    assert {s["kind"] for s in side["source_files"]} == {"session_log", "results_table"}
    assert all(len(s["sha256"]) == 64 for s in side["source_files"])


def test_error_rates_equal_a_plain_pandas_computation_on_the_table(imported):
    _, df, _, _ = imported
    t = pd.read_csv(TABLE)
    v = t[(t.trial_type == "Violation") & t.valid_answer.isin(["CORRECT", "WRONG"])]
    ref = (v.valid_answer == "WRONG").groupby([v.sentence_type, v.violation_position, v.condition]).mean()
    d = df[df["x"].map(lambda e: e["match"] == "exact") & df["dependency"].notna() & df["correct"].notna()]
    names = {"long_nested": "objrel_nounpp", "short_nested": "objrel", "long_successive": "embedding_mental_LR",
             "short_successive": "embedding_mental_SR"}
    mine = (1 - d["correct"].astype(float)).groupby([d["structure"].map(names), d["dependency"], d["condition"]]).mean()
    assert mine.to_dict() == pytest.approx(ref.to_dict(), abs=1e-12)


def test_results_alone_marks_the_order_unknown(tmp_path):
    r = run("--results", str(TABLE), "--out", str(tmp_path / "o"))
    assert r.exit_code == 0, r.output
    df, _ = load([tmp_path / "o"], keep_outliers=True)
    x = df["extra"].map(json.loads)
    assert len(df) == 131 and set(x.map(lambda e: e["order"])) == {"unknown"}
    assert set(x.map(lambda e: e["match"])) == {"no_logs"}
    assert df["session"].isna().all()
    files = sorted(p.name for p in (tmp_path / "o" / "data").glob("*.csv"))
    assert files == [f"study-lakretz2021_subject-L{s}_session-unknown_data.csv" for s in (101, 102, 103)]
    side = json.loads((tmp_path / "o" / "data" / files[0].replace(".csv", ".json")).read_text())
    assert side["order_known"] is False and side["session"] is None
    t = pd.read_csv(TABLE)
    assert (df["correct"] == False).sum() == (t.valid_answer == "WRONG").sum()  # noqa: E712
    assert flat("order") in flat(r.output) and flat("unknown") in flat(r.output)


def test_logs_alone_imports_every_trial(tmp_path):
    r = run("--logs", str(FIX / "logs"), "--out", str(tmp_path / "o"))
    assert r.exit_code == 0, r.output
    df, _ = load([tmp_path / "o"], keep_outliers=True)
    x = df["extra"].map(json.loads)
    assert len(df) == 168
    assert x.map(lambda e: e["match"]).value_counts().to_dict() == {"no_table": 155, "training": 12, "unfinished": 1}
    assert x.map(lambda e: e["is_outlier"]).isna().all()


def test_rerun_into_the_same_folder_refuses_and_skip_existing_skips(tmp_path):
    out = tmp_path / "o"
    assert run("--results", str(TABLE), "--logs", str(FIX / "logs"), "--out", str(out)).exit_code == 0
    before = {p: p.read_bytes() for p in (out / "data").iterdir()}
    r = run("--results", str(TABLE), "--logs", str(FIX / "logs"), "--out", str(out))
    assert r.exit_code == 2 and flat("already exists") in flat(r.output) and flat("nothing was "
                                                                                  "written") in flat(r.output)
    assert "Traceback" not in r.output
    r = run("--results", str(TABLE), "--logs", str(FIX / "logs"), "--out", str(out), "--skip-existing")
    assert r.exit_code == 0, r.output
    assert {p: p.read_bytes() for p in (out / "data").iterdir()} == before


# ---- bad input ---------------------------------------------------------------
@pytest.fixture()
def copy(tmp_path):
    shutil.copytree(FIX, tmp_path / "rel")
    return tmp_path / "rel"


def _log(rel: Path, subject: int, session: int) -> Path:
    return next((rel / "logs").glob(f"logLocal*_Subj_{subject}_sess_{session}.csv"))


def _bad(rel: Path, out: Path, *needles: str):
    r = run("--results", str(rel / TABLE.name), "--logs", str(rel / "logs"), "--out", str(out))
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and "error:" in r.output, r.output
    text = flat(r.output[r.output.index("error:"):])  # after the plain progress lines (output not a terminal)
    for n in needles:
        assert flat(n) in text, (n, text)
    assert not (out / "data").exists()  # nothing written


def test_a_truncated_last_line_is_set_aside_with_a_note(copy, tmp_path):
    p = _log(copy, 101, 2)
    data = p.read_bytes()
    p.write_bytes(data[: len(data) - 30])  # cut inside the last END_TRIAL line
    r = run("--results", str(copy / TABLE.name), "--logs", str(copy / "logs"), "--out", str(tmp_path / "o"))
    assert r.exit_code == 0, r.output
    text = flat(r.output)
    n_lines = data.count(b"\n")
    assert flat(f"{p.name}: line {n_lines} is truncated") in text
    df, _ = load([tmp_path / "o"], keep_outliers=True)
    x = df["extra"].map(json.loads)
    last = x[(df["subject_id"] == "L101") & (df["session"] == 2)].iloc[-1]
    assert last["match"] == "unfinished"
    assert x.map(lambda e: e["match"]).value_counts()["exact"] == 130  # its table row is now unmatched ...
    assert (x.map(lambda e: e["match"]) == "table_only").sum() == 1  # ... and kept, order unknown


def test_an_unknown_event_is_set_aside_with_a_count(copy, tmp_path):
    p = _log(copy, 102, 1)
    lines = p.read_bytes().split(b"\r\n")
    lines.insert(10, b"EYELINK_SYNC\t1\t1\t0\t-\t \t123.4\tobjrel_that\tSS\t0\t")
    lines.insert(30, b"EYELINK_SYNC\t1\t2\t0\t-\t \t125.4\tobjrel_that\tSS\t0\t")
    lines.insert(50, b"")  # a blank line is skipped silently (it holds no event)
    p.write_bytes(b"\r\n".join(lines))
    r = run("--results", str(copy / TABLE.name), "--logs", str(copy / "logs"), "--out", str(tmp_path / "o"))
    assert r.exit_code == 0, r.output
    text = flat(r.output)
    assert flat(f"{p.name}: 2 line(s) with unknown event name(s) 'EYELINK_SYNC' set aside (first at line 11)") in text
    summary = json.loads((tmp_path / "o" / "import_lakretz2021.json").read_text())
    assert summary["unmatched"]["lines with an unknown event set aside"] == 2
    assert summary["matched"]["exact"] == 131


def test_a_subject_missing_from_the_table_is_imported_and_counted(imported):
    out, df, _, output = imported
    assert (df["subject_id"] == "L104").sum() == 24
    assert flat("104 have logs but no row in the results table") in flat(output)


def test_two_logs_for_one_subject_and_session(copy, tmp_path):
    p = _log(copy, 101, 1)
    twin = p.with_name(p.name.replace("131646", "170000"))
    shutil.copy(p, twin)
    _bad(copy, tmp_path / "o", "two logs for subject 101, session 1", p.name, twin.name)


def test_a_table_row_with_an_unknown_condition(copy, tmp_path):
    t = copy / TABLE.name
    lines = t.read_text().splitlines(keepends=True)
    lines[5] = lines[5].replace(",PSS,", ",PXS,").replace(",SPS,", ",PXS,").replace(",SPP,", ",PXS,") \
        .replace(",PPS,", ",PXS,").replace(",SSS,", ",PXS,").replace(",SSP,", ",PXS,").replace(",PPP,", ",PXS,") \
        .replace(",PSP,", ",PXS,")
    assert ",PXS," in lines[5]
    t.write_text("".join(lines))
    _bad(copy, tmp_path / "o", f"{t}: line 6: column 'condition': 'PXS' is not a condition of")


def test_a_non_utf8_byte(copy, tmp_path):
    p = _log(copy, 103, 1)
    data = bytearray(p.read_bytes())
    at = data.index(b"che") + 1
    data[at] = 0xE8  # a Latin-1 'è' inside a word on some line
    p.write_bytes(bytes(data))
    line = bytes(data[:at]).count(b"\n") + 1
    _bad(copy, tmp_path / "o", f"{p}: line {line}: byte 0xe8 is not UTF-8")


def test_a_non_utf8_byte_in_the_table(copy, tmp_path):
    t = copy / TABLE.name
    data = t.read_bytes().replace(b"Filler", b"Fill\xe9r", 1)
    t.write_bytes(data)
    line = data[: data.index(b"\xe9")].count(b"\n") + 1
    _bad(copy, tmp_path / "o", f"{t}: line {line}: byte 0xe9 is not UTF-8")


def test_an_empty_folder(tmp_path):
    (tmp_path / "logs").mkdir()
    r = run("--logs", str(tmp_path / "logs"), "--out", str(tmp_path / "o"))
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert flat("no session logs named like") in flat(r.output) and flat("(it is empty)") in flat(r.output)


def test_a_malformed_line_inside_a_log_names_its_line(copy, tmp_path):
    p = _log(copy, 102, 2)
    lines = p.read_bytes().split(b"\r\n")
    lines[40] = lines[40].replace(b".", b",", 1)
    p.write_bytes(b"\r\n".join(lines))
    _bad(copy, tmp_path / "o", f"{p}: line 41: Time")


def test_an_unknown_sentence_type_in_a_log(copy, tmp_path):
    p = _log(copy, 101, 1)
    p.write_bytes(p.read_bytes().replace(b"\tobjrel_that\t", b"\tobjrel_who\t", 1))
    _bad(copy, tmp_path / "o", f"{p}: line", "'objrel_who' is not a known sentence type")


def test_neither_results_nor_logs():
    r = run("--out", "x")
    assert r.exit_code == 2 and flat("give --results") in flat(r.output)


def test_a_table_row_whose_answer_differs_from_its_log_is_matched_and_flagged(copy, tmp_path):
    t = copy / TABLE.name
    lines = t.read_text().splitlines(keepends=True)
    k = next(i for i, line in enumerate(lines) if ",CORRECT_INC,CORRECT," in line)
    lines[k] = lines[k].replace(",CORRECT_INC,CORRECT,", ",WRONG_INC,WRONG,")
    t.write_text("".join(lines))
    r = run("--results", str(t), "--logs", str(copy / "logs"), "--out", str(tmp_path / "o"))
    assert r.exit_code == 0, r.output
    df, _ = load([tmp_path / "o"], keep_outliers=True)
    x = df["extra"].map(json.loads)
    hit = df[x.map(lambda e: e["match"] == "answer_mismatch")]
    assert len(hit) == 1
    e = json.loads(hit["extra"].iloc[0])
    assert e["table_line"] == k + 1 and e["table_outcome"] == "WRONG_INC" and e["outcome"] == "CORRECT_INC"
    assert bool(hit["correct"].iloc[0]) is True  # the log's answer
    assert (x.map(lambda e: e["match"]) == "exact").sum() == 130
    assert flat("1 table row(s) match their log trial's stimulus but not its answer") in flat(r.output)


def test_a_log_trial_without_its_table_row_is_kept_as_log_only(copy, tmp_path):
    t = copy / TABLE.name
    lines = t.read_text().splitlines(keepends=True)
    removed = lines.pop(40)
    t.write_text("".join(lines))
    r = run("--results", str(t), "--logs", str(copy / "logs"), "--out", str(tmp_path / "o"))
    assert r.exit_code == 0, r.output
    df, _ = load([tmp_path / "o"], keep_outliers=True)
    x = df["extra"].map(json.loads)
    only = x[x.map(lambda e: e["match"] == "log_only")]
    assert len(only) == 1
    subject, _, _, vtype = removed.split(",")[:4]
    assert df.loc[only.index[0], "subject_id"] == f"L{subject}" and only.iloc[0]["violation_type"] == vtype
    summary = json.loads((tmp_path / "o" / "import_lakretz2021.json").read_text())
    assert summary["unmatched"]["log trials without a table row (subject in table)"] == 1
    assert len(df) == 168


def test_logs_in_sub_folders_are_found_and_other_files_noted(copy, tmp_path):
    logs = copy / "logs"
    for p in list(logs.glob("*Subj_10[12]_*.csv")):
        sub = logs / p.name.split("_Subj_")[1][:3]
        sub.mkdir(exist_ok=True)
        p.rename(sub / p.name)
    (logs / "README.txt").write_text("notes\n")
    r = run("--results", str(copy / TABLE.name), "--logs", str(logs), "--out", str(tmp_path / "o"))
    assert r.exit_code == 0, r.output
    assert flat("1 file(s) not named like a session log were not read: README.txt") in flat(r.output)
    summary = json.loads((tmp_path / "o" / "import_lakretz2021.json").read_text())
    assert summary["matched"]["exact"] == 131 and summary["files_read"]["session_logs"] == 7


def test_an_empty_log_is_noted_and_the_rest_imported(copy, tmp_path):
    p = _log(copy, 104, 2)
    p.write_bytes(b"")
    r = run("--results", str(copy / TABLE.name), "--logs", str(copy / "logs"), "--out", str(tmp_path / "o"))
    assert r.exit_code == 0, r.output
    assert flat(f"{p.name}: empty log (0 events), nothing imported from it") in flat(r.output)
    df, _ = load([tmp_path / "o"], keep_outliers=True)
    assert "L104" not in set(df["subject_id"]) and len(df) == 168 - 24


def test_a_training_log_comes_before_the_main_session_of_its_subject(tmp_path):
    from tests.support.lakretz_synthetic import SubjectPlan, write_release

    rel = write_release(tmp_path / "rel", [SubjectPlan(9, training_only=True), SubjectPlan(9, sessions=(1,))],
                        per_session=10, training_trials=6)
    r = run("--results", str(rel.table), "--logs", str(rel.logs), "--out", str(tmp_path / "o"))
    assert r.exit_code == 0, r.output
    df, _ = load([tmp_path / "o"], keep_outliers=True)
    assert df["block"].tolist() == ["training"] * 6 + ["main"] * 10
    assert df["trial_index"].tolist() == list(range(16))
    assert df["block_trial_index"].tolist() == list(range(6)) + list(range(10))
    assert df["started_at"].is_monotonic_increasing
    x = df["extra"].map(json.loads)
    assert x.map(lambda e: e["match"]).tolist() == ["training"] * 6 + ["exact"] * 10


def test_a_table_subject_without_logs_is_written_with_the_order_unknown(copy, tmp_path):
    for p in (copy / "logs").glob("*_Subj_103_*.csv"):
        p.unlink()
    r = run("--results", str(copy / TABLE.name), "--logs", str(copy / "logs"), "--out", str(tmp_path / "o"))
    assert r.exit_code == 0, r.output
    t = pd.read_csv(TABLE)
    n103 = int((t.subject == 103).sum())
    assert flat(f"subject(s) 103 of the results table have no log: their {n103} row(s)") in flat(r.output)
    side = json.loads(
        (tmp_path / "o" / "data" / "study-lakretz2021_subject-L103_session-unknown_data.json").read_text())
    assert side["order_known"] is False and side["n_trials_written"] == n103


def test_an_excluded_outlier_is_reported_as_an_outlier_not_as_an_empty_session(imported):
    """Regression: the outlier's emptied frame was once reported as a header-only session."""
    out = imported[0]
    df, info = load([out])  # default: the flagged subject (101) is excluded
    assert "L101" not in set(df["subject_id"])
    assert not [n for n in info.notes if "no complete trial" in n], info.notes
    assert any("101" in str(info.outliers.get(k, "")) for k in info.outliers) or "L101" in str(info.outliers)
