"""A torn last row (a kill or power cut in the middle of a write) never loses or repeats a trial.

One rule decides which rows are complete (`experiments.session.scan_table`): the human runner's
resume check, the session writer's reopen (truncate, record, then count) and the loaders all use
it. These tests cut a real session file at many byte offsets inside its last row and check that the
resume point, the truncated file and the sidecar's record agree. The end-to-end runs (a real
PsychoPy window, the real model) are in tests/participants/test_participants_gui.py and
tests/model_subjects/test_model_runner.py.
"""
from __future__ import annotations

import json

import pytest

from experiments.design_compiler import compile_sequence
from experiments.session import SessionError, SessionWriter, read_rows, recover_table, scan_table
from experiments.spec import load_spec
from participants.rows import trial_row
from participants.rsvp import TrialResult
from participants.runner import HumanRunConfig, prepare

N_DONE = 6  # complete rows before the torn one


@pytest.fixture(scope="module")
def spec():
    return load_spec("lakretz2021_nested")


def _result(trial) -> TrialResult:
    return TrialResult(response="violation", correct=trial.study_record.correct_response == "violation", rt_ms=400.0,
                       rt_sentence_end_ms=-100.0, word_onsets_ms=[600.0 + 500 * i for i in range(len(trial.words))],
                       word_durations_ms=[250.0] * len(trial.words), feedback_shown=True,
                       feedback_text='Correct, "quoted"\nand a second line', started_at="t0", ended_at="t1",
                       iti_onset=0.0, extra={"timing_mode": "frames"})


def _session(tmp_path, spec, n_rows: int) -> tuple[SessionWriter, bytes, int]:
    """A human session with `n_rows` rows; returns (writer, bytes, offset where the last row starts)."""
    seq = compile_sequence(spec, "P1")
    w = SessionWriter.create(tmp_path, experiment=spec.name, subject_id="P1", session=1, subject_kind="human",
                             spec_hash=seq.spec_hash, sequence_hash=seq.sequence_hash, n_trials=len(seq))
    start = 0
    for i in range(n_rows):
        start = w.csv_path.stat().st_size
        w.append(trial_row(seq[i], _result(seq[i]), seq, subject_id="P1", session=1))
    w.close("running")
    return w, w.csv_path.read_bytes(), start


def test_every_cut_inside_the_last_row_is_dropped_once_and_counted_by_the_same_rule(tmp_path, spec):
    w, data, row_start = _session(tmp_path, spec, N_DONE + 1)
    good = data[:row_start]
    row = data[row_start:]
    assert b"\n" in row[:-1], "the row holds a quoted line break (the hard case for a line-based cut)"
    cuts = sorted({1, 60, len(row) // 2, len(row) - 1, *range(5, len(row), 37),
                   row.index(b"\n") + 1})  # just after the line break inside the quoted feedback text
    for cut in cuts:
        w.csv_path.write_bytes(good + row[:cut])
        scan = scan_table(w.csv_path)
        assert scan.n_rows == N_DONE and scan.keep_bytes == len(good) and scan.dropped == row[:cut], cut
        assert [int(r["trial_index"]) for r in read_rows(w.csv_path)] == list(range(N_DONE))
        # the human runner's resume point comes from the same scan: trial N_DONE runs next
        prep = prepare(HumanRunConfig(spec=spec, participant="P1", out=tmp_path, resume=True), log=lambda s: None)
        assert prep.start == N_DONE, cut
    # an intact file keeps all its rows
    w.csv_path.write_bytes(data)
    assert scan_table(w.csv_path).n_rows == N_DONE + 1 and not scan_table(w.csv_path).torn


def test_reopen_truncates_records_then_counts(tmp_path, spec):
    w, data, row_start = _session(tmp_path, spec, N_DONE + 1)
    torn = data[:row_start] + data[row_start:row_start + 60]
    w.csv_path.write_bytes(torn)
    seq = compile_sequence(spec, "P1")
    w2 = SessionWriter.create(tmp_path, experiment=spec.name, subject_id="P1", session=1, subject_kind="human",
                              spec_hash=seq.spec_hash, sequence_hash=seq.sequence_hash, n_trials=len(seq), resume=True)
    assert w2.n_rows == N_DONE and w2.csv_path.read_bytes() == data[:row_start]
    # the next trial is the one that was torn, written once
    w2.append(trial_row(seq[N_DONE], _result(seq[N_DONE]), seq, subject_id="P1", session=1))
    w2.close("running")
    assert w2.csv_path.read_bytes() == data
    meta = json.loads(w2.json_path.read_text())
    (resume,) = meta["resumes"]
    assert resume["from_trial"] == N_DONE and resume["dropped_partial_line"] is True
    assert resume["dropped_bytes"] == 60 and resume["dropped_text"] == data[row_start:row_start + 60].decode()
    assert meta["n_trials_written"] == N_DONE + 1


def test_torn_header_is_rewritten_on_resume(tmp_path, spec):
    w, data, _ = _session(tmp_path, spec, 0)
    w.csv_path.write_bytes(data[:25])
    seq = compile_sequence(spec, "P1")
    w2 = SessionWriter.create(tmp_path, experiment=spec.name, subject_id="P1", session=1, subject_kind="human",
                              spec_hash=seq.spec_hash, sequence_hash=seq.sequence_hash, n_trials=len(seq), resume=True)
    w2.close("running")
    assert w2.n_rows == 0 and w2.csv_path.read_bytes() == data


def test_a_bad_row_in_the_middle_is_not_a_torn_tail(tmp_path, spec):
    """Only the tail can be torn; a short row followed by good ones is an error naming its line, and the
    file is left as it is (nothing truncated)."""
    w, data, row_start = _session(tmp_path, spec, 3)
    lines = data.split(b"\n")
    broken = b"\n".join([lines[0], b"a,b,c"] + lines[1:])
    w.csv_path.write_bytes(broken)
    with pytest.raises(SessionError, match=r"line 2: 3 cells where the header has \d+"):
        recover_table(w.csv_path)
    assert w.csv_path.read_bytes() == broken
