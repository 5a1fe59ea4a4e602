"""Human sessions end to end in a real PsychoPy window on a private Xvfb server.

Each session runs in its own process (`python -m experiments.cli run-human ...`), as a lab would run
it, so a kill -9 is a real kill. The tests start their own Xvfb (whatever DISPLAY pytest has), so
injected keys never reach a desktop. Key presses come from the runner's autopilot (real X events
through XTEST) and, for the quit key and the dialog, from xdotool in the test.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from experiments.design_compiler import compile_sequence
from experiments.session import read_rows, session_paths
from experiments.spec import bundled_spec_path, load_spec

pytestmark = [pytest.mark.gui, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
# short but real timings; word_ms is what the 5 ms check is about
FAST_TIMING = dict(fixation_ms=150, word_ms=50, gap_ms=30, response_ms=500, feedback_ms=150, iti_ms=80)
TRAIN_TRIALS = 4
# From an injected press leaving the autopilot (XTEST) to its time on the keyboard clock: the X server and
# the keyboard backend only (not the poll that sends it, which came 34 ms after its plan at load 3). Measured
# at load 11 on this project's 2-core machine: 0.02-0.21 ms over 7 presses; 25 ms leaves the X server a
# whole time slice descheduled.
PATH_LATENCY_MS = 25
# Display timing (flip timestamps, clock-timed) on a quiet machine and on a busy one (more runnable processes
# than cores over the last minute: then the scheduler, not the runner, sets the timing, and a whole time slice
# can pass between two flips). Measured in three runs at load 9-13 on this project's 2-core machine: word
# durations off by median 1.7-4.7 ms, 57-88% within 5 ms, max 11-18; onset-to-onset median 3.7-5.5, the
# 90th percentile under 40, one 201 ms stall; fixation -11..+28 ms. So the busy limits bound the median and
# the 90th percentile, not the largest error; a runner that missed the spec's durations by a frame (17 ms)
# every time still fails both.
TIMING_LIMITS = {"quiet": dict(fixation=8, dur_median=2, dur_within_5=0.95, dur_max=15, soa_median=3, soa_max=20,
                               mean=2),
                 "busy": dict(fixation=60, dur_median=8, dur_within_5=0.4, dur_max=None, soa_median=10, soa_max=None,
                              p90=40, mean=8)}


def p90(values: list[float]) -> float:
    return sorted(values)[int(0.9 * (len(values) - 1))]


def machine_state() -> str:
    """quiet or busy (see TIMING_LIMITS), from the load average of the last minute."""
    return "busy" if os.getloadavg()[0] > (os.cpu_count() or 1) else "quiet"
SHOTS = ["block_intro", "break", "instructions", "fixation", "word", "response_prompt", "feedback_correct",
         "feedback_incorrect"]


@pytest.fixture(scope="module")
def xdisplay():
    """A private Xvfb display (skips when Xvfb is not installed)."""
    from tests.support.xdisplay import start_display, stop_display

    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed (apt-get install xvfb); GUI tests need a virtual display")
    started = start_display()
    if started is None:
        pytest.skip("Xvfb did not start")
    display, proc = started
    yield display
    stop_display(proc)


@pytest.fixture(scope="module")
def fast_spec(tmp_path_factory) -> Path:
    """The bundled spec with short timings and short blocks: 4 training trials (feedback), a break,
    then 6 test trials without feedback (the bundled test block has feedback; here it is off to
    check that feedback follows the block)."""
    data = yaml.safe_load(bundled_spec_path("lakretz2021_nested").read_text())
    data["timing"] = dict(FAST_TIMING)
    train, test = data["blocks"]
    train["trials"] = TRAIN_TRIALS
    test.update(trials=6, feedback=False)
    path = tmp_path_factory.mktemp("spec") / "fast.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def env_for(display: str) -> dict[str, str]:
    return {**os.environ, "DISPLAY": display, "PYTHONUNBUFFERED": "1"}


def cli(display: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "experiments.cli", "run-human", *args]


def run_session(display: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(cli(display, *args), env=env_for(display), cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def n_rows(csv_path: Path) -> int:
    if not csv_path.exists():
        return 0
    return max(0, sum(1 for line in csv_path.read_text().splitlines() if line) - 1)


def wait_for(cond, timeout: float, what: str, proc: subprocess.Popen | None = None) -> None:
    t0 = time.monotonic()
    while not cond():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"session exited ({proc.returncode}) while waiting for {what}: "
                                 f"{proc.stderr.read() if proc.stderr else ''}")
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def xdotool(display: str, *keys: str) -> None:
    subprocess.run(["xdotool", "key", *keys], env=env_for(display), check=True, timeout=10)


def check_rows_against_sequence(rows, spec_path: Path, participant: str, n: int) -> None:
    """Rows are trials 0..n-1 of an independently compiled sequence, each exactly once."""
    seq = compile_sequence(load_spec(spec_path), participant)
    assert [int(r["trial_index"]) for r in rows] == list(range(n))
    assert [r["item_id"] for r in rows] == [seq[i].item_id for i in range(n)]
    assert [r["words"] for r in rows] == [seq[i].sentence for i in range(n)]
    assert {r["sequence_hash"] for r in rows} == {seq.sequence_hash}


# ---- a whole short session --------------------------------------------------------------------
def test_autopilot_session_rows_timing_feedback_and_screenshots(xdisplay, fast_spec, tmp_path):
    out, shots = tmp_path / "data", tmp_path / "shots"
    n = 7  # 4 training trials with feedback, the break, 3 test trials without
    res = run_session(xdisplay, str(fast_spec), "--autopilot", "--autopilot-accuracy", "0.7", "--trials", str(n),
                      "--out", str(out), "--screenshots", str(shots))
    assert res.returncode == 0, res.stderr
    assert "NO VSYNC" in res.stderr  # warned clearly on the console

    spec = load_spec(fast_spec)
    csv_path, json_path = session_paths(out, spec.name, "autopilot", 1)
    rows = read_rows(csv_path)
    check_rows_against_sequence(rows, fast_spec, "autopilot", n)

    fb = spec.feedback
    lim = TIMING_LIMITS[machine_state()]
    fixation_errors: list[float] = []
    all_durations: list[float] = []
    soa_errors: list[float] = []
    for r in rows:
        extra = json.loads(r["extra"])
        plan = extra["autopilot"]
        # the key presses went through the X server and the keyboard: responses are what was planned
        assert r["response"] == plan["intended_response"], r
        assert (r["correct"] == "True") == (r["response"] == r["correct_response"]) == plan["intended_correct"]
        assert r["subject_kind"] == "human" and r["context_mode"] == "human"
        # feedback after every training trial, with the spec's texts; none in the test block here
        if r["block"] == "training":
            assert r["feedback_shown"] == "True" and extra["feedback_onset_ms"] is not None
            assert r["feedback_text"] == (fb.correct_text if r["correct"] == "True" else fb.incorrect_text)
        else:
            assert r["feedback_shown"] == "False" and r["feedback_text"] == "" and extra["feedback_onset_ms"] is None
        # RT from the critical word's onset agrees with when the press actually left the autopilot (not its
        # plan: on a loaded machine the poll that sends it can come tens of ms late, 34 ms seen at load 3)
        if r["response"] == "violation":
            sent = [t for key, t in plan["sent_ms"] if key == spec.task.response_key]
            # never early
            assert sent and sent[0] - extra["critical_onset_ms"] >= plan["rt_ms"] - 1, (sent, extra, plan)
            assert abs(float(r["rt_ms"]) - (sent[0] - extra["critical_onset_ms"])) < PATH_LATENCY_MS, (
                r["rt_ms"], sent, extra)
            span = extra["sentence_end_ms"] - extra["critical_onset_ms"]
            assert float(r["rt_ms"]) - float(r["rt_sentence_end_ms"]) == pytest.approx(span, abs=0.01)
        else:
            assert r["rt_ms"] == "" and r["rt_sentence_end_ms"] == ""
            assert extra["prompt_onset_ms"] is not None  # the response window was shown
        # timing: one onset per word from the flips; clock-timed durations within 5 ms of the spec
        words = r["words"].split(" ")
        onsets, durations = json.loads(r["word_onsets_ms"]), json.loads(r["word_durations_ms"])
        assert len(onsets) == len(durations) == len(words)
        all_durations += durations
        soa = FAST_TIMING["word_ms"] + FAST_TIMING["gap_ms"]
        if r["trial_index"] != "0":  # trial 0's critical word waited for its screenshot (taken before its flip)
            soa_errors += [abs((b - a) - soa) for a, b in zip(onsets, onsets[1:], strict=False)]
        fixation_errors.append(abs(onsets[0] - FAST_TIMING["fixation_ms"]))
        assert extra["timing_mode"] == "clock"
    # clock-timed word durations within 5 ms of the spec (frame counting here would show ~13 flips of
    # ~0.6 ms = ~8 ms). Quiet: 1 in 20 words may have a scheduler hiccup, never 15 ms; busy: TIMING_LIMITS.
    state = machine_state()
    assert (statistics.median(fixation_errors) if state == "busy" else max(fixation_errors)) < lim["fixation"], \
        (state, fixation_errors)
    errors = sorted(abs(d - FAST_TIMING["word_ms"]) for d in all_durations)
    within = sum(e < 5 for e in errors) / len(errors)
    assert within >= lim["dur_within_5"] and statistics.median(errors) < lim["dur_median"], (state, errors)
    # onset to onset = word + gap, from the flip timestamps
    assert statistics.median(soa_errors) < lim["soa_median"], (state, sorted(soa_errors))
    if state == "quiet":
        assert errors[-1] < lim["dur_max"] and max(soa_errors) < lim["soa_max"], (errors[-5:], sorted(soa_errors)[-5:])
    else:
        assert p90(errors) < lim["p90"] and p90(soa_errors) < lim["p90"], (errors[-5:], sorted(soa_errors)[-5:])
    assert [r["block"] for r in rows] == ["training"] * TRAIN_TRIALS + ["test"] * (n - TRAIN_TRIALS)
    training = rows[:TRAIN_TRIALS]
    assert {r["response"] for r in rows} == {"violation", "no_violation"}
    assert {r["correct"] for r in training} == {"True", "False"}  # both feedback screens were shown

    meta = json.loads(json_path.read_text())
    assert meta["status"] == "completed" and meta["n_trials_written"] == n and meta["subject_kind"] == "human"
    assert meta["vsync"] is False and meta["timing_mode"] == "clock"
    assert meta["no_vsync_warning"].startswith("NO VSYNC")
    assert meta["runs"][0]["refresh"]["psychopy_rate_hz"] is None or meta["runs"][0]["refresh"]["psychopy_rate_hz"] > 0
    assert meta["runs"][0]["refresh"]["n_intervals"] >= 100
    assert meta["word_timing"]["n"] == sum(len(r["words"].split(" ")) for r in rows)
    assert meta["word_timing"]["max_abs_error_ms"] == pytest.approx(errors[-1], abs=0.01)
    assert meta["word_timing"]["mean_abs_error_ms"] < lim["mean"]
    assert meta["autopilot"] is True and meta["data_kind"].startswith("SIMULATED")
    assert meta["runs"][0]["display"]["keyboard_backend"] in ("ptb", "iohub", "event")

    # the PsychoPy-style file has the same trials
    psy = read_rows(Path(meta["psychopy_csv"]))
    assert [p["trials.thisN"] for p in psy] == [r["trial_index"] for r in rows]
    assert [p["key_resp.corr"] for p in psy] == ["1" if r["correct"] == "True" else "0" for r in rows]

    # screenshots: every screen kind, window-sized, and the feedback in the spec's colours
    from PIL import Image

    for name in SHOTS:
        assert (shots / f"{name}.png").exists(), name
    size = Image.open(shots / "word.png").size
    assert size == (1024, 768)

    def count(name, pred):
        im = Image.open(shots / f"{name}.png").convert("RGB")
        return sum(1 for px in im.getdata() if pred(*px))

    greenish = lambda r, g, b: g > 90 and g > r + 60 and g > b + 60  # noqa: E731
    reddish = lambda r, g, b: r > 180 and r > g + 100 and r > b + 100  # noqa: E731
    assert count("feedback_correct", greenish) > 200 and count("feedback_correct", reddish) == 0
    assert count("feedback_incorrect", reddish) > 200 and count("feedback_incorrect", greenish) == 0
    dark = lambda r, g, b: r + g + b < 150  # noqa: E731
    assert count("word", dark) > 100 and count("fixation", dark) > 20
    assert count("instructions", dark) > 5 * count("word", dark)


# ---- kill -9 and resume -----------------------------------------------------------------------
def test_kill_9_then_resume_gives_the_complete_sequence(xdisplay, fast_spec, tmp_path):
    out, n, pid_name = tmp_path / "data", 8, "autopilot2"
    spec = load_spec(fast_spec)
    csv_path, json_path = session_paths(out, spec.name, pid_name, 1)
    proc = subprocess.Popen(cli(xdisplay, str(fast_spec), "--autopilot", "--participant", pid_name, "--trials",
                                str(n), "--out", str(out)),
                            env=env_for(xdisplay), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        wait_for(lambda: n_rows(csv_path) >= 3, 300, "three finished trials", proc)  # (the block ends at 4)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    kept = read_rows(csv_path)
    assert 3 <= len(kept) < n - 1
    check_rows_against_sequence(kept, fast_spec, pid_name, len(kept))
    assert json.loads(json_path.read_text())["status"] == "running"  # killed: nobody closed it

    # a plain restart refuses to touch the files
    again = run_session(xdisplay, str(fast_spec), "--autopilot", "--participant", pid_name, "--trials", str(n),
                        "--out", str(out))
    assert again.returncode == 2 and "already exists" in again.stderr and "--resume" in again.stderr

    res = run_session(xdisplay, str(fast_spec), "--autopilot", "--participant", pid_name, "--trials", str(n),
                      "--out", str(out), "--resume")
    assert res.returncode == 0, res.stderr
    rows = read_rows(csv_path)
    check_rows_against_sequence(rows, fast_spec, pid_name, n)  # none missing, none duplicated
    assert rows[: len(kept)] == kept  # finished trials untouched
    meta = json.loads(json_path.read_text())
    assert meta["status"] == "completed" and meta["n_trials_written"] == n
    (resume,) = meta["resumes"]
    assert resume["from_trial"] == len(kept) and resume["previous_status"] == "running"
    assert len(meta["runs"]) == 2 and resume["refresh"]["n_intervals"] >= 100
    assert meta["word_timing"]["n"] == sum(len(r["words"].split(" ")) for r in rows)  # both runs' words
    psy = read_rows(Path(meta["psychopy_csv"]))
    assert [int(p["trials.thisN"]) for p in psy] == list(range(n))


# ---- the quit key -----------------------------------------------------------------------------
def test_escape_asks_for_confirmation_and_aborts_keeping_rows(xdisplay, fast_spec, tmp_path):
    if shutil.which("xdotool") is None:
        pytest.skip("xdotool is not installed")
    out, pid_name = tmp_path / "data", "autopilot3"
    spec = load_spec(fast_spec)
    csv_path, json_path = session_paths(out, spec.name, pid_name, 1)
    proc = subprocess.Popen(cli(xdisplay, str(fast_spec), "--autopilot", "--participant", pid_name,
                                "--out", str(out)),
                            env=env_for(xdisplay), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: n_rows(csv_path) >= 2, 300, "two finished trials", proc)
        xdotool(xdisplay, "Escape")
        time.sleep(0.8)
        xdotool(xdisplay, "n")  # declined: the session goes on
        k = n_rows(csv_path)
        wait_for(lambda: n_rows(csv_path) >= k + 2, 180, "two more trials after declining", proc)
        xdotool(xdisplay, "Escape")
        time.sleep(0.8)
        kept = n_rows(csv_path)
        xdotool(xdisplay, "y")
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    assert "aborted" in stdout
    rows = read_rows(csv_path)
    assert len(rows) == kept >= 4
    check_rows_against_sequence(rows, fast_spec, pid_name, len(rows))
    meta = json.loads(json_path.read_text())
    assert meta["status"] == "aborted" and "escape" in meta["abort_reason"]
    assert meta["n_trials_written"] == len(rows) and meta["ended_at"]
    assert [q["answer"] for q in meta["quit_prompts"]] == ["n", "y"]


# ---- refresh-rate refusal ---------------------------------------------------------------------
def test_expected_refresh_without_vsync_refuses_unless_overridden(xdisplay, fast_spec, tmp_path):
    out = tmp_path / "data"
    res = run_session(xdisplay, str(fast_spec), "--autopilot", "--expected-refresh-hz", "60", "--out", str(out))
    assert res.returncode == 2
    msg = " ".join(res.stderr.split())
    assert "refusing to start" in msg and "vertical sync was not detected" in msg and "--allow-refresh-mismatch" in msg
    assert not (out / "data").exists()  # nothing written

    res = run_session(xdisplay, str(fast_spec), "--autopilot", "--expected-refresh-hz", "60", "--out", str(out),
                      "--allow-refresh-mismatch", "--trials", "1")
    assert res.returncode == 0, res.stderr
    meta = json.loads(session_paths(out, load_spec(fast_spec).name, "autopilot", 1)[1].read_text())
    policy = meta["runs"][0]["timing_policy"]
    assert policy["overridden"] and policy["mode"] == "clock" and policy["expected_refresh_hz"] == 60


# ---- the participant dialog -------------------------------------------------------------------
def test_participant_dialog_collects_id_session_and_spec_fields(xdisplay, monkeypatch):
    if shutil.which("xdotool") is None:
        pytest.skip("xdotool is not installed")
    from participants.dialog import DialogUnavailable, check_dialog_possible

    monkeypatch.setenv("DISPLAY", xdisplay)  # for the library check below
    try:
        check_dialog_possible()
    except DialogUnavailable as exc:
        pytest.skip(str(exc))
    code = ("import json; from experiments.spec import load_spec; from participants.dialog import ask_participant_info;"
            "print(json.dumps(ask_participant_info(load_spec('lakretz2021_nested'))))")
    proc = subprocess.Popen([sys.executable, "-c", code], env=env_for(xdisplay), cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        def dialog_open() -> bool:
            # visible windows with exactly the dialog's title: pyglet's hidden helper window can match a
            # substring (its name may contain the checkout path)
            r = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", "^twinlab: lakretz2021_nested$"],
                               env=env_for(xdisplay),
                               capture_output=True, text=True)
            return bool(r.stdout.strip())

        wait_for(dialog_open, 30, "the dialog window", proc)
        time.sleep(0.5)
        subprocess.run(["xdotool", "type", "P7"], env=env_for(xdisplay), check=True)
        xdotool(xdisplay, "Tab", "ctrl+a")
        subprocess.run(["xdotool", "type", "2"], env=env_for(xdisplay), check=True)
        xdotool(xdisplay, "Tab")
        subprocess.run(["xdotool", "type", "31"], env=env_for(xdisplay), check=True)
        xdotool(xdisplay, "Return")
        stdout, stderr = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    answers = json.loads(stdout.strip().splitlines()[-1])
    assert answers["participant"] == "P7" and int(answers["session"]) == 2 and answers["age"] == "31"
    assert set(answers) == {"participant", "session", "age", "handedness", "native_language"}


# ---- the frame-counting path ------------------------------------------------------------------
def test_frame_timing_path_counts_frames_and_dropped_frames(xdisplay, fast_spec, tmp_path):
    """Xvfb has no vsync, so the test hook forces frame timing at an assumed 2000 Hz (0.5 ms frames):
    every word is then 100 flips, and flips slower than 0.75 ms count as dropped frames."""
    out = tmp_path / "data"
    env = {**env_for(xdisplay), "TWINLAB_TEST_FORCE_FRAMES_HZ": "2000"}
    res = subprocess.run(cli(xdisplay, str(fast_spec), "--autopilot", "--trials", "2", "--out", str(out)), env=env,
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    csv_path, json_path = session_paths(out, load_spec(fast_spec).name, "autopilot", 1)
    rows = read_rows(csv_path)
    extras = [json.loads(r["extra"]) for r in rows]
    assert all(e["timing_mode"] == "frames" and e["word_frames"] == 100 for e in extras)
    assert all(isinstance(e["dropped_frames"], int) for e in extras)
    meta = json.loads(json_path.read_text())
    assert meta["timing_mode"] == "frames" and meta["dropped_frames"] == sum(e["dropped_frames"] for e in extras)
    assert meta["dropped_frames"] > 0  # real flips here take ~1 ms > 1.5 frames of 0.5 ms
    assert any("TEST HOOK" in w for w in meta["runs"][0]["warnings"])
    # a word's 100 frames took at least 100 flips of >= ~0.3 ms each
    assert all(d > 30 for r in rows for d in json.loads(r["word_durations_ms"]))


# ---- a torn last row --------------------------------------------------------------------------
@pytest.mark.parametrize("cut", ["half"])  # every other cut point: tests/hostile/test_torn_row.py (no window needed)
def test_torn_last_row_is_run_again_once_on_resume(xdisplay, fast_spec, tmp_path, cut):
    """A power cut in the middle of writing row 4: resume runs trial 3 again, and every trial is there once.

    Cut in half, the row still holds its trial index and item id: the old resume counted it as a
    trial while the writer dropped it, so that trial was never run."""
    out, pid_name, first, n = tmp_path / "data", "autopilot3", 4, 6
    spec = load_spec(fast_spec)
    csv_path, json_path = session_paths(out, spec.name, pid_name, 1)
    res = run_session(xdisplay, str(fast_spec), "--autopilot", "--participant", pid_name, "--trials", str(first),
                      "--out", str(out))
    assert res.returncode == 0, res.stderr
    data = csv_path.read_bytes()
    last = data.rstrip(b"\n").rfind(b"\n") + 1
    keep = (len(data) - last) // 2 if cut == "half" else cut
    csv_path.write_bytes(data[: last + keep])
    res = run_session(xdisplay, str(fast_spec), "--autopilot", "--participant", pid_name, "--trials", str(n),
                      "--out", str(out), "--resume")
    assert res.returncode == 0, res.stderr
    assert "dropped a partly written row 4" in " ".join(res.stderr.split())
    rows = read_rows(csv_path)
    check_rows_against_sequence(rows, fast_spec, pid_name, n)  # trial 3 once, nothing missing
    assert csv_path.read_bytes().startswith(data[:last])
    meta = json.loads(json_path.read_text())
    assert meta["status"] == "completed" and meta["n_trials_written"] == n
    (resume,) = meta["resumes"]
    assert resume["from_trial"] == first - 1 and resume["dropped_bytes"] == keep
    psy = read_rows(Path(meta["psychopy_csv"]))
    assert [int(p["trials.thisN"]) for p in psy] == list(range(n))
