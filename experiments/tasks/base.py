"""The task-kind contract and its registry (as a jsPsych plugin or an lm-eval output type).

A kind brings its hooks (docs/general_model/kinds.md "A kind brings its hooks"): everything a runner, the page or
`validate` would otherwise decide by branching on the kind's name is a field of its `TaskKind` (settings,
answers, derive, plan, check_keys, human_settings, detection, option_order, raw_fields, record_keys,
types_text, page_view, renderer, renders_as, check_design, check_sequence, summary). A kind is one folder
(kinds/<name>/, found by experiments/kinds.py): its `task` part's `KIND` is its TaskKind; the other layers'
sides of it (model protocols, analysis sections) are its other parts, found through the same registry.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

# a trial is experiments.trials.Trial; not imported here, not even for type checking: trials.py asks the
# kinds (through experiments.tasks.detection), and tests/test_import_cycles.py reads every import
Trial = Any

RUNNERS: tuple[str, ...] = ("psychopy", "browser", "model")
RUNNER_NAMES = {"psychopy": "the PsychoPy runner (run-human)", "browser": "the browser runner (web serve)",
                "model": "the model runner (run-model)"}


class TaskError(ValueError):
    """A task cannot be built from an item, or a response cannot be scored."""


def _no_answer(trial: Trial, response: Any) -> bool | None:
    return None


# the raw record's fields of a kind that shows answers and waits for one (experiments/tasks/record.py)
ANSWER_FIELDS = frozenset({"presses", "pointers", "response_onset", "answered_by", "answer_time"})


@dataclass(frozen=True)
class TaskKind:
    """One kind of task.

    `materials` are the item's keys the kind needs (docs/general_model.md lists them);
    `optional_materials` those it uses when present. `recorded` names the trial-table columns a
    human session fills. `runners` are the runners that implement it (each runner's own registry must
    agree: tests check). `model_protocols` are the protocol names a model subject can be asked with,
    the first being the default. `score` maps (trial, response) to correct/incorrect, or None when the
    task has no right answer for that trial (a rating, a filler without a key). `settings` is the
    pydantic model of the kind's `task:` settings (experiments.tasks.config).
    """

    name: str
    description: str
    materials: tuple[str, ...]
    optional_materials: tuple[str, ...] = ()
    recorded: tuple[str, ...] = ("response", "correct", "rt_ms")
    runners: tuple[str, ...] = RUNNERS
    model_protocols: tuple[str, ...] = ()
    score: Callable[[Trial, Any], bool | None] = field(default=_no_answer)
    settings: Any = None  # a pydantic model class (config.py); None: the kind takes no settings of its own
    # (materials, settings, where) -> None: refuse (TaskError naming the field) an item the kind cannot
    # present or score under these settings (an answer no label has, regions that are not the sentence, ...)
    check_item: Callable[[dict[str, Any], Any, str], None] | None = None
    # the human runners' side (experiments/tasks/record.py dispatches to these; None: no human presentation):
    # the answers on screen, the raw record -> row fields, the autopilot's plan
    answers: Callable[..., list[Any]] | None = None
    # (trial, human settings, response) -> why a person's `response` cannot be this trial's (None: it can), for a
    # kind whose `response` column is not one of `answers`' values (the words picked beside distractors, not the
    # side pressed); None: the response is one of the answers' values (model_subjects/person_answers.py)
    person_response: Callable[[Any, Any, str], str | None] | None = None
    derive: Callable[..., None] | None = None
    plan: Callable[..., Any] | None = None
    # ---- the kind's hooks: everything a runner, the page or `validate` would otherwise decide by the kind's
    # name (docs/general_model/kinds.md "A kind brings its hooks"). Each is optional; None: the generic behaviour.
    # keys: (settings, given, quit_key, n_options, n_question_options) -> None; raise keys.KeySettingError
    # naming the field for keys no human runner can honour (None: the kind's keys need no check)
    check_keys: Callable[..., None] | None = None
    # the human runners' presentation: (settings, given, language, n_options) -> a dict of some of
    # participants.tasks.settings.TaskSettings's fields (labels, keys, scale, anchors, question_keys, hint:
    # the default hint when the spec gives none); raise keys.KeySettingError naming the field
    human_settings: Callable[..., dict[str, Any]] | None = None
    # detection: (settings: the kind's settings model, a dict as the spec gives them, or None) ->
    # (accepting value, rejecting value), or None when the kind has no such pair (experiments.tasks.detection)
    detection: Callable[[Any], tuple[str, str] | None] | None = None
    # the settings decide the pair (a judgment's labels): without them no pair is claimed (detection.settled)
    detection_by_settings: bool = False
    # option order: (trial, seed, subject_id, human settings) -> the options' original indices in screen order
    # (None: the answers are shown as `answers` lists them)
    option_order: Callable[..., list[int]] | None = None
    # the raw record a human runner reports for a trial (experiments/tasks/record.py): (fields every record
    # has, fields some records have); `record_keys(s)`: keys the trial polls besides its answers' (the first
    # is the key a tap stands for); `types_text`: the typing keys are polled too
    raw_fields: tuple[frozenset[str], frozenset[str]] = (ANSWER_FIELDS, frozenset())
    record_keys: Callable[[Any], tuple[str, ...]] | None = None
    types_text: bool = False
    # the page's view of a trial: (trial, s, order, listed) -> the kind's fields of the view (None: the answers
    # in screen order, `listed(answers)`); `listed` turns Answers into the page's dicts (key label, correct)
    page_view: Callable[..., dict[str, Any]] | None = None
    # which renderer presents it to people: "task" (a kinds/<kind>/view.py unit in the task window;
    # the page's twinlab-task.js builder) or a runner of its own ("rsvp": participants/rsvp.py, twinlab-rsvp.js; the
    # kind's task part then declares the renderer's rules, read for the trial at hand: experiments.tasks.earned.rsvp_rules)
    renderer: str = "task"
    # a kind presented by another kind's renderers (its PsychoPy unit and page builder), e.g. a toy judgment
    renders_as: str | None = None
    # a design spec (items from a file) of this kind: (exp) -> None, ValueError naming what the kind cannot
    # present (violation detection: the key response needs a critical word a design's items do not mark)
    check_design: Callable[[Any], None] | None = None
    # `validate` on a compiled sequence: (exp, trials) -> None, ValueError naming the item a runner would refuse
    # (forced choice: a trial without the critical word's two forms); the caller compiles
    check_sequence: Callable[[Any, Any], None] | None = None
    # the words `validate`'s OK line says of the task: (the spec's Task) -> text (None: "task=<kind>")
    summary: Callable[[Any], str] | None = None

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
    from experiments.kinds import parts

    return parts("task", "KIND")  # type: ignore[return-value]


def material_keys() -> frozenset[str]:
    """Every item key a registered kind declares (`materials` and `optional_materials`): the design file's
    columns with a role in some task (experiments/design.py lists the others as kept without one)."""
    return frozenset(key for k in registry().values() for key in (*k.materials, *k.optional_materials))


def get_task(name: str) -> TaskKind:
    from experiments.kinds import UnknownKind, kind_part

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
