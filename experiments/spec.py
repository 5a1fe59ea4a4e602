"""The experiment specification: a YAML file validated with pydantic.

Every error names the file, the field and the offending value, never a traceback (see
`SpecError`). The validated spec is hashed from its canonical JSON, so a trivial reformatting of
the YAML does not change the hash but any change of content does.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

CONDITION_LETTERS = {"S", "P"}


class SpecError(ValueError):
    """A spec that cannot be used; the message names the file, field and value."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StimulusSource(_Strict):
    """Either a generator from `stimuli` with parameters, or a CSV/TSV file of items."""

    generator: Literal["nested_agreement"] | None = "nested_agreement"
    file: str | None = None
    items_per_condition: Annotated[int, Field(ge=1, le=100_000)] = 512
    seed: int = 1

    @model_validator(mode="after")
    def _one_source(self) -> "StimulusSource":
        if self.file is not None:
            object.__setattr__(self, "generator", None)
        return self


class Block(_Strict):
    """A block of trials drawn from the crossed design structure x condition x version."""

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_]+$")]
    lexicon: Literal["test", "training"] = "test"
    structures: list[str] = Field(min_length=1)
    conditions: Literal["all"] | list[str] = "all"
    versions: list[Literal["grammatical", "inner", "outer"]] = ["grammatical", "inner", "outer"]
    repetitions: Annotated[int, Field(ge=1)] = 1
    # per structure x condition cell, how many grammatical trials per violation trial of each position
    grammatical_weight: Annotated[int, Field(ge=0)] = 1
    trials: Annotated[int, Field(ge=1)] | None = None  # take this many from the balanced design
    feedback: bool = True
    shuffle: bool = True
    max_consecutive_violations: Annotated[int, Field(ge=1)] | None = 3
    max_consecutive_same_structure: Annotated[int, Field(ge=1)] | None = None
    break_after: bool = True  # a pause screen after the block (humans)
    intro_text: str | None = None

    @field_validator("conditions")
    @classmethod
    def _conditions_are_numbers(cls, v: Any) -> Any:
        if isinstance(v, list):
            for c in v:
                if not c or set(c) - CONDITION_LETTERS:
                    raise ValueError(f"condition {c!r} must be a string of S and P, e.g. 'PSP'")
        return v

    @field_validator("structures")
    @classmethod
    def _known_structures(cls, v: list[str]) -> list[str]:
        from stimuli.structures import STRUCTURES

        for s in v:
            if s not in STRUCTURES:
                raise ValueError(f"unknown structure {s!r}; known: {', '.join(sorted(STRUCTURES))}")
        return v


class Timing(_Strict):
    """Trial timing in milliseconds (RSVP)."""

    fixation_ms: Annotated[float, Field(gt=0, le=10_000)] = 600
    word_ms: Annotated[float, Field(gt=0, le=5_000)] = 250
    gap_ms: Annotated[float, Field(ge=0, le=5_000)] = 250
    response_ms: Annotated[float, Field(gt=0, le=60_000)] = 1500
    feedback_ms: Annotated[float, Field(ge=0, le=10_000)] = 500
    iti_ms: Annotated[float, Field(ge=0, le=10_000)] = 300
    expected_refresh_hz: Annotated[float, Field(gt=0, le=1000)] | None = None
    refresh_tolerance_hz: Annotated[float, Field(gt=0)] = 3.0


class Task(_Strict):
    kind: Literal["violation_detection", "forced_choice"] = "violation_detection"
    response_key: str = "space"
    quit_key: str = "escape"
    respond_during_sentence: bool = True
    response_prompt: str = "?"


class Feedback(_Strict):
    correct_text: str = "Correct!"
    incorrect_text: str = "Wrong!"
    correct_color: str = "green"
    incorrect_color: str = "red"


class Texts(_Strict):
    instructions: list[str] = Field(min_length=1)
    break_text: str = "Take a short break. Press the response key to continue."
    end_text: str = "Thank you! The session is over."


class Experiment(_Strict):
    """A validated experiment specification."""

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_]+$")]
    description: str = ""
    language: Literal["en"] = "en"
    stimuli: StimulusSource = StimulusSource()
    blocks: list[Block] = Field(min_length=1)
    timing: Timing = Timing()
    task: Task = Task()
    feedback: Feedback = Feedback()
    texts: Texts
    participant_fields: list[str] = ["age", "handedness"]
    seed: int = 0
    source_path: str | None = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _unique_block_names(self) -> "Experiment":
        names = [b.name for b in self.blocks]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"block names must be unique; repeated: {', '.join(sorted(dup))}")
        return self

    def canonical_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))

    @property
    def spec_hash(self) -> str:
        return hashlib.sha256(self.canonical_json().encode("utf-8")).hexdigest()[:16]

    def block(self, name: str) -> Block:
        for b in self.blocks:
            if b.name == name:
                return b
        raise KeyError(name)


def _format_errors(exc: ValidationError, where: str, raw: Any) -> str:
    lines = [f"{where}: invalid experiment spec ({exc.error_count()} problem(s))"]
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown field (check the spelling)"
        value = err.get("input")
        shown = "" if err["type"] in ("missing",) or isinstance(value, dict) else f" (value: {value!r})"
        lines.append(f"  - {loc}: {msg}{shown}")
    return "\n".join(lines)


def parse_spec(data: Any, where: str = "<spec>", base_dir: Path | None = None) -> Experiment:
    if not isinstance(data, dict):
        raise SpecError(f"{where}: the spec must be a YAML mapping at the top level, got {type(data).__name__}")
    try:
        exp = Experiment.model_validate({**data, "source_path": where})
    except ValidationError as exc:
        raise SpecError(_format_errors(exc, where, data)) from None
    if exp.stimuli.file is not None:
        f = Path(exp.stimuli.file)
        if not f.is_absolute() and base_dir is not None:
            f = base_dir / f
        if not f.exists():
            raise SpecError(f"{where}: stimuli.file: stimulus file {str(f)!r} does not exist")
        exp = exp.model_copy(update={"stimuli": exp.stimuli.model_copy(update={"file": str(f)})})
    return exp


def load_spec(path: str | Path) -> Experiment:
    """Read and validate a spec file; raises SpecError with a readable message."""
    path = Path(path)
    if not path.exists():
        bundled = Path(__file__).parent / "specs" / f"{path.name}"
        bundled_yaml = Path(__file__).parent / "specs" / f"{path.name}.yaml"
        for cand in (bundled, bundled_yaml):
            if cand.exists():
                path = cand
                break
        else:
            raise SpecError(f"spec file {str(path)!r} does not exist")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise SpecError(f"{path}: not valid YAML: {exc}") from None
    return parse_spec(data, where=str(path), base_dir=path.parent)


def bundled_spec_path(name: str = "lakretz2021_nested") -> Path:
    return Path(__file__).parent / "specs" / f"{name}.yaml"
