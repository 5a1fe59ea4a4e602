"""A browser task trial's raw record holds only what that trial can produce (checked before `derive`).

twinlab-task.js reports, per kind, a fixed set of raw fields (the kind's `TaskKind.raw_fields`). Every key press names
one of the trial's keys (the answers' keys, the advance or submit key, and for completion the typing keys),
every click hits one of the trial's answer boxes, and every time lies in the trial's window: from its
first frame (0, the fixation's onset) to its last (`end`). A record with anything else cannot have
come from the page (a forged, edited or damaged record): the server refuses it (HTTP 422, nothing
written) instead of keeping it verbatim in `extra.raw`. `derive` (the task kind's own rule) then checks
what the events mean: which answer counted, the order of the reading steps, the typed text.
"""
from __future__ import annotations

import math
from typing import Any

from experiments.tasks import get_task
from experiments.tasks.record import POINTERS, answers, is_text_key
from experiments.trials import Trial
from participants.web.payload import BROWSER_KINDS

MAX_EVENTS = 400  # presses and clicks together (the page stops recording at 390 of each)
MAX_TEXT = 400  # characters of a completion's text



def raw_fields(kind: str) -> tuple[frozenset[str], frozenset[str]]:
    """(fields every record of `kind` has, fields some records have): the kind's own (TaskKind.raw_fields)."""
    return get_task(kind).raw_fields


_TIMES = ("response_onset", "answer_time", "question_onset", "question_answer_time", "submit_time")


class RawRecordError(ValueError):
    """The raw record holds something the trial cannot produce; the message names the field."""


def typing_key(k: str) -> bool:
    """A key name the completion page records while typing: a lower-case letter of any alphabet, a mark
    the page names (space, apostrophe, minus, period, comma), or backspace."""
    return is_text_key(k) and k == k.lower()  # the kind's typing keys (record.is_text_key), as the page names them


def trial_keys(trial: Trial, s: Any, order: list[int] | None) -> tuple[frozenset[str], int]:
    """The key names the page records for this trial (besides typing keys): its answers' keys and the
    kind's own (TaskKind.record_keys: the advance or submit key), and its number of answer boxes."""
    ans = answers(trial, s, order)
    own = get_task(trial.task).record_keys
    return frozenset({a.key for a in ans} | set(own(s) if own is not None else ())), len(ans)


def _time(v: Any, name: str, end: float) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise RawRecordError(f"{name}: expected a time in ms, got {str(v)[:40]!r}")
    if not 0.0 <= v <= end:
        raise RawRecordError(f"{name}: {v:g} ms lies outside this trial (0 to {end:g} ms, its first and last frame)")
    return float(v)


def _times(v: Any, name: str, end: float, limit: int) -> list[float]:
    if not isinstance(v, list) or len(v) > limit:
        raise RawRecordError(f"{name}: expected a list of at most {limit} times")
    return [_time(x, name, end) for x in v]


def check_raw(raw: Any, trial: Trial, s: Any, order: list[int] | None, end: float) -> None:
    """Refuse (RawRecordError) a raw record with fields, keys, targets, types or times the trial cannot produce.

    `s` is the trial's task settings, `order` the choice options' screen order, `end` the trial's last
    frame (ms from its first)."""

    kind = trial.task
    if kind not in BROWSER_KINDS:
        raise RawRecordError(f"task: the browser does not present {kind!r}")
    if not isinstance(raw, dict):
        raise RawRecordError("expected a JSON object")
    task = get_task(kind)
    required, optional = task.raw_fields
    unknown = sorted(set(raw) - required - optional)
    if unknown:
        raise RawRecordError(f"unknown field(s) {', '.join(str(u)[:40] for u in unknown[:5])} "
                             f"(a {kind} trial records {', '.join(sorted(required | optional))})")
    missing = sorted(required - set(raw))
    if missing:
        raise RawRecordError(f"missing field(s) {', '.join(missing)}")
    keys, boxes = trial_keys(trial, s, order)
    presses, pointers = raw["presses"], raw["pointers"]
    if not isinstance(presses, list) or not isinstance(pointers, list) or len(presses) + len(pointers) > MAX_EVENTS:
        raise RawRecordError(f"presses/pointers: lists of at most {MAX_EVENTS} events together")
    press_times: dict[str, set[float]] = {}
    for p in presses:
        if not isinstance(p, dict) or set(p) != {"key", "t"}:
            raise RawRecordError("presses: each press is {key: a key name, t: a time}")
        k = p["key"]
        if not isinstance(k, str) or not (k in keys or (task.types_text and typing_key(k))):
            shown = sorted(keys) + (["typing keys"] if task.types_text else [])
            raise RawRecordError(f"presses: {str(k)[:24]!r} is not a key of this trial ({', '.join(shown)})")
        press_times.setdefault(k, set()).add(_time(p["t"], "presses.t", end))
    for p in pointers:
        if not isinstance(p, dict) or set(p) != {"type", "t", "target"} or p["type"] not in POINTERS:
            raise RawRecordError("pointers: each click is {type: mouse|touch|pen, t: a time, target: a box index}")
        tgt = p["target"]
        if isinstance(tgt, bool) or not isinstance(tgt, int) or not 0 <= tgt < boxes:
            raise RawRecordError(f"pointers.target: {str(tgt)[:20]} is not an answer box of this trial "
                                 f"({'none' if not boxes else f'0 to {boxes - 1}'})")
        _time(p["t"], "pointers.t", end)
    for name in _TIMES:
        if raw.get(name) is not None:
            _time(raw[name], name, end)
    for name in ("answered_by", "question_answered_by"):
        v = raw.get(name)
        if v is not None and (not isinstance(v, str) or len(v) > 40):
            raise RawRecordError(f"{name}: expected key:<name>, mouse, touch or pen")
    if "steps" in raw:
        _times(raw["steps"], "steps", end, 1000)
    if "text" in raw and (not isinstance(raw["text"], str) or len(raw["text"]) > MAX_TEXT):
        raise RawRecordError(f"text: expected a text of at most {MAX_TEXT} characters")
    # a tap stands for a press of the kind's own key (the advance key of reading, the submit key of a typed
    # answer: TaskKind.record_keys), recorded with it at the same time
    tap_key = (task.record_keys(s) or (None,))[0] if task.record_keys is not None else None
    for t in _times(raw.get("taps") or [], "taps", end, MAX_EVENTS):
        if t not in press_times.get(tap_key, set()):
            raise RawRecordError(f"taps: a tap at {t:g} ms has no press of {tap_key!r} with it")
    typed = set().union(*(v for k, v in press_times.items() if typing_key(k))) if task.types_text else set()
    for t in _times(raw.get("input_presses") or [], "input_presses", end, MAX_EVENTS):
        if t not in typed:
            raise RawRecordError(f"input_presses: {t:g} ms is not the time of a typing press")
