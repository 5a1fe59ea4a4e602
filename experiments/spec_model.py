"""The experiment specification's schema: the pydantic models of a spec and its hash.

What a spec *is* (fields, types, the checks of one field or one section, the canonical JSON and the
hash); reading a file and the checks that need the stimulus or design files are experiments/spec.py,
which the rest of twinlab imports (it re-exports these names). Kept apart so that the compiler and the
design compiler depend on the schema without depending on the loader that calls them.
"""
from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    Strict,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

from experiments import spec_errors
from experiments.design import LAKRETZ_FACTOR_COLUMNS, RESERVED, normalise_level
from experiments.psychopy_names import check_color, check_key
from experiments.schema import column_names
from experiments.screen_texts import FEEDBACK_KEYS, SPEC_TEXT_KEYS, confirm_keys, default_text, placeholder_problem
from experiments.studies import declared
from experiments.tasks.base import get_task, registry
from experiments.tasks.config import settings_for, task_fields
from experiments.tasks.keys import check_keys

CONDITION_LETTERS = {"S", "P"}
# bounds that keep `plan` fast and memory small; a block beyond them is a typo, not an experiment
MAX_BLOCK_TRIALS = 5_000
MAX_REPETITIONS = 1_000
MAX_WEIGHT = 100
MAX_ITEMS_PER_CONDITION = 10_000  # the generator takes ~1.5 s per 10,000 x conditions of one structure


