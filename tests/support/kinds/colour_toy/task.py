"""A toy task kind defined outside twinlab (test support): "is the word a colour?", two labelled answers.

Its `task` part: its settings model (with a field no built-in kind has, `colour_text`), materials, item
check, scoring and the hooks a human runner needs (its answers' labels and keys, key checks, the raw
record's meaning through the answer-screen rule); it is presented by the judgment's renderers
(`renders_as`), so the folder has no view and no page.js. Nothing in twinlab names it.
"""
from __future__ import annotations

from typing import Any

from experiments.tasks import TaskError, TaskKind
from experiments.tasks.config import KindSettings
from experiments.tasks.keys import KeySettingError, clash
from experiments.tasks.scoring import equals_answer
from kinds.judgment.task import answers, derive, plan

NAME = "colour_toy"


class ToySettings(KindSettings):
    question: str = "Is the word a colour?"
    colour_text: str = "Colour"  # the answer texts people read (a setting only this kind has)
    other_text: str = "Other"
    colour_key: str = "c"


def score(trial: Any, response: Any) -> bool | None:
    return equals_answer(trial.mat.get("answer"), response)


def check_item(mat: dict, settings: Any, where: str) -> None:
    if str(mat.get("answer", "")).strip() not in ("colour", "other"):
        raise TaskError(f"{where}: answer {mat.get('answer')!r} is not colour or other")


def check_keys(settings: Any, given: dict, quit_key: str, n_options: int, n_question_options: int) -> None:
    clash("task.colour_key", [settings.colour_key, "m"], quit_key)


def human_settings(st: Any, given: dict, lang: str, n_options: int) -> dict[str, Any]:
    from experiments.screen_texts import kind_text

    if st.colour_key == "m":
        raise KeySettingError("task.colour_key: m is the other answer's key")
    # the spec's text, else the kind's own in the spec's language (its TEXTS, in __init__.py)
    other = st.other_text if "other_text" in given else kind_text(NAME, lang, "label_other")
    return {"labels": (("colour", st.colour_text), ("other", other)), "keys": (st.colour_key, "m")}


KIND = TaskKind(name=NAME, description="is the word a colour", materials=("sentence", "answer"),
                runners=("psychopy", "browser"), score=score, settings=ToySettings, check_item=check_item,
                answers=answers, derive=derive, plan=plan, check_keys=check_keys, human_settings=human_settings,
                renders_as="judgment")
