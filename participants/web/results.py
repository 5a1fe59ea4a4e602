"""What the page measured in one trial -> the shared trial-table row (the PsychoPy runner's row builder).

The page reports raw browser times (rAF timestamps of the frames that painted each screen, the
events' own timeStamp for key presses and clicks, all on the performance.now() clock). Everything
derived (relative onsets, durations, RT, early responses, correctness, feedback text) is computed
here, from the compiled trial and the spec, the same way for a served session and an imported one.
A report that does not fit the trial (unknown field, wrong trial or item, impossible times, sizes
beyond bounds, an answer no press or click gave) is refused with `ResultError`, naming the field.
"""
from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Any

from experiments.spec import Experiment
from experiments.tasks.detection import detection_for
from experiments.tasks.earned import feedback_earned, rsvp_rules
from experiments.tasks.record import TaskResultError, derive, row_fields
from experiments.trials import Trial, TrialSequence
from participants.rows import trial_row
from participants.rsvp import TrialResult
from participants.tasks import settings_for
from participants.tasks.logic import screen_order
from participants.web.task_record import RawRecordError, check_raw

MAX_PRESSES = 200
MAX_TRIAL_MS = 15 * 60 * 1000.0  # no trial lasts a quarter of an hour
MAX_CLOCK_MS = 1e10  # performance.now() of a page open for ~4 months
_KEY = re.compile(r"^[a-z0-9_]{1,24}$")
POINTER_TYPES = ("mouse", "touch", "pen")
FIELDS = {
    "trial_index", "item_id", "frame_ms", "unit_frames", "gap_frames", "fixation_onset", "unit_onsets",
    "unit_offsets", "intended_onset_frames", "onset_frames", "panel_fixation_onset", "panel_onset",
    "prompt_onset", "feedback_onset", "iti_onset", "end", "response", "answer_time", "answered_by",
    "feedback_text", "presses", "pointers", "dropped_frames", "started_at", "ended_at",
}


class ResultError(ValueError):
    """A posted trial that cannot be a record of this trial; the message names the field."""


def _num(d: dict[str, Any], k: str, lo: float, hi: float, optional: bool = False) -> float | None:
    v = d.get(k)
    if v is None and optional:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not lo <= v <= hi:
        raise ResultError(f"{k}: expected a number from {lo:g} to {hi:g}, got {str(v)[:40]!r}")
    return float(v)


def _int(d: dict[str, Any], k: str, lo: int, hi: int) -> int:
    v = d.get(k)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise ResultError(f"{k}: expected a whole number from {lo} to {hi}, got {str(v)[:40]!r}")
    return v


def _times(d: dict[str, Any], k: str, n: int, lo: float, hi: float) -> list[float]:
    v = d.get(k)
    if not isinstance(v, list) or len(v) != n:
        raise ResultError(f"{k}: expected a list of {n} times (one per RSVP unit)")
    return [_num({k: x}, k, lo, hi) for x in v]  # type: ignore[misc]


def _iso(d: dict[str, Any], k: str) -> str:
    v = d.get(k)
    try:
        if not isinstance(v, str) or len(v) > 40:
            raise ValueError
        datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        raise ResultError(f"{k}: expected an ISO date-time, got {str(v)[:40]!r}") from None
    return v


def _check_envelope(raw: Any, trial: Trial, fields: frozenset[str] | set[str]) -> None:
    """What every posted report shares: a JSON object with exactly `fields`, for this trial and item."""
    if not isinstance(raw, dict):
        raise ResultError("result: expected a JSON object")
    unknown = sorted(set(raw) - fields)
    if unknown:
        raise ResultError(f"result: unknown field(s) {', '.join(u[:40] for u in unknown[:5])}")
    missing = sorted(fields - set(raw))
    if missing:
        raise ResultError(f"result: missing field(s) {', '.join(missing)}")
    if _int(raw, "trial_index", 0, 10**6) != trial.trial_index:
        raise ResultError(f"trial_index: this is trial {trial.trial_index}, got {raw['trial_index']}")
    if raw["item_id"] != trial.item_id:
        raise ResultError(f"item_id: trial {trial.trial_index} shows item {trial.item_id!r}, got "
                          f"{str(raw['item_id'])[:80]!r}")


