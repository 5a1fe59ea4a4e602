"""Task kinds: one small unit per kind, read by every runner (docs/general_model.md).

A task kind says what a person sees and does, what is recorded, how a response is scored against
the item, and how a model subject is asked. The PsychoPy runner, the browser runner and the model
runner each implement every kind they declare in `TaskKind.runners`; `validate` refuses a spec whose
task a runner cannot present, naming the runner. Register a kind with `register`.
"""
from __future__ import annotations

from experiments.tasks.base import (RUNNERS, TaskError, TaskKind, check_runner, get_task, runner_kinds, layer_hook, layer_hooks,
                                    refuse_runner, register, register_hooks, registry, runner_problems, runs_on,
                                    unregister)

from experiments.tasks.detection import detection_values

__all__ = ["detection_values", "RUNNERS", "TaskKind", "TaskError", "register", "registry", "get_task", "check_runner", "runner_kinds", "runner_problems",
           "runs_on", "refuse_runner", "register_hooks", "layer_hooks", "layer_hook", "unregister"]

# the built-in kinds register themselves on import
from experiments.tasks import builtin  # noqa: E402,F401
