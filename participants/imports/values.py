"""The cells every CSV reader turns into values: a correctness flag, a response time (one rule each).

A cell that is not such a value raises `BadTrialValue` (an ImportInputError): the reader records the trial as
`Excluded(..., bad=True)` with the reason, and the import excludes or refuses it (`--bad-trials`)."""
from __future__ import annotations

import math
from typing import Optional

from participants.imports.records import BadTrialValue
from participants.imports.source_csv import SourceTable

TRUE = ("1", "true", "yes", "correct")
FALSE = ("0", "false", "no", "incorrect", "wrong")
MAX_RT_MS = 24 * 3600 * 1000.0  # a response time beyond a day is a wrong unit or a broken cell


def bool_cell(table: SourceTable, line: int, row: dict[str, str], col: Optional[str]) -> Optional[bool]:
    """1/0, true/false (any case, also 1.0/0.0 as spreadsheets write them); empty: None."""
    if not col:
        return None
    v = row.get(col, "").strip().lower()
    if v in ("", "none", "nan"):
        return None
    if v in TRUE or v == "1.0":
        return True
    if v in FALSE or v == "0.0":
        return False
    reason = f"column {table.column_number(col)} ({col}) is not a correctness value (1/0, true/false)"
    raise BadTrialValue(f"{table.path}: line {line}, column {table.column_number(col)} ({col}): {v[:20]!r} is not "
                        "a correctness value (1/0, true/false)", f"bad trial: {reason}")


def rt_ms(table: SourceTable, line: int, row: dict[str, str], col: Optional[str], unit: str) -> Optional[float]:
    """The response time in ms (`unit` "s": seconds, as PsychoPy writes); empty or None: no time."""
    if not col:
        return None
    v = row.get(col, "").strip()
    if v in ("", "None", "nan", "NaN"):
        return None
    try:
        x = float(v)
    except ValueError:
        x = math.nan
    ms = x * 1000.0 if unit == "s" else x
    if not math.isfinite(ms) or not 0 <= ms <= MAX_RT_MS:
        what = f"a response time in {'seconds' if unit == 's' else 'ms'} (0 to a day)"
        raise BadTrialValue(f"{table.path}: line {line}, column {table.column_number(col)} ({col}): {v[:30]!r} is not "
                            f"{what}", f"bad trial: column {table.column_number(col)} ({col}) is not {what}")
    return round(ms, 3)