def _check_units(raw: dict[str, Any], n: int) -> dict[str, Any]:
    """The frame size and counts, the fixation's onset and the `n` RSVP units' times and frames, in order."""
    r: dict[str, Any] = {"frame_ms": _num(raw, "frame_ms", 2.0, 100.0)}
    for k in ("unit_frames", "gap_frames", "dropped_frames"):
        r[k] = _int(raw, k, 0, 10**6)
    t0 = _num(raw, "fixation_onset", 0.0, MAX_CLOCK_MS)
    lo, hi = t0, t0 + MAX_TRIAL_MS  # type: ignore[operator]
    r["fixation_onset"] = t0
    r["unit_onsets"] = _times(raw, "unit_onsets", n, lo, hi)
    r["unit_offsets"] = _times(raw, "unit_offsets", n, lo, hi)
    for k in ("intended_onset_frames", "onset_frames"):
        v = raw[k]
        if not isinstance(v, list) or len(v) != n or not all(isinstance(x, int) and not isinstance(x, bool)
                                                            and 0 <= x <= 10**6 for x in v):
            raise ResultError(f"{k}: expected {n} whole frame numbers")
        r[k] = v
    if (any(b < a for a, b in zip(r["unit_onsets"], r["unit_offsets"], strict=False))
            or r["unit_onsets"] != sorted(r["unit_onsets"])):
        raise ResultError("unit_onsets/unit_offsets: units must appear in order and end after they start")
    return r


def _check_screens(raw: dict[str, Any], lo: float, hi: float, panel: bool) -> dict[str, Any]:
    """The later screens' onsets and the answer's time, within the trial; a finished trial (and a panel) shown."""
    r = {k: _num(raw, k, lo, hi, optional=True) for k in (
        "panel_fixation_onset", "panel_onset", "prompt_onset", "feedback_onset", "iti_onset", "end", "answer_time")}
    if r["iti_onset"] is None or r["end"] is None:
        raise ResultError("iti_onset/end: a finished trial has both")
    if panel and (r["panel_onset"] is None or r["panel_fixation_onset"] is None):
        raise ResultError("panel_onset: a panel trial shows the panel")
    return r


def _check_response(raw: dict[str, Any], panel: bool) -> str:
    """The answer: violation or no_violation, or none when a panel timed out."""
    allowed = ("violation", "no_violation", "none") if panel else ("violation", "no_violation")
    if raw["response"] not in allowed:
        raise ResultError(f"response: expected one of {', '.join(allowed)}, got {str(raw['response'])[:40]!r}")
    return raw["response"]


def _check_presses(raw: dict[str, Any], exp: Experiment, lo: float, last: float) -> list[dict[str, Any]]:
    """The key presses: at most MAX_PRESSES, each a key this trial polls, within the trial."""
    presses = raw["presses"]
    if not isinstance(presses, list) or len(presses) > MAX_PRESSES:
        raise ResultError(f"presses: expected a list of at most {MAX_PRESSES} presses")
    polled = polled_keys(exp)
    checked = []
    for p in presses:
        if (not isinstance(p, dict) or set(p) != {"key", "t"} or not isinstance(p["key"], str)
                or not _KEY.match(p["key"])):
            raise ResultError("presses: each press is {key: a key name, t: a time}")
        if p["key"] not in polled:
            raise ResultError(f"presses: {p['key']!r} is not a key of this trial ({', '.join(sorted(polled))})")
        checked.append({"key": p["key"], "t": _in_trial(p, lo, last, "presses.t")})
    return checked


