"""What the report's shown tables share: rates and CIs as text, the order of the groups, safe file names.
(A study's tables in its paper's layout live in the study: studies/<name>/tables.py.)"""
from __future__ import annotations

import re

import pandas as pd

from analysis.load.prepare import SIMULATED_HUMANS, is_human_group


def fmt_rate(v: float) -> str:
    return "" if pd.isna(v) else f"{v:.3f}"


def fmt_ci(v, lo, hi) -> str:
    """'estimate [low, high]' (3 decimals); the estimate alone without a CI, '' without an estimate."""
    if pd.isna(v):
        return ""
    return f"{v:.3f} [{lo:.3f}, {hi:.3f}]" if pd.notna(lo) else f"{v:.3f}"


def ordered_groups(t: pd.DataFrame) -> list[str]:
    gs = list(dict.fromkeys(t["group"])) if "group" in t and len(t) else []
    return [g for g in ("human", SIMULATED_HUMANS) if g in gs] + sorted(g for g in gs if not is_human_group(g))


def slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", s).strip("-").lower()[:60] or "group"
