"""What a task trial shows as answers, and what its raw events mean: one code for both human runners.

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

`derive` turns a raw record into the trial-table fields (response, correct, rt_ms and the generic
columns), refusing a record that cannot have come from the trial (the browser server's check).
The PsychoPy runner calls it too, so the two runners cannot disagree about what an answer means.
"""
from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from typing import Any

from experiments.tasks import get_task
from experiments.tasks.completion import accepted_answers
from experiments.tasks.scoring import normalize_answer
from experiments.trials import Trial, TrialSequence
from participants.tasks.settings import TaskSettings

POINTERS = ("mouse", "touch", "pen")
MAX_EVENTS = 400
MAX_MS = 15 * 60 * 1000.0
FRAME_SLACK_MS = 34.0
CHAR_KEYS = {"space": " ", "apostrophe": "'", "minus": "-", "period": ".", "comma": ","}
TEXT_KEYS = tuple("abcdefghijklmnopqrstuvwxyz") + tuple(CHAR_KEYS) + ("backspace",)  # what PsychoPy polls


def is_text_key(k: str) -> bool:
    """A key that types (a letter of any alphabet, space, a few marks) or deletes (backspace)."""
    return k == "backspace" or k in CHAR_KEYS or (len(k) == 1 and k.isalpha())


class TaskResultError(ValueError):
    """A raw record that cannot be a record of this trial; the message names the field."""


@dataclass(frozen=True)
class Answer:
    value: str  # what goes in `response`
    label: str  # what is shown
    key: str  # PsychoPy key name


def option_order(trial: Trial, seq: TrialSequence | None, s: TaskSettings | None = None) -> list[int]:
    """Choice: the options' original indices in screen order (experiments.tasks.choice.option_order:
    `positions: fixed` keeps the item's order; counterbalanced otherwise, the same in both runners)."""
    from experiments.tasks.choice import trial_option_order

    positions = s.positions if s is not None else "counterbalance"
    return trial_option_order(trial, seq.seed if seq else 0, seq.subject_id if seq else "", positions)


def answers(trial: Trial, s: TaskSettings, order: list[int] | None = None) -> list[Answer]:
    """The answers on screen, left to right (self-paced reading: the comprehension options)."""
    m = trial.mat
    if s.kind in ("judgment", "lexical_decision"):
        return [Answer(v, lab, k) for (v, lab), k in zip(s.labels, s.keys)]
    if s.kind == "choice":
        opts = [str(o) for o in m.get("options") or ()]
        order = order if order is not None else list(range(len(opts)))
        if len(s.keys) < len(opts):
            raise TaskResultError(f"task.keys: {len(opts)} options need {len(opts)} keys")
        return [Answer(opts[i], opts[i], s.keys[p]) for p, i in enumerate(order)]
    if s.kind == "rating":
        return [Answer(str(p + 1), str(p + 1), s.keys[p]) for p in range(s.scale)]
    if s.kind == "self_paced_reading":
        opts = [str(o) for o in m.get("question_options") or ()]
        return [Answer(o, o, k) for o, k in zip(opts, s.question_keys)]
    return []


def spr_units(trial: Trial, s: TaskSettings) -> tuple[list[str], list[list[int]]]:
    """Self-paced reading: the units revealed one per press, and each region's word indices (the
    kind's one reading of `sentence` and `regions`: experiments.tasks.self_paced_reading.units)."""
    from experiments.tasks.self_paced_reading import units

    m = trial.mat
    mat = m if m.get("sentence") else {**m, "sentence": " ".join(trial.words)}
    return units(mat, s.reveal)


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
        if k == "backspace":
            if out:
                out.pop()
        elif len(k) == 1 and k.isalpha():
            out.append(k)
        elif k in CHAR_KEYS:
            out.append(CHAR_KEYS[k])
    return "".join(out)


# ---- checking a raw record ---------------------------------------------------------------------
def _t(v: Any, name: str, optional: bool = False) -> float | None:
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
        if not isinstance(p, dict) or set(p) != {"key", "t"} or not isinstance(p["key"], str) or not 0 < len(p["key"]) <= 24:
            raise TaskResultError("presses: each press is {key: a key name, t: a time}")
        ps.append({"key": p["key"], "t": _t(p["t"], "presses.t")})
    pt = []
    for p in pointers:
        if (not isinstance(p, dict) or set(p) != {"type", "t", "target"} or p["type"] not in POINTERS
                or isinstance(p["target"], bool) or not isinstance(p["target"], int)):
            raise TaskResultError("pointers: each click is {type: mouse|touch|pen, t: a time, target: a box index}")
        pt.append({"type": p["type"], "t": _t(p["t"], "pointers.t"), "target": p["target"]})
    if [p["t"] for p in ps] != sorted(p["t"] for p in ps):
        raise TaskResultError("presses: not in time order")
    return ps, pt