class SpecError(ValueError):
    """A spec that cannot be used; the message names the file, field and value."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class StimulusSource(_Strict):
    """Either a generator from `stimuli` with parameters, or a CSV/TSV file of items."""

    generator: Literal["nested_agreement"] | None = "nested_agreement"
    file: str | None = None
    items_per_condition: Annotated[int, Strict(), Field(ge=1, le=MAX_ITEMS_PER_CONDITION)] = 512
    seed: Annotated[int, Strict()] = 1

    @model_validator(mode="after")
    def _one_source(self) -> "StimulusSource":
        if self.file is not None:
            if "generator" in self.model_fields_set and self.generator is not None:
                # which one would win is not obvious to a reader of the spec: refuse, never choose
                raise ValueError(f"give either `generator:` ({self.generator}) or `file:` ({self.file}), not both")
            object.__setattr__(self, "generator", None)
        return self


Version = Literal["grammatical", "inner", "outer", "filler"]


def _check_conditions(v: Any) -> Any:
    if isinstance(v, list):
        for c in v:
            if not c or set(c) - CONDITION_LETTERS:
                raise ValueError(f"condition {c!r} must be a string of S and P, e.g. 'PSP'")
    return v


class DesignEntry(_Strict):
    """One structure of a mixed block, with how many trials of each version per condition.

    `versions` weights: per condition and repetition, `grammatical: 2, inner: 1, outer: 1, filler: 2`
    gives 2 grammatical trials, one violation at each verb and 2 fillers (a violation of another
    kind, e.g. a non-finite verb or an inanimate subject; see docs/spec.md).
    """

    structure: str
    conditions: Literal["all"] | list[str] = "all"
    versions: dict[Version, Annotated[int, Strict(), Field(ge=0, le=MAX_WEIGHT)]] = {
        "grammatical": 1, "inner": 1, "outer": 1}
    repetitions: Annotated[int, Strict(), Field(ge=1, le=MAX_REPETITIONS)] = 1

    @field_validator("conditions")
    @classmethod
    def _conditions_are_numbers(cls, v: Any) -> Any:
        return _check_conditions(v)

    @field_validator("versions")
    @classmethod
    def _some_trials(cls, v: dict[str, int]) -> dict[str, int]:
        if not any(v.values()):
            raise ValueError("every version weight is 0: the entry has no trials")
        return v


def study_block_fields() -> frozenset[str]:
    """The block fields the registered studies' cells read (a study's `BLOCK_FIELDS`): a block of a design
    spec (with `role`) refuses them when given, its rows bring their own conditions."""

    return frozenset(f for fields in declared("BLOCK_FIELDS").values() for f in fields)



class Block(_Strict):
    """A block of trials drawn from a crossed design: structure x condition x version.

    Either `structures` (every structure crossed with `conditions` and `versions`) or `design`
    (one entry per structure with its own version weights, mixed in one block).
    """

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_]+$")]
    lexicon: Annotated[str, Field(pattern=r"^[A-Za-z0-9_]+$")] = "test"
    structures: list[str] | None = Field(default=None, min_length=1)
    design: list[DesignEntry] | None = Field(default=None, min_length=1)
    conditions: Literal["all"] | list[str] = "all"
    versions: list[Version] = ["grammatical", "inner", "outer"]
    repetitions: Annotated[int, Strict(), Field(ge=1, le=MAX_REPETITIONS)] = 1
    # sessions this block runs in ("all", or e.g. [1] for a training block in the first session only)
    sessions: Literal["all"] | list[Annotated[int, Strict(), Field(ge=1)]] = "all"
    # draw the block's trials of all its sessions together and deal them out in order, so the
    # design is balanced over the sessions together (Lakretz et al. 2021), not within each one
    across_sessions: bool = False
    # per structure x condition cell, how many grammatical trials per violation trial of each position
    grammatical_weight: Annotated[int, Strict(), Field(ge=0, le=MAX_WEIGHT)] = 1
    # take this many from the balanced design
    trials: Annotated[int, Strict(), Field(ge=1, le=MAX_BLOCK_TRIALS)] | None = None
    feedback: bool = True
    shuffle: bool = True
    max_consecutive_violations: Annotated[int, Strict(), Field(ge=1)] | None = 3
    max_consecutive_same_structure: Annotated[int, Strict(), Field(ge=1)] | None = None
    # a pause screen after the block (humans), only where asked: a block that leaves it out takes the default of
    # the study its trials come from (`SPEC_DEFAULTS`' break_after, filled before hashing), else no pause
    break_after: bool | None = None  # always a bool once the spec is validated (Experiment._default_breaks)
    intro_text: str | None = None
    # --- a block of a `design:` spec (docs/general_model.md): rows of the file by their role
    role: Literal["test", "filler", "practice"] | None = None
    fillers: bool = False  # a test block: mix the file's filler rows in
    # at most n trials in a row with the same level of a factor (`condition`: the same condition,
    # `item`: the same item, `answer`: the same correct answer, fillers included)
    max_run: dict[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")],
                  Annotated[int, Strict(), Field(ge=1, le=MAX_BLOCK_TRIALS)]] | None = None

    @field_validator("conditions")
    @classmethod
    def _conditions_are_numbers(cls, v: Any) -> Any:
        return _check_conditions(v)

    @model_validator(mode="after")
    def _structures_or_design(self) -> "Block":
        if self.role is not None:
            if self.structures is not None or self.design is not None:
                raise ValueError("a block with `role` takes its rows from the spec's design file; "
                                 "give `role` or `structures`/`design`, not both")
            if self.fillers and self.role != "test":
                raise ValueError("`fillers: true` mixes filler rows into a test block (role: test)")
            cells_only = sorted(self.model_fields_set & study_block_fields())
            if cells_only:
                raise ValueError(f"{', '.join(cells_only)}: not used by a block with `role` (a design's rows "
                                 "bring their own conditions); use max_run for run limits")
            if self.max_run and not self.shuffle:
                raise ValueError("max_run orders a shuffled block; with shuffle: false the rows keep the file's order")
            return self
        if self.fillers or self.max_run is not None:
            raise ValueError("`fillers` and `max_run` belong to blocks of a design spec (blocks with `role`)")
        if (self.structures is None) == (self.design is None):
            raise ValueError("give either `structures` or `design` (not both, not neither)")
        return self

    def structure_names(self) -> list[str]:
        if self.design is not None:
            return [d.structure for d in self.design]
        return list(self.structures or [])


# a duration shorter than one frame at the spec's refresh rate, or at this rate when none is given, is refused
FASTEST_REFRESH_HZ = 240.0
DURATION_FIELDS = ("fixation_ms", "word_ms", "gap_ms", "response_ms", "feedback_ms", "iti_ms", "panel_delay_ms")


class Timing(_Strict):
    """Trial timing in milliseconds (RSVP)."""

    fixation_ms: Annotated[float, Strict(), Field(gt=0, le=10_000)] = 600
    word_ms: Annotated[float, Strict(), Field(gt=0, le=5_000)] = 250
    gap_ms: Annotated[float, Strict(), Field(ge=0, le=5_000)] = 250
    response_ms: Annotated[float, Strict(), Field(gt=0, le=60_000)] = 1500
    feedback_ms: Annotated[float, Strict(), Field(ge=0, le=10_000)] = 500
    iti_ms: Annotated[float, Strict(), Field(ge=0, le=10_000)] = 300
    # panel mode: the fixation between the sentence's end and the panel (Lakretz et al.: 1500 ms);
    # response_ms is then the panel's time limit
    panel_delay_ms: Annotated[float, Strict(), Field(ge=0, le=10_000)] = 1500
    expected_refresh_hz: Annotated[float, Strict(), Field(gt=0, le=1000)] | None = None
    refresh_tolerance_hz: Annotated[float, Strict(), Field(gt=0)] = 3.0

    @model_validator(mode="after")
    def _at_least_one_frame(self) -> "Timing":
        """A duration above 0 but shorter than one frame cannot be shown (a typo: 0.001 for 1 s?)."""
        hz = self.expected_refresh_hz or FASTEST_REFRESH_HZ
        frame = 1000.0 / hz
        for name in DURATION_FIELDS:
            ms = getattr(self, name)
            if 0 < ms < frame:
                at = (f"{hz:g} Hz, timing.expected_refresh_hz" if self.expected_refresh_hz
                      else f"{hz:g} Hz, the fastest common display, as timing.expected_refresh_hz is not given")
                raise ValueError(f"{name}: {ms:g} ms is shorter than one frame ({frame:.2f} ms at {at}) and cannot "
                                 "be shown; durations are in milliseconds")
        return self


Answer = Literal["violation", "no_violation"]


class Panel(_Strict):
    """The two-option response panel shown after the sentence (Lakretz et al. 2021).

    `labels` are the texts on the panel (and the two answer options a model subject is given),
    `keys` choose them from the keyboard, a mouse click on a label chooses it too. `left` says
    which answer is on the left. `question` (optional) is shown above the panel and asked to
    model subjects before the labels.
    """

    labels: dict[Answer, Annotated[str, Field(min_length=1)]]
    keys: dict[Answer, Annotated[str, Field(min_length=1)]] = {"violation": "f", "no_violation": "j"}
    left: Answer = "violation"
    mouse: bool = True
    question: str = ""

    @field_validator("labels", "keys")
    @classmethod
    def _both_answers(cls, v: dict[str, str]) -> dict[str, str]:
        missing = [a for a in ("violation", "no_violation") if a not in v]
        if missing:
            raise ValueError("needs an entry for both answers, violation and no_violation; missing: "
                             f"{', '.join(missing)}")
        if v["violation"] == v["no_violation"]:
            raise ValueError(f"the two answers need different entries, both are {v['violation']!r}")
        return v

    @field_validator("keys")
    @classmethod
    def _psychopy_keys(cls, v: dict[str, str]) -> dict[str, str]:
        for answer, key in v.items():
            problem = check_key(key)
            if problem:
                raise ValueError(f"{answer}: {problem}")
        return v



class Task(_Strict):
    # a registered task kind (experiments.tasks.registry: the built-in ones or one added); the core has no default:
    # a spec that names none takes the default of the study its trials come from (Experiment._default_kind)
    kind: str = Field(default="", validate_default=True)
    # key: go/no-go, press `response_key` on noticing an error; panel: answer on a two-option
    # panel after every sentence (presses during the sentence are recorded as early responses)
    response: Literal["key", "panel"] = "key"
    panel: Panel | None = None
    response_key: str = "space"
    quit_key: str = "escape"
    respond_during_sentence: bool = True
    response_prompt: str = "?"
    # the kind's own settings (labels, scale, question, ...) are given flat beside these and declared once, in
    # the kind's settings model (TaskKind.settings, experiments.tasks.config): `given_settings()` holds what
    # the spec gave, `settings()` the kind's model with its defaults
    _given: dict[str, Any] = PrivateAttr(default_factory=dict)

    @model_validator(mode="wrap")
    @classmethod
    def _collect_settings(cls, data: Any, handler: Any) -> "Task":
        """Take the fields of the registered kinds' settings out of the `task:` mapping (a field no kind
        declares stays, and is refused as an unknown field); they are checked by the kind's model."""

        if not isinstance(data, dict):
            return handler(data)
        fields = set(task_fields()) - set(cls.model_fields)
        given = {k: data[k] for k in data if k in fields and data[k] is not None}
        task = handler({k: v for k, v in data.items() if k not in fields})
        object.__setattr__(task, "__pydantic_private__", {**(task.__pydantic_private__ or {}), "_given": given})
        st = task.settings()  # the kind's model checks them (a field of another kind, a bad value: refused)
        if st is not None and given:  # kept as the model reads them, so equal settings make equal Tasks
            dumped = st.model_dump()
            task.__pydantic_private__["_given"] = {f: dumped[f] for f in given}  # type: ignore[index]
        task._check_settings()
        return task

    @model_serializer(mode="wrap")
    def _dump_settings(self, handler: Any, info: Any) -> dict[str, Any]:
        """The dump holds the given settings beside the Task's own fields, as the spec wrote them flat (each
        as the kind's model validates it), so a dumped Task validates back to the same Task and the hash
        reads them (only where given: a spec that gives none keeps its hash)."""
        data = handler(self)
        st = self.settings() if self._given else None
        if st is not None:
            dumped = st.model_dump(mode="json" if info.mode_is_json() else "python")
            data.update({f: dumped[f] for f in self._given})
        return data

    def given_settings(self) -> dict[str, Any]:
        """The kind's settings fields the spec itself gave (as given)."""
        return dict(self._given)

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> "Task":
        """A copy; settings fields in `update` are validated by the kind's model as the spec's are."""

        update = dict(update or {})
        own = {k: update.pop(k) for k in list(update) if k in task_fields() and k not in type(self).model_fields}
        if not own:
            return super().model_copy(update=update, deep=deep)
        data = {**self.model_dump(), **self._given, **update, **own}
        return type(self).model_validate(data)

    @field_validator("kind")
    @classmethod
    def _registered_kind(cls, v: str) -> str:
        if v == "":  # (a "missing" error: the message, without the empty value)
            raise PydanticCustomError("missing", f"name the task kind (one of: {', '.join(registry())}); only a "
                                      "spec whose trials come from a study's `stimuli:` takes that study's default "
                                      "kind, a `design:` spec names its own")
        if v not in registry():
            raise ValueError(f"unknown task kind {v!r}; known: {', '.join(registry())}")
        return v

    def settings(self) -> Any:
        """The kind's settings with its defaults (None for a kind without settings: forced_choice). A kind's
        model may read the Task's own fields (violation detection's: response, panel, response_key, ...)."""

        cls = getattr(registry().get(self.kind), "settings", None)
        own = {f: getattr(self, f) for f in (cls.model_fields if cls is not None else ())
               if f != "kind" and f in type(self).model_fields}
        return settings_for(self.kind, {**own, **self._given})

    def _check_settings(self) -> None:
        # a field of another kind, or an invalid combination, is refused here; and keys no human runner
        # can honour (the quit key as an answer, two answers on one key, too few keys)
        check_keys(self.kind, self.settings(), self.given_settings(), self.quit_key, continue_key=self.response_key)

    @field_validator("response_key", "quit_key")
    @classmethod
    def _psychopy_key(cls, v: str) -> str:
        problem = check_key(v)
        if problem:
            raise ValueError(problem)
        return v

    @model_validator(mode="after")
    def _keys_differ(self) -> "Task":
        if self.response_key == self.quit_key:
            raise ValueError(f"response_key and quit_key are both {self.quit_key!r}: every answer would end the "
                             "session; choose two different keys")
        return self

    @model_validator(mode="after")
    def _panel_needs_labels(self) -> "Task":
        if self.response == "panel":
            if self.panel is None:
                raise ValueError("response: panel needs `panel:` with `labels` for violation and no_violation "
                                 "(e.g. labels: {violation: VIOLATION, no_violation: ACCEPTABLE})")
            clash = {self.quit_key, self.response_key} & set(self.panel.keys.values())
            if clash:
                raise ValueError(f"panel key(s) {', '.join(sorted(clash))} are also the quit or continue key")
        return self


