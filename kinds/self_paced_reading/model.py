"""Self-paced reading for models: no protocol of its own; a model reads it by per-word surprisal
(model_subjects/tasks/surprisal.py), which the registry offers for every kind with sentences."""
from __future__ import annotations

from model_subjects.tasks.registry import ModelKind

MODEL = ModelKind("self_paced_reading", surprisal=True)
