"""How a spec's validation errors read: each names the field by its full path and shows the accepted form.

One formatter for the spec (experiments/spec.py) and the kinds' settings under `task:` (experiments/tasks/config.py):
pydantic's own words ("Field required", "Input should be a valid list") say what is wrong but not where a
newcomer should look nor what to write, so every line gets the full path (`texts.instructions`, never `texts`)
and the form the field takes, from `EXAMPLES` (what docs/spec.md shows) or, for a field without one, from
the field's declared type.
"""
from __future__ import annotations

import re
import types
import typing
from typing import Any

from pydantic import BaseModel

from experiments.tasks.base import registry
from stimuli.input_rules import is_ascii_digits

LABELS_FORM = "labels: [{value: yes, text: Yes, key: f}, {value: no, text: No, key: j}]"
# a field's accepted form, as the spec writes it (a list position is N)
EXAMPLES: dict[str, str] = {
    "name": "name: my_study (letters, digits and _)",
    "texts": 'texts: {instructions: ["Read each sentence and answer the question.", "Press SPACE to begin."]}',
    "texts.instructions": 'instructions: ["Read each sentence and answer the question.", "Press SPACE to begin."] '
                          "(a list: one text per page)",
    "blocks": "blocks: [{name: test, role: test, feedback: false}]",
    "blocks.N": "{name: test, role: test, feedback: false}",
    "design": "design: {file: items.csv, factors: {grammatical: [yes, no]}, lists: latin_square}",
    "design.file": "file: items.csv (the item table, a path from the spec's folder)",
    "design.factors": "factors: {attractor: [match, mismatch], grammatical: [yes, no]}",
    "task": "task: {kind: judgment, question: Is this sentence acceptable?, " + LABELS_FORM + "}",
    "task.labels": LABELS_FORM + " (a list in screen order; each answer's key is its label's `key`)",
    "task.labels.N": "{value: yes, text: Yes, key: f}",
    "task.option_keys": "option_keys: [f, j]",
    "task.scale": "scale: {points: 7, low_label: bad, high_label: good}",
    "feedback": "feedback: {correct_text: Correct!, incorrect_text: Wrong.}",
    "timing": "timing: {fixation_ms: 500, feedback_ms: 600, iti_ms: 300}",
}
# an unknown field a reader may expect from another tool: where its setting goes
UNKNOWN_HINTS: dict[str, str] = {
    "task.keys": "answer keys are set on each label (a label's `key`): " + LABELS_FORM
                 + "; options take option_keys: [f, j]; a scale's points scale: {keys: ['1', '2', ...]}",
    "texts.instruction": "the field is `instructions`, a list of pages",
}


def pattern_of(parts: list[str]) -> str:
    """`blocks.2.trials` -> `blocks.N.trials` (the key of EXAMPLES)."""
    return ".".join("N" if is_ascii_digits(p) else p for p in parts)


def _unwrap(ann: Any) -> Any:
    """Optional[X] / Annotated[X, ...] -> X."""
    while True:
        origin = typing.get_origin(ann)
        if origin is typing.Annotated:
            ann = typing.get_args(ann)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(ann) if a is not type(None)]
            if len(args) != 1:
                return ann
            ann = args[0]
        else:
            return ann


def _model_fields(model: Any, path: list[str]) -> dict[str, Any]:
    """The fields of `model`; the spec's `task:` also takes the registered kinds' settings."""
    fields = dict(model.model_fields)
    if path == ["task"]:
        for kind in registry().values():
            if kind.settings is not None:
                fields.update({k: f for k, f in kind.settings.model_fields.items() if k != "kind" and k not in fields})
    return fields


# the spec's root model (experiments/spec_model.py's Experiment registers itself here when it is defined: the
# model's own validators use this formatter, so this module cannot import it)
ROOT: list[type[BaseModel]] = []


def root_model() -> type[BaseModel]:
    if not ROOT:
        raise RuntimeError("the spec model is not defined yet (import experiments.spec_model first)")
    return ROOT[0]