class Feedback(_Strict):
    """Feedback words and colours; a text left out is the spec language's (experiments.screen_texts)."""

    correct_text: str | None = None
    incorrect_text: str | None = None
    correct_color: str = "green"
    incorrect_color: str = "red"
    no_response_text: str | None = None  # panel mode: no answer within timing.response_ms

    @field_validator("correct_color", "incorrect_color")
    @classmethod
    def _psychopy_color(cls, v: str) -> str:
        problem = check_color(v)
        if problem:
            raise ValueError(problem)
        return v

    @field_validator(*FEEDBACK_KEYS)
    @classmethod
    def _placeholders(cls, v: str | None, info: ValidationInfo) -> str | None:
        return _check_placeholders(v, info)


def _check_placeholders(text: str | None, info: ValidationInfo) -> str | None:
    """A screen text may use only its own placeholders (a typo such as {trail} is an error)."""
    problem = placeholder_problem(str(info.field_name), text) if text is not None else None
    if problem:
        raise ValueError(problem)
    return text


class Texts(_Strict):
    """The instruction pages, and every other screen text (experiments.screen_texts.TEXT_KEYS).

    A text left out is the one of the spec's language (English, Italian); `{key}`-style
    placeholders are checked against the ones each text may use.
    """

    instructions: list[str] = Field(min_length=1)
    break_text: str | None = None
    end_text: str | None = None
    next_session_text: str | None = None
    resume_text: str | None = None
    aborted_text: str | None = None
    continue_hint: str | None = None
    block_start_hint: str | None = None
    quit_prompt: str | None = None
    quit_hint: str | None = None
    start_button: str | None = None
    continue_button: str | None = None
    tap_continue_hint: str | None = None
    fullscreen_text: str | None = None
    loading_text: str | None = None
    refresh_refused_text: str | None = None
    completion_code_text: str | None = None
    redirect_text: str | None = None
    already_done_text: str | None = None
    save_error_text: str | None = None
    save_refused_text: str | None = None
    link_error_text: str | None = None

    @field_validator(*SPEC_TEXT_KEYS)
    @classmethod
    def _placeholders(cls, v: str | None, info: ValidationInfo) -> str | None:
        return _check_placeholders(v, info)

    @field_validator("instructions")
    @classmethod
    def _no_blank_page(cls, v: list[str]) -> list[str]:
        blank = [str(i) for i, page in enumerate(v, 1) if not page.strip()]
        if blank:
            raise ValueError(f"instruction page(s) {', '.join(blank)} are blank: a participant would have to pass an "
                             "empty screen; write the page's text or remove it")
        return v


