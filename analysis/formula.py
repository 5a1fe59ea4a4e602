"""Kept for analysis/tasks_*.py until the kinds move: the old path of analysis/stats/formula.py, for the names they import.

Read at each access (module __getattr__), so a test that patches analysis/stats/formula.py patches what these files see."""
from __future__ import annotations

from analysis.stats import formula as _moved

_NAMES = {'CONTRASTS_NOTE', 'FormulaError', 'check_columns', 'names_in', 'parse', 'sum_code'}


def __getattr__(name: str):
    if name in _NAMES:
        return getattr(_moved, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}: it lives in {_moved.__name__}")
