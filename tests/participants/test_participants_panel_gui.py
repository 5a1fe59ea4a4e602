"""The Lakretz et al. (2021) panel paradigm in a real PsychoPy window on a private Xvfb server.

A test process answers as a participant would: it follows the session's event log (written live)
and sends real key presses and mouse clicks with xdotool -- an early press during the sentence,
panel answers by key and by mouse, and no answer at all. A second test kills a session with
SIGKILL, resumes it, then runs the participant's second session.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from experiments.design_compiler import compile_sequence
from experiments.session import read_rows, session_paths
from experiments.spec import bundled_spec_path, load_spec

try:  # shared helpers and fixtures (the repository root, or tests/, is on sys.path)
    from tests.participants.test_participants_gui import (  # noqa: E402,F401
        PATH_LATENCY_MS,
        ROOT,
        env_for,
        n_rows,
        wait_for,
        xdisplay,
    )
except ModuleNotFoundError:  # plain `pytest` puts tests/ itself on sys.path
    from test_participants_gui import PATH_LATENCY_MS, ROOT, env_for, n_rows, wait_for, xdisplay  # noqa: E402,F401

pytestmark = [pytest.mark.gui, pytest.mark.slow]

WINDOW = (1024, 768)


def window_id(display: str, title: str) -> str:
    """The one visible window with exactly this title (pyglet keeps a hidden helper window, and the
    checkout path can contain the project's name: a substring search may find either)."""
    r = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", f"^{re.escape(title)}$"],
                       env=env_for(display), capture_output=True, text=True)
    ids = r.stdout.split()
    assert len(ids) == 1, f"expected one visible window titled {title!r}, found {ids} ({r.stderr.strip()})"
    return ids[0]


def panel_spec(tmp_path: Path, **timing) -> Path:
    """The bundled replication spec with short timings, 3 training trials and one instruction page."""
    data = yaml.safe_load(bundled_spec_path("lakretz2021_replication").read_text())
    data["timing"] = dict(fixation_ms=150, word_ms=150, gap_ms=100, panel_delay_ms=200, response_ms=4000,
                          feedback_ms=150, iti_ms=50, **timing)
    data["blocks"][0]["trials"] = 3
    data["texts"]["instructions"] = ["Answer on the panel. Press SPACE."]
    path = tmp_path / "panel.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def xdo(display: str, *args: str) -> None:
    subprocess.run(["xdotool", *args], env=env_for(display), check=True, timeout=10)


class EventFollower:
    """Reads the session's event log as it grows (tab-separated: Event, Block, Trial, Unit, Text, Time)."""

    def __init__(self, path: Path):
        self.path, self.lines = path, []

    def refresh(self) -> list[list[str]]:
        if self.path.exists():
            self.lines = [ln.split("\t") for ln in self.path.read_text(encoding="utf-8").splitlines()[1:]]
        return self.lines

    def seen(self, event: str, trial: int, unit: int | None = None) -> bool:
        return any(c[0] == event and c[2] == str(trial) and (unit is None or c[3] == str(unit))
                   for c in self.refresh())


