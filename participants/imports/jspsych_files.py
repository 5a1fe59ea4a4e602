"""File-level checks shared by the jsPsych and PCIbex readers: the size limit (records.MAX_FILE_BYTES, the one
limit of every reader, checked before a byte is read),
the text's decoding, and the one way a reader names a place in a file in its refusals.
"""
from __future__ import annotations

import math
from pathlib import Path

from participants.imports.records import ImportInputError

MISSING = ("", "null", "undefined")  # what jsPsych writes for an absent value (its CSV writes JS null as "null")


def where(path: Path, line: int | None = None, field: str | None = None, unit: str = "line") -> str:
    """'FILE, line 12, field "rt"': the place a refusal names."""
    parts = [str(path)]
    if line is not None:
        parts.append(f"{unit} {line}")
    if field is not None:
        parts.append(f'field "{field}"')
    return ", ".join(parts)


def number(path: Path, line: int, field: str, value: str, unit: str = "line") -> float | None:
    """A numeric field's value (None when absent), refused when it is not a finite number."""
    if value.strip() in MISSING:
        return None
    try:
        x = float(value)
    except ValueError:
        x = math.nan
    if not math.isfinite(x):
        raise ImportInputError(f"{where(path, line, field, unit)}: {value!r} is not a number")
    return x


def flag(path: Path, line: int, field: str, value: str, unit: str = "line") -> bool | None:
    """A correctness field (true/false, 1/0, as the tools write it); None when absent."""
    v = value.strip().lower()
    if v in MISSING:
        return None
    if v in ("true", "1", "1.0"):
        return True
    if v in ("false", "0", "0.0"):
        return False
    raise ImportInputError(f"{where(path, line, field, unit)}: {value!r} is not true/false or 1/0")
