"""The model-only toy kind's `task` part: its settings, materials, item check and scoring (test support)."""
from __future__ import annotations

from typing import Any

from experiments.tasks import TaskError, TaskKind
from experiments.tasks.config import KindSettings
from experiments.tasks.scoring import equals_answer

NAME = "colour_toy_b"


class ToySettings(KindSettings):
    question: str = "Is the word a colour?"


def score(trial: Any, response: Any) -> bool | None:
    return equals_answer(trial.mat.get("answer"), response)


def check_item(mat: dict, settings: Any, where: str) -> None:
    if str(mat.get("answer", "")).strip() not in ("colour", "other"):
        raise TaskError(f"{where}: answer {mat.get('answer')!r} is not colour or other")


KIND = TaskKind(name=NAME, description="is the word a colour", materials=("sentence", "answer"), runners=("model",),
                model_protocols=("meta",), score=score, settings=ToySettings, check_item=check_item)
