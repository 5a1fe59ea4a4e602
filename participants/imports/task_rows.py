"""An imported trial's task fields, by the task kind's own `derive` (experiments/tasks/<kind>.py), not a copy.

The human runners report a raw record (experiments/tasks/record.py) and the kind's `derive` decides what it
means: the response's value, `correct` (the kind's `score`), a rating's point, a choice's position, the
per-word and per-region reading times. An imported trial is turned into the raw record a runner would have
reported for the same answer (the answer's key pressed; each word's advance press after its reading time;
the typed text's keys), and that record is derived. What the record had to invent is not kept: the answer's
time is the tool's own RT, keystroke times are left empty, and the runner-only fields (answered_by,
display_lag_ms, submit_ms) are dropped; the reading times are the tool's (the presses are spaced by them).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

from participants.imports.records import ImportInputError, SourceTrial

TYPED = {" ": "space", "'": "apostrophe", "-": "minus", ".": "period", ",": "comma"}
GENERIC = ("option_order", "chosen_position", "rating", "response_text", "keystrokes", "word_rts_ms", "region_rts_ms")
INVENTED = ("answered_by", "display_lag_ms", "submit_ms")


def _press(key: str, t: float) -> dict[str, Any]:
    return {"key": key, "t": t}


def _answer_record(answers: list[Any], value: str, t0: float, where: str) -> tuple[list[dict[str, Any]], str]:
    pos = next((i for i, a in enumerate(answers) if a.value == value), None)
    if pos is None:
        raise ImportInputError(f"{where}: the answer {value!r} is not one of the trial's answers "
                               f"({', '.join(a.value for a in answers)})")
    return [_press(answers[pos].key, t0 + 1.0)], f"key:{answers[pos].key}"


def _reading_record(trial: Any, s: Any, t: SourceTrial, value: Optional[str], answers: list[Any],
                    where: str) -> dict[str, Any]:
    """Self-paced reading: the dashes at 0, each word shown at the press that reveals it, the presses spaced
    by the tool's per-word reading times; then the comprehension answer, if any."""
    rts = list(t.word_rts or ())
    times = [0.0]
    for rt in rts:
        times.append(times[-1] + float(rt))
    presses = [_press(s.advance_key, x) for x in times]
    raw: dict[str, Any] = {"steps": [0.0] + times[:-1], "presses": presses, "pointers": []}
    if value is not None:
        more, by = _answer_record(answers, value, times[-1], where)
        raw.update(presses=presses + more, question_onset=times[-1], question_answered_by=by,
                   question_answer_time=more[0]["t"])
    return raw


def _typed_record(s: Any, value: str, where: str) -> dict[str, Any]:
    """Completion: each character's key, then the submit key."""
    keys = []
    for c in value:
        key = TYPED.get(c, c if len(c) == 1 and c.isalpha() else None)
        if key is None:
            raise ImportInputError(f"{where}: the typed answer {value[:40]!r} has {c!r}, which a completion row "
                                   "cannot hold (letters, spaces and ' - . , are typed)")
        keys.append(key)
    presses = [_press(k, 1.0 + i) for i, k in enumerate(keys)]
    end = float(len(keys) + 1)
    return {"response_onset": 0.0, "presses": presses + [_press(s.submit_key, end)], "pointers": [],
            "submit_time": end, "text": value}


def raw_record(kind: str, trial: Any, s: Any, order: Any, t: SourceTrial, value: Optional[str]) -> Optional[dict]:
    """The raw record a human runner would report for this answer (None: a trial without a response)."""
    from participants.tasks.logic import answers

    where = f"{t.source_file}: line {t.line}"
    if kind == "self_paced_reading":
        return _reading_record(trial, s, t, value, answers(trial, s, order) if value is not None else [], where)
    if value is None or (kind == "completion" and not value.strip()):
        return None
    if kind == "completion":
        return _typed_record(s, value, where)
    presses, by = _answer_record(answers(trial, s, order), value, 0.0, where)
    return {"response_onset": 0.0, "presses": presses, "pointers": [], "answered_by": by,
            "answer_time": presses[0]["t"]}


def task_fields(exp: Any, seq: Any, trial: Any, t: SourceTrial, value: Optional[str]) -> dict[str, Any]:
    """response, correct, rt_ms and the kind's columns (GENERIC) of an imported trial, by the kind's derive."""
    from participants.tasks import settings_for
    from participants.tasks.logic import TaskResultError, derive, screen_order

    s = settings_for(exp, trial, None)
    order = screen_order(trial, seq, s)
    raw = raw_record(trial.task, trial, s, order, t, value)
    if trial.task == "self_paced_reading" and value is None:   # the sentence read, its question not answered:
        trial = replace(trial, materials=tuple((k, v) for k, v in trial.materials  # the reading times only
                                               if k not in ("question_options", "question_answer", "question")))
    if raw is None:
        fields: dict[str, Any] = {k: None for k in ("response", "correct", *GENERIC)}
        extra: dict[str, Any] = {}
    else:
        try:
            fields = derive(trial, s, order, raw)
        except TaskResultError as exc:
            raise ImportInputError(f"{t.source_file}: line {t.line}: the {trial.task} trial cannot be recorded "
                                   f"({exc})") from None
        extra = {k: v for k, v in fields.pop("_extra").items() if k not in INVENTED}
    fields["rt_ms"] = t.rt_ms
    fields["keystrokes"] = None
    fields["_extra"] = extra
    return fields
