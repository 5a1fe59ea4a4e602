"""Shared helpers of the browser-runner tests: short specs, a page-like trial report, a real server process.

`page_report` writes what participants/web/js/twinlab-rsvp.js posts for a trial (same fields, same
frame arithmetic), so HTTP-only clients can stand in for pages where a test needs many of them; the
browser tests check that real pages post reports the server accepts in the same way.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml

from experiments.spec import Experiment, bundled_spec_path
from experiments.trials import Trial

ROOT = Path(__file__).resolve().parents[1]
FRAME_MS = 1000.0 / 60.0
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]


def italian_spec(tmp: Path, *, trials: int | None = None, instructions: int = 1, **timing: float) -> Path:
    """The bundled Italian panel spec with short timings (its own texts and stimulus file)."""
    data = yaml.safe_load(bundled_spec_path("lakretz2021_italian_example").read_text(encoding="utf-8"))
    data["stimuli"]["file"] = str(ROOT / "stimuli" / "examples" / "lakretz2021_italian_example.tsv")
    data["timing"] = dict(dict(fixation_ms=100, word_ms=100, gap_ms=50, panel_delay_ms=100, response_ms=1500,
                               feedback_ms=100, iti_ms=50), **timing)
    data["texts"]["instructions"] = data["texts"]["instructions"][:instructions]
    data["online"] = {"completion_code": "C0DE42", "completion_url": "https://example.org/complete?cc=C0DE42"}
    if trials is not None:
        data["blocks"][0]["trials"] = trials
    path = tmp / "italian.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def key_spec(tmp: Path, **timing: float) -> Path:
    """The bundled go/no-go spec (press SPACE on an error) with short timings and small blocks."""
    data = yaml.safe_load(bundled_spec_path("lakretz2021_nested").read_text(encoding="utf-8"))
    data["timing"] = dict(dict(fixation_ms=100, word_ms=100, gap_ms=50, response_ms=600, feedback_ms=100,
                               iti_ms=50), **timing)
    data["texts"]["instructions"] = data["texts"]["instructions"][:1]
    path = tmp / "nested.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def _frames(ms: float) -> int:
    return 0 if ms <= 0 else max(1, round(ms / FRAME_MS))


def page_report(trial: Trial, exp: Experiment, *, answer: str | None, by: str = "key", rt_ms: float = 400.0,
                early_unit: int | None = None, t0: float = 5000.0) -> dict[str, Any]:
    """What the page posts for `trial` answered with `answer` (None: no answer) after `rt_ms`."""
    tm, panel = exp.timing, exp.task.response == "panel"
    wf, gf = _frames(tm.word_ms), _frames(tm.gap_ms)
    at = lambda frame: round(t0 + frame * FRAME_MS, 3)  # noqa: E731
    f = _frames(tm.fixation_ms)
    on, off, intended = [], [], []
    for _ in trial.words:
        on.append(at(f))
        intended.append(f)
        off.append(at(f + wf))
        f += wf + gf
    end_frame = f - gf
    presses: list[dict[str, Any]] = []
    pointers: list[dict[str, Any]] = []
    if early_unit is not None:
        presses.append({"key": exp.task.panel.keys["violation"] if panel else exp.task.response_key,
                        "t": round(on[early_unit] + 30.0, 3)})
    rep: dict[str, Any] = {
        "trial_index": trial.trial_index, "item_id": trial.item_id, "frame_ms": FRAME_MS, "unit_frames": wf,
        "gap_frames": gf, "fixation_onset": t0, "unit_onsets": on, "unit_offsets": off,
        "intended_onset_frames": intended, "onset_frames": list(intended), "panel_fixation_onset": None,
        "panel_onset": None, "prompt_onset": None, "feedback_onset": None, "iti_onset": None, "end": None,
        "response": "none" if panel else "no_violation", "answer_time": None, "answered_by": None,
        "feedback_text": None, "presses": presses, "pointers": pointers, "dropped_frames": 0,
        "started_at": datetime.now(timezone.utc).isoformat(), "ended_at": datetime.now(timezone.utc).isoformat(),
    }
    if panel:
        pf = end_frame + gf
        rep["panel_fixation_onset"] = at(pf)
        rep["panel_onset"] = start = at(pf + _frames(tm.panel_delay_ms))
    else:
        rep["prompt_onset"] = start = at(end_frame + gf)
    deadline = start + _frames(tm.response_ms) * FRAME_MS
    t_answer = round(start + rt_ms, 3)
    if answer is not None:
        if by == "key":
            key = exp.task.panel.keys[answer] if panel else exp.task.response_key
            presses.append({"key": key, "t": t_answer})
            rep["answered_by"] = f"key:{key}"
        else:
            pointers.append({"type": by, "t": t_answer, "answer": answer})
            rep["answered_by"] = by
        rep["response"], rep["answer_time"] = answer, t_answer
        fb_on = round(t_answer + FRAME_MS / 2, 3)
    else:
        fb_on = round(deadline, 3)
    correct = None if (panel and answer is None) else rep["response"] == trial.study_record.correct_response
    if trial.feedback:
        fb = exp.feedback
        rep["feedback_text"] = (fb.no_response_text if correct is None
                                else fb.correct_text if correct else fb.incorrect_text)
        rep["feedback_onset"] = fb_on
        rep["iti_onset"] = round(fb_on + _frames(tm.feedback_ms) * FRAME_MS, 3)
    else:
        rep["iti_onset"] = fb_on
    rep["end"] = round(rep["iti_onset"] + _frames(tm.iti_ms) * FRAME_MS, 3)
    return rep


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(spec: Path | str, out: Path, *extra: str, port: int | None = None) -> tuple[subprocess.Popen, str]:
    """`twinlab web serve` in its own process; returns it and its base URL once it answers."""
    import httpx

    port = port or free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "experiments.cli", "web", "serve", str(spec), "--out", str(out),
                             "--port", str(port), *extra], env=env, cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited: {proc.stderr.read().decode()[-2000:]}")
        try:
            httpx.get(url + "/favicon.ico", timeout=1.0)
            return proc, url
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("the server did not answer within 30 s")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def http_participant(state: dict, pid: str, seq, exp: Experiment, acked: set, errors: list,
                     seconds: float = 60.0) -> None:
    """A participant as plain HTTP calls (what the page sends): start, then every trial; retries while the
    server is down, resumes with its token, stops when the session is finished."""
    import secrets

    import httpx

    deadline = time.monotonic() + seconds
    token = secrets.token_urlsafe(32)  # made before the first start and kept, as the page does
    with httpx.Client(timeout=5.0) as http:
        while time.monotonic() < deadline:
            try:
                r = http.post(state["url"] + "/api/start", json={"participant": pid, "session": 1, "token": token,
                                                                 "client": {}})
                if r.status_code != 200:
                    errors.append(f"{pid} start {r.status_code} {r.text}")
                    return
                s = r.json()
                token = s.get("token") or token
                if s["status"] == "finished":
                    return
                for t in s["trials"]:
                    i = t["trial_index"]
                    rep = page_report(seq[i], exp, answer="violation" if i % 2 else None)
                    r = http.post(state["url"] + "/api/trial", json={"participant": pid, "session": 1,
                                                                     "token": token, "result": rep})
                    if r.status_code == 200:
                        acked.add(i)
                    elif r.status_code != 409:
                        errors.append(f"{pid} trial {i}: {r.status_code} {r.text}")
                        return
            except httpx.HTTPError:
                time.sleep(0.3)  # the server is down: try again, as the page does
        errors.append(f"{pid}: not finished within {seconds:g} s")