def _check_pointers(raw: dict[str, Any], lo: float, last: float) -> list[dict[str, Any]]:
    """The clicks and taps on an answer box: at most MAX_PRESSES, within the trial."""
    pointers = raw["pointers"]
    if not isinstance(pointers, list) or len(pointers) > MAX_PRESSES:
        raise ResultError(f"pointers: expected a list of at most {MAX_PRESSES} clicks")
    checked = []
    for p in pointers:
        if (not isinstance(p, dict) or set(p) != {"type", "t", "answer"} or p["type"] not in POINTER_TYPES
                or p["answer"] not in ("violation", "no_violation")):
            raise ResultError("pointers: each click is {type: mouse|touch|pen, t: a time, answer: "
                              "violation|no_violation}")
        checked.append({"type": p["type"], "t": _in_trial(p, lo, last, "pointers.t"), "answer": p["answer"]})
    return checked


def _answer_given(by: Any, at: float, r: dict[str, Any], exp: Experiment, panel: bool) -> str | None:
    """The answer that `answered_by` gave at `at`: a press or click there must exist (a click only on a
    panel answered by pointer)."""
    if not isinstance(by, str):
        raise ResultError("answered_by: expected key:<name>, mouse, touch or pen")
    if by.startswith("key:"):
        key = by[4:]
        if not any(p["key"] == key and p["t"] == at for p in r["presses"]):
            raise ResultError(f"answered_by: no press of {key[:24]!r} at answer_time")
        return _answer_of(exp).get(key) if panel else "violation" if key == exp.task.response_key else None
    if by in POINTER_TYPES and panel and not exp.task.panel.mouse:  # type: ignore[union-attr]
        raise ResultError(f"answered_by: {by}: this spec answers by keys only (task.panel.mouse: false)")
    if by in POINTER_TYPES and panel:
        hit = [p for p in r["pointers"] if p["type"] == by and p["t"] == at]
        if not hit:
            raise ResultError(f"answered_by: no {by} click at answer_time")
        return hit[0]["answer"]
    raise ResultError(f"answered_by: expected key:<name>, mouse, touch or pen, got {by[:40]!r}")


def _check_answer(raw: dict[str, Any], r: dict[str, Any], exp: Experiment, panel: bool) -> bool:
    """`answered_by` and `answer_time` agree with the presses, the clicks and the response: is it answered?"""
    by, at = raw["answered_by"], r["answer_time"]
    answered = by is not None
    if answered != (at is not None):
        raise ResultError("answered_by/answer_time: both or neither")
    if answered:
        expect = _answer_given(by, at, r, exp, panel)
        if expect != r["response"]:
            raise ResultError(f"response: the answering {by[:30]} gives {expect}, not {r['response']}")
        if panel and at < r["panel_onset"]:  # type: ignore[operator]
            raise ResultError("answer_time: a panel answer comes after the panel's onset")
    elif r["response"] not in ("none", "no_violation"):
        raise ResultError(f"response: {r['response']} without a press or click")
    return answered


def _check_feedback_text(raw: dict[str, Any], trial: Trial, exp: Experiment, response: str,
                         answered: bool) -> str | None:
    """The feedback the page showed: the spec's text for this response (None without feedback)."""
    text = raw["feedback_text"]
    if text is not None and (not isinstance(text, str) or len(text) > 500):
        raise ResultError("feedback_text: expected a text of at most 500 characters")
    expected_fb = feedback_text(exp, trial, response, answered)
    if text != expected_fb:
        raise ResultError(f"feedback_text: this trial's feedback is {expected_fb!r}, the page reports "
                          f"{str(text)[:60]!r}")
    return text


