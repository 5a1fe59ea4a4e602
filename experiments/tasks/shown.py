"""What the human runners present a task kind with (its settings), show (its answers) and press (the plan).

A leaf module (it imports only the screen texts' key names) so that the kind contract
(experiments/tasks/hooks.py) can name this type without an import circle; experiments/tasks/presented.py
builds it from the spec's `task:` section.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from experiments.screen_texts import key_label


@dataclass(frozen=True)
class TaskSettings:
    """What a kind is presented with: its answers' labels and keys, scale, question, reveal, keys, hint."""

    kind: str
    language: str = "en"
    labels: tuple[tuple[str, str], ...] = ()  # (value, shown label) in screen order: judgment, lexical_decision
    keys: tuple[str, ...] = ()  # one per label / screen position / scale point
    scale: int = 7
    anchors: tuple[str, str] = ("", "")
    question: str = ""
    presentation: str = "whole"  # whole | rsvp
    positions: str = "counterbalance"  # choice: counterbalance | fixed (experiments.tasks.choice.option_order)
    reveal: str = "word"  # word | region
    advance_key: str = "space"
    question_keys: tuple[str, ...] = ("f", "j", "d", "k")
    submit_key: str = "return"
    mouse: bool = True
    hint: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def key_labels(self) -> list[str]:
        return [key_label(k, self.language) for k in self.keys]

    def to_dict(self) -> dict[str, Any]:
        """What the browser page is given (JSON)."""
        return {"kind": self.kind, "labels": [list(p) for p in self.labels], "keys": list(self.keys),
                "key_labels": self.key_labels(), "scale": self.scale, "anchors": list(self.anchors),
                "question": self.question, "presentation": self.presentation, "positions": self.positions,
                "reveal": self.reveal,
                "advance_key": self.advance_key, "question_keys": list(self.question_keys),
                "question_key_labels": [key_label(k, self.language) for k in self.question_keys],
                "submit_key": self.submit_key, "mouse": self.mouse, "hint": self.hint}


@dataclass(frozen=True)
class Answer:
    """One answer on screen: the recorded value, the shown label, its PsychoPy key."""

    value: str  # what goes in `response`
    label: str  # what is shown
    key: str  # PsychoPy key name


@dataclass(frozen=True)
class TaskPlan:
    """Presses per phase: (seconds after the phase's onset, key). Phases: answer, read, question, type."""

    phases: dict[str, list[tuple[float, str]]]
    intended: str
    intended_correct: bool | None

    def to_dict(self) -> dict[str, Any]:
        return {"intended_response": self.intended, "intended_correct": self.intended_correct,
                "phases": {k: [[round(t, 3), key] for t, key in v] for k, v in self.phases.items()}}
