"""choice (PsychoPy): the item's prefix or question, then 2..n options side by side in the trial's
counterbalanced order (logic.screen_order), chosen by position keys or clicks."""
from __future__ import annotations

from experiments.tasks.record import answers
from participants.screens import PAGE_HEIGHT
from participants.tasks.window import TaskWindow, answer_screen


def present(w: TaskWindow, order: list[int] | None) -> None:
    ans = answers(w.trial, w.s, order)
    w.start([a.key for a in ans])
    parts = []
    prefix = str(w.trial.mat.get("prefix") or "")
    if prefix:
        parts.append(w.text(prefix, y=0.12))
    question = str(w.trial.mat.get("question") or w.s.question)
    if question:
        parts.append(w.text(question, y=0.3, height=PAGE_HEIGHT))
    longest = max(len(a.label) for a in ans)
    answer_screen(w, parts, ans, shot="choice", y=-0.12, height=0.14 if longest < 25 else 0.3)
