"""The signatures of a task kind's hooks: what each function a kind may give its `TaskKind` receives and returns.

A kind fills the typed sides of its contract (experiments/tasks/base.py: `ItemsSide`, `PresentationSide`,
`ScoringSide`) with plain functions; each field's type here says exactly how the layers call it, so a kind
author reads the contract, not other kinds. The types they pass:

- a trial: `experiments.trials.Trial` (ids, block, item, list, role, factors, task, materials);
- the kind's settings: an instance of the kind's own settings model (`TaskKind.settings`, a subclass of
  `experiments.tasks.config.KindSettings`), or None for a kind without settings;
- the human runners' settings: `experiments.tasks.shown.TaskSettings` (labels, keys, scale, question, ...);
- an answer on screen: `experiments.tasks.shown.Answer`; an autopilot's plan: `experiments.tasks.shown.TaskPlan`.

Each Protocol is structural: any function with these parameters fits (names as written, positional).
"""
from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel

from experiments.tasks.shown import Answer, TaskPlan, TaskSettings

if TYPE_CHECKING:  # annotations only: experiments.trials imports the tasks package (a real cycle)
    from experiments.trials import Trial

JSON = Any  # a JSON value (what a spec, an item's materials or a response holds)


# ---- items and validation ------------------------------------------------------------------------
class CheckItem(Protocol):
    """Refuse (TaskError naming the field) an item the kind cannot present or score under `settings`."""

    def __call__(self, materials: dict[str, JSON], settings: BaseModel | None, where: str, /) -> None: ...


class CheckDesign(Protocol):
    """Refuse (ValueError naming what) a `design:` spec of this kind that a runner cannot present."""

    def __call__(self, exp: Any, /) -> None: ...  # exp: experiments.spec_model.Experiment (no import: a circle)


class CheckSequence(Protocol):
    """`validate` on a compiled sequence: refuse (ValueError naming the item) a trial a runner would refuse."""

    def __call__(self, exp: Any, trials: tuple[Trial, ...], /) -> None: ...


class CheckKeys(Protocol):
    """Refuse (keys.KeySettingError naming the field) keys no human runner can honour."""

    def __call__(self, settings: BaseModel | None, given: dict[str, JSON], quit_key: str, n_options: int,
                 n_question_options: int, /) -> None: ...


class Summary(Protocol):
    """The words `validate`'s OK line says of the task (the spec's `task:` section)."""

    def __call__(self, task: Any, /) -> str: ...  # task: experiments.spec_model.Task


# ---- presentation (people) -----------------------------------------------------------------------
class Answers(Protocol):
    """The answers on screen, left to right (`order`: the options' original indices in screen order)."""

    def __call__(self, trial: Trial, s: TaskSettings, order: list[int] | None = None, /) -> list[Answer]: ...


class Derive(Protocol):
    """A raw record -> the row's fields: fill `out` (response, correct, rt_ms, the kind's columns) and `extra`;
    raise experiments.tasks.record.TaskResultError for a record that cannot come from this trial."""

    def __call__(self, trial: Trial, s: TaskSettings, order: list[int] | None, raw: dict[str, JSON],
                 presses: list[dict[str, Any]], pointers: list[dict[str, Any]], out: dict[str, Any],
                 extra: dict[str, Any], /) -> None: ...


class Plan(Protocol):
    """The autopilot's presses for a trial, right when `right` (and the trial has a right answer)."""

    def __call__(self, trial: Trial, s: TaskSettings, order: list[int] | None, rng: random.Random,
                 right: bool, /) -> TaskPlan: ...


class HumanSettings(Protocol):
    """Some of TaskSettings's fields (labels, keys, scale, anchors, question_keys, hint) from the kind's
    settings and what the spec gave; raise keys.KeySettingError naming the field."""

    def __call__(self, settings: BaseModel | None, given: dict[str, JSON], language: str, n_options: int,
                 /) -> dict[str, Any]: ...


class OptionOrder(Protocol):
    """The options' original indices in screen order for this subject."""

    def __call__(self, trial: Trial, seed: int | None, subject_id: str, s: TaskSettings | None, /) -> list[int]: ...


class RecordKeys(Protocol):
    """Keys a trial polls besides its answers' (the first is the key a tap stands for)."""

    def __call__(self, s: TaskSettings, /) -> tuple[str, ...]: ...


class PersonResponse(Protocol):
    """Why a person's recorded `response` cannot be this trial's (None: it can), for a kind whose response column is
    not one of `answers`' values (the words picked beside their distractors, say, not the side pressed)."""

    def __call__(self, trial: Trial, s: TaskSettings, response: str) -> str | None: ...


class PageView(Protocol):
    """The page's view of a trial: the kind's fields (`listed` turns answers into the page's dicts)."""

    def __call__(self, trial: Trial, s: TaskSettings, order: list[int] | None, listed: Any, /) -> dict[str, Any]: ...


# ---- scoring ---------------------------------------------------------------------------------------
class Score(Protocol):
    """Whether `response` is right for this trial; None when the trial has no right answer."""

    def __call__(self, trial: Trial, response: JSON, /) -> bool | None: ...


class Detection(Protocol):
    """(accepting value, rejecting value) of a yes/no kind, or None (settings: the model, a dict or None)."""

    def __call__(self, settings: BaseModel | dict[str, JSON] | None, /) -> tuple[str, str] | None: ...
