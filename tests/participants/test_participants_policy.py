"""Human runner, without a window: timing policy, refusals before any file is written, row formats."""
from __future__ import annotations

import json
import random
import sys

import pytest
from typer.testing import CliRunner

from experiments.cli import app
from experiments.design_compiler import compile_sequence
from experiments.schema import COLUMN_NAMES
from experiments.session import SessionWriter, read_rows, session_paths
from experiments.spec import load_spec
from participants.rows import PSYCHOPY_COLUMNS, PsychopyCsv, psychopy_row, trial_row
from participants.rsvp import TrialResult
from participants.runner import HumanRunConfig, RunError, prepare
from participants.timing import RefreshMeasurement, decide_timing, frame_quantisation_warnings


def synced(hz: float, n: int = 120, jitter_ms: float = 0.05, seed: int = 0) -> RefreshMeasurement:
    """Flip intervals of a display with vsync: one refresh period each, tiny jitter."""
    rng = random.Random(seed)
    period = 1000.0 / hz
    return RefreshMeasurement(hz, [period + rng.uniform(-jitter_ms, jitter_ms) for _ in range(n)])


def xvfb_like(seed: int = 0) -> RefreshMeasurement:
    """What was measured under Xvfb: ~270 Hz reported, flips every 1.1-3.4 ms (mean 1.6)."""
    rng = random.Random(seed)
    return RefreshMeasurement(270.0, [rng.choice([1.1, 1.2, 1.3, 1.5, 1.6, 2.0, 3.4]) for _ in range(120)])


# ---- timing policy ------------------------------------------------------------------------------
def test_synced_60hz_times_by_frames():
    p = decide_timing(synced(60.0), expected_hz=None, tolerance_hz=3)
    assert p.mode == "frames" and p.vsync and p.refuse is None and not p.warnings
    assert p.frames(250) == 15 and p.frames(600) == 36
    assert p.planned_ms(250) == pytest.approx(250.0)


def test_frames_round_and_warn_when_not_a_whole_number_of_frames():
    p = decide_timing(synced(144.0), expected_hz=144, tolerance_hz=3)
    assert p.mode == "frames" and p.frames(250) == 36  # 250 ms = 36 frames = 250.0 ms at 144 Hz
    p75 = decide_timing(synced(75.0), expected_hz=None, tolerance_hz=3)
    assert p75.frames(250) == 19  # 18.75 frames -> 19 frames = 253.3 ms
    (w,) = frame_quantisation_warnings(p75, {"word_ms": 250, "gap_ms": 240})
    assert "word_ms=250" in w and "253.3" in w


def test_rate_disagreeing_with_expected_refuses_unless_overridden():
    p = decide_timing(synced(75.0), expected_hz=60, tolerance_hz=3)
    assert p.mode == "frames" and p.refuse and "75.00 Hz" in p.refuse and "--allow-refresh-mismatch" in p.refuse
    ok = decide_timing(synced(61.5), expected_hz=60, tolerance_hz=3)
    assert ok.refuse is None
    over = decide_timing(synced(75.0), expected_hz=60, tolerance_hz=3, allow_mismatch=True)
    assert over.refuse is None and over.overridden and over.mode == "frames" and over.refresh_hz == 75.0
    assert any("overridden" in w for w in over.warnings)


@pytest.mark.parametrize("m", [xvfb_like(), RefreshMeasurement(None, [0.6] * 50),
                               RefreshMeasurement(1800.0, [0.55] * 120)], ids=["xvfb", "no-rate", "too-fast"])
def test_display_without_vsync_is_timed_by_clock_with_a_warning(m):
    p = decide_timing(m, expected_hz=None, tolerance_hz=3)
    assert p.mode == "clock" and not p.vsync and p.refuse is None
    assert p.warnings and p.warnings[0].startswith("NO VSYNC")
    assert p.planned_ms(250) == 250.0


def test_missing_vsync_refuses_when_the_spec_expects_a_rate():
    p = decide_timing(xvfb_like(), expected_hz=60, tolerance_hz=3)
    assert p.refuse and "vertical sync was not detected" in p.refuse
    over = decide_timing(xvfb_like(), expected_hz=60, tolerance_hz=3, allow_mismatch=True)
    assert over.refuse is None and over.mode == "clock" and over.overridden


def test_high_refresh_monitor_needs_to_be_declared():
    # 360 Hz with regular flips: plausible only when the lab says it expects it
    assert decide_timing(synced(360.0), expected_hz=None, tolerance_hz=3).mode == "clock"
    assert decide_timing(synced(360.0), expected_hz=360, tolerance_hz=3).mode == "frames"


