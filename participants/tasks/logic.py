"""What a task trial shows as answers, and what its raw events mean, for both human runners.

The meaning lives in the task kind's own unit (kinds/<kind>/task.py: `answers`, `derive`,
`plan`), dispatched by experiments/tasks/record.py, which also documents the raw record both runners
report. This module is the human runners' door to it, plus the two things that need a compiled
sequence: the choice's option order and the self-paced reading units of a trial.
"""
from __future__ import annotations

from experiments.tasks.record import (CHAR_KEYS, FRAME_SLACK_MS, MAX_EVENTS, MAX_MS, POINTERS,  # noqa: F401
                                      TEXT_KEYS, Answer, TaskPlan, TaskResultError, answers, dashes, derive,
                                      is_text_key, plan, sentence_of, typed_text)
from experiments.trials import Trial, TrialSequence
from experiments.tasks.presented import TaskSettings


def option_order(trial: Trial, seq: TrialSequence | None, s: TaskSettings | None = None) -> list[int]:
    """Choice: the options' original indices in screen order (experiments.tasks.choice.option_order:
    `positions: fixed` keeps the item's order; counterbalanced otherwise, the same in both runners)."""
    from experiments.kinds import kind_attrs
    trial_option_order = kind_attrs("choice", "task", "trial_option_order")

    positions = s.positions if s is not None else "counterbalance"
    return trial_option_order(trial, seq.seed if seq else 0, seq.subject_id if seq else "", positions)


def screen_order(trial: Trial, seq: TrialSequence | None, s: TaskSettings | None) -> list[int] | None:
    """The answers' order on screen where the kind decides one (its `TaskKind.option_order`: the choice's
    counterbalanced options), the same in both runners; None: as `answers` lists them."""
    from experiments.tasks import get_task

    hook = get_task(trial.task).option_order
    if hook is None:
        return None
    return hook(trial, seq.seed if seq else 0, seq.subject_id if seq else "", s)


def spr_units(trial: Trial, s: TaskSettings) -> tuple[list[str], list[list[int]]]:
    """Self-paced reading: the units revealed one per press, and each region's word indices (the
    kind's one reading of `sentence` and `regions`: experiments.tasks.self_paced_reading.units)."""
    from experiments.kinds import kind_attrs
    trial_units = kind_attrs("self_paced_reading", "task", "trial_units")

    return trial_units(trial, s.reveal)
