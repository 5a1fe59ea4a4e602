"""violation_detection (PsychoPy): its renderer is the RSVP trial (participants/rsvp.py, `Presenter.run_trial`):
fixation, the words one by one, the key response or the response panel, feedback. A thin registration:
the runner finds it in `participants.tasks.PSYCHOPY` as it finds every kind."""
from __future__ import annotations

from typing import Any


def run(pres: Any, trial: Any, seq: Any, exp: Any, overrides: dict[str, Any] | None = None) -> Any:
    """One violation-detection trial, key or panel as the spec says (the Lakretz paradigm)."""
    return pres.run_trial(trial)
