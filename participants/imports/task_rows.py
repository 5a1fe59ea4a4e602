"""An imported trial's task fields, by the task kind's own `derive` (kinds/<kind>/task.py), not a copy.

The human runners report a raw record (experiments/tasks/record.py) and the kind's `derive` decides what it
means: the response's value, `correct` (the kind's `score`), a rating's point, a choice's position, the
per-word and per-region reading times. An imported trial is turned into the raw record a runner would have
reported for the same answer (the answer's key pressed; each word's advance press after its reading time;
the typed text's keys), and that record is derived. What the record had to invent is not kept: the answer's
time is the tool's own RT, keystroke times are left empty, and the runner-only fields (answered_by,
display_lag_ms, submit_ms) are dropped; the reading times are the tool's (the presses are spaced by them).
The record is the kind's own (its importer part's `task_record`, kinds/<kind>/importer.py).
"""
from __future__ import annotations

from typing import Any, Optional

from experiments.tasks.record import TaskResultError, derive
from participants.imports.kinds import importer_for
from participants.imports.records import ImportInputError, SourceTrial
from participants.tasks import settings_for
from participants.tasks.logic import screen_order

GENERIC = ("option_order", "chosen_position", "rating", "response_text", "keystrokes", "word_rts_ms", "region_rts_ms")
INVENTED = ("answered_by", "display_lag_ms", "submit_ms")


def task_fields(exp: Any, seq: Any, trial: Any, t: SourceTrial, value: Optional[str]) -> dict[str, Any]:
    """response, correct, rt_ms and the kind's columns (GENERIC) of an imported trial, by the kind's derive."""

    rules = importer_for(trial.task)
    s = settings_for(exp, trial, None)
    order = screen_order(trial, seq, s)
    raw = rules.task_record(trial, s, order, t, value, f"{t.source_file}: line {t.line}")
    trial = rules.derived_trial(trial, value)
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
