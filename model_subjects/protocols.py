"""Response protocols by name: the one entry the runner, `run-model`'s checks and `twinlab context` call.

Each kind's protocols live in its folder's model part (kinds/<kind>/model.py); this module looks them up
(model_subjects.tasks). Without a spec's task, `get_protocol` asks the kind a spec without a `task:` kind runs
(`default_kind`: the one a registered study declares, as before the general model). A kind's protocol classes
and templates are imported from its folder (kinds/<kind>/model.py).
"""
from __future__ import annotations

from typing import Any

from experiments.spec_model import source_default_kind
from model_subjects.protocol_base import Protocol, ProtocolError
from model_subjects.tasks.registry import default_protocol as _default
from model_subjects.tasks.registry import task_protocol

DEFAULT_SOURCE = "stimuli"  # where the trials of a spec from before the general model come from (a study's cells)


def default_kind() -> str:
    """The kind a spec whose trials come from a study's cells runs when its `task:` names none (the study's
    `SPEC_DEFAULTS`, experiments.spec_model.source_default_kind); "" when no registered study declares one."""

    return source_default_kind(DEFAULT_SOURCE)


def default_protocol(task_kind: str, response: str = "key") -> str:
    """The spec's task, put to a model without --protocol (the kind's registered default)."""
    return _default(task_kind, response)


def get_protocol(name: str, *, question: str | None = None, max_new_tokens: int = 8, panel: Any = None,
                 task: Any = None) -> Protocol:
    """A protocol by name for the spec's Task `task` (its kind's registered protocols; without a task, the
    default kind's, as before the general model); `surprisal` works on any kind that has sentences."""
    kind = getattr(task, "kind", None)
    if kind is None:
        kind = default_kind()
        if not kind:
            raise ProtocolError(f"protocol {name!r} without a spec's task: no registered study declares a default "
                                "task kind (pass task=)")
    return task_protocol(kind, name.strip(), task=task, question=question, max_new_tokens=max_new_tokens,
                         panel=panel)