class Online(_Strict):
    """What an online participant gets at the end (Prolific, JATOS, SONA...): a completion code
    and/or a URL to return to, shown on the browser runner's completion screen."""

    completion_code: Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")] | None = None
    completion_url: Annotated[str, Field(max_length=2000)] | None = None

    @field_validator("completion_url")
    @classmethod
    def _http_url(cls, v: str | None) -> str | None:
        if v is None:
            return v

        parts = urlsplit(v)
        if parts.scheme not in ("https", "http") or not parts.netloc or any(c.isspace() for c in v):
            raise ValueError(f"must be an http(s) URL such as https://app.prolific.com/submissions/complete?cc=CODE, "
                             f"got {v!r}")
        return v


class DesignSpec(_Strict):
    """A factorial design of items from a long-format stimulus file (experiments/design.py).

    `factors` keeps the spec's order (it orders the conditions and the table's factor columns);
    levels are strings: YAML's unquoted booleans become "true"/"false", numbers their text.
    """

    file: Annotated[str, Field(min_length=1)]
    factors: dict[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")], list[str]] = Field(min_length=1)
    lists: Literal["latin_square", "column", "all", "given"] = "latin_square"
    item_column: Annotated[str, Field(min_length=1)] = "item"

    @field_validator("factors", mode="before")
    @classmethod
    def _levels_as_strings(cls, v: Any) -> Any:
        if isinstance(v, dict):
            return {k: [normalise_level(x) for x in lv] if isinstance(lv, list) else lv for k, lv in v.items()}
        return v

    @field_validator("factors")
    @classmethod
    def _factor_names(cls, v: dict[str, list[str]]) -> dict[str, list[str]]:


        for name, levels in v.items():
            if name in ("item", *RESERVED) or (name in column_names() and name not in LAKRETZ_FACTOR_COLUMNS):
                raise ValueError(f"factor {name!r} has the name of a trial-table column; rename it "
                                 f"(only {', '.join(LAKRETZ_FACTOR_COLUMNS)} may be factor names among them)")
            if len(levels) < 2:
                raise ValueError(f"factor {name!r} needs at least 2 levels, got {levels}")
            if any(not lv.strip() or lv != lv.strip() for lv in levels):
                raise ValueError(f"factor {name!r}: a level is empty or has spaces around it: {levels}")
            if len(set(levels)) < len(levels):
                raise ValueError(f"factor {name!r}: a level is given twice: {levels}")
            if name == "grammatical" and sorted(levels) != ["false", "true"]:
                raise ValueError(f"factor 'grammatical' fills the table's boolean column: its levels are true and "
                                 f"false, got {levels}; name a factor with other levels otherwise")
        return v


class Experiment(_Strict):
    """A validated experiment specification."""

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_]+$")]
    description: str = ""
    # the materials' language (a BCP 47 tag such as en, it, de-CH); the generator writes English,
    # other languages come from a stimulus file (UTF-8)
    language: Annotated[str, Field(pattern=r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$")] = "en"
    stimuli: StimulusSource = StimulusSource()
    design: DesignSpec | None = None  # a factorial design of items (instead of `stimuli`)
    # sessions per subject; session k continues the subject's counterbalancing (no item repeats)
    sessions: Annotated[int, Strict(), Field(ge=1, le=100)] = 1
    blocks: list[Block] = Field(min_length=1)
    timing: Timing = Timing()
    task: Task  # given, or filled with the default kind of where the trials come from (_default_kind)
    feedback: Feedback = Feedback()
    texts: Texts
    participant_fields: list[str] = ["age", "handedness"]
    online: Online | None = None  # the browser runner's completion code / return URL
    seed: Annotated[int, Strict()] = 0
    source_path: str | None = Field(default=None, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _default_kind(cls, data: Any) -> Any:
        """A `task:` that names no kind takes the default of the study whose cells the trials come from (a
        `stimuli:` spec: the study declaring `SPEC_DEFAULTS` for that source); a `design:` spec has none, so
        its Task refuses the missing kind naming the field (Task._registered_kind)."""
        if not isinstance(data, dict):
            return data
        task = data.get("task", {})
        if not isinstance(task, dict) or "kind" in task:
            return data
        kind = source_default_kind("design" if data.get("design") is not None else "stimuli")
        return {**data, "task": {**task, **({"kind": kind} if kind else {})}}

    @field_validator("participant_fields")
    @classmethod
    def _field_names(cls, v: list[str]) -> list[str]:
        for f in v:
            if not f or not f.replace("_", "a").isalnum() or not f[0].isalpha():
                raise ValueError(f"participant field {f!r} must be a name: a letter, then letters, digits or _")
            if f in ("participant", "session"):
                raise ValueError(f"participant field {f!r} is asked anyway (the dialog's id and session)")
        dup = sorted({f for f in v if v.count(f) > 1})
        if dup:
            raise ValueError(f"participant fields repeated: {', '.join(dup)}")
        return v

    @model_validator(mode="after")
    def _unique_block_names(self) -> "Experiment":
        names = [b.name for b in self.blocks]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"block names must be unique; repeated: {', '.join(sorted(dup))}")
        for b in self.blocks:
            if b.sessions != "all":
                late = [k for k in b.sessions if k > self.sessions]
                if late:
                    raise ValueError(f"block {b.name!r}: sessions {late} but the spec has sessions: {self.sessions}")
        if self.design is not None:
            _check_design_blocks(self)
        elif any(b.role is not None for b in self.blocks):
            raise ValueError("blocks with `role` need the spec's `design:` (the file their rows come from)")
        if self.stimuli.file is None and self.language != "en" and self.design is None:
            raise ValueError(f"language {self.language!r}: the nested_agreement generator writes English; "
                             "give the materials as stimuli.file")
        return self

    @model_validator(mode="after")
    def _default_breaks(self) -> "Experiment":
        """A block that does not say `break_after` pauses only where the study its trials come from declares
        pauses by default (`SPEC_DEFAULTS`' break_after); a newcomer's own design gets no pause it did not ask for."""
        default = source_default("design" if self.design is not None else "stimuli", "break_after", False)
        for b in self.blocks:
            if b.break_after is None:
                object.__setattr__(b, "break_after", bool(default))  # not marked as given: see canonical_json
        return self

    @model_validator(mode="after")
    def _quit_key_is_not_an_answer_to_its_prompt(self) -> "Experiment":
        yes, no = confirm_keys(self.language)
        if self.task.quit_key in (yes, no):
            raise ValueError(f"task.quit_key {self.task.quit_key!r} is also an answer to the quit prompt in language "
                             f"{self.language!r} ({yes} = quit, {no} = continue); choose another quit key")
        return self

    @model_validator(mode="after")
    def _language_texts(self) -> "Experiment":
        """Fill the screen texts the spec leaves out with its language's (what the participant sees)."""
        for part, keys in (("texts", SPEC_TEXT_KEYS), ("feedback", FEEDBACK_KEYS)):
            model = getattr(self, part)
            missing = {k: default_text(self.language, k) for k in keys if getattr(model, k) is None}
            if missing:
                object.__setattr__(self, part, model.model_copy(update=missing))
        return self

    def block_sessions(self, block: Block) -> list[int]:
        """The sessions (1-based) in which `block` runs."""
        return list(range(1, self.sessions + 1)) if block.sessions == "all" else sorted(set(block.sessions))

    def canonical_json(self) -> str:
        """The hashed form. Fields added after the first release are left out while they hold
        their defaults, so a spec that does not use them keeps its hash (and its sessions resumable)."""
        data = self.model_dump(mode="json")
        _prune(data, _LATER_DEFAULTS[None])
        for block in data["blocks"]:
            _prune(block, _LATER_DEFAULTS["blocks"])
        if self.sessions == 1 and "break_after" not in self.blocks[-1].model_fields_set:
            # no pause follows the last block whatever it says: one that leaves it out is hashed with the first
            # release's default, so a one-block spec keeps its hash now that a pause is only where asked
            data["blocks"][-1]["break_after"] = True
        for part in ("timing", "task", "feedback"):
            _prune(data[part], _LATER_DEFAULTS[part])
        # screen texts added with the shared screen-text module: hashed only where the spec changes them
        _prune(data["texts"], {k: default_text(self.language, k) for k in SPEC_TEXT_KEYS
                               if k not in ("break_text", "end_text")})
        if self.language == "en" and data["texts"].get("break_text") == default_text("en", "break_text"):
            # the English pause text now names its key; hashed as the first release's text, so a spec that
            # leaves it out keeps its hash (and its sessions resumable)
            data["texts"]["break_text"] = FIRST_RELEASE_BREAK_TEXT
        if data.get("design"):
            data["design"]["file"] = {"sha256": _file_sha256(data["design"]["file"])}
        if data["stimuli"].get("file"):
            # the file's content, not where it lies: a moved data folder stays resumable, an edited
            # stimulus file does not pass for the old one
            data["stimuli"]["file"] = {"sha256": _file_sha256(data["stimuli"]["file"])}
        return json.dumps(data, sort_keys=True, separators=(",", ":"))

    @property
    def spec_hash(self) -> str:
        return hashlib.sha256(self.canonical_json().encode("utf-8")).hexdigest()[:16]

    def block(self, name: str) -> Block:
        for b in self.blocks:
            if b.name == name:
                return b
        raise KeyError(name)


FIRST_RELEASE_BREAK_TEXT = "Take a short break. Press the response key to continue."


def source_default(source: str, key: str, fallback: Any) -> Any:
    """What the study whose cells a spec's trials come from (`stimuli`, `design`) declares for `key` in its
    `SPEC_DEFAULTS`; `fallback` when no registered study, or more than one, declares it."""

    values = [d[key] for d in declared("SPEC_DEFAULTS").values() if d.get("source") == source and key in d]
    return values[0] if len(values) == 1 else fallback


def source_default_kind(source: str) -> str:
    """The task kind a spec whose trials come from `source` (`stimuli`, `design`) runs when it names none: the
    one a registered study declares for that source (`SPEC_DEFAULTS` in its `__init__`); "" when none does
    (or several do: which one is meant is not for the core to choose)."""

    kinds = {d["task_kind"] for d in declared("SPEC_DEFAULTS").values()
             if d.get("source") == source and d.get("task_kind")}
    return next(iter(kinds)) if len(kinds) == 1 else ""


def _check_design_blocks(exp: "Experiment") -> None:
    """The parts of a design spec that only make sense together (checked before the file is read)."""

    assert exp.design is not None
    if exp.stimuli.file is not None:
        raise ValueError("give the items either as `design:` (a long-format file) or as `stimuli.file`, not both")
    lakretz = [b.name for b in exp.blocks if b.role is None]
    if lakretz:
        raise ValueError(f"a spec with `design:` takes every block's rows from its file; block(s) "
                         f"{', '.join(lakretz)} need `role: test|filler|practice` instead of structures")
    if not any(b.role == "test" for b in exp.blocks):
        raise ValueError("a design spec needs a block with role: test")
    if exp.sessions != 1 or any(b.across_sessions or b.sessions != "all" for b in exp.blocks):
        raise ValueError("a design spec runs in one session (sessions: 1, no block `sessions`/`across_sessions`)")
    for b in exp.blocks:
        for name in b.max_run or {}:
            if name not in ("condition", "item", "answer") and name not in exp.design.factors:
                raise ValueError(f"block {b.name!r}: max_run names {name!r}, which is neither a declared factor "
                                 f"({', '.join(exp.design.factors)}) nor condition, item or answer")
    check = get_task(exp.task.kind).check_design  # what the kind itself cannot present from a design's items
    if check is not None:
        check(exp)


def _file_sha256(path: str) -> str:
    """SHA-256 of a stimulus file's bytes (cached by path, size and modification time)."""
    p = Path(path)
    try:
        st = p.stat()
    except OSError:
        return "missing"
    return _file_sha256_cached(str(p.resolve()), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _file_sha256_cached(path: str, size: int, mtime_ns: int) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# fields added with the panel / sessions / any-language paradigm, and their defaults
_LATER_DEFAULTS: dict[str | None, dict[str, Any]] = {
    None: {"sessions": 1, "online": None, "design": None},
    "blocks": {"design": None, "sessions": "all", "across_sessions": False, "role": None, "fillers": False,
               "max_run": None},
    "timing": {"panel_delay_ms": 1500},
    "task": {"response": "key", "panel": None},
    "feedback": {"no_response_text": "Too slow!"},
}


def _prune(d: dict[str, Any], defaults: dict[str, Any]) -> None:
    for key, default in defaults.items():
        if key in d and d[key] == default:
            del d[key]


spec_errors.ROOT.append(Experiment)  # the formatter reads the spec's fields from here
