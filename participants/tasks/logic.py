"""What a task trial shows as answers, and what its raw events mean, for both human runners.

The meaning lives in the task kind's own unit (kinds/<kind>/task.py: `answers`, `derive`,
`plan`), dispatched by experiments/tasks/record.py, which also documents the raw record both runners
report. This module is the human runners' door to it, plus the one thing that needs a compiled
sequence: the answers' order on screen where the kind decides one (`screen_order`: the choice's
counterbalanced options), asked of the trial's own kind.
"""
from __future__ import annotations

from experiments.tasks import get_task
from experiments.tasks.presented import TaskSettings
from experiments.trials import Trial, TrialSequence


def screen_order(trial: Trial, seq: TrialSequence | None, s: TaskSettings | None) -> list[int] | None:
    """The answers' order on screen where the kind decides one (its `TaskKind.option_order`: the choice's
    counterbalanced options), the same in both runners; None: as `answers` lists them."""

    hook = get_task(trial.task).option_order
    if hook is None:
        return None
    return hook(trial, seq.seed if seq else 0, seq.subject_id if seq else "", s)
