"""Every text of a spec read as it will be shown: normalised and checked before the schema sees it.

Why its own module: the spec's YAML (keys and values, however deep) is walked once, in `parse_spec`, so
no field can forget the rule (stimuli/visible_text.py): every text becomes Unicode NFC; a hidden or
control character, a mixed-script look-alike word, or a text longer than MAX_TEXT_CHARS is refused
naming the field (`task.panel.labels.violation`) and the characters; two texts of one list (a factor's
levels, the labels, the options) or of a `labels` mapping that differ only invisibly are refused naming
both. Docs: docs/validation.md "Invisible and look-alike characters".
"""
from __future__ import annotations

from typing import Any

from stimuli.visible_text import lookalike_problem, nfc, text_problem

# The longest text of a spec (an instruction page, a question, a label): a model subject reads the
# question and labels with every item (model_subjects/run_checks.py MAX_ITEM_CHARS counts the items), and
# a 200,000-character text held the model until it ran out of memory.
MAX_TEXT_CHARS = 20_000


def checked_texts(data: Any, where: str, error: type[Exception]) -> Any:
    """`data` with every text NFC; `error` naming the field for a text the rules refuse (module doc)."""
    return _walk(data, [], where, error)


def _path(parts: list[str]) -> str:
    return ".".join(parts) or "(top level)"


def _text(v: str, parts: list[str], where: str, error: type[Exception]) -> str:
    if len(v) > MAX_TEXT_CHARS:
        raise error(f"{where}: {_path(parts)}: {len(v):,} characters; a text of a spec has at most "
                    f"{MAX_TEXT_CHARS:,} (items go in the design or stimulus file)")
    v = nfc(v)
    problem = text_problem(v)
    if problem:
        raise error(f"{where}: {_path(parts)}: {v[:60]!r}{'...' if len(v) > 60 else ''} {problem}")
    return v


def _siblings(values: list[Any], parts: list[str], where: str, error: type[Exception]) -> None:
    """Texts side by side (a list's, or a list of mappings' by key) that must look different."""
    groups = [[v for v in values if isinstance(v, str)]]
    dicts = [v for v in values if isinstance(v, dict)]
    for key in sorted({k for d in dicts for k in d if isinstance(k, str)}):
        groups.append([d[key] for d in dicts if isinstance(d.get(key), str)])
    for g in groups:
        problem = lookalike_problem(g, "two entries,")
        if problem:
            raise error(f"{where}: {_path(parts)}: {problem}")


def _walk(v: Any, parts: list[str], where: str, error: type[Exception]) -> Any:
    if isinstance(v, str):
        return _text(v, parts, where, error)
    if isinstance(v, (bytes, bytearray)):  # YAML's !!binary: bytes the schema would quietly take for a text
        raise error(f"{where}: {_path(parts)}: a binary value (!!binary); a spec holds text, numbers and lists")
    if isinstance(v, list):
        out = [_walk(x, parts + [str(i)], where, error) for i, x in enumerate(v)]
        _siblings(out, parts, where, error)
        return out
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            key = _text(k, parts + [f"{k} (a key)"], where, error) if isinstance(k, str) else k
            out[key] = _walk(x, parts + [str(key)], where, error)
        if len(out) < len(v):
            raise error(f"{where}: {_path(parts)}: two keys are the same text once normalised (NFC): "
                        f"{', '.join(map(repr, v))}")
        if parts and parts[-1] == "labels":
            _siblings(list(out.values()), parts, where, error)
        return out
    return v
