"""The template kind's `task` part: its settings, its items' check, its scoring (kinds/api.py is the contract).

`KIND` fills the three typed sides of `TaskKind` (items and validation, presentation, scoring); every field
has a default, so a kind gives only what it has. Each hook is a plain function whose signature is the
Protocol of the same name in experiments/tasks/hooks.py (`CheckItem`, `Score`, ...).
"""
from __future__ import annotations

from pydantic import BaseModel

from kinds.api import JSON, KindSettings, TaskError, TaskKind, Trial, equals_answer

NAME = __name__.rsplit(".", 2)[-2]  # the kind is named after its folder (the copy's name)
ANSWERS = ("yes", "no")


class TemplateSettings(KindSettings):
    """The kind's `task:` settings (the spec takes these fields flat: `task: {kind: <kind>, question: ...}`)."""

    question: str = "Is this sentence acceptable?"


def check_item(materials: dict[str, JSON], settings: BaseModel | None, where: str) -> None:
    """`validate` refuses an item whose answer the kind cannot score, naming the line (`where`)."""
    if str(materials.get("answer", "")).strip() not in ANSWERS:
        raise TaskError(f"{where}: answer {materials.get('answer')!r} is not one of {', '.join(ANSWERS)}")


def score(trial: Trial, response: JSON) -> bool | None:
    """Right when the response is the item's answer (the one normaliser: case, spaces, a final full stop)."""
    return equals_answer(trial.mat.get("answer"), response)


KIND = TaskKind(
    name=NAME, description="a yes/no question about a sentence (the template kind)",
    # items and validation
    materials=("sentence", "answer"), settings=TemplateSettings, check_item=check_item,
    # presentation: model subjects only; a kind for people adds "psychopy"/"browser" with a view.py and a
    # page.js (or `renders_as` an existing kind's) and the hooks its screen needs (answers, derive, plan, ...)
    runners=("model",),
    # scoring
    score=score, model_protocols=("meta",),
)
