"""Lexical decision: a letter string (`sentence`), word / non-word keys; the response (`word` or
`nonword`, the labels' values) is correct when it equals the item's `answer`."""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, field_validator

from kinds.api import KindSettings, Label, TaskKind, Trial, distinct_labels, equals_answer
from kinds.judgment.task import (
    answers,
    check_label_answer,
    derive,
    label_key_checker,
    label_settings,
    label_values,
    plan,
)


class LexicalDecisionSettings(KindSettings):
    labels: Annotated[list[Label], Field(min_length=2, max_length=2)] = [
        Label(value="word", text="Word", key="j"), Label(value="nonword", text="Non-word", key="f")]
    question: str = "Is this an English word?"

    @field_validator("labels")
    @classmethod
    def _word_nonword(cls, v: list[Label]) -> list[Label]:
        if sorted(lab.value for lab in v) != ["nonword", "word"]:
            raise ValueError("lexical decision labels need the values word and nonword "
                             f"(got {', '.join(lab.value for lab in v)})")
        return distinct_labels(v)


def check_item(mat: dict[str, Any], settings: Any, where: str) -> None:
    check_label_answer(mat, label_values(settings), where)


def score(trial: Trial, response: Any) -> bool | None:
    return equals_answer(trial.mat.get("answer"), response)


KIND = TaskKind(
    name="lexical_decision", description="a letter string; word / non-word keys",
    materials=("sentence", "answer"), recorded=("response", "correct", "rt_ms"),
    runners=("psychopy", "browser", "model"), model_protocols=("direct", "meta", "surprisal"), score=score,
    settings=LexicalDecisionSettings,
    check_item=check_item, answers=answers, derive=derive, plan=plan,
    check_keys=label_key_checker(("f", "j")),
    human_settings=label_settings("lexical_decision", ("nonword", "word"), ("f", "j")),
    detection=lambda settings: ("word", "nonword"),
)
