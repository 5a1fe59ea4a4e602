"""self_paced_reading (PsychoPy): moving window. The sentence as dashes of its words' lengths; each
press of the advance key reveals the next word (or region) and masks the previous one; the press
after the last unit ends the sentence. Reading times are key-to-key, from the presses' own
timestamps (logic.derive); the flips that show each step are recorded beside them. An optional
comprehension question (the item's question and question_options) follows."""
from __future__ import annotations

from experiments.tasks.record import answers, dashes
from kinds.self_paced_reading.task import trial_units
from participants.screens import PAGE_HEIGHT
from participants.tasks.window import SENTENCE_HEIGHT, Buttons, TaskWindow

MONO = "DejaVu Sans Mono"  # dashes line up with the letters they mask


def window_line(units: list[str], shown: int | None) -> str:
    return " ".join(u if k == shown else dashes(u) for k, u in enumerate(units))


def present(w: TaskWindow, order: list[int] | None) -> None:
    s = w.s
    units, _ = trial_units(w.trial, s.reveal)
    ans = answers(w.trial, s)
    w.start([s.advance_key] + [a.key for a in ans])
    # monospace: a word takes the room of its dashes, so a long sentence wraps at the same place on every step
    stims = [w.text(window_line(units, k - 1 if k else None), height=SENTENCE_HEIGHT * 0.75, font=MONO, wrap=1.25,
                    align="left")
             for k in range(len(units) + 1)]
    hint = w.hint(s.hint) if s.hint else None

    def drawer(k: int):
        def draw() -> None:
            stims[k].draw()
            if hint is not None:
                hint.draw()
        return draw

    steps = [w.show(drawer(0), "self_paced_reading_dashes")]
    w.autopress("read")
    p = w.pres

    def count() -> int:
        return sum(1 for e in p.events if e.name == s.advance_key and e.t * 1000.0 >= steps[0])

    for k in range(1, len(units) + 2):
        p.hold(drawer(k - 1), w.t0 + steps[-1] / 1000.0, 30 * 60 * 1000.0, stop=lambda k=k: count() >= k)
        if k <= len(units):
            steps.append(w.show(drawer(k), "self_paced_reading_word" if k == 2 else None))
    w.raw["steps"] = steps
    if ans:
        question = str(w.trial.mat.get("question") or "")
        parts = [w.text(question, y=0.15, height=PAGE_HEIGHT * 1.2)]
        _question_screen(w, parts, ans)
    else:
        p.flip()


def _question_screen(w: TaskWindow, parts: list, ans: list) -> None:
    buttons = Buttons(w.win, ans, [w.s.to_dict()["question_key_labels"][i] for i in range(len(ans))], y=-0.15)

    def draw() -> None:
        for x in parts:
            x.draw()
        buttons.draw()

    onset = w.show(draw, "self_paced_reading_question")
    w.raw["question_onset"] = onset
    w.autopress("question")
    w.wait_answer(draw, onset, ans, buttons, by_key="question_answered_by", at_key="question_answer_time")

