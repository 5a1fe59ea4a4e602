"""The `task:` settings as the spec takes them: the pieces the kinds' settings models share (`KindSettings`,
`Label`, `Scale`, the key check) and the one reader of them.

Each kind declares its settings once, in its own unit (`<Kind>Settings` in kinds/<kind>/task.py,
named in `TaskKind.settings`). The spec's `task:` section holds the kind and its settings flat
(`task: {kind: rating, scale: {points: 7}}`); `task_fields()` is every registered kind's fields (what
experiments.spec_model.Task takes), and `settings_for(kind, given)` builds the kind's own settings model
from the fields the spec gave, with the kind's defaults for the rest. A field that belongs to another kind is
refused, naming the kind's own.
Defaults are English; a spec in another language gives its texts (labels, question, scale ends).
"""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError, field_validator, model_validator

from experiments.psychopy_names import check_key
from experiments.spec_errors import error_lines
from experiments.tasks.base import registry

Presentation = Literal["whole", "rsvp", "moving_window"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def valid_key(key: str) -> str:
    problem = check_key(key)
    if problem:
        raise ValueError(problem)
    return key


class Label(_Strict):
    """One answer of a judgment or lexical decision: the recorded `value`, the shown `text`, its `key`."""

    value: Annotated[str, Field(min_length=1)]
    text: Annotated[str, Field(min_length=1)]
    key: str | None = None

    @field_validator("key")
    @classmethod
    def _key(cls, v: str | None) -> str | None:
        return None if v is None else valid_key(v)


class Scale(_Strict):
    """A k-point rating scale: points 1..k, labelled ends, one key per point (default the digits)."""

    points: Annotated[int, Strict(), Field(ge=2, le=11)] = 7
    low_label: str = ""
    high_label: str = ""
    keys: list[str] | None = None

    @field_validator("keys")
    @classmethod
    def _keys(cls, v: list[str] | None) -> list[str] | None:
        return None if v is None else [valid_key(k) for k in v]

    @model_validator(mode="after")
    def _one_key_per_point(self) -> "Scale":
        if self.keys is not None:
            if len(self.keys) != self.points:
                raise ValueError(f"scale.keys has {len(self.keys)} keys for {self.points} points: give one key per "
                                 "point")
            if len(set(self.keys)) != len(self.keys):
                raise ValueError("scale.keys: a key is given twice")
        elif self.points > 9:
            raise ValueError(f"a {self.points}-point scale needs scale.keys (the digit keys 1-9 cover 9 points)")
        return self

    @property
    def point_keys(self) -> list[str]:
        return list(self.keys) if self.keys is not None else [str(k) for k in range(1, self.points + 1)]

    @property
    def values(self) -> list[int]:
        return list(range(1, self.points + 1))


def distinct_labels(labels: list[Label]) -> list[Label]:
    for attr in ("value", "text", "key"):
        got = [getattr(lab, attr) for lab in labels if getattr(lab, attr) is not None]
        dup = sorted({x for x in got if got.count(x) > 1})
        if dup:
            raise ValueError(f"labels: {attr} {', '.join(map(repr, dup))} given twice")
    return labels


class KindSettings(_Strict):
    kind: str = ""
    mouse: bool = True  # humans: a click or tap on an answer counts (keys always do)
    hint: str | None = None  # humans: the text under the response (None: the kind's own, in the spec's language)

    def describe(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude={"kind"})


def task_fields() -> tuple[str, ...]:
    """Every field the spec's `task:` section takes for a kind's settings: the union of the registered kinds'
    settings models (`TaskKind.settings`), in registration order. A kind declares its settings once, in its
    model; the spec, the runners and the hash read them from here."""

    out: dict[str, None] = {}
    for kind in registry().values():
        if kind.settings is not None:
            out.update(dict.fromkeys(f for f in kind.settings.model_fields if f != "kind"))
    return tuple(out)


def _problems(exc: ValidationError) -> str:
    """A settings model's errors by their full path under `task.`, each with its accepted form, joined
    (experiments/spec_errors.py, the spec's one formatter)."""

    return "; ".join(error_lines(exc.errors(), ["task"], lambda loc: ".".join(str(p) for p in loc)))


def settings_for(kind: str, given: dict[str, Any]) -> KindSettings | None:
    """The kind's settings from the `task:` fields given (None values = not given); ValueError naming
    a field that is not the kind's, or a value its settings model refuses. A kind without a settings
    model (violation detection, forced choice) takes none of these."""

    given = {k: v for k, v in given.items() if v is not None}
    cls = getattr(registry().get(kind), "settings", None)
    own = set(cls.model_fields) - {"kind"} if cls else set()
    foreign = sorted(set(given) - own)
    if foreign:
        known = ", ".join(sorted(own)) or "none of the task settings (labels, scale, question, ...)"
        raise ValueError(f"{', '.join(foreign)}: not a setting of task kind {kind!r} (its settings: {known})")
    if cls is None:
        return None
    try:
        return cls(kind=kind, **{k: (v.model_dump() if isinstance(v, BaseModel) else v) for k, v in given.items()})
    except ValidationError as exc:
        raise ValueError(_problems(exc)) from None
