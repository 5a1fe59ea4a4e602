"""maze (PsychoPy): the two words side by side in two boxes (the left and right keys under them, e/i by
default; a click on a box answers too), one pair per word. Each pair's onset is the flip that shows it
(`steps`); the answers are read from the keyboard clock (reset on the trial's first flip) and the mouse's, and
read by the kind's one rule (`task.walk`, the same the page and `derive` use): after a wrong pick the sentence
ends (`error_mode: end`) or the error text shows under the pair until the right word is picked (`redo`)."""
from __future__ import annotations

from typing import Any

from kinds.api import Answer
from kinds.maze.task import FIRST_FOIL, foils, maze_responses, mode_of, walk, words_of
from participants.tasks.window import FOREVER_MS, Buttons, TaskWindow


def present(w: TaskWindow, order: list[int] | None) -> None:
    s, p = w.s, w.pres
    ex = s.extra or {}
    ws, fs = words_of(w.trial.mat), foils(w.trial.mat, ex.get("first_foil", FIRST_FOIL))
    sides, mode = list(order or []), mode_of(s)
    w.start(list(s.keys[:2]))
    labels = w.s.key_labels()[:2]
    hint = w.hint(s.hint) if s.hint else None
    err = w.text(str(ex.get("error_text") or ""), y=-0.38, height=0.04, color=(0.8, -0.6, -0.6))
    pairs = []
    for k, (word, foil) in enumerate(zip(ws, fs, strict=False)):
        left, right = (word, foil) if sides[k] == 0 else (foil, word)
        pairs.append(Buttons(w.win, [Answer("left", left, s.keys[0]), Answer("right", right, s.keys[1])], labels,
                             y=0.0, height=0.16))
    steps: list[float] = []
    state: dict[str, Any] = {"w": walk(sides, [0.0], [], mode)}

    def drawer(k: int, error: bool):
        def draw() -> None:
            pairs[k].draw()
            if error:
                err.draw()
            if hint is not None:
                hint.draw()
        return draw

    def answers() -> list:
        if s.mouse:
            w.record_click(pairs[len(steps) - 1])
        return maze_responses(s, w.presses(), w.raw["pointers"])

    if s.mouse:
        w.mouse_on()
    errors: list[float] = []
    k = 0
    while True:
        steps.append(w.show(drawer(k, False), f"maze_{k}" if k < 2 else None))
        if k == 0:
            w.autopress("read")
        shown_error = False
        while True:
            def moved(k: int = k, shown_error: bool = shown_error) -> bool:
                state["w"] = walk(sides, steps, answers(), mode)
                return state["w"]["reached"] > k or state["w"]["ended"] or \
                    (not shown_error and state["w"]["first"][k] is False)
            p.hold(drawer(k, shown_error), w.t0 + steps[-1] / 1000.0, FOREVER_MS, stop=moved)
            cur = state["w"]
            if cur["ended"] or cur["reached"] > k:
                break
            shown_error = True  # redo: the error text under the same pair until the right word is picked
            errors.append(w.show(drawer(k, True), "maze_error"))
        if state["w"]["ended"] or state["w"]["completed"]:
            break
        k += 1
    if s.mouse:
        w.win.mouseVisible = False
    w.raw["steps"] = steps
    if errors:
        w.raw["error_onsets"] = errors
    p.flip()