def test_psychopy_estimate_contradicting_the_flip_intervals_means_no_vsync():
    # PsychoPy found a "stable" 316 Hz stretch, but flips really come every 0.55 ms (measured here)
    m = RefreshMeasurement(316.0, [0.55] * 120)
    p = decide_timing(m, expected_hz=316, tolerance_hz=3)
    assert p.mode == "clock" and p.refuse


def test_a_few_dropped_frames_in_the_measurement_keep_vsync():
    m = synced(60.0)
    m.intervals_ms[10] *= 2
    m.intervals_ms[70] *= 2
    assert decide_timing(m, expected_hz=60, tolerance_hz=3).mode == "frames"


# ---- refusals before anything is written --------------------------------------------------------
@pytest.fixture(scope="module")
def spec():
    return load_spec("lakretz2021_nested")


def test_existing_session_is_refused_naming_the_file(tmp_path, spec):
    seq = compile_sequence(spec, "P1")
    w = SessionWriter.create(tmp_path, experiment=spec.name, subject_id="P1", session=1, subject_kind="human",
                             spec_hash=seq.spec_hash, sequence_hash=seq.sequence_hash, n_trials=len(seq))
    w.close("aborted")
    csv_path, _ = session_paths(tmp_path, spec.name, "P1", 1)
    before = csv_path.read_bytes()
    res = CliRunner().invoke(app, ["run-human", "lakretz2021_nested", "--participant", "P1", "--out", str(tmp_path)])
    assert res.exit_code == 2
    squashed = "".join(res.output.split())  # rich wraps long paths
    assert str(csv_path) in squashed
    assert "alreadyexists" in squashed and "--resume" in squashed
    assert csv_path.read_bytes() == before  # untouched


def test_refusals_happen_before_psychopy_is_imported(tmp_path, spec):
    cfg = HumanRunConfig(spec=spec, participant="P2", out=tmp_path, resume=True)
    with pytest.raises(RunError, match="nothing to resume"):
        prepare(cfg)
    with pytest.raises(RunError, match="starting with 'autopilot'"):
        prepare(HumanRunConfig(spec=spec, participant="P2", out=tmp_path, autopilot=True))
    with pytest.raises(RunError, match="letters and digits"):
        prepare(HumanRunConfig(spec=spec, participant="P-2", out=tmp_path))
    assert not list(tmp_path.iterdir())  # nothing written


def test_resume_of_a_different_sequence_is_refused(tmp_path, spec):
    other = compile_sequence(spec, "P3", seed=99)
    w = SessionWriter.create(tmp_path, experiment=spec.name, subject_id="P3", session=1, subject_kind="human",
                             spec_hash=other.spec_hash, sequence_hash=other.sequence_hash, n_trials=len(other))
    w.close("aborted")
    with pytest.raises(RunError, match="sequence_hash"):
        prepare(HumanRunConfig(spec=spec, participant="P3", out=tmp_path, resume=True))
    # the same sequence resumes from the next trial
    p = prepare(HumanRunConfig(spec=spec, participant="P3", out=tmp_path, resume=True, seed=99))
    assert p.start == 0 and p.n_planned == len(other)


def test_resume_point_and_complete_session(tmp_path, spec):
    seq = compile_sequence(spec, "P4")
    w = SessionWriter.create(tmp_path, experiment=spec.name, subject_id="P4", session=1, subject_kind="human",
                             spec_hash=seq.spec_hash, sequence_hash=seq.sequence_hash, n_trials=3)
    for t in seq.trials[:3]:
        w.append(trial_row(t, _result(t), seq, subject_id="P4", session=1))
    w.close("completed")
    assert prepare(HumanRunConfig(spec=spec, participant="P4", out=tmp_path, resume=True, trials=5)).start == 3
    with pytest.raises(RunError, match="already holds 3 of 3"):
        prepare(HumanRunConfig(spec=spec, participant="P4", out=tmp_path, resume=True, trials=3))


def _three_trials(tmp_path, spec, pid, seed=None):
    seq = compile_sequence(spec, pid, seed)
    w = SessionWriter.create(tmp_path, experiment=spec.name, subject_id=pid, session=1, subject_kind="human",
                             spec_hash=seq.spec_hash, sequence_hash=seq.sequence_hash, n_trials=3,
                             metadata={"seed": seq.seed})
    for t in seq.trials[:3]:
        w.append(trial_row(t, _result(t), seq, subject_id=pid, session=1))
    w.close("aborted")
    return session_paths(tmp_path, spec.name, pid, 1)


