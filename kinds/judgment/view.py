"""judgment (PsychoPy): the sentence (whole, or word by word), an optional question, labelled answers."""
from __future__ import annotations

from experiments.tasks.record import answers, sentence_of
from participants.screens import PAGE_HEIGHT
from participants.tasks.window import TaskWindow, answer_screen


def sentence_and_question(w: TaskWindow) -> list:
    """The sentence (whole; or word by word first, with `presentation: rsvp`) and the question, if any:
    what a judgment and a rating show above their answers."""
    parts = []
    if w.s.presentation == "rsvp":
        w.rsvp(sentence_of(w.trial).split())
    else:
        parts.append(w.text(sentence_of(w.trial), y=0.1))
    question = str(w.trial.mat.get("question") or w.s.question)
    if question:
        parts.append(w.text(question, y=0.3, height=PAGE_HEIGHT))
    return parts


def present(w: TaskWindow, order: list[int] | None) -> None:
    ans = answers(w.trial, w.s)
    w.start([a.key for a in ans])
    answer_screen(w, sentence_and_question(w), ans, shot=w.s.kind)
