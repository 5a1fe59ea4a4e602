"""rating (PsychoPy): the sentence, an optional question, a k-point scale with labelled ends (keys or clicks)."""
from __future__ import annotations

from experiments.tasks.record import answers
from kinds.judgment.view import sentence_and_question
from participants.tasks.window import TaskWindow, answer_screen


def present(w: TaskWindow, order: list[int] | None) -> None:
    ans = answers(w.trial, w.s)
    w.start([a.key for a in ans])
    answer_screen(w, sentence_and_question(w), ans, shot="rating", height=0.11, anchors=w.s.anchors)
