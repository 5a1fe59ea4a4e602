"""One helper for each input bug that kept coming back: every reader of user input uses these.

- **whole numbers** from text: ASCII digits only. `str.isdigit()` is true for '²', '٣' or '①', which
  `int()` then refuses (or reads as another number): a traceback, or a wrong value, every time it was
  used. `ascii_int` is the one parser.
- **finite numbers**: nan passes every comparison check (`nan < 1` is false) and inf passes `> 0`; both
  then crash deep inside a library or run without an end. `finite_number` refuses them and bools.
- **text files** a person writes are read BOM-tolerant (`stimuli.textfile.read_text_file`): a spreadsheet's
  "CSV UTF-8" starts with a BOM, which would otherwise become part of the first column's name.
- **CSV cells safe for spreadsheets**: a cell starting with `= + - @` (or a tab or carriage return) is a
  formula when the table is opened in a spreadsheet (CSV injection). Tables written for people to open
  get such text cells prefixed with `'` (`spreadsheet_safe`, `spreadsheet_safe_frame`); names that end
  up in tables (a model's name) are refused instead (`name_problem`). Numbers such as -0.5 are left as
  they are.
- **the CSV field limit**: Python's csv module refuses a field over 131,072 characters unless the
  process-wide `csv.field_size_limit` is raised; `raise_csv_field_limit` raises it, once, at each entry point
  (the CLI's start, experiments/cli.py; the APIs' entry functions: `analysis.load.load`, `run_models`,
  `run_replay`), for every reader and writer behind it (a kept column of 70,000 characters written by one part
  and read back by another must not be refused by the second).
"""
from __future__ import annotations

import csv
import math
import re
from typing import Any

CSV_FIELD_LIMIT = 64 * 1024 * 1024  # characters in one CSV field (the session and stimulus file limits are below it)

_ASCII_INT = re.compile(r"[0-9]+")
_SIGNED_INT = re.compile(r"[+-]?[0-9]+")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def raise_csv_field_limit() -> None:
    """The process-wide CSV field limit raised to CSV_FIELD_LIMIT: what an entry point does first."""
    csv.field_size_limit(CSV_FIELD_LIMIT)


def is_ascii_digits(text: Any) -> bool:
    """True for a non-empty string of the ASCII digits 0-9 only ('²', '٣', ' 1' and '' are not)."""
    return isinstance(text, str) and _ASCII_INT.fullmatch(text) is not None


def ascii_int(value: Any, *, signed: bool = False, strip: bool = True) -> int | None:
    """A whole number written in ASCII digits (an int passes as itself), else None.

    Never `isdigit()` then `int()`: '²'.isdigit() is True and int('²') raises. Bools are not numbers here.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if signed or value >= 0 else None
    if not isinstance(value, str):
        return None
    s = value.strip() if strip else value
    if not (_SIGNED_INT if signed else _ASCII_INT).fullmatch(s):
        return None
    return int(s)


def finite_number(value: Any) -> float | None:
    """The value as a finite float (int or float, not bool), else None: nan and inf are refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    v = float(value)
    return v if math.isfinite(v) else None


def whole_number(value: Any) -> int | None:
    """An int (not bool), or a float that is a finite whole number (2.0), as an int; else None (90.5, nan, inf)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


_NUMERIC_TEXT = re.compile(r"[+-][0-9.,eE+\- \[\]()%]*")  # -0.5, -0.50 [-0.81, -0.20], +3 (12%)


def starts_like_formula(text: Any) -> bool:
    """True when a spreadsheet would read this text cell as a formula: it starts with = @ tab or CR, or
    with + or - and is more than a number (a number, or numbers with brackets as in a CI, stay as they are)."""
    if not isinstance(text, str) or not text.startswith(FORMULA_STARTS):
        return False
    return not (text[0] in "+-" and _NUMERIC_TEXT.fullmatch(text))


def spreadsheet_safe(value: Any) -> Any:
    """A text cell a spreadsheet would run as a formula, prefixed with `'` (shown as text); others unchanged."""
    return "'" + value if starts_like_formula(value) else value


def spreadsheet_safe_frame(df: Any) -> Any:
    """A copy of a pandas table with every text cell (and column name) made spreadsheet-safe."""
    from pandas.api.types import is_numeric_dtype  # keeps `twinlab --help` light

    out = df.copy()
    for i in range(out.shape[1]):  # by position: column names may repeat
        col = out.iloc[:, i]
        if not is_numeric_dtype(col.dtype) and any(starts_like_formula(v) for v in col):
            out.isetitem(i, col.astype(object).map(spreadsheet_safe))
    out.columns = [spreadsheet_safe(c) for c in out.columns]
    if not is_numeric_dtype(out.index.dtype):
        out.index = out.index.map(spreadsheet_safe)
    return out


def name_problem(name: Any) -> str | None:
    """Why a name that ends up in written tables (a model's name or family) is refused, or None."""
    if not isinstance(name, str):
        return f"must be text, not {type(name).__name__}"
    if name.startswith(FORMULA_STARTS):
        return (f"{name!r} starts with {name[0]!r}, which a spreadsheet reads as a formula when the tables are "
                "opened (start it with a letter or digit)")
    bad = next((c for c in name if ord(c) < 32 or ord(c) == 127), None)
    if bad is not None:
        return f"{name!r} holds a control character ({bad!r})"
    return None
