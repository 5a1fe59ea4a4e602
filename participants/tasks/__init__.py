"""The PsychoPy runner's task kinds: one small presentation unit per kind (as a jsPsych plugin is).

`PSYCHOPY` is this runner's registry (kind -> unit); the browser's is in
participants/web/js/twinlab-task.js (`TASKS`) and `participants.web.payload.BROWSER_KINDS`; a test
checks both against `experiments.tasks` (`TaskKind.runners`). What an answer means is decided
once, for both runners, in participants/tasks/logic.py.
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from experiments.tasks import registry
from experiments.trials import Trial, TrialSequence
from participants.tasks.logic import option_order, plan
from participants.tasks.settings import TaskSettings, task_settings

# every kind whose TaskKind.runners names psychopy has its presentation unit here, participants/tasks/<kind>.py
# (violation detection is the RSVP runner's own, participants/rsvp.py)
PSYCHOPY: dict[str, ModuleType] = {
    name: importlib.import_module(f"participants.tasks.{name}") for name, kind in registry().items()
    if "psychopy" in kind.runners and name != "violation_detection"
}


def implemented() -> tuple[str, ...]:
    return tuple(PSYCHOPY)


def settings_for(exp: Any, trial: Trial, overrides: dict[str, Any] | None = None) -> TaskSettings:
    return task_settings(exp, trial.task, overrides, n_options=len(trial.mat.get("options") or ()) or 2)


def run_task_trial(pres: Any, trial: Trial, seq: TrialSequence, exp: Any,
                   overrides: dict[str, Any] | None = None) -> Any:
    """Present one task trial in the PsychoPy window; returns its TrialResult (the caller writes the row)."""
    from participants.tasks.window import TaskWindow

    s = settings_for(exp, trial, overrides)
    order = option_order(trial, seq, s) if trial.task == "choice" else None
    p = None
    if pres.autopilot is not None:
        pres.autopilot.cancel()
        p = plan(trial, s, order, seed=pres.autopilot.seed, accuracy=pres.autopilot.accuracy)
    with pres.task_trial():
        w = TaskWindow(pres, trial, s, p)
        PSYCHOPY[trial.task].present(w, order)
        return w.finish(order)