def check_result(raw: Any, trial: Trial, exp: Experiment) -> dict[str, Any]:
    """The posted report, checked against the compiled trial and the spec (raises ResultError)."""
    _check_envelope(raw, trial, FIELDS)
    panel = exp.task.response == "panel"
    r: dict[str, Any] = {"trial_index": trial.trial_index}
    r.update(_check_units(raw, len(trial.words)))
    lo, hi = r["fixation_onset"], r["fixation_onset"] + MAX_TRIAL_MS
    r.update(_check_screens(raw, lo, hi, panel))
    r["response"] = _check_response(raw, panel)
    if r["end"] < r["iti_onset"]:
        raise ResultError("end: the trial ends after its inter-trial blank begins")
    last = r["end"]  # the trial's input lies between its fixation's onset and its last frame
    r["presses"] = _check_presses(raw, exp, lo, last)
    r["pointers"] = _check_pointers(raw, lo, last)
    answered = _check_answer(raw, r, exp, panel)
    r["answered_by"] = raw["answered_by"]
    r["feedback_text"] = _check_feedback_text(raw, trial, exp, r["response"], answered)
    r["started_at"], r["ended_at"] = _iso(raw, "started_at"), _iso(raw, "ended_at")
    return r


def _in_trial(p: dict[str, Any], lo: float, hi: float, name: str) -> float:
    t = p["t"]
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
        raise ResultError(f"{name}: expected a time, got {str(t)[:40]!r}")
    if not lo <= t <= hi:
        raise ResultError(f"{name}: {t:g} lies outside this trial (its fixation's onset {lo:g} to its last frame "
                          f"{hi:g})")
    return float(t)


def polled_keys(exp: Experiment) -> frozenset[str]:
    """The keys a violation-detection trial records (as the PsychoPy runner polls them): the response key
    and, with a panel, its keys."""
    panel = exp.task.panel if exp.task.response == "panel" else None
    return frozenset({exp.task.response_key, *(panel.keys.values() if panel is not None else ())})


def _answer_of(exp: Experiment) -> dict[str, str]:
    panel = exp.task.panel
    return {k: a for a, k in panel.keys.items()} if panel is not None else {}


def correctness(exp: Experiment, trial: Trial, response: str, answered: bool) -> bool | None:
    """The trial's kind's rule (its `outcome`, experiments.tasks.earned.rsvp_rules): a key trial is always answered."""
    panel = exp.task.response == "panel"
    return rsvp_rules(exp, trial, "outcome")(trial, response, answered=answered or not panel)


def feedback_text(exp: Experiment, trial: Trial, response: str, answered: bool) -> str | None:
    """The feedback an RSVP report must carry (the RSVP renderer's rule, experiments.tasks.earned)."""
    correct = correctness(exp, trial, response, answered)
    return feedback_earned(exp, trial, correct, rsvp=True)


def _ms(x: float) -> float:
    return round(x, 3)