def _answer(raw: dict[str, Any], ans: list[Answer], presses: list[dict[str, Any]], pointers: list[dict[str, Any]],
            onset: float, by_key: str, at_key: str, mouse: bool) -> tuple[int, float, str] | None:
    """(screen position, time, by) of the counted answer; checks it against the events that gave it."""
    by, at = raw.get(by_key), _t(raw.get(at_key), at_key, optional=True)
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


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def derive(trial: Trial, s: TaskSettings, order: list[int] | None, raw: dict[str, Any]) -> dict[str, Any]:
    """The trial-table fields of a task trial from its raw record (raises TaskResultError)."""
    if not isinstance(raw, dict):
        raise TaskResultError("task: expected a JSON object")
    presses, pointers = _events(raw)
    m = trial.mat
    out: dict[str, Any] = {"response": None, "correct": None, "rt_ms": None, "option_order": None,
                           "chosen_position": None, "rating": None, "response_text": None, "keystrokes": None,
                           "word_rts_ms": None, "region_rts_ms": None}
    extra: dict[str, Any] = {}
    kind = s.kind
    if kind in ("judgment", "choice", "rating", "lexical_decision"):
        ans = answers(trial, s, order)
        onset = _t(raw.get("response_onset"), "response_onset")
        got = _answer(raw, ans, presses, pointers, onset, "answered_by", "answer_time", s.mouse)  # type: ignore[arg-type]
        if got is None:
            raise TaskResultError("answered_by: this task waits for an answer")
        pos, at, by = got
        a = ans[pos]
        out.update(response=a.value, rt_ms=_r(at - onset))  # type: ignore[operator]
        extra["answered_by"] = by
        if kind == "choice":
            out["option_order"] = json.dumps(order)
            out["chosen_position"] = pos
        if kind == "rating":
            out["rating"] = float(a.value)
        else:
            out["correct"] = get_task(kind).score(trial, a.value)
    elif kind == "self_paced_reading":
        units, regions = spr_units(trial, s)
        steps = raw.get("steps")
        if not isinstance(steps, list) or len(steps) != len(units) + 1:
            raise TaskResultError(f"steps: expected {len(units) + 1} onsets (the dashes, then each unit)")
        steps = [_t(x, "steps") for x in steps]
        if steps != sorted(steps):  # type: ignore[type-var]
            raise TaskResultError("steps: onsets out of order")
        adv = [p for p in presses if p["key"] == s.advance_key and p["t"] >= steps[0]]  # type: ignore[operator]
        if len(adv) < len(units) + 1:
            raise TaskResultError(f"presses: {len(units) + 1} presses of {s.advance_key!r} read this sentence, got {len(adv)}")
        adv = adv[: len(units) + 1]
        for k in range(1, len(units) + 1):  # unit k-1 appears after the k-th press
            # (a browser's frame timestamp is the frame's start, which may precede an input event
            # handled in that frame: up to two frames of slack)
            if steps[k] < adv[k - 1]["t"] - FRAME_SLACK_MS:  # type: ignore[operator]
                raise TaskResultError(f"steps: unit {k - 1} shown before the press that reveals it")
        rts = [_r(adv[k + 1]["t"] - adv[k]["t"]) for k in range(len(units))]
        if s.reveal == "word":
            out["word_rts_ms"] = json.dumps(rts)
            out["region_rts_ms"] = json.dumps([_r(sum(rts[w] for w in reg)) for reg in regions])  # type: ignore[misc]
        else:
            out["region_rts_ms"] = json.dumps(rts)
        extra["display_lag_ms"] = [_r(steps[k] - adv[k - 1]["t"]) for k in range(1, len(units) + 1)]  # type: ignore[operator]
        ans = answers(trial, s)
        if ans:
            q_on = _t(raw.get("question_onset"), "question_onset")
            if q_on < adv[-1]["t"] - FRAME_SLACK_MS:  # type: ignore[operator]
                raise TaskResultError("question_onset: the question comes after the sentence")
            got = _answer(raw, ans, presses, pointers, q_on, "question_answered_by", "question_answer_time",  # type: ignore[arg-type]
                          s.mouse)
            if got is None:
                raise TaskResultError("question_answered_by: the comprehension question waits for an answer")
            pos, at, by = got
            out["response"] = ans[pos].value
            out["rt_ms"] = _r(at - q_on)  # type: ignore[operator]
            out["correct"] = get_task(kind).score(trial, ans[pos].value)
            extra["answered_by"] = by
        elif raw.get("question_onset") is not None:
            raise TaskResultError("question_onset: this trial has no comprehension question")
    elif kind == "completion":
        onset = _t(raw.get("response_onset"), "response_onset")
        submit = _t(raw.get("submit_time"), "submit_time")
        typed = [p for p in presses if onset <= p["t"] < submit and is_text_key(p["key"])]  # type: ignore[operator]
        sub = [p for p in presses if p["key"] == s.submit_key and p["t"] == submit]
        if not sub:
            raise TaskResultError(f"submit_time: no press of {s.submit_key!r} at that time")
        text = typed_text([p["key"] for p in typed])
        if raw.get("text") != text:
            raise TaskResultError(f"text: the keys typed give {text[:60]!r}, the runner showed {str(raw.get('text'))[:60]!r}")
        if not text.strip():
            raise TaskResultError("text: an empty answer is not submitted")
        out.update(response=text.strip(), response_text=text, correct=get_task(kind).score(trial, text),
                   keystrokes=json.dumps([[p["key"], _r(p["t"] - onset)] for p in typed]),  # type: ignore[operator]
                   rt_ms=_r(typed[0]["t"] - onset) if typed else None)  # type: ignore[operator]
        extra["submit_ms"] = _r(submit - onset)  # type: ignore[operator]
    else:
        raise TaskResultError(f"task: kind {kind!r} has no human presentation")
    out["_extra"] = extra
    return out