@pytest.mark.parametrize("column, value", [("words", "la frase cambiata"), ("sequence_hash", "0" * 16),
                                           ("item_id", "other-item"), ("spec_hash", "abc")])
def test_resume_refuses_rows_that_are_not_the_sequence_naming_the_line(tmp_path, spec, column, value):
    csv_path, _ = _three_trials(tmp_path, spec, "P6")
    lines = csv_path.read_text().splitlines(keepends=True)
    header = lines[0].rstrip("\n").split(",")
    import csv as _csv
    import io
    row = next(_csv.reader(io.StringIO(lines[2])))
    row[header.index(column)] = value
    buf = io.StringIO()
    _csv.writer(buf, lineterminator="\n").writerow(row)
    lines[2] = buf.getvalue()
    csv_path.write_text("".join(lines))
    before = csv_path.read_bytes()
    with pytest.raises(RunError) as err:
        prepare(HumanRunConfig(spec=spec, participant="P6", out=tmp_path, resume=True, trials=6))
    msg = str(err.value)
    assert f"{csv_path} line 3 (row 2)" in msg and column in msg
    assert csv_path.read_bytes() == before


def test_rerun_with_another_seed_names_the_difference(tmp_path, spec):
    _three_trials(tmp_path, spec, "P7", seed=5)
    with pytest.raises(RunError, match="seed 5 there, 1 now|seed 5 there"):
        prepare(HumanRunConfig(spec=spec, participant="P7", out=tmp_path, resume=True, trials=6))
    with pytest.raises(RunError, match="already exists .*written with other settings: seed 5 there"):
        prepare(HumanRunConfig(spec=spec, participant="P7", out=tmp_path))
    assert prepare(HumanRunConfig(spec=spec, participant="P7", out=tmp_path, resume=True, trials=6, seed=5)).start == 3


# ---- rows -------------------------------------------------------------------------------------
def _result(trial, response="violation", rt=412.5):
    return TrialResult(response=response, correct=response == trial.study_record.correct_response, rt_ms=rt,
                       rt_sentence_end_ms=rt - 1000, word_onsets_ms=[600.0 + 500 * i for i in range(len(trial.words))],
                       word_durations_ms=[250.0] * len(trial.words), feedback_shown=True, feedback_text="Correct!",
                       started_at="t0", ended_at="t1", iti_onset=0.0, extra={"timing_mode": "frames"})


def test_trial_row_fits_the_schema_and_psychopy_view_round_trips(tmp_path, spec):
    seq = compile_sequence(spec, "P5")
    t = seq[0]
    row = trial_row(t, _result(t), seq, subject_id="P5", session=2, extra={"restarts": 1})
    assert set(row) <= set(COLUMN_NAMES)
    assert row["subject_kind"] == "human" and row["context_mode"] == "human" and row["session"] == 2
    assert json.loads(row["word_durations_ms"]) == [250.0] * len(t.words)
    assert json.loads(row["extra"]) == {"timing_mode": "frames", "restarts": 1}
    info = {"participant": "P5", "session": 2, "expName": spec.name, "response_key": "space"}
    typed = psychopy_row(row, info)
    assert typed["key_resp.rt"] == pytest.approx(0.4125) and typed["key_resp.keys"] == "space"
    assert typed["trials.thisN"] == 0 and json.loads(typed["word_durations"])[0] == 0.25
    # the same row read back from the trial table (strings) gives the same PsychoPy row
    w = SessionWriter.create(tmp_path, experiment=spec.name, subject_id="P5", session=2, subject_kind="human",
                             spec_hash=seq.spec_hash, sequence_hash=seq.sequence_hash, n_trials=1)
    w.append(row)
    w.close()
    (back,) = read_rows(w.csv_path)
    assert {k: str(v) for k, v in psychopy_row(back, info).items()} == {k: str(v) for k, v in typed.items()}
    path = tmp_path / "psychopy" / "x.csv"
    PsychopyCsv(path, info, [back]).close()
    lines = path.read_text().splitlines()
    assert lines[0].split(",") == PSYCHOPY_COLUMNS and len(lines) == 2


def test_cli_module_imports_nothing_heavy():
    import subprocess

    code = ("import sys, participants.cli; heavy = [m for m in ('psychopy', 'pyglet', 'torch', 'matplotlib', 'rpy2') "
            "if m in sys.modules]; print(heavy); sys.exit(1 if heavy else 0)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0
