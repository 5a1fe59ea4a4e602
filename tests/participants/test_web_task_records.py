"""The browser server keeps only what a trial can produce.

A hostile client (Starlette's TestClient against the real app) starts a session and posts forged
trial records: unknown raw fields, key names that no key of the trial has, presses before the trial's
first frame or after its last, clicks on boxes the trial does not show, wrong types. Each is refused
with 422 and a message naming the field, and the session's files are byte for byte what they were.
Then the honest record of the same trial is accepted, so every refusal is about the forged part.
"""
from __future__ import annotations

import copy
import json
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import pytest
from starlette.testclient import TestClient

from experiments.session import read_rows, session_paths
from experiments.spec import load_spec
from experiments.tasks.record import answers
from kinds.self_paced_reading.task import trial_units
from participants.tasks import settings_for
from participants.tasks.logic import screen_order
from participants.web.results import polled_keys
from participants.web.server import create_app

sys.path.insert(0, str(Path(__file__).parent.parent / "support"))
sys.path.insert(0, str(Path(__file__).parent.parent))
from task_examples import base_spec, example_sequence, load, task_section  # noqa: E402

try:
    from tests.web_support import italian_spec, page_report
except ModuleNotFoundError:
    from web_support import italian_spec, page_report

LOCAL = "http://127.0.0.1"
TOKEN = "T" * 43
FRAME = 1000.0 / 60.0
KEY_NAMES = {" ": "space", "'": "apostrophe", "-": "minus", ".": "period", ",": "comma"}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


def honest_record(kind: str, trial, seq, exp) -> dict[str, Any]:
    """What twinlab-task.js posts for `trial`, answered right (times in ms from the fixation's onset)."""
    s = settings_for(exp, trial, task_section(kind))
    order = screen_order(trial, seq, None) if kind == "choice" else None
    m = trial.mat
    raw: dict[str, Any] = {"presses": [], "pointers": []}
    if kind in ("judgment", "choice", "rating", "lexical_decision"):
        ans = answers(trial, s, order)
        pick = next((a for a in ans if a.value == str(m.get("answer", ""))), ans[0])
        raw.update(response_onset=150.0, answered_by=f"key:{pick.key}", answer_time=640.5)
        raw["presses"].append({"key": pick.key, "t": 640.5})
        last = 640.5
    elif kind == "self_paced_reading":
        units, _ = trial_units(trial, s.reveal)
        raw.update(steps=[150.0], taps=[])
        t = 150.0
        for k in range(len(units) + 1):
            t += 300.0
            raw["presses"].append({"key": s.advance_key, "t": t})
            if k < len(units):
                raw["steps"].append(round(t + FRAME, 3))
        last = t
        ans = answers(trial, s)
        if ans:
            pick = next((a for a in ans if a.value == str(m.get("question_answer", ""))), ans[0])
            raw["question_onset"] = round(t + FRAME, 3)
            last = round(t + 600.0, 3)
            raw["presses"].append({"key": pick.key, "t": last})
            raw.update(question_answered_by=f"key:{pick.key}", question_answer_time=last)
    elif kind == "completion":
        word = str(m["target"]).lower()
        t = 400.0
        for c in word:
            raw["presses"].append({"key": KEY_NAMES.get(c, c), "t": t})
            t += 90.0
        raw["presses"].append({"key": s.submit_key, "t": t})
        raw.update(response_onset=150.0, submit_time=t, text=word, taps=[], input_presses=[])
        last = t
    else:
        raise AssertionError(kind)
    iti = round(last + FRAME, 3)
    return {"trial_index": trial.trial_index, "item_id": trial.item_id, "task": kind, "frame_ms": FRAME, "raw": raw,
            "word_onsets": [], "feedback_onset": None, "iti_onset": iti, "end": round(iti + 5 * FRAME, 3),
            "feedback_text": None, "started_at": _now(), "ended_at": _now()}


def _press(key: str, t: float) -> Callable[[dict[str, Any]], None]:
    def forge(rec: dict[str, Any]) -> None:
        rec["raw"]["presses"] = sorted(rec["raw"]["presses"] + [{"key": key, "t": t}], key=lambda p: p["t"])
    return forge


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def forge(rec: dict[str, Any]) -> None:
        *head, last = path.split(".")
        d = rec
        for k in head:
            d = d[k]
        d[last] = value
    return forge


