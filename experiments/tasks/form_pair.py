"""The critical word's two forms: a trial's marked critical word, its correct form and the number-flipped
alternative (Trial.critical_index, critical_word, correct_form, alternative_word), read one way.

Whatever compares the two forms asks here: a task kind's `validate` check (forced choice refuses items without
them) and the model protocols that score one form against the other (`Protocol.needs_pair`,
model_subjects/protocol_base.py), whichever kind the trial is.
"""
from __future__ import annotations

from typing import Any


def other_form(trial: Any) -> str:
    """The number-flipped form of the correct word."""
    return trial.alternative_word if trial.critical_word == trial.correct_form else trial.critical_word


def pair_missing(trial: Any) -> list[str]:
    """What a trial lacks for comparing the critical word with its number-flipped form (empty: it has a marked
    critical word, its correct form and a different alternative)."""
    miss = []
    if trial.critical_index < 0 or trial.critical_index >= len(trial.words):
        miss.append("a marked critical word (critical_index)")
    if not trial.correct_form:
        miss.append("correct_form")
    if not trial.alternative_word or not trial.critical_word:
        miss.append("alternative_word (the number-flipped form)")
    elif trial.correct_form and other_form(trial) == trial.correct_form:
        miss.append("an alternative different from the correct form (the two forms are identical)")
    return miss
