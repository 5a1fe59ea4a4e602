"""Kept for analysis/tasks_*.py until the kinds move: the old path of analysis/report/design_figures.py, for the names they import.

Read at each access (module __getattr__), so a test that patches analysis/report/design_figures.py patches what these files see."""
from __future__ import annotations

from analysis.report import design_figures as _moved

_NAMES = {'position_bias_bars', 'rating_distribution'}


def __getattr__(name: str):
    if name in _NAMES:
        return getattr(_moved, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}: it lives in {_moved.__name__}")