@pytest.mark.long
def test_xdotool_participant_panel_keys_mouse_early_press_and_timeout(xdisplay, tmp_path):
    if shutil.which("xdotool") is None:
        pytest.skip("xdotool is not installed")
    spec_path = panel_spec(tmp_path)
    spec = load_spec(spec_path)
    out, pid = tmp_path / "data", "P5"
    csv_path, json_path = session_paths(out, spec.name, pid, 1)
    events = EventFollower(out / "events" / csv_path.name.replace("_data.csv", "_events.tsv"))
    # what the participant does on trials 0..4: (early press at unit 2?, answer, how, delay after panel onset)
    plan = [(True, "violation", "key", 0.5), (False, "no_violation", "key", 0.8), (False, "no_violation", "mouse", 0.6),
            (False, None, None, None), (True, "no_violation", "key", 0.4)]
    n = len(plan)
    shots = tmp_path / "shots"
    proc = subprocess.Popen([sys.executable, "-m", "experiments.cli", "run-human", str(spec_path), "--participant",
                             pid, "--trials", str(n), "--out", str(out), "--screenshots", str(shots)],
                            env=env_for(xdisplay), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sent: list[float] = []
    try:
        for i, (early, answer, how, delay) in enumerate(plan):
            t0 = time.monotonic()
            while not events.seen("FIX_ON", i):  # text pages (instructions, block intro) wait for SPACE
                if proc.poll() is not None:
                    raise AssertionError(proc.stderr.read())
                if time.monotonic() - t0 > 1.0:
                    xdo(xdisplay, "key", "space")
                    t0 = time.monotonic()
                time.sleep(0.05)
            if early:
                wait_for(lambda i=i: events.seen("WORD_ON", i, 2), 30, f"trial {i} unit 2", proc)
                xdo(xdisplay, "key", "f")
            wait_for(lambda i=i: events.seen("PanelOn", i), 30, f"trial {i} panel", proc)
            seen_at = time.monotonic()
            if answer is None:
                sent.append(float("nan"))
                continue
            if how == "key":
                time.sleep(delay)
                sent.append(time.monotonic() - seen_at)
                xdo(xdisplay, "key", spec.task.panel.keys[answer])
            else:  # a click between the boxes (no answer), then on ACCEPTABLE: on the right, vertically centred
                win = window_id(xdisplay, f"twinlab: {spec.name}")
                xdo(xdisplay, "mousemove", "--window", win, str(WINDOW[0] // 2), str(WINDOW[1] // 2))
                xdo(xdisplay, "click", "1")
                x = int(WINDOW[0] / 2 + 0.33 * WINDOW[1])
                xdo(xdisplay, "mousemove", "--window", win, str(x), str(WINDOW[1] // 2))
                time.sleep(max(0.1, delay - (time.monotonic() - seen_at)))
                sent.append(time.monotonic() - seen_at)
                xdo(xdisplay, "click", "1")
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    rows = read_rows(csv_path)
    seq = compile_sequence(spec, pid)
    assert [r["item_id"] for r in rows] == [seq[i].item_id for i in range(n)]
    for r, (early, answer, how, _delay), lag in zip(rows, plan, sent, strict=False):
        extra = json.loads(r["extra"])
        assert r["response_mode"] == "panel"
        if answer is None:  # no answer within response_ms: rejected, as the release's REJECTED trials
            assert r["response"] == "none" and r["correct"] == "" and r["rt_ms"] == ""
            assert r["feedback_text"] == spec.feedback.no_response_text
            continue
        assert r["response"] == answer, (r["trial_index"], r["response"], extra["presses"])
        assert r["correct"] == str(answer == r["correct_response"])
        assert extra["answered_by"] == ("mouse" if how == "mouse" else f"key:{spec.task.panel.keys[answer]}")
        # RT from panel onset: at least the wait after the panel appeared in the log, plus a little latency
        assert lag * 1000 - 5 <= float(r["rt_ms"]) <= lag * 1000 + 400, (r["rt_ms"], lag)
        assert r["feedback_text"] == (
            spec.feedback.correct_text if r["correct"] == "True" else spec.feedback.incorrect_text)
        # every panel press is listed, mouse clicks as key presses are: time from fixation onset, unit, answer
        panel_presses = [p for p in extra["presses"] if p["phase"] == "panel"]
        assert all(p["t_ms"] >= extra["panel_onset_ms"] and p["unit"] == len(json.loads(r["word_onsets_ms"])) - 1
                   for p in panel_presses), panel_presses
        if how == "mouse":
            assert [(p["key"], p["answer"]) for p in panel_presses] == [("mouse", None), ("mouse", answer)]
            first, clicked = (p["t_ms"] - extra["panel_onset_ms"] for p in panel_presses)
            assert abs(clicked - float(r["rt_ms"])) < 0.01  # the answering click is the RT
            assert 50 <= clicked - first <= 1000, (first, clicked)  # the miss came 0.1 s before it
        else:
            key = spec.task.panel.keys[answer]
            assert [(p["key"], p["answer"]) for p in panel_presses] == [(key, answer)]
            assert abs(panel_presses[0]["t_ms"] - extra["panel_onset_ms"] - float(r["rt_ms"])) < 0.01
        if early:
            assert r["early_response"] == "violation"
            unit = int(r["early_response_unit"])
            assert unit in (2, 3), unit  # pressed once unit 2 was on screen
            onsets = json.loads(r["word_onsets_ms"])
            t = float(r["early_response_ms"]) + onsets[0]
            assert onsets[unit] <= t < (onsets[unit + 1] if unit + 1 < len(onsets) else 1e9)
            assert any(p["phase"] == "sentence" and p["answer"] == "violation" for p in extra["presses"])
        else:
            assert r["early_response"] == "" and r["early_response_unit"] == "" and r["early_response_ms"] == ""
    meta = json.loads(json_path.read_text())
    assert meta["status"] == "completed" and meta["response_mode"] == "panel" and not meta["autopilot"]
    from PIL import Image

    for name in ("response_panel", "panel_fixation", "feedback_no_response"):
        assert (shots / f"{name}.png").exists(), name
    panel = Image.open(shots / "response_panel.png").convert("L")
    w, h = panel.size
    dark = [sum(1 for x in range(a, b) for y in range(h // 2 - 40, h // 2 + 40) if panel.getpixel((x, y)) < 60)
            for a, b in ((0, w // 2), (w // 2, w))]
    assert min(dark) > 200, dark  # a label box on each side
    log = events.refresh()
    assert [c[0] for c in log if c[2] == "0"][:2] == ["FIX_ON", "WORD_ON"]
    assert sum(c[0] == "PanelResp" for c in log) == n and sum(c[0] == "KEY_PRESS" for c in log) >= 2


@pytest.mark.long
def test_panel_session_survives_kill_9_resumes_and_continues_in_session_2(xdisplay, tmp_path):
    spec_path = panel_spec(tmp_path)
    data = yaml.safe_load(spec_path.read_text())
    data["timing"].update(word_ms=50, gap_ms=30, response_ms=1200, panel_delay_ms=100)
    spec_path.write_text(yaml.safe_dump(data))
    spec = load_spec(spec_path)
    out, pid, n = tmp_path / "data", "autopilot7", 8
    csv_path, json_path = session_paths(out, spec.name, pid, 1)
    base = [sys.executable, "-m", "experiments.cli", "run-human", str(spec_path), "--autopilot", "--participant", pid,
            "--out", str(out)]
    cmd = base + ["--trials", str(n)]
    proc = subprocess.Popen(cmd, env=env_for(xdisplay), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        wait_for(lambda: n_rows(csv_path) >= 3, 300, "three finished trials", proc)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    kept = read_rows(csv_path)
    assert 3 <= len(kept) < n
    res = subprocess.run(cmd + ["--resume"], env=env_for(xdisplay), cwd=ROOT, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr
    rows = read_rows(csv_path)
    seq1 = compile_sequence(spec, pid, session=1)
    assert [r["item_id"] for r in rows] == [seq1[i].item_id for i in range(n)] and rows[: len(kept)] == kept
    for r in rows:  # the autopilot's planned answers went through the X server and the panel
        plan = json.loads(r["extra"])["autopilot"]
        assert r["response_mode"] == "panel" and r["response"] == plan["intended_response"]
        # RT from panel onset vs when the answering press actually left the autopilot (its plan can be late)
        key = spec.task.panel.keys[plan["intended_response"]]
        sent = [t for k, t in plan["sent_ms"] if k == key and t >= json.loads(r["extra"])["panel_onset_ms"]]
        rt_sent = sent[0] - json.loads(r["extra"])["panel_onset_ms"]
        assert rt_sent >= plan["rt_ms"] - 1 and abs(float(r["rt_ms"]) - rt_sent) < PATH_LATENCY_MS, (r["rt_ms"], sent)
        assert (r["early_response"] == "violation") == (plan["early_ms"] is not None)
    meta = json.loads(json_path.read_text())
    assert meta["status"] == "completed" and meta["resumes"][0]["from_trial"] == len(kept)

    # session 2 continues the counterbalancing: its own sequence, no item of session 1
    res = subprocess.run(base + ["--trials", "3", "--session", "2"],
                         env=env_for(xdisplay), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    rows2 = read_rows(session_paths(out, spec.name, pid, 2)[0])
    seq2 = compile_sequence(spec, pid, session=2)
    assert [r["item_id"] for r in rows2] == [seq2[i].item_id for i in range(3)]
    assert {r["session"] for r in rows2} == {"2"} and rows2[0]["block"] == "main"
    assert not {r["item_id"] for r in rows2} & {t.item_id for t in seq1}
    # a session the spec does not have is refused before anything is written
    res = subprocess.run(cmd + ["--session", "3"], env=env_for(xdisplay), cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 2 and "--session 3" in res.stderr and "2 session(s)" in res.stderr
