"""Kept for analysis/tasks_*.py until the kinds move: the old path of analysis/stats/bootstrap.py, for the names they import.

Read at each access (module __getattr__), so a test that patches analysis/stats/bootstrap.py patches what these files see."""
from __future__ import annotations

from analysis.stats import bootstrap as _moved

_NAMES = {'bootstrap_mean'}


def __getattr__(name: str):
    if name in _NAMES:
        return getattr(_moved, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}: it lives in {_moved.__name__}")
