"""The task-kind contract and its registry (as a jsPsych plugin or an lm-eval output type).

A kind brings its hooks (docs/general_model/kinds.md "A kind brings its hooks"): everything a runner, the page or
`validate` would otherwise decide by branching on the kind's name is a field of its `TaskKind` (settings,
answers, derive, plan, check_keys, human_settings, detection, option_order, raw_fields, record_keys,
types_text, page_view, renderer, renders_as, check_design, check_sequence, summary). A kind is one folder
(kinds/<name>/, found by experiments/kinds.py): its `task` part's `KIND` is its TaskKind; the other layers'
sides of it (model protocols, analysis sections) are its other parts, found through the same registry.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from experiments.kinds import UnknownKind, kind_part, parts
from experiments.tasks.hooks import (
    Answers,
    CheckDesign,
    CheckItem,
    CheckKeys,
    CheckSequence,
    Derive,
    Detection,
    HumanSettings,
    OptionOrder,
    PageView,
    PersonResponse,
    Plan,
    RecordKeys,
    Score,
    Summary,
)

if TYPE_CHECKING:  # annotations only: experiments.trials imports the tasks package (a real cycle)
    from experiments.trials import Trial

RUNNERS: tuple[str, ...] = ("psychopy", "browser", "model")
RUNNER_NAMES = {"psychopy": "the PsychoPy runner (run-human)", "browser": "the browser runner (web serve)",
                "model": "the model runner (run-model)"}


class TaskError(ValueError):
    """A task cannot be built from an item, or a response cannot be scored."""


def no_answer(trial: Trial, response: Any) -> bool | None:
    """The default `score`: no trial of the kind has a right answer (a rating, a reading)."""
    return None


# the raw record's fields of a kind that shows answers and waits for one (experiments/tasks/record.py)
ANSWER_FIELDS = frozenset({"presses", "pointers", "response_onset", "answered_by", "answer_time"})


@dataclass(frozen=True, kw_only=True)
class ItemsSide:
    """Items and validation: what an item must give, the kind's settings, and what `validate` refuses.

    `materials`: the item's keys the kind needs (docs/general_model.md lists them); `optional_materials`: those
    it uses when present; `settings`: the pydantic model of the kind's `task:` settings (a subclass of
    experiments.tasks.config.KindSettings; None: the kind takes none). Each check is optional (None: no check).
    """

    materials: tuple[str, ...] = ()
    optional_materials: tuple[str, ...] = ()
    settings: type[BaseModel] | None = None
    check_item: CheckItem | None = None
    check_design: CheckDesign | None = None
    check_sequence: CheckSequence | None = None
    check_keys: CheckKeys | None = None
    summary: Summary | None = None  # None: `validate` says "task=<kind>"


@dataclass(frozen=True, kw_only=True)
class PresentationSide:
    """How people are shown the task and what their runner records (None everywhere: a model-only kind).

    `runners`: the runners that implement it (each runner's own registry must agree: tests check);
    `renderer`: "task" (a kinds/<kind>/view.py unit in the task window and the page's twinlab-task.js builder)
    or a runner of its own ("rsvp": participants/rsvp.py); `renders_as`: another kind whose renderers present
    this one; `recorded`: the columns a human session fills; `raw_fields`: the raw record's fields (every
    record's, some records'); `types_text`: the typing keys are polled too.
    """

    runners: tuple[str, ...] = RUNNERS
    renderer: str = "task"
    renders_as: str | None = None
    recorded: tuple[str, ...] = ("response", "correct", "rt_ms")
    answers: Answers | None = None
    person_response: PersonResponse | None = None  # None: a person's response is one of `answers`' values
    derive: Derive | None = None
    plan: Plan | None = None
    human_settings: HumanSettings | None = None
    option_order: OptionOrder | None = None  # None: the answers in the order `answers` lists them
    page_view: PageView | None = None  # None: the answers in screen order
    raw_fields: tuple[frozenset[str], frozenset[str]] = (ANSWER_FIELDS, frozenset())
    record_keys: RecordKeys | None = None
    types_text: bool = False


@dataclass(frozen=True, kw_only=True)
class ScoringSide:
    """How a response is scored and how a model subject is asked.

    `score`: right, wrong, or None where the trial has no right answer; `detection`: a yes/no kind's
    (accepting, rejecting) values (`detection_by_settings`: only its settings decide them, a judgment's
    labels); `model_protocols`: the protocols a model subject can be asked with, the first the default (the
    protocols themselves are the kind's `model` part: model_subjects.tasks.registry.ModelKind).
    """

    score: Score = no_answer
    detection: Detection | None = None
    detection_by_settings: bool = False
    model_protocols: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class TaskKind(ItemsSide, PresentationSide, ScoringSide):
    """One kind of task: its name and description, and its three sides (items and validation, presentation,
    scoring), each a typed class with defaults, so a kind gives only what it has. Its fourth side, the
    analysis, is its `analysis` part (analysis.kind_sections.AnalysisKind); its import rules its `importer`
    part (participants.imports.kind_importer.KindImporter). Build it with keywords:
    `TaskKind(name=..., description=..., materials=(...), score=..., ...)`.
    """

    name: str
    description: str

    def check_materials(self, materials: dict[str, Any], where: str) -> None:
        missing = [k for k in self.materials if materials.get(k) in (None, "", ())]
        if missing:
            raise TaskError(f"{where}: task {self.name!r} needs {', '.join(missing)}")

    def runner_problem(self, runner: str) -> str | None:
        """Why `runner` cannot present this kind (None: it can)."""
        if runner in self.runners:
            return None
        can = ", ".join(self.runners) or "none yet"
        return (f"task.kind {self.name!r}: {RUNNER_NAMES.get(runner, runner)} cannot present it "
                f"(runners that implement it: {can})")


def registry() -> dict[str, TaskKind]:
    """Every kind's TaskKind (its folder's `task` part, `KIND`), in listing order (experiments/kinds.py)."""

    return parts("task", "KIND")  # type: ignore[return-value]


def material_keys() -> frozenset[str]:
    """Every item key a registered kind declares (`materials` and `optional_materials`): the design file's
    columns with a role in some task (experiments/design.py lists the others as kept without one)."""
    return frozenset(key for k in registry().values() for key in (*k.materials, *k.optional_materials))


def get_task(name: str) -> TaskKind:
    try:
        task = kind_part(name, "task")
    except UnknownKind:
        task = None
    if task is None or getattr(task, "KIND", None) is None:
        raise TaskError(f"unknown task kind {name!r}; known: {', '.join(sorted(registry()))}") from None
    return task.KIND


def check_runner(kind: str, runner: str) -> None:
    """Refuse (TaskError naming the runner) a task kind that `runner` does not implement."""
    problem = get_task(kind).runner_problem(runner)
    if problem:
        raise TaskError(problem)


def runner_kinds(runner: str) -> tuple[str, ...]:
    """Every registered kind `runner` presents, in listing order (what run-human and web list)."""
    return tuple(name for name, k in registry().items() if runner in k.runners)


def runner_problems(kind: str, runners: tuple[str, ...] = RUNNERS) -> list[str]:
    """Every runner among `runners` that cannot present `kind`, as messages (what `validate` prints)."""
    k = get_task(kind)
    return [p for p in (k.runner_problem(r) for r in runners) if p]


RUNNER_COMMANDS = {"psychopy": "run-human", "browser": "web", "model": "run-model"}


def runs_on(kind: str) -> str:
    """Which runners can run `kind`, for people: "model subjects only (run-model)" or "PsychoPy (run-human),
    the browser (web), model subjects (run-model)"."""
    names = {"psychopy": "PsychoPy", "browser": "the browser", "model": "model subjects"}
    k = get_task(kind)
    listed = ", ".join(f"{names[r]} ({RUNNER_COMMANDS[r]})" for r in k.runners)
    return listed + (" only" if len(k.runners) == 1 else "")


def refuse_runner(kind: str, runner: str) -> str | None:
    """The message `run-human`/`web` give for a kind they cannot present, naming the runners that can."""
    k = get_task(kind)
    if runner in k.runners:
        return None
    return (f"{RUNNER_NAMES.get(runner, runner)} cannot present task.kind {kind!r}; it runs on {runs_on(kind)}")
