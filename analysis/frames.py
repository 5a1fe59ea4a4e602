"""Kept for analysis/tasks_*.py until the kinds move: the old path of analysis/load/frames.py, for the names they import.

Read at each access (module __getattr__), so a test that patches analysis/load/frames.py patches what these files see."""
from __future__ import annotations

from analysis.load import frames as _moved

_NAMES = {'model_frame'}


def __getattr__(name: str):
    if name in _NAMES:
        return getattr(_moved, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}: it lives in {_moved.__name__}")
