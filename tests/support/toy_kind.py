"""A toy task kind defined outside twinlab (test support): "is the word a colour?", two labelled answers.

It is one registration (`register_toy()`): its settings model (with a field no built-in kind has, `colour_text`), materials,
item check, scoring and the hooks a human runner needs (its answers' labels and keys, key checks, the
raw record's meaning through the answer-screen rule); it is presented by the judgment's renderers
(`renders_as`). `unregister()` takes it out again. Nothing in twinlab names it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from experiments.tasks import TaskError, TaskKind, register
from experiments.tasks import base
from experiments.tasks.config import _Settings
from experiments.tasks.judgment import answers, derive, plan
from experiments.tasks.keys import KeySettingError, clash
from experiments.tasks.scoring import equals_answer

NAME = "colour_toy"


class ToySettings(_Settings):
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
    if st.colour_key == "m":
        raise KeySettingError("task.colour_key: m is the other answer's key")
    return {"labels": (("colour", st.colour_text), ("other", st.other_text)), "keys": (st.colour_key, "m")}


def toy_kind() -> TaskKind:
    return TaskKind(name=NAME, description="is the word a colour", materials=("sentence", "answer"),
                    runners=("psychopy", "browser"), score=score, settings=ToySettings, check_item=check_item,
                    answers=answers, derive=derive, plan=plan, check_keys=check_keys, human_settings=human_settings,
                    renders_as="judgment")


def register_toy() -> TaskKind:
    return register(toy_kind())


def unregister() -> None:
    base.unregister(NAME)


ITEMS = ["1,c,red,colour", "1,o,table,other", "2,c,blue,colour", "2,o,chair,other",
         "3,c,green,colour", "3,o,spoon,other", "4,c,pink,colour", "4,o,house,other"]


def toy_spec(tmp: Path, task: dict | None = None, **timing: float) -> Path:
    """A design spec of the toy kind (its own setting `colour_text` given) with short timings."""
    (tmp / "items.csv").write_text("item,colourness,sentence,answer\n" + "\n".join(ITEMS) + "\n", encoding="utf-8")
    data = {"name": "toy", "seed": 1, "design": {"file": "items.csv", "factors": {"colourness": ["c", "o"]},
                                                 "lists": "latin_square"},
            "blocks": [{"name": "test", "role": "test", "feedback": True}],
            "timing": {"fixation_ms": 150, "word_ms": 100, "gap_ms": 50, "response_ms": 1000, "feedback_ms": 150,
                       "iti_ms": 80, **timing},
            "task": task or {"kind": NAME, "colour_text": "A colour", "question": "Colour?"},
            "texts": {"instructions": ["Colour or not?"]}}
    p = tmp / "toy.yaml"
    p.write_text(yaml.safe_dump(data), encoding="utf-8")
    return p
