"""The critical word's two forms: a trial's marked critical word, its correct form and the number-flipped
alternative (a study record's critical_index, critical_word, correct_form, alternative_word: `Trial.study_record`),
read one way.

Whatever compares the two forms asks here: a task kind's `validate` check (forced choice refuses items without
them) and the model protocols that score one form against the other (`Protocol.needs_pair`,
model_subjects/protocol_base.py), whichever kind the trial is.
"""
from __future__ import annotations

from typing import Any


def other_form(trial: Any) -> str:
    """The number-flipped form of the correct word."""
    r = trial.study_record
    return r.alternative_word if r.critical_word == r.correct_form else r.critical_word


def pair_missing(trial: Any) -> list[str]:
    """What a trial lacks for comparing the critical word with its number-flipped form (empty: it has a marked
    critical word, its correct form and a different alternative)."""
    r = trial.study_record
    miss = []
    if r.critical_index < 0 or r.critical_index >= len(trial.words):
        miss.append("a marked critical word (critical_index)")
    if not r.correct_form:
        miss.append("correct_form")
    if not r.alternative_word or not r.critical_word:
        miss.append("alternative_word (the number-flipped form)")
    elif r.correct_form and other_form(trial) == r.correct_form:
        miss.append("an alternative different from the correct form (the two forms are identical)")
    return miss
