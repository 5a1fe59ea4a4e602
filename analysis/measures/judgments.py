"""Judgment-like tasks read from the task, not from a column name: acceptance and signal detection.

Why: a trial table's `grammatical` column is not evidence (a design without a factor of that name
once carried `True` on every row), and `correct` says nothing about which label was given. For the
judgment-like kinds (judgment, violation_detection, lexical_decision) the task names an accepting and
a rejecting label (`experiments.tasks.detection_values`); from those alone, per trial:

- `accepted` = 1 when the response is the accepting label, 0 when it is the rejecting one (missing:
  no response, or another label);
- `signal` = True when the item's answer (`correct_response`) is the rejecting label (an unacceptable
  sentence, a violation, a non-word), False when it is the accepting one, missing otherwise;
- `said_reject` = 1 - accepted: a hit on a signal trial, a false alarm on a noise trial.

Nothing here reads `grammatical` or a stored `accepted`.
"""
from __future__ import annotations

import json

import pandas as pd

from analysis.kind_sections import kinds_where, untyped_kind
from experiments.tasks import detection_values  # the one place the labels' meaning lives

RULE = ("acceptance = trials answered with the task's accepting label / trials answered with either label; "
        "signal trials are the items whose answer is the rejecting label (a hit rejects one, a false alarm "
        "rejects an item whose answer is the accepting label); the labels come from the task's settings "
        "(experiments.tasks.detection_values), never from a `grammatical` column")


def judgment_kinds() -> tuple[str, ...]:
    """The judgment-like kinds: each registers `detection` (analysis/kind_sections.py)."""

    return kinds_where("detection")


def row_kind(df: pd.DataFrame) -> pd.Series:
    """The task kind of each row (a table without `task`, a Lakretz release: the kind that claims such
    tables, violation detection; analysis/kind_sections.untyped_kind)."""

    default = untyped_kind()
    if "task" not in df.columns:
        return pd.Series(default, index=df.index, dtype="string")
    return df["task"].astype("string").fillna(default) if default is not None else df["task"].astype("string")


def _settings(text) -> dict:
    if text is None or (isinstance(text, float) and pd.isna(text)) or text is pd.NA or text == "":
        return {}
    try:
        v = json.loads(str(text))
    except json.JSONDecodeError:
        return {}
    return v if isinstance(v, dict) else {}


def values_per_row(df: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """(accepting value, rejecting value) per row; missing for other kinds."""
    kind = row_kind(df)
    sett = df["task_settings"] if "task_settings" in df.columns else pd.Series(pd.NA, index=df.index)
    acc = pd.Series(pd.NA, index=df.index, dtype="string")
    rej = pd.Series(pd.NA, index=df.index, dtype="string")
    key = kind.astype(str) + "\x00" + sett.astype("string").fillna("").astype(str)
    judged = judgment_kinds()
    for k, idx in key.groupby(key).groups.items():
        kd, s = k.split("\x00", 1)
        vals = detection_values(kd, _settings(s)) if kd in judged else None
        if vals:
            acc[idx], rej[idx] = vals
    return acc, rej


def add_judgment_columns(df: pd.DataFrame) -> pd.DataFrame:
    """`accepted`, `signal`, `said_reject`, `accept_value`, `reject_value` from the responses and the answers."""
    out = df.copy()
    acc, rej = values_per_row(df)
    resp = df["response"].astype("string") if "response" in df.columns else pd.Series(pd.NA, index=df.index,
                                                                                       dtype="string")
    ans = df["correct_response"].astype("string") if "correct_response" in df.columns else \
        pd.Series(pd.NA, index=df.index, dtype="string")
    a = pd.Series(float("nan"), index=df.index)
    a[(resp == acc).fillna(False)] = 1.0
    a[(resp == rej).fillna(False)] = 0.0
    s = pd.Series(pd.NA, index=df.index, dtype="boolean")
    s[(ans == rej).fillna(False)] = True
    s[(ans == acc).fillna(False)] = False
    out["accept_value"], out["reject_value"] = acc, rej
    out["accepted"] = a
    out["said_reject"] = 1.0 - a
    out["signal"] = s
    return out


def judged_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Trials of a judgment-like kind answered with one of its two labels, on items whose answer is one."""
    d = df if "signal" in df.columns else add_judgment_columns(df)
    return d[d["accepted"].notna() & d["signal"].notna()]


def answer_label(d: pd.DataFrame) -> pd.Series:
    """The item's answer as a cell label for tables: 'accept (yes)' / 'reject (no)'."""
    return pd.Series(["reject (" + str(r) + ")" if s else "accept (" + str(a) + ")"
                      for s, a, r in zip(d["signal"].astype(bool), d["accept_value"], d["reject_value"], strict=False)],
                     index=d.index, dtype="string")


def fill_grammatical(df: pd.DataFrame, factors: dict) -> pd.DataFrame:
    """`grammatical` claims only what the items give: a declared factor of that name is kept; otherwise
    it is filled from the item's answer on judgment-like trials (accepting answer = True) and left empty
    on every other row (never the runner's default)."""
    if "grammatical" in factors or "grammatical" not in df.columns:
        return df
    d = df if "signal" in df.columns else add_judgment_columns(df)
    g = pd.Series(pd.NA, index=df.index, dtype="boolean")
    known = d["signal"].notna()
    g[known] = ~d.loc[known, "signal"].astype(bool)
    out = df.copy()
    out["grammatical"] = g
    return out
