"""Kept for analysis/tasks_*.py until the kinds move: the old path of analysis/measures/detection.py, for the names they import.

Read at each access (module __getattr__), so a test that patches analysis/measures/detection.py patches what these files see."""
from __future__ import annotations

from analysis.measures import detection as _moved

_NAMES = {'dprime_c'}


def __getattr__(name: str):
    if name in _NAMES:
        return getattr(_moved, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}: it lives in {_moved.__name__}")
