"""Forced choice (the model-only Lakretz forced choice at the critical verb): the correct verb form against
its number-flipped form; its rules are violation detection's (kinds/violation_detection/task.py)."""
from __future__ import annotations

from kinds.api import TaskKind
from kinds.violation_detection.task import check_forced_choice, score_forced_choice

KIND = TaskKind(
    name="forced_choice", description="models: the correct verb form vs its number-flipped form at the critical verb",
    materials=(), recorded=("response", "correct"), runners=("model",),
    model_protocols=("forced_choice", "direct", "surprisal"), score=score_forced_choice,
    check_sequence=check_forced_choice, summary=lambda task: f"response={task.response}",
)