def annotation_at(parts: list[str]) -> Any:
    """The declared type of the field at `parts` (from the Experiment model), or None when unknown."""
    ann: Any = root_model()
    seen: list[str] = []
    for p in parts:
        ann = _unwrap(ann)
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            field = _model_fields(ann, seen).get(p)
            if field is None:
                return None
            ann = field.annotation
        elif typing.get_origin(ann) in (list, tuple) and is_ascii_digits(p):
            ann = (typing.get_args(ann) or (Any,))[0]
        elif typing.get_origin(ann) is dict:
            ann = (typing.get_args(ann) or (Any, Any))[-1]
        else:
            return None
        seen.append(p)
    return _unwrap(ann)


def type_words(ann: Any) -> str:
    """A declared type in words: `a whole number`, `a list of texts`, `one of: key, panel`."""
    ann = _unwrap(ann)
    origin = typing.get_origin(ann)
    if origin is typing.Literal:
        return "one of: " + ", ".join(str(a) for a in typing.get_args(ann))
    if origin in (list, tuple):
        inner = typing.get_args(ann)
        return "a list" + (f" of {type_words(inner[0]).removeprefix('a ').removeprefix('an ')}s" if inner else "")
    if origin is dict:
        return "a mapping"
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        fields = ann.model_fields
        names = [f"{k} (required)" if f.is_required() else k for k, f in fields.items() if k != "kind"]
        return "a mapping of " + ", ".join(names)
    return {int: "a whole number", float: "a number", str: "a text", bool: "true or false"}.get(ann, "")


def accepted_form(parts: list[str]) -> str:
    """The form the field at `parts` takes: its example, else its type in words ('' when unknown)."""
    example = EXAMPLES.get(pattern_of(parts))
    if example:
        return example
    words = type_words(annotation_at(parts)) if parts else ""
    return f"{parts[-1]}: <{words}>" if words else ""


def required_inside(parts: list[str]) -> list[str]:
    """A missing section's required fields by full path (`texts` -> [`texts.instructions`])."""
    ann = annotation_at(parts)
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return [".".join([*parts, k]) for k, f in ann.model_fields.items() if f.is_required()]
    return []


def known_fields(parts: list[str]) -> list[str]:
    """The fields the section at `parts` takes (empty when it is no section)."""
    ann = annotation_at(parts) if parts else None
    if parts == []:
        ann = root_model()
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return [k for k in _model_fields(ann, parts) if k not in ("kind", "source_path") or parts == ["task"]]
    return []


def describe(parts: list[str], kind: str, msg: str, value: Any = None, has_value: bool = False) -> str:
    """One error line: the full path, what is wrong, and the accepted form."""
    path = ".".join(parts) or "(top level)"
    msg = msg.removeprefix("Value error, ")
    if kind == "missing":
        inner = required_inside(parts)
        if inner:
            path, msg = inner[0], f"Field required (the spec has no `{parts[-1]}:` section)"
        form = accepted_form(parts)
        return f"{path}: {msg}" + (f"; write it as {form}" if form else "")
    if kind == "extra_forbidden":
        hint = UNKNOWN_HINTS.get(pattern_of(parts))
        known = known_fields(parts[:-1])
        text = f"{path}: unknown field (check the spelling)"
        if hint:
            return f"{text}; {hint}"
        return text + (f"; known {'.'.join(parts[:-1]) or 'top-level'} fields: {', '.join(known)}" if known else "")
    shown = f" (value: {value!r})" if has_value and not isinstance(value, (dict, list)) else ""
    form = accepted_form(parts) if re.search(r"valid|should be|required|at least|at most", msg) else ""
    return f"{path}: {msg}{shown}" + (f"; write it as {form}" if form else "")


def error_lines(errors: list[dict[str, Any]], prefix: list[str], loc_format: Any) -> list[str]:
    """pydantic's errors as lines (`describe`), each path under `prefix` (`task` for a kind's settings);
    `loc_format` turns pydantic's loc into the spec's path text (markers of unions and keys dropped)."""
    out = []
    for err in errors:
        parts = [*prefix, *[p for p in loc_format(err["loc"]).split(".") if p and p != "(top level)"]]
        out.append(describe(parts, err["type"], err["msg"], err.get("input"), "input" in err))
    return out