def trial_result(r: dict[str, Any], trial: Trial, exp: Experiment) -> TrialResult:
    """The checked report as the PsychoPy runner's TrialResult (times in ms from the fixation onset)."""
    response_times = rsvp_rules(exp, trial, "response_times")  # the trial's kind's (violation detection's)
    panel = exp.task.response == "panel"
    t0, on, off = r["fixation_onset"], r["unit_onsets"], r["unit_offsets"]
    rel = lambda t: None if t is None else _ms(t - t0)  # noqa: E731
    end = off[-1]
    answered = r["answered_by"] is not None
    at = r["answer_time"]
    answer_of = _answer_of(exp)
    panel_on = r["panel_onset"]

    def phase(t: float) -> str:
        if t < on[0]:
            return "fixation"
        if t < end:
            return "sentence"
        if panel:
            return "panel_delay" if panel_on is None or t < panel_on else "panel"
        return "response"

    unit = lambda t: max((j for j, o in enumerate(on) if o <= t), default=None)  # noqa: E731
    presses: list[dict[str, Any]] = []
    events = ([(p["t"], p["key"], None) for p in r["presses"]]
              + [(p["t"], p["type"], p["answer"]) for p in r["pointers"]])
    early = None
    for t, name, clicked in sorted(events, key=lambda e: e[0]):
        entry: dict[str, Any] = {"key": name, "t_ms": _ms(t - t0), "phase": phase(t)}
        counted = answered and t == at and (r["answered_by"] == f"key:{name}" or r["answered_by"] == name)
        if panel:
            answer = clicked if clicked is not None else answer_of.get(name)
            entry.update(unit=unit(t), answer=answer)  # a click is listed as PsychoPy lists it: key 'mouse'
            if early is None and answer is not None and entry["phase"] in ("sentence", "panel_delay"):
                early = (answer, unit(t), _ms(t - on[0]))
        else:
            entry.update(word_index=unit(t), counted=counted)
        presses.append(entry)
    correct = correctness(exp, trial, r["response"], answered)
    extra: dict[str, Any] = {
        "runner": "web", "timing_mode": "frames", "frame_ms": round(r["frame_ms"], 4),
        "word_ms_planned": round(r["unit_frames"] * r["frame_ms"], 3), "word_frames": r["unit_frames"],
        "gap_frames": r["gap_frames"], "dropped_frames": r["dropped_frames"],
        "intended_onset_frames": r["intended_onset_frames"], "onset_frames": r["onset_frames"],
        "onset_frame_errors": [a - b for a, b in zip(r["onset_frames"], r["intended_onset_frames"], strict=False)],
        "gap_durations_ms": [_ms(on[j + 1] - off[j]) for j in range(len(on) - 1)],
        "fixation_ms_measured": _ms(on[0] - t0),
        # -1: none
        "critical_onset_ms": rel(on[crit_i]) if (crit_i := trial.study_record.critical_index) >= 0 else None,
        "sentence_end_ms": rel(end),
        "feedback_onset_ms": rel(r["feedback_onset"]),
        "iti_onset_ms": rel(r["iti_onset"]),
        "presses": presses,
        "keyboard_backend": "browser (KeyboardEvent/PointerEvent.timeStamp, rAF timestamps)",
    }
    if panel:
        extra.update(panel_fixation_onset_ms=rel(r["panel_fixation_onset"]), panel_onset_ms=rel(panel_on),
                     panel_delay_ms_measured=_ms(panel_on - r["panel_fixation_onset"]),
                     answered_by=r["answered_by"])
    else:
        extra.update(prompt_onset_ms=rel(r["prompt_onset"]),
                     response_phase=phase(at) if answered else None)
    crit = on[trial.study_record.critical_index] if not panel else on[0]  # (a panel's RT is from the panel's onset)
    rt, rt_end = response_times(at if answered else None, crit, end, panel_on if panel else None, _ms)
    return TrialResult(
        response=r["response"], correct=correct,  # type: ignore[arg-type]
        rt_ms=rt, rt_sentence_end_ms=rt_end,
        word_onsets_ms=[_ms(o - t0) for o in on], word_durations_ms=[_ms(b - a) for a, b in zip(on, off, strict=False)],
        feedback_shown=bool(trial.feedback), feedback_text=r["feedback_text"],
        started_at=r["started_at"], ended_at=r["ended_at"], iti_onset=r["iti_onset"], extra=extra,
        response_mode="panel" if panel else "key",
        early_response=early[0] if early else None, early_response_unit=early[1] if early else None,
        early_response_ms=early[2] if early else None,
    )


