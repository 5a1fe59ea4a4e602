"""completion (PsychoPy): the prefix, then a typed answer shown as it is typed; the submit key ends it.

Every key press (letters, space, backspace, a few marks) is kept with its own timestamp
(`keystrokes`, ms from the prompt's flip); the text is what those keys type (logic.typed_text), so
the PsychoPy and browser runners record the same text from the same keys."""
from __future__ import annotations

from experiments.tasks.record import TEXT_KEYS, typed_text
from participants.tasks.window import TaskWindow

CURSOR = "_"


def present(w: TaskWindow, order: list[int] | None) -> None:
    s = w.s
    w.start(list(TEXT_KEYS) + [s.submit_key])
    prefix = w.text(str(w.trial.mat.get("prefix") or ""), y=0.12)
    typed = w.text(CURSOR, y=-0.05)
    hint = w.hint(s.hint) if s.hint else None

    def draw() -> None:
        prefix.draw()
        typed.draw()
        if hint is not None:
            hint.draw()

    onset = w.show(draw, "completion")
    w.raw["response_onset"] = onset
    w.autopress("type")
    names = set(TEXT_KEYS) | {s.submit_key}
    keys: list[str] = []
    last, shown = onset - 0.001, onset
    while True:
        e = w.wait_key(draw, shown, names, after=last)
        last = round(e.t * 1000.0, 3)
        if e.name == s.submit_key:
            if typed_text(keys).strip():
                w.raw["submit_time"] = last
                break
            continue
        keys.append(e.name)
        typed.text = typed_text(keys) + CURSOR
        shown = w.show(draw, "completion_typing" if len(keys) == 3 else None)
    w.raw["text"] = typed_text(keys)
