"""A raw event log per session, one tab-separated line per event, like the Lakretz et al. (2021) logs.

Event names follow those logs (FIX_ON, WORD_ON, WORD_OFF, FIX2PANEL_ON, PanelOn, PanelResp,
FeedbackOn, FeedbackOff, END_TRIAL, KEY_PRESS); times are PsychoPy clock seconds (the clock of
the flip timestamps). Lines are flushed as they happen (no fsync: the trial table is the record
that must survive a crash; this log is for inspection and for tools that follow a session live).
KEY_PRESS lines are written when the trial ends, with the time of the press.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, TextIO

COLUMNS = ("Event", "Block", "Trial", "Unit", "Text", "Time")


class EventLog:
    """Append-only event lines (a resumed session continues the same file)."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        new = not path.exists() or path.stat().st_size == 0
        self._fh: TextIO = open(path, "a", encoding="utf-8", newline="")
        if new:
            self._fh.write("\t".join(COLUMNS) + "\n")
            self._fh.flush()

    def write(self, event: str, block: str, trial: int, unit: Any = "", text: str = "", t: float | None = None) -> None:
        cells = [event, block, str(trial), "" if unit is None else str(unit),
                 text.replace("\t", " ").replace("\n", " "), "" if t is None else f"{t:.4f}"]
        self._fh.write("\t".join(cells) + "\n")
        self._fh.flush()

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()