def web_row(raw: Any, trial: Trial, seq: TrialSequence, exp: Experiment, *, subject_id: str, session: int,
            extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Check a posted report and build its trial-table row with the shared row builder."""
    checked = check_result(raw, trial, exp)
    return trial_row(trial, trial_result(checked, trial, exp), seq, subject_id=subject_id, session=session,
                     extra=extra)


# ---- task trials (participants/web/js/twinlab-task.js) ----------------------------------------------
TASK_FIELDS = {"trial_index", "item_id", "task", "frame_ms", "raw", "word_onsets", "feedback_onset", "iti_onset",
               "end", "feedback_text", "started_at", "ended_at"}


def web_task_row(raw: Any, trial: Trial, seq: TrialSequence, exp: Experiment, *, subject_id: str, session: int,
                 overrides: dict[str, Any] | None = None, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Check a task trial's report against the compiled trial and build its row (logic.derive, as PsychoPy)."""

    _check_envelope(raw, trial, TASK_FIELDS)
    if raw["task"] != trial.task:
        raise ResultError(f"task: trial {trial.trial_index} is a {trial.task} trial, got {str(raw['task'])[:40]!r}")
    frame_ms = _num(raw, "frame_ms", 2.0, 100.0)
    end = _num(raw, "end", 0.0, MAX_TRIAL_MS)
    iti = _num(raw, "iti_onset", 0.0, end)  # type: ignore[arg-type]
    _num(raw, "feedback_onset", 0.0, iti, optional=True)  # type: ignore[arg-type]
    words = raw["word_onsets"]
    if not isinstance(words, list) or len(words) > 200 or not all(
            isinstance(w, list) and len(w) == 2 and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                        and 0 <= x <= end for x in w) and w[0] <= w[1]
            for w in words):
        raise ResultError("word_onsets: expected [onset, offset] pairs (RSVP presentation) within the trial")
    s = settings_for(exp, trial, overrides)
    if words and (s.presentation != "rsvp" or len(words) != len(trial.words)):
        raise ResultError(f"word_onsets: this trial shows {len(trial.words) if s.presentation == 'rsvp' else 0} RSVP "
                          "words")
    order = screen_order(trial, seq, s)
    try:  # only what the trial can produce (fields, keys, boxes, times in its window), then what it means
        check_raw(raw["raw"], trial, s, order, end)  # type: ignore[arg-type]
    except (RawRecordError, TaskResultError) as exc:
        raise ResultError(f"raw.{exc}" if not str(exc).startswith("expected") else f"raw: {exc}") from None
    try:
        fields = derive(trial, s, order, raw["raw"])
    except TaskResultError as exc:
        raise ResultError(f"raw.{exc}") from None
    task_extra = fields.pop("_extra")
    correct = fields["correct"]
    expected_fb = feedback_earned(exp, trial, correct, rsvp=False)
    if raw["feedback_text"] != expected_fb:
        raise ResultError(f"feedback_text: this trial's feedback is {expected_fb!r}, the page reports "
                          f"{str(raw['feedback_text'])[:60]!r}")
    started, ended = _iso(raw, "started_at"), _iso(raw, "ended_at")
    rel = lambda v: None if v is None else _ms(v)  # noqa: E731 (already on the trial's clock)
    result = TrialResult(
        response=fields["response"], correct=correct, rt_ms=fields["rt_ms"], rt_sentence_end_ms=None,
        word_onsets_ms=[_ms(a) for a, _ in words], word_durations_ms=[_ms(b - a) for a, b in words],
        feedback_shown=raw["feedback_onset"] is not None, feedback_text=raw["feedback_text"], started_at=started,
        ended_at=ended, iti_onset=raw["iti_onset"],
        extra={"runner": "web", "task": trial.task, "timing_mode": "frames", "frame_ms": round(frame_ms, 4),
               **task_extra, "raw": raw["raw"], "feedback_onset_ms": rel(raw["feedback_onset"]),
               "iti_onset_ms": rel(raw["iti_onset"]),
               "keyboard_backend": "browser (KeyboardEvent/PointerEvent.timeStamp, rAF timestamps)"},
        response_mode="task",
        generic=row_fields(fields))  # the generic columns and the kind's own (its declared COLUMNS)

    return trial_row(trial, result, seq, subject_id=subject_id, session=session, extra=extra,
                     detection=detection_for(trial.task, exp.task, overrides))
