"""Judgment: one sentence (whole or word by word), two or more labelled answers (yes/no acceptability,
"does it make sense", any labels). The response is a label's `value`; it is correct when it equals the
item's `answer`."""
from __future__ import annotations

import random
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from experiments.screen_texts import kind_text
from kinds.api import (
    POSITION_KEYS,
    Answer,
    KeySettingError,
    KindSettings,
    Label,
    TaskError,
    TaskKind,
    TaskPlan,
    TaskSettings,
    Trial,
    clash,
    derive_answer,
    distinct_labels,
    equals_answer,
    judgment_values,
    label_field,
    label_keys,
    plan_answer,
)


class JudgmentSettings(KindSettings):
    labels: Annotated[list[Label], Field(min_length=2)] = [Label(value="yes", text="Yes", key="f"),
                                                           Label(value="no", text="No", key="j")]
    question: str = "Is this sentence acceptable?"
    presentation: Literal["whole", "rsvp"] = "whole"

    @field_validator("labels")
    @classmethod
    def _differ(cls, v: list[Label]) -> list[Label]:
        return distinct_labels(v)


def label_values(settings: Any) -> list[str]:
    return [lab.value for lab in settings.labels]


def check_label_answer(mat: dict[str, Any], values: list[str], where: str) -> None:
    """An item's `answer` (given) is exactly one label's value: it is what the table records and what the
    analysis compares responses with ("Word" for the value word is refused, naming the values)."""
    ans = mat.get("answer")
    if ans not in (None, "") and str(ans).strip() not in values:
        raise TaskError(f"{where}: answer {ans!r} is not a label's value ({', '.join(values)}; task.labels); "
                        "write it exactly as the value")


def check_item(mat: dict[str, Any], settings: Any, where: str) -> None:
    check_label_answer(mat, label_values(settings), where)


def score(trial: Trial, response: Any) -> bool | None:
    """The chosen label's value against `answer` (None: no answer in the item, or no response)."""
    return equals_answer(trial.mat.get("answer"), response)


def answers(trial: Trial, s: TaskSettings, order: list[int] | None = None) -> list[Answer]:
    """The labels in screen order with their keys (the human runners' settings `s`)."""
    return [Answer(v, lab, k) for (v, lab), k in zip(s.labels, s.keys, strict=False)]


def derive(trial: Trial, s: TaskSettings, order: list[int] | None, raw: dict, presses: list, pointers: list,
           out: dict, extra: dict) -> None:
    derive_answer(trial, s, order, raw, presses, pointers, out, extra)


def plan(trial: Trial, s: TaskSettings, order: list[int] | None, rng: random.Random, right: bool) -> TaskPlan:
    return plan_answer(trial, s, order, rng, right)


def label_key_checker(default_keys: tuple[str, ...]) -> Any:
    """The keys rule of a kind whose answers are labels (a label's own key, else `default_keys` by position)."""
    def check(settings: Any, given: dict[str, Any], quit_key: str, n_options: int, n_question_options: int) -> None:
        clash("task.labels", label_keys(settings, "labels" in given, default_keys), quit_key)
    return check


def label_settings(kind: str, default_values: tuple[str, str], default_keys: tuple[str, ...]) -> Any:
    """The human runners' labels and keys of a label kind: the spec's labels, else `default_values` with the
    spec language's texts (the kind's `TEXTS`, `label_<value>`: experiments.screen_texts `kind_text`) on F, J."""
    def human(st: Any, given: dict[str, Any], lang: str, n_options: int) -> dict[str, Any]:
        keys = tuple(label_keys(st, "labels" in given, default_keys))
        if "labels" in given:
            labels = [(lab.value, lab.text) for lab in st.labels]
        else:
            labels = [(v, kind_text(kind, lang, f"label_{v}")) for v in default_values]
        if len(set(keys)) != len(keys):
            raise KeySettingError(f"task.labels: two answers share a key ({', '.join(keys)})")
        return {"labels": tuple(labels), "keys": keys}
    return human


def detection(settings: Any) -> tuple[str, str] | None:
    """The accepting and rejecting labels (experiments.tasks.detection.judgment_values); yes/no by default."""
    labels = label_field(settings or {})
    if labels is None:
        return ("yes", "no")
    return judgment_values(labels, label_field(settings, "text"))


KIND = TaskKind(
    name="judgment", description="one sentence (whole or word by word), two or more labelled answers",
    materials=("sentence",), optional_materials=("answer", "pair_sentence", "question"),
    runners=("psychopy", "browser", "model"), model_protocols=("meta", "direct", "surprisal"), score=score,
    settings=JudgmentSettings,
    check_item=check_item, answers=answers, derive=derive, plan=plan,
    check_keys=label_key_checker(POSITION_KEYS),
    human_settings=label_settings("judgment", ("yes", "no"), POSITION_KEYS),
    detection=detection, detection_by_settings=True,
)
