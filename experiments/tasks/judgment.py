"""Judgment: one sentence (whole or word by word), two or more labelled answers (yes/no acceptability,
"does it make sense", any labels). The response is a label's `value`; it is correct when it equals the
item's `answer`."""
from __future__ import annotations

from typing import Any

from experiments.tasks.base import TaskKind, register
from experiments.tasks.config import JudgmentSettings
from experiments.tasks.scoring import equals_answer


def score(trial: Any, response: Any) -> bool | None:
    """The chosen label's value against `answer` (None: no answer in the item, or no response)."""
    return equals_answer(trial.mat.get("answer"), response)


KIND = register(TaskKind(
    name="judgment", description="one sentence (whole or word by word), two or more labelled answers",
    materials=("sentence",), optional_materials=("answer", "pair_sentence", "question"),
    runners=("psychopy", "browser", "model"), model_protocols=("meta", "direct", "surprisal"), score=score, settings=JudgmentSettings,
))
