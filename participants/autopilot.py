"""A simulated participant for smoke demos and tests: the runner answers itself with key presses.

Its data are NOT human data: the sidecar says so (`autopilot`, `data_kind`), every row's `extra`
carries the autopilot's plan, and the participant id must start with "autopilot". Presses go
through `keys.Injector` (the X server where possible), so the keyboard path is the real one.

Plans are drawn from a generator seeded by (seed, trial index), so a resumed session gets the same
plan for a trial it had not finished.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any, Callable

from experiments.kinds import kind_attrs
from experiments.trials import Trial
from participants.keys import Injector

AUTOPILOT_PREFIX = "autopilot"
RELEASE_AFTER_S = 0.04
PAGE_DELAY_S = 0.45


@dataclass(frozen=True)
class AutopilotPlan:
    intended_response: str  # violation / no_violation
    intended_correct: bool
    rt_ms: float | None  # planned press time after critical-word onset (violation responses); panel: after panel onset
    early_ms: float | None = None  # panel: an early press of the violation key, after critical-unit onset

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _answer_rule(kind: str) -> Callable[..., tuple[str, bool, float | None, float | None]]:
    """The RSVP kind's simulated answer (its task part's `autopilot_answer`; violation detection's)."""

    return kind_attrs(kind, "task", "autopilot_answer")


class Autopilot:
    """Decides each answer (right with probability `accuracy`) and presses the key on time."""

    def __init__(self, injector: Injector, *, accuracy: float, seed: str, response_key: str):
        if not 0.0 <= accuracy <= 1.0:
            raise ValueError(f"autopilot accuracy must be between 0 and 1, got {accuracy}")
        self.injector = injector
        self.accuracy = accuracy
        self.seed = seed
        self.response_key = response_key
        self._due: list[tuple[float, str, bool]] = []  # (monotonic time, key, down?)
        # when each press actually left (not when it was planned: under load a poll comes late), on `clock`;
        # the presenter sets the keyboard clock, so these times share the axis of the recorded presses
        self.clock: Callable[[], float] = time.monotonic
        self._sent: list[tuple[str, float]] = []

    def plan(self, trial: Trial, available_ms: float, kind: str) -> AutopilotPlan:
        """The answer for `trial` of task kind `kind` (the RSVP kind at hand); a press lands between 250 ms and
        the end of the response window (the kind's own rule: its `autopilot_answer`, kinds/<kind>/task.py)."""
        response, right, rt, _ = _answer_rule(kind)(trial, self.seed, self.accuracy, available_ms, panel=False)
        return AutopilotPlan(response, right, rt)

    def plan_panel(self, trial: Trial, response_ms: float, kind: str) -> AutopilotPlan:
        """A panel answer (right with probability `accuracy`) pressed 250-900 ms after panel onset; on
        some violation answers also an early press of the violation key during the sentence (the kind's rule)."""
        response, right, rt, early = _answer_rule(kind)(trial, self.seed, self.accuracy, response_ms, panel=True)
        return AutopilotPlan(response, right, rt, early)

    def press_in(self, seconds: float, key: str | None = None) -> None:
        """Schedule a press (and its release) `seconds` from now."""
        key = key or self.response_key
        t = time.monotonic() + max(0.0, seconds)
        self._due += [(t, key, True), (t + RELEASE_AFTER_S, key, False)]
        self._due.sort()

    def page(self) -> None:
        """Read a text page for a moment, then press the response key."""
        self.press_in(PAGE_DELAY_S)

    def tick(self) -> None:
        """Send whatever is due; called from every polling loop."""
        now = time.monotonic()
        while self._due and self._due[0][0] <= now:
            _, key, down = self._due.pop(0)
            (self.injector.press if down else self.injector.release)(key)
            if down:
                self._sent.append((key, self.clock()))

    def sent_ms(self) -> list[list[Any]]:
        """The presses sent since the last `cancel` (this trial's): [key, ms on `clock`], as they left."""
        return [[key, round(t * 1000.0, 3)] for key, t in self._sent]

    def cancel(self) -> None:
        """Drop pending presses (a trial restarted), releasing any key still down."""
        for _, key, down in self._due:
            if not down:
                self.injector.release(key)
        self._due.clear()
        self._sent.clear()
