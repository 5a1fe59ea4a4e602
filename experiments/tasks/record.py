"""A human task trial's raw record and what it means: one code for both human runners, dispatched to
the task kind's own unit (kinds/<kind>/task.py: `answers`, `derive`, `plan`).

Each runner reports the same *raw record* of a task trial (times in ms on the trial's own clock,
0 = the flip / frame that showed its first screen; key presses at their events' own timestamps):

    response_onset   the flip that showed the answers (judgment, choice, rating, lexical decision),
                     or the prompt (completion)
    presses          [{key, t}]: every press of a polled key, in order (PsychoPy key names)
    pointers         [{type: mouse|touch|pen, t, target}]: clicks/taps on answer box `target` (screen position)
    answered_by      key:<name> | mouse | touch | pen | None; answer_time: that event's t
    steps            self-paced reading: the flips that showed the dashes (step 0) and each unit (1..n)
    question_onset, question_answered_by, question_answer_time   the comprehension question (if any)
    text, submit_time   completion: the text on screen when the submit key was pressed

`derive` (the kind's own, through `derive` here) turns a raw record into the trial-table fields
(response, correct, rt_ms and the generic columns), refusing a record that cannot have come from the trial (the
browser server's check).
The PsychoPy runner calls it too, so the two runners cannot disagree about what an answer means.
"""
from __future__ import annotations

import math
import random
from typing import Any

from experiments.tasks.base import get_task
from experiments.tasks.shown import Answer, TaskPlan
from experiments.trials import Trial

# `s` below is the human runners' settings of a kind (participants.tasks.settings.TaskSettings: kind,
# labels, keys, scale, question_keys, advance_key, submit_key, reveal, mouse, positions, ...).

POINTERS = ("mouse", "touch", "pen")
MAX_EVENTS = 400
MAX_MS = 15 * 60 * 1000.0
FRAME_SLACK_MS = 34.0
CHAR_KEYS = {"space": " ", "apostrophe": "'", "minus": "-", "period": ".", "comma": ","}
DELETE_KEY = "backspace"
TEXT_KEYS = tuple("abcdefghijklmnopqrstuvwxyz") + tuple(CHAR_KEYS) + (DELETE_KEY,)  # what PsychoPy polls
# The typing rule as data, for the page (participants/web/payload.page_config: the page's typedText reads
# only this): the keys that type a character, the key that deletes, and a letter key (one code point that
# str.isalpha accepts: Unicode's Letter categories Lu Ll Lt Lm Lo, which is the regex class \p{L}).
TYPING = {"chars": dict(CHAR_KEYS), "delete": DELETE_KEY, "letter": r"\p{L}"}


def _letter(k: str) -> bool:
    return len(k) == 1 and k.isalpha()


def typeable(c: str) -> bool:
    """A character some key types (a letter, or a mark of CHAR_KEYS): what a typed answer can contain."""
    return c in CHAR_KEYS.values() or _letter(c)


def is_text_key(k: str) -> bool:
    """A key that types (a letter of any alphabet, space, a few marks) or deletes (backspace)."""
    return k == DELETE_KEY or k in CHAR_KEYS or _letter(k)


class TaskResultError(ValueError):
    """A raw record that cannot be a record of this trial; the message names the field."""


def dashes(text: str) -> str:
    """The masked form of a unit: one dash per letter, spaces kept."""
    return "".join(" " if c == " " else "-" for c in text)


def sentence_of(trial: Trial) -> str:
    m = trial.mat
    return str(m.get("sentence") or m.get("prefix") or " ".join(trial.words)).replace("|", " ").replace("  ", " ")


def typed_text(keys: list[str]) -> str:
    """The text a sequence of key names types (letters, space and a few marks; backspace deletes)."""
    out: list[str] = []
    for k in keys:
        if k == DELETE_KEY:
            if out:
                out.pop()
        elif _letter(k):
            out.append(k)
        elif k in CHAR_KEYS:
            out.append(CHAR_KEYS[k])
    return "".join(out)


