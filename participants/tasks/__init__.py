"""The PsychoPy runner's task kinds: one small presentation unit per kind (as a jsPsych plugin is).

`PSYCHOPY` is this runner's view of the one registry of kinds (kind -> unit), read from `experiments.tasks`
when asked: every kind whose `TaskKind.runners` names psychopy is presented by its folder's `view` part,
kinds/<kind>/view.py (or by the view of the kind it `renders_as`). A unit either draws into the task window (`present(w,
order)`) or runs the trial its own way (`run(pres, trial, seq, exp, overrides)`: violation detection's RSVP trial,
participants/rsvp.py). The browser's builders are the kinds' page.js (registered into twinlab-task.js's `TASKS`) and
`participants.web.payload.BROWSER_KINDS`; a test checks both against `experiments.tasks`. What an
answer means is decided once, for both runners, in the kind's own unit (participants/tasks/logic.py).
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import Any

from experiments.kinds import kind_part
from experiments.tasks import registry
from experiments.tasks.presented import TaskSettings, task_settings
from experiments.tasks.presented import trial_settings as settings_for  # this package's name for it
from experiments.tasks.record import plan
from experiments.trials import Trial, TrialSequence
from participants.tasks.logic import screen_order

__all__ = ["PSYCHOPY", "TaskSettings", "implemented", "run_task_trial", "settings_for", "task_settings"]


class Units(Mapping[str, ModuleType]):
    """kind -> its presentation unit in this runner, from the task registry at each look-up (a kind
    registered later, e.g. from a test, is found as the built-in ones are)."""

    def _names(self) -> dict[str, str]:
        return {name: kind.renders_as or name for name, kind in registry().items() if "psychopy" in kind.runners}

    def __getitem__(self, name: str) -> ModuleType:
        unit = kind_part(self._names()[name], "view")
        if unit is None:
            raise KeyError(f"task kind {name!r} has no PsychoPy view (kinds/{name}/view.py)")
        return unit

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def __contains__(self, name: object) -> bool:
        return name in self._names()


PSYCHOPY: Mapping[str, ModuleType] = Units()


def implemented() -> tuple[str, ...]:
    return tuple(PSYCHOPY)


def run_task_trial(pres: Any, trial: Trial, seq: TrialSequence, exp: Any,
                   overrides: dict[str, Any] | None = None) -> Any:
    """Present one task trial in the PsychoPy window; returns its TrialResult (the caller writes the row)."""
    # participants.tasks.window loads this module back (an import circle)
    from participants.tasks.window import TaskWindow

    unit = PSYCHOPY[trial.task]
    if hasattr(unit, "run"):  # a kind that runs its trial its own way (violation detection: RSVP)
        return unit.run(pres, trial, seq, exp, overrides)
    s = settings_for(exp, trial, overrides)
    order = screen_order(trial, seq, s)
    p = None
    if pres.autopilot is not None:
        pres.autopilot.cancel()
        p = plan(trial, s, order, seed=pres.autopilot.seed, accuracy=pres.autopilot.accuracy)
    with pres.task_trial():
        w = TaskWindow(pres, trial, s, p)
        unit.present(w, order)
        return w.finish(order)
