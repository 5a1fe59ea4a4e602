"""One written form for a factor's levels: what `--focus`, `--by` and every table say.

Why: a factor whose levels read as booleans ("true"/"false", e.g. `grammatical`) is stored in the trial
table's boolean column and loads as True/False; the spec declares it as "true"/"false". Every comparison with
a level the user names and every table shows the declared, lower-case form.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

BOOL_WORDS = ("true", "false")


def level_text(value: Any) -> str:
    """A level as the spec writes it: booleans as true/false, everything else as its text."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    return str(value)


def level_series(s: pd.Series) -> pd.Series:
    """`s`'s levels as text (missing stays missing): the form a focus level is compared with."""
    return s.map(lambda v: v if pd.isna(v) else level_text(v))


def same_level(known: list[str], given: str) -> str | None:
    """The declared level `given` names: itself, or a boolean-like level written in another case."""
    if given in known:
        return given
    same = [lv for lv in known if lv.lower() == given.lower() and lv.lower() in BOOL_WORDS]
    return same[0] if same else None


def shown_levels(df: pd.DataFrame) -> pd.DataFrame:
    """A table with its boolean columns written as true/false (the declared form), for CSV and the page."""
    cols = [c for c in df.columns if pd.api.types.is_bool_dtype(df[c])]
    return df.assign(**{c: level_series(df[c]).astype("string") for c in cols}) if cols else df
