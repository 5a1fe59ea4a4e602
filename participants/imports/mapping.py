"""`--map MAP.yaml`: which source field means what, over a tool's defaults (records.Mapping).

The file is data (YAML read with safe_load, never code): a mapping of Mapping's field names to column
names, e.g.

    participant: participant
    item: item
    condition: condition
    stimulus: sentence
    response: key_resp.keys
    labels: {f: "yes", j: "no"}
    expected: corrAns

A key the Mapping does not have, a value of the wrong type, or a `task` twinlab does not know is refused
naming the file and the key. Fields the file leaves out keep the tool's default; `null` unsets one.
"""
from __future__ import annotations

import dataclasses
import reprlib
from pathlib import Path
from typing import Any

from experiments.spec import yaml_load
from participants.imports.kinds import refuse_kind
from participants.imports.records import MAPPING_ORIGIN, ImportInputError, Mapping
from participants.imports.text_input import read_text

FIELDS = {f.name: f for f in dataclasses.fields(Mapping) if f.name not in MAPPING_ORIGIN}
_LISTS = ("practice_values", "loops")
_TEXT = {n for n, f in FIELDS.items() if n not in ("factors", "labels", "rt_unit", *_LISTS)}
_SHORT = reprlib.Repr()
_SHORT.maxstring, _SHORT.maxother, _SHORT.maxlist, _SHORT.maxdict, _SHORT.maxlevel = 60, 60, 6, 6, 2
MAX_MAP_BYTES = 1_000_000
__all__ = ["load_mapping", "mapping_from_dict", "mapped_columns"]


def load_mapping(path: Path, base: Mapping) -> Mapping:
    """The mapping of `path` over `base` (the tool's defaults)."""

    text = read_text(Path(path), what="mapping (YAML)", max_bytes=MAX_MAP_BYTES, fallback=False)
    data = yaml_load(text, path, ImportInputError)
    if data is None:
        return dataclasses.replace(base, source=str(path))
    if not isinstance(data, dict):
        raise ImportInputError(f"{path}: a mapping file is a YAML mapping of field: column (got {type(data).__name__})")
    return mapping_from_dict(data, base, str(path))


def mapping_from_dict(data: dict[str, Any], base: Mapping, where: str = "mapping") -> Mapping:
    """`data` (field -> value) over `base`; every key and value checked (ImportInputError naming the key)."""
    changes: dict[str, Any] = {}
    for key, value in data.items():
        if key not in FIELDS:
            raise ImportInputError(f"{where}: {short(key)} is not a mapping field (the fields: {', '.join(FIELDS)})")
        changes[key] = _value(key, value, where)
    return dataclasses.replace(base, **changes, given=tuple(changes), source=where if where != "mapping" else "")


def short(value: Any) -> str:
    """A value as a message shows it: bounded (a YAML alias bomb's value is never formatted whole)."""
    return _SHORT.repr(value)


def _value(key: str, value: Any, where: str) -> Any:
    if key in _TEXT:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise ImportInputError(f"{where}: {key}: a column name (text), got {short(value)}")
        value = str(value)
        if key == "task":
            refuse_kind(value, f"{where}: task: {value!r}: ")
        return value
    if key == "rt_unit":
        if value not in ("ms", "s"):
            raise ImportInputError(f"{where}: rt_unit: 'ms' or 's', got {short(value)}")
        return value
    if key in _LISTS:
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
            raise ImportInputError(f"{where}: {key}: a list of values, got {short(value)}")
        return tuple(str(v) for v in value)
    if value is None:
        return {}
    if isinstance(value, dict) and any(isinstance(x, bool) for kv in value.items() for x in kv):
        raise ImportInputError(f"{where}: {key}: YAML reads unquoted yes/no/true/false/on/off as true or false; "
                               f"quote them (e.g. 'yes': 'yes'), got {short(value)}")
    if not isinstance(value, dict) or not all(isinstance(k, (str, int)) and isinstance(v, (str, int))
                                              and not isinstance(v, bool) and not isinstance(k, bool)
                                              for k, v in value.items()):
        raise ImportInputError(f"{where}: {key}: a mapping of text to text, got {short(value)}")
    return {str(k): str(v) for k, v in value.items()}


def mapped_columns(m: Mapping) -> dict[str, str | None]:
    """Field -> source column for every field that names a column (factors as `factors.<name>`)."""
    cols: dict[str, str | None] = {n: getattr(m, n) for n in _TEXT if n != "task"}
    cols.update({f"factors.{k}": v for k, v in m.factors.items()})
    return cols
