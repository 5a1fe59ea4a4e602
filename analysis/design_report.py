"""Kept for analysis/tasks_*.py until the kinds move: the old path of analysis/report/design.py, for the names they import.

Read at each access (module __getattr__), so a test that patches analysis/report/design.py patches what these files see."""
from __future__ import annotations

from analysis.report import design as _moved

_NAMES = {'CLMM_FALLBACK', 'F1F2', '_fmt_ci', 'shown_rates'}


def __getattr__(name: str):
    if name in _NAMES:
        return getattr(_moved, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}: it lives in {_moved.__name__}")