# ---- the autopilot's plan ------------------------------------------------------------------------
@dataclass(frozen=True)
class TaskPlan:
    """Presses per phase: (seconds after the phase's onset, key). Phases: answer, read, question, type."""

    phases: dict[str, list[tuple[float, str]]]
    intended: str
    intended_correct: bool | None

    def to_dict(self) -> dict[str, Any]:
        return {"intended_response": self.intended, "intended_correct": self.intended_correct,
                "phases": {k: [[round(t, 3), key] for t, key in v] for k, v in self.phases.items()}}


def plan(trial: Trial, s: TaskSettings, order: list[int] | None, *, seed: str, accuracy: float) -> TaskPlan:
    """A simulated participant's presses for a task trial (right with probability `accuracy`).

    Deterministic in (seed, trial index): the browser tests press the same keys as the PsychoPy
    autopilot, so both runners get the same answers from the same participant."""
    rng = random.Random(f"{seed}:task:{trial.trial_index}")
    right = rng.random() < accuracy
    m = trial.mat
    rt = lambda: round(rng.uniform(0.35, 0.7), 3)  # noqa: E731
    if s.kind in ("judgment", "choice", "lexical_decision"):
        ans = answers(trial, s, order)
        score = get_task(s.kind).score
        good = [a for a in ans if score(trial, a.value)]
        bad = [a for a in ans if not score(trial, a.value)]
        pick = good[0] if (right and good) or not bad else bad[rng.randrange(len(bad))]
        return TaskPlan({"answer": [(rt(), pick.key)]}, pick.value, score(trial, pick.value))
    if s.kind == "rating":
        ans = answers(trial, s)
        pick = ans[rng.randrange(len(ans))]
        return TaskPlan({"answer": [(rt(), pick.key)]}, pick.value, None)
    if s.kind == "self_paced_reading":
        units, _ = spr_units(trial, s)
        t, read = 0.0, []
        for u in range(len(units) + 1):
            t += round(rng.uniform(0.18, 0.32) + 0.01 * (len(units[u]) if u < len(units) else 0), 3)
            read.append((round(t, 3), s.advance_key))
        phases = {"read": read}
        ans = answers(trial, s)
        intended, ok = "", None
        if ans:
            score = get_task(s.kind).score
            good = [a for a in ans if score(trial, a.value)]
            bad = [a for a in ans if not score(trial, a.value)]
            pick = good[0] if (right and good) or not bad else bad[0]
            phases["question"] = [(rt(), pick.key)]
            intended, ok = pick.value, score(trial, pick.value)
        return TaskPlan(phases, intended, ok)
    if s.kind == "completion":
        target = str(m.get("target") or "word")
        word = target.lower() if right else ("".join(reversed(target.lower())) or "x")
        if normalize_answer(word) in accepted_answers(m) and not right:
            word = word + "s"
        keys = [{" ": "space", "'": "apostrophe", "-": "minus"}.get(c, c) for c in word if c.isalpha() or c in " '-"]
        t, typed = 0.4, []
        for k in keys:
            typed.append((round(t, 3), k))
            t += round(rng.uniform(0.06, 0.12), 3)
        typed.append((round(t + 0.15, 3), s.submit_key))
        return TaskPlan({"type": typed}, word, right)
    raise ValueError(f"no plan for task kind {s.kind!r}")
