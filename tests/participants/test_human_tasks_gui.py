"""Each task kind as a 4-trial human session in a real PsychoPy window on a private Xvfb server.

The session runs in its own process (tests/support/run_task_session.py: the bundled example's
trials, built per docs/general_model.md until the design compiler serves them). The autopilot
presses real keys through the X server (XTEST); the rows must hold what it pressed, when it
pressed it (RTs within the polling and scheduling error), and the screenshots must show the screens.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from experiments.session import read_rows, session_paths

sys.path.insert(0, str(Path(__file__).parent.parent / "support"))
from task_examples import EXAMPLES, ROOT, base_spec, example_sequence, load  # noqa: E402

pytestmark = [pytest.mark.gui, pytest.mark.slow, pytest.mark.long]
try:  # from an injected press leaving the autopilot to its time on the keyboard clock (measured there)
    from tests.participants.test_participants_gui import PATH_LATENCY_MS  # noqa: E402
except ModuleNotFoundError:  # plain `pytest` puts tests/ itself on sys.path
    from test_participants_gui import PATH_LATENCY_MS  # noqa: E402

SHOTS = {"judgment": "judgment", "choice": "choice", "rating": "rating", "lexical_decision": "lexical_decision",
         "self_paced_reading": "self_paced_reading_word", "completion": "completion_typing"}


@pytest.fixture(scope="module")
def xdisplay():
    from tests.support.xdisplay import start_display, stop_display

    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed (apt-get install xvfb); GUI tests need a virtual display")
    started = start_display()
    if started is None:
        pytest.skip("Xvfb did not start")
    display, proc = started
    yield display
    stop_display(proc)


def run_psychopy(display: str, kind: str, spec: Path, out: Path, pid: str, shots: Path | None = None,
                 seed: int = 25, **env: str) -> subprocess.CompletedProcess:
    args = [sys.executable, str(ROOT / "tests" / "support" / "run_task_session.py"), kind, str(spec), str(out), pid,
            str(seed), "4"] + ([str(shots)] if shots else [])
    env = {**os.environ, "DISPLAY": display, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", **env}
    # hangs only: a loaded machine is slow
    return subprocess.run(args, env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)


def ink(path: Path) -> float:
    """Share of pixels that are not the background (a blank screenshot has none)."""
    im = np.asarray(Image.open(path).convert("RGB")).astype(int)
    return float((np.abs(im - im[0, 0]).sum(axis=2) > 60).mean())


@pytest.mark.parametrize("kind", list(EXAMPLES))
def test_a_four_trial_psychopy_session_of_each_task_kind(xdisplay, kind, tmp_path):
    spec = base_spec(tmp_path, kind)
    exp = load(spec)
    out, shots = tmp_path / "data", tmp_path / "shots"
    res = run_psychopy(xdisplay, kind, spec, out, "autopilot1", shots)
    assert res.returncode == 0, res.stderr[-3000:]
    rows = read_rows(session_paths(out, exp.name, "autopilot1", 1)[0])
    seq = example_sequence(kind, exp, "autopilot1", 25, 4, feedback_first=1)
    assert [r["item_id"] for r in rows] == [t.item_id for t in seq]
    assert {r["task"] for r in rows} == {kind} and {r["sequence_hash"] for r in rows} == {seq.sequence_hash}
    for r, t in zip(rows, seq, strict=False):
        extra = json.loads(r["extra"])
        plan = extra["autopilot"]
        phases = plan["phases"]
        # the X server delivered the planned keys: the row holds the planned answer
        assert r["response"] == plan["intended_response"], (r, plan)
        if plan["intended_correct"] is not None:
            assert r["correct"] == str(plan["intended_correct"]), r
        raw, sent = extra["raw"], plan["sent_ms"]  # sent: [key, ms on the trial's clock] as each press left
        if "answer" in phases:  # the answering press, from when it actually left (its plan can be late under load)
            key, onset = phases["answer"][0][1], raw["response_onset"]
            left = next(t for k, t in sent if k == key and t >= onset) - onset
            assert left >= phases["answer"][0][0] * 1000.0 - 1 and abs(float(r["rt_ms"]) - left) < PATH_LATENCY_MS, \
                (r["rt_ms"], left, phases)
        if kind == "choice":
            from participants.tasks.logic import screen_order
            order = screen_order(t, seq, None)
            assert json.loads(r["option_order"]) == order
            assert t.mat["options"][order[int(r["chosen_position"])]] == r["response"]
        if kind == "rating":
            assert float(r["rating"]) == float(r["response"])
        if kind == "self_paced_reading":
            advance = phases["read"][0][1]
            left = [ms for k, ms in sent if k == advance][: len(phases["read"])]  # the reading presses as they left
            want = [b - a for a, b in zip(left, left[1:], strict=False)]
            got = json.loads(r["word_rts_ms"])
            assert len(got) == len(want) == len(t.mat["sentence"].split())
            assert max(abs(g - w) for g, w in zip(got, want, strict=False)) < 2 * PATH_LATENCY_MS, (got, want)
            regions = [len(p.split()) for p in t.mat["regions"].split("|")]
            sums, k = [], 0
            for n in regions:
                sums.append(round(sum(got[k:k + n]), 3))
                k += n
            assert json.loads(r["region_rts_ms"]) == pytest.approx(sums, abs=0.01)
            if t.mat.get("question"):
                assert r["response"] in t.mat["question_options"]
        if kind == "completion":
            typed = [k for _, k in phases["type"]][:-1]
            assert [k for k, _ in json.loads(r["keystrokes"])] == typed
            assert r["response_text"] == plan["intended_response"]
    # the first trial gives feedback where there is a right answer (not on a rating, nor without a question)
    fb = exp.feedback
    assert rows[0]["feedback_text"] == (
        {"True": fb.correct_text, "False": fb.incorrect_text}.get(rows[0]["correct"]) or "")
    assert all(r["feedback_text"] == "" for r in rows[1:])
    shot = shots / f"{SHOTS[kind]}.png"
    assert shot.exists() and ink(shot) > 0.002, sorted(p.name for p in shots.iterdir())
    target = os.environ.get("TWINLAB_TASK_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        for p in shots.glob("*.png"):
            shutil.copyfile(p, Path(target) / f"psychopy_{kind}_{p.name}")
    psy = next((out / "psychopy").glob("*.csv")).read_text(encoding="utf-8")
    assert len(psy.strip().splitlines()) == 5


def test_a_task_session_stopped_after_two_trials_resumes_with_the_same_table(xdisplay, tmp_path):
    """--trials 2, then --resume: the general design's header is kept, the first rows untouched."""
    kind = "choice"
    spec = base_spec(tmp_path, kind)
    exp = load(spec)
    out = tmp_path / "data"
    res = run_psychopy(xdisplay, kind, spec, out, "autopilot2", TWINLAB_TEST_TRIALS="2")
    assert res.returncode == 0, res.stderr[-3000:]
    csv_path = session_paths(out, exp.name, "autopilot2", 1)[0]
    first = csv_path.read_text(encoding="utf-8")
    assert len(read_rows(csv_path)) == 2
    res = run_psychopy(xdisplay, kind, spec, out, "autopilot2", TWINLAB_TEST_RESUME="1")
    assert res.returncode == 0, res.stderr[-3000:]
    after = csv_path.read_text(encoding="utf-8")
    assert after.startswith(first)  # appended, never rewritten
    rows = read_rows(csv_path)
    seq = example_sequence(kind, exp, "autopilot2", 25, 4, feedback_first=1)
    assert [r["item_id"] for r in rows] == [t.item_id for t in seq]
    assert "option_order" in after.splitlines()[0] and "phenomenon" in after.splitlines()[0]
    meta = json.loads(session_paths(out, exp.name, "autopilot2", 1)[1].read_text())
    assert meta["status"] == "completed" and meta["resumes"][0]["from_trial"] == 2