def _first_press(field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def forge(rec: dict[str, Any]) -> None:
        rec["raw"]["presses"][0][field] = value
    return forge


# forgeries every kind's record is refused for: (name, forge, what the refusal names)
COMMON = [
    ("an unknown raw field", _set("raw.note", "<script>"), "raw.unknown field(s) note"),
    ("a key no key of the trial has", _press("tab", 300.0), "raw.presses: 'tab' is not a key of this trial"),
    ("a press long before the trial began", _press("tab", -60_000.0), "raw.presses"),
    ("an answer key pressed before the trial "
     "began", _first_press("t", -5000.0), "raw.presses.t: -5000 ms lies outside"),
    ("a press after the trial's last frame", _first_press("t", 10_000_000.0), "raw.presses.t"),
    ("a press time as text", _first_press("t", "640.5"), "raw.presses.t: expected a time"),
    ("a key name as a number", _first_press("key", 70), "raw.presses"),
    ("a press with an extra field", lambda r: r["raw"]["presses"][0].update(code="KeyF"), "raw.presses: each press"),
    ("a click on a box the trial does not show", _set("raw.pointers", [{"type": "mouse", "t": 300.0, "target": 9}]),
     "raw.pointers.target: 9"),
    ("a click on box "
     "True", _set("raw.pointers", [{"type": "touch", "t": 300.0, "target": True}]), "raw.pointers.target"),
    ("a pointer of an unknown "
     "type", _set("raw.pointers", [{"type": "stylus", "t": 300.0, "target": 0}]), "raw.pointers"),
    ("presses as an object", _set("raw.presses", {"key": "f"}), "raw.presses/pointers"),
    ("a raw record that is a list", _set("raw", []), "raw: expected a JSON object"),
    ("the trial's end before its blank", lambda r: r.update(end=r["iti_onset"] - 1.0), "iti_onset"),
    ("a feedback onset after the blank's", _set("feedback_onset", 10_000.0), "feedback_onset"),
    ("the end as true", _set("end", True), "end"),
]
BY_KIND: dict[str, list[tuple[str, Callable[[dict[str, Any]], None], str]]] = {
    "judgment": [
        ("an answer time after the trial's end", _set("raw.answer_time", 99_999.0), "raw.answer_time"),
        ("answered_by as a number", _set("raw.answered_by", 7), "raw.answered_by"),
        ("a response onset before the trial", _set("raw.response_onset", -1.0), "raw.response_onset"),
        ("a self-paced reading field", _set("raw.steps", [1.0]), "raw.unknown field(s) steps"),
        ("a missing response onset", lambda r: r["raw"].pop("response_onset"), "raw.missing field(s) response_onset"),
    ],
    "self_paced_reading": [
        ("a tap with no press of the advance key", _set("raw.taps", [151.0]), "raw.taps: a tap at 151 ms"),
        ("a reading step after the trial", lambda r: r["raw"]["steps"].__setitem__(-1, 1e7), "raw.steps"),
        ("steps as text", _set("raw.steps", "150,450"), "raw.steps"),
        ("a completion field", _set("raw.text", "hello"), "raw.unknown field(s) text"),
    ],
    "completion": [
        ("a digit typed", _press("7", 300.0), "raw.presses: '7' is not a key of this trial"),
        ("an upper-case key name", _press("B", 300.0), "raw.presses: 'B' is not a key"),
        ("a key name of many letters", _press("shift", 300.0), "raw.presses: 'shift'"),
        ("a click (completion shows no boxes)", _set("raw.pointers", [{"type": "touch", "t": 300.0, "target": 0}]),
         "raw.pointers.target: 0 is not an answer box of this trial (none)"),
        ("an input press at no typing press's time", _set("raw.input_presses", [401.0]), "raw.input_presses"),
        ("a text of 5,000 characters", _set("raw.text", "a" * 5000), "raw.text"),
        ("a submit time after the trial", _set("raw.submit_time", 1e7), "raw.submit_time"),
    ],
}


def _start(client, pid: str):
    r = client.post("/api/start", json={"participant": pid, "session": 1, "token": TOKEN, "client": {}})
    assert r.status_code == 200, r.text
    return r.json()


def _post(client, pid: str, result: Any):
    return client.post("/api/trial", json={"participant": pid, "session": 1, "token": TOKEN, "result": result})


def _files(out: Path, name: str, pid: str) -> list[bytes]:
    return [p.read_bytes() for p in session_paths(out, name, pid, 1)]


@pytest.mark.parametrize("kind", ["judgment", "choice", "rating", "lexical_decision", "self_paced_reading",
                                  "completion"])
def test_forged_task_records_are_refused_and_nothing_is_written(tmp_path, kind):
    spec = base_spec(tmp_path, kind)
    exp = load(spec)
    pid = "H01"
    seq = example_sequence(kind, exp, pid, 25, 2, feedback_first=0)
    out = tmp_path / "data"
    app = create_app(exp, out, compile=lambda p, s: example_sequence(kind, exp, p, 25, 2, feedback_first=0),
                     task_settings=task_section(kind))
    with TestClient(app, base_url=LOCAL) as client:
        _start(client, pid)
        before = _files(out, exp.name, pid)
        honest = honest_record(kind, seq[0], seq, exp)
        cases = COMMON + BY_KIND.get(kind, [])
        refused: dict[str, str] = {}
        for name, forge, names in cases:
            rec = copy.deepcopy(honest)
            forge(rec)
            r = _post(client, pid, rec)
            assert r.status_code == 422, (name, r.status_code, r.text)
            refused[name] = r.json()["error"]
            assert names in refused[name], (name, refused[name])
            assert _files(out, exp.name, pid) == before, f"{name}: the session's files changed"
        r = _post(client, pid, honest)
        assert r.status_code == 200, r.text
    rows = read_rows(session_paths(out, exp.name, pid, 1)[0])
    assert len(rows) == 1 and rows[0]["item_id"] == seq[0].item_id
    assert json.loads(rows[0]["extra"])["raw"] == honest["raw"]  # the honest record is kept as posted


def test_a_typed_answer_from_an_on_screen_keyboard_is_accepted_with_its_input_presses(tmp_path):
    """input_presses (characters read from the field's input events) and taps (the submit button) pass the
    checks when each names a press of the record."""
    spec = base_spec(tmp_path, "completion")
    exp = load(spec)
    seq = example_sequence("completion", exp, "H02", 25, 2, feedback_first=0)
    out = tmp_path / "data"
    app = create_app(exp, out, compile=lambda p, s: example_sequence("completion", exp, p, 25, 2, feedback_first=0),
                     task_settings=task_section("completion"))
    rec = honest_record("completion", seq[0], seq, exp)
    typed = [p["t"] for p in rec["raw"]["presses"][:-1]]
    rec["raw"].update(input_presses=typed, taps=[rec["raw"]["submit_time"]])
    with TestClient(app, base_url=LOCAL) as client:
        _start(client, "H02")
        r = _post(client, "H02", rec)
        assert r.status_code == 200, r.text
    extra = json.loads(read_rows(session_paths(out, exp.name, "H02", 1)[0])[0]["extra"])
    assert extra["raw"]["input_presses"] == typed


def test_forged_violation_detection_records_are_refused(tmp_path):
    """The RSVP trial (Lakretz panel): keys the trial does not poll, presses before its fixation or after
    its last frame."""
    exp = load_spec(italian_spec(tmp_path, trials=2))
    out = tmp_path / "data"
    from experiments.design_compiler import compile_sequence

    seq = compile_sequence(exp, "H03", None)
    honest = page_report(seq[0], exp, answer="violation")
    keys = polled_keys(exp)
    assert keys == {exp.task.response_key, *exp.task.panel.keys.values()}
    t0 = honest["fixation_onset"]
    cases = [
        ("a key the trial does not poll", lambda r: r["presses"].insert(0, {"key": "q", "t": t0 + 10}), "presses: 'q'"),
        ("a panel key a minute before the fixation",
         lambda r: r["presses"].insert(0, {"key": exp.task.panel.keys["violation"], "t": t0 - 60_000}), "presses.t"),
        ("a panel key after the trial's last frame",
         lambda r: r["presses"].append({"key": exp.task.panel.keys["violation"], "t": r["end"] + 500}), "presses.t"),
        ("a click after the trial's last frame",
         lambda r: r["pointers"].append({"type": "mouse", "t": r["end"] + 500, "answer": "violation"}), "pointers.t"),
        ("an unknown field", lambda r: r.update(note="x"), "unknown field(s) note"),
    ]
    with TestClient(create_app(exp, out), base_url=LOCAL) as client:
        _start(client, "H03")
        before = _files(out, exp.name, "H03")
        for name, forge, names in cases:
            rec = copy.deepcopy(honest)
            forge(rec)
            r = _post(client, "H03", rec)
            assert r.status_code == 422 and names in r.json()["error"], (name, r.status_code, r.text)
            assert _files(out, exp.name, "H03") == before, name
        assert _post(client, "H03", honest).status_code == 200
