"""Violation detection (Lakretz et al. 2021): RSVP sentence, report a violation by key or on a panel.

The Lakretz runners implement it as before; it is in the registry so every runner and `validate`
read one list. `forced_choice` (the model-only Lakretz forced choice at the critical verb) is here too.
A Lakretz trial is a generic `Trial` whose materials are this kind's record (`LAKRETZ_MATERIALS`:
structure, condition, dependency, violation_position, words, critical_index, ...;
experiments.tasks.lakretz_materials); a design file's violation-detection item gives `sentence` and `answer`.
"""
from __future__ import annotations

from typing import Any

from experiments.tasks.base import TaskKind, register
from experiments.tasks.lakretz_materials import KEYS as LAKRETZ_MATERIALS
from experiments.tasks.scoring import missing


def score(trial: Any, response: Any) -> bool | None:
    """violation / no_violation against the trial's correct response; a filler (`other`) is never scored."""
    if missing(response) or trial.violation_position == "other":
        return None
    return str(response) == trial.correct_response


def score_forced_choice(trial: Any, response: Any) -> bool | None:
    """The chosen form against the grammatical form at the critical position."""
    return None if missing(response) else str(response) == trial.correct_form


def pair_missing(trial: Any) -> list[str]:
    """What a trial lacks for comparing the critical word with its number-flipped form (forced choice;
    empty: it has a marked critical word, its correct form and a different alternative). The one rule
    `validate` (task.kind forced_choice) and the model protocols that compare the two forms read."""
    miss = []
    if trial.critical_index < 0 or trial.critical_index >= len(trial.words):
        miss.append("a marked critical word (critical_index)")
    if not trial.correct_form:
        miss.append("correct_form")
    if not trial.alternative_word or not trial.critical_word:
        miss.append("alternative_word (the number-flipped form)")
    elif trial.correct_form:
        other = trial.alternative_word if trial.critical_word == trial.correct_form else trial.critical_word
        if other == trial.correct_form:
            miss.append("an alternative different from the correct form (the two forms are identical)")
    return miss


def check_forced_choice(exp: Any, trials: Any) -> None:
    """`task.kind: forced_choice` asks every trial for the critical word's two forms: refuse (ValueError
    naming the item and what it lacks) a spec whose items have none, as `run-model` would, at `validate`.
    `trials`: a compiled sequence of the spec (the caller compiles: this unit never imports the compiler)."""
    if exp.task.kind != "forced_choice":
        return
    for trial in trials:
        miss = pair_missing(trial)
        if miss:
            raise ValueError(f"task.kind forced_choice compares the critical word with its number-flipped form; "
                             f"item {trial.item_id!r} (block {trial.block}) lacks {'; '.join(miss)}: use a "
                             "judgment or violation_detection task for items without a critical word")


KIND = register(TaskKind(
    name="violation_detection", description="RSVP sentence; report a violation (key or panel)",
    # a design file's item: sentence + answer (checked by the design compiler); a Lakretz trial: its record
    materials=(), optional_materials=("sentence", "answer", *LAKRETZ_MATERIALS), runners=("psychopy", "browser", "model"),
    model_protocols=("violation_judgment", "forced_choice", "direct", "surprisal"), score=score,
    detection=lambda settings: ("no_violation", "violation"), renderer="rsvp",
))
FORCED_CHOICE = register(TaskKind(
    name="forced_choice", description="models: the correct verb form vs its number-flipped form at the critical verb",
    materials=(), recorded=("response", "correct"), runners=("model",),
    model_protocols=("forced_choice", "direct", "surprisal"), score=score_forced_choice,
))
