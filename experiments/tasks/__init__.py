"""Task kinds: the generic contract every runner reads (docs/general_model.md).

A task kind says what a person sees and does, what is recorded, how a response is scored against
the item, and how a model subject is asked. The PsychoPy runner, the browser runner and the model
runner each implement every kind they declare in `TaskKind.runners`; `validate` refuses a spec whose
task a runner cannot present, naming the runner. A kind is one folder (kinds/<name>/, or a third party's
package named in the `twinlab.kinds` entry points), found by experiments/kinds.py.
"""
from __future__ import annotations

from experiments.tasks.base import (
                                    RUNNERS,
                                    TaskError,
                                    TaskKind,
                                    check_runner,
                                    get_task,
                                    refuse_runner,
                                    registry,
                                    runner_kinds,
                                    runner_problems,
                                    runs_on,
)
from experiments.tasks.detection import detection_values

__all__ = ["detection_values", "RUNNERS", "TaskKind", "TaskError", "registry", "get_task", "check_runner",
           "runner_kinds", "runner_problems", "runs_on", "refuse_runner"]
