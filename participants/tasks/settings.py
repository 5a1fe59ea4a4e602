"""A task kind's presentation settings: defined in experiments/tasks/presented.py (so a people's folder read by
model_subjects can ask what the runners offered without importing participants); re-exported here."""
from __future__ import annotations

from experiments.tasks.presented import SettingsError, TaskSettings, task_kind, task_settings

__all__ = ["SettingsError", "TaskSettings", "task_kind", "task_settings"]
