"""Response protocols by name: the one entry the runner, `run-model`'s checks and `twinlab context` call.

Each kind's protocols live in its folder's model part (kinds/<kind>/model.py); this module looks them up
(model_subjects.tasks) and keeps the old names importable: violation detection's protocol classes,
templates and names (kinds/violation_detection/model.py lists them, with the names the `protocol` column
records).
"""
from __future__ import annotations

from typing import Any

from model_subjects.protocol_base import (Decision, Option, Protocol, ProtocolError, Query,  # noqa: F401 (re-exported)
                                          other_form, pair_missing)
from model_subjects.tasks import default_protocol as _default, task_protocol
from experiments.kinds import reexports

LAKRETZ_KIND = "violation_detection"  # a spec without a task (before the general model) is this kind
# violation detection's protocol classes, templates and names, importable from here as before
# (kinds/violation_detection/model.py lists them)
__getattr__ = reexports({name: (LAKRETZ_KIND, "model") for name in (
    "COMPARISON_TEMPLATES", "JUDGMENT_TEMPLATES", "PANEL_PROTOCOL", "PROMPT_TYPES", "PROTOCOL_NAMES", "QUESTION",
    "Direct", "ForcedChoice", "PanelJudgment", "Production", "SentenceComparison", "SentenceJudgment",
    "ViolationJudgment", "grammatical_sentence", "rest_after_critical", "ungrammatical_sentence", "with_form")})


def default_protocol(task_kind: str, response: str = "key") -> str:
    """The spec's task, put to a model without --protocol (the kind's registered default)."""
    return _default(task_kind, response)


def get_protocol(name: str, *, question: str | None = None, max_new_tokens: int = 8, panel: Any = None,
                 task: Any = None) -> Protocol:
    """A protocol by name for the spec's Task `task` (its kind's registered protocols; without a task, the
    Lakretz kind's, as before the general model); `surprisal` works on any kind that has sentences."""
    kind = getattr(task, "kind", LAKRETZ_KIND)
    return task_protocol(kind, name.strip(), task=task, question=question, max_new_tokens=max_new_tokens,
                         panel=panel)
