"""Forced choice for models: violation detection's protocols (kinds/violation_detection/model.py), by default
the forced choice between the critical verb's two forms."""
from __future__ import annotations

from kinds.violation_detection.model import FORCED_CHOICE_KIND, offered, resolve
from model_subjects.tasks.registry import ModelKind

MODEL = ModelKind(FORCED_CHOICE_KIND, resolve=resolve, names=offered, surprisal=True,
                  default=lambda response="key": "forced_choice")
