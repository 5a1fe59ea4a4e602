"""The model runner's task kinds: what each kind registers for model subjects.

A kind's model unit (model_subjects/tasks/<kind>.py) registers a `ModelKind` at import: its protocols
by short name (or a resolver, for a kind that names its protocols itself, as violation detection's
recorded names `forced_choice`, `sentence_judgment:<PromptType>`, ... do), its default protocol, and the
replay's typed answer. Every caller (the runner, `run-model`'s checks, `twinlab context`, the replay)
reads this registry; none branches on a kind's name. A test checks it against `experiments.tasks`
(`TaskKind.runners` contains "model" exactly for the kinds registered here).
`surprisal` applies to every kind that says so (`ModelKind.surprisal`).
"""
from __future__ import annotations

from model_subjects.tasks.registry import (MODEL_TASKS, Factory, ModelKind, default_protocol,  # noqa: F401
                                           model_kind, model_kinds, protocol_names, register_model_kind,
                                           task_protocol, typed_answer, unregister)

# the built-in kinds register themselves on import (after the registry exists)
from model_subjects.tasks import builtin  # noqa: E402,F401
