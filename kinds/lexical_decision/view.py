"""lexical_decision (PsychoPy): a letter string in the centre, word / non-word by keys (or clicks); RT from its flip."""
from __future__ import annotations

from experiments.tasks.record import answers, sentence_of
from participants.screens import WORD_HEIGHT
from participants.tasks.window import TaskWindow, answer_screen


def present(w: TaskWindow, order: list[int] | None) -> None:
    ans = answers(w.trial, w.s)
    w.start([a.key for a in ans])
    parts = [w.text(sentence_of(w.trial), y=0.08, height=WORD_HEIGHT)]
    answer_screen(w, parts, ans, shot="lexical_decision", y=-0.25, height=0.11)