# ---- checking a raw record ---------------------------------------------------------------------
def event_time(v: Any, name: str, optional: bool = False) -> float | None:
    if v is None and optional:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not -60_000 <= v <= MAX_MS:
        raise TaskResultError(f"{name}: expected a time in ms on the trial's clock, got {str(v)[:40]!r}")
    return float(v)


def _events(raw: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    presses, pointers = raw.get("presses") or [], raw.get("pointers") or []
    if not isinstance(presses, list) or not isinstance(pointers, list) or len(presses) + len(pointers) > MAX_EVENTS:
        raise TaskResultError(f"presses/pointers: lists of at most {MAX_EVENTS} events")
    ps = []
    for p in presses:
        if (not isinstance(p, dict) or set(p) != {"key", "t"} or not isinstance(p["key"], str)
                or not 0 < len(p["key"]) <= 24):
            raise TaskResultError("presses: each press is {key: a key name, t: a time}")
        ps.append({"key": p["key"], "t": event_time(p["t"], "presses.t")})
    pt = []
    for p in pointers:
        if (not isinstance(p, dict) or set(p) != {"type", "t", "target"} or p["type"] not in POINTERS
                or isinstance(p["target"], bool) or not isinstance(p["target"], int)):
            raise TaskResultError("pointers: each click is {type: mouse|touch|pen, t: a time, target: a box index}")
        pt.append({"type": p["type"], "t": event_time(p["t"], "pointers.t"), "target": p["target"]})
    if [p["t"] for p in ps] != sorted(p["t"] for p in ps):
        raise TaskResultError("presses: not in time order")
    return ps, pt


def counted_answer(raw: dict[str, Any], ans: list[Answer], presses: list[dict[str, Any]],
                   pointers: list[dict[str, Any]], onset: float, by_key: str, at_key: str,
                   mouse: bool) -> tuple[int, float, str] | None:
    """(screen position, time, by) of the counted answer; checks it against the events that gave it."""
    by, at = raw.get(by_key), event_time(raw.get(at_key), at_key, optional=True)
    if (by is None) != (at is None):
        raise TaskResultError(f"{by_key}/{at_key}: both or neither")
    if by is None:
        return None
    assert at is not None
    if at < onset:
        raise TaskResultError(f"{at_key}: the answer comes after the answers are shown")
    if not isinstance(by, str):
        raise TaskResultError(f"{by_key}: expected key:<name>, mouse, touch or pen")
    if by.startswith("key:"):
        key = by[4:]
        pos = next((i for i, a in enumerate(ans) if a.key == key), None)
        if pos is None:
            raise TaskResultError(f"{by_key}: {key[:24]!r} is not an answer key of this trial")
        first = next((p for p in presses if p["t"] >= onset and p["key"] in {a.key for a in ans}), None)
        if first is None or first["key"] != key or first["t"] != at:
            raise TaskResultError(f"{by_key}: the first answer key pressed after onset is not {key[:24]!r} at {at_key}")
        return pos, at, by
    if by in POINTERS and mouse:
        hit = [p for p in pointers if p["type"] == by and p["t"] == at and 0 <= p["target"] < len(ans)]
        if not hit:
            raise TaskResultError(f"{by_key}: no {by} click on an answer at {at_key}")
        return hit[0]["target"], at, by
    raise TaskResultError(f"{by_key}: expected key:<name>{', mouse, touch or pen' if mouse else ''}, got {by[:40]!r}")


def round_ms(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


FIELDS = ("response", "correct", "rt_ms", "option_order", "chosen_position", "rating", "response_text", "keystrokes",
          "word_rts_ms", "region_rts_ms")
ANSWER_COLUMNS = ("response", "correct", "rt_ms")  # the runners' own fields of a TrialResult


def row_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """The trial-table columns of a derived record besides the answer's (`ANSWER_COLUMNS`) and `_extra`: the
    generic ones (`FIELDS`) and those the kind declares and its `derive` fills (kinds/<kind>/__init__.py
    `COLUMNS`), so a runner passes on what the kind measures without naming it."""
    return {k: v for k, v in fields.items() if k not in ANSWER_COLUMNS and k != "_extra"}


def _kind(s: Any) -> Any:
    k = get_task(s.kind)
    if k.derive is None:  # a model-only kind, or one whose renderer runs its own trial (violation detection: rsvp)
        raise TaskResultError(f"task: kind {s.kind!r} is not presented in the task window"
                              + (f" (its renderer: {k.renderer})" if k.renderer != "task" else ""))
    return k


def answers(trial: Trial, s: Any, order: list[int] | None = None) -> list[Answer]:
    """The answers on screen, left to right (self-paced reading: the comprehension options): the kind's own."""
    k = _kind(s)
    return list(k.answers(trial, s, order)) if k.answers is not None else []


def derive(trial: Trial, s: Any, order: list[int] | None, raw: dict[str, Any]) -> dict[str, Any]:
    """The trial-table fields of a task trial from its raw record (raises TaskResultError): the kind's
    own `derive`, after the checks every record gets."""
    if not isinstance(raw, dict):
        raise TaskResultError("task: expected a JSON object")
    presses, pointers = _events(raw)
    out: dict[str, Any] = {k: None for k in FIELDS}
    extra: dict[str, Any] = {}
    _kind(s).derive(trial, s, order, raw, presses, pointers, out, extra)
    out["_extra"] = extra
    return out


def derive_answer(trial: Trial, s: Any, order: list[int] | None, raw: dict[str, Any], presses: list, pointers: list,
                  out: dict[str, Any], extra: dict[str, Any]) -> tuple[int, Answer]:
    """The answer-screen kinds (judgment, choice, rating, lexical decision): the counted answer, its RT
    and whether it is correct (the kind's `score`); returns (screen position, answer)."""

    ans = answers(trial, s, order)
    onset = event_time(raw.get("response_onset"), "response_onset")
    got = counted_answer(raw, ans, presses, pointers, onset, "answered_by", "answer_time", s.mouse)
    if got is None:
        raise TaskResultError("answered_by: this task waits for an answer")
    pos, at, by = got
    a = ans[pos]
    out.update(response=a.value, rt_ms=round_ms(at - onset), correct=get_task(s.kind).score(trial, a.value))
    extra["answered_by"] = by
    return pos, a


# ---- the autopilot's plan ------------------------------------------------------------------------
def plan(trial: Trial, s: Any, order: list[int] | None, *, seed: str, accuracy: float) -> TaskPlan:
    """A simulated participant's presses for a task trial (right with probability `accuracy`): the kind's
    own plan. Deterministic in (seed, trial index): the browser tests press the same keys as the
    PsychoPy autopilot, so both runners get the same answers from the same participant."""
    k = _kind(s)
    if k.plan is None:
        raise ValueError(f"no plan for task kind {s.kind!r}")
    rng = random.Random(f"{seed}:task:{trial.trial_index}")
    right = rng.random() < accuracy
    return k.plan(trial, s, order, rng, right)


def rt(rng: random.Random) -> float:
    return round(rng.uniform(0.35, 0.7), 3)


def pick_answer(trial: Trial, ans: list[Answer], rng: random.Random, right: bool, kind: str,
                wrong_at_random: bool = True) -> Answer:
    """The answer a simulated participant gives: a correct one when `right` (and there is one), else a wrong one."""

    score = get_task(kind).score
    good = [a for a in ans if score(trial, a.value)]
    bad = [a for a in ans if not score(trial, a.value)]
    if (right and good) or not bad:
        return good[0] if good else ans[0]
    return bad[rng.randrange(len(bad))] if wrong_at_random else bad[0]


def plan_answer(trial: Trial, s: Any, order: list[int] | None, rng: random.Random, right: bool) -> TaskPlan:
    """The answer-screen kinds' plan: one press of the chosen answer's key."""

    ans = answers(trial, s, order)
    pick = pick_answer(trial, ans, rng, right, s.kind)
    return TaskPlan({"answer": [(rt(rng), pick.key)]}, pick.value, get_task(s.kind).score(trial, pick.value))
