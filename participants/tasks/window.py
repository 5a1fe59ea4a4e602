"""The PsychoPy side of a task trial: one scaffold (fixation, screens, answers, feedback, blank) the
kinds' units (kinds/<kind>/view.py) draw into.

Times follow the violation task's rules: every onset is the timestamp `win.flip()` returns for
the frame that shows it; the keyboard clock is reset on the trial's first flip, so a press's own
timestamp is on the same axis; screens are held frame by frame (vsync) or by the clock.
Everything is reported as the runner-independent raw record (participants/tasks/logic.py) and
turned into the row by `logic.derive`, as the browser server does with the page's record.
"""
from __future__ import annotations

from typing import Any, Callable

from experiments.session import now_iso
from experiments.tasks.earned import feedback_earned
from experiments.tasks.presented import TaskSettings
from experiments.tasks.record import Answer, TaskPlan, derive, row_fields
from experiments.trials import Trial
from participants.fonts import breakable, font_of
from participants.rsvp import Presenter, TrialResult, _ms
from participants.screens import HINT_COLOR, PAGE_HEIGHT, TEXT_COLOR, WORD_HEIGHT

FOREVER_MS = 30 * 60 * 1000.0  # a participant-paced screen: held until answered
SENTENCE_HEIGHT = WORD_HEIGHT * 0.75
WRAP = 1.2


class Buttons:
    """A row of answer boxes (label inside, key under), left to right; also the mouse targets."""

    def __init__(self, win: Any, answers: list[Answer], key_labels: list[str], *, y: float = -0.2,
                 height: float = 0.14, anchors: tuple[str, str] = ("", "")):
        from psychopy import visual  # PsychoPy loads only when a window opens

        n = max(1, len(answers))
        gap = 0.03
        w = min(0.45, (1.15 - gap * (n - 1)) / n)  # the row fits a 4:3 window (1.33 wide)
        text_h = min(WORD_HEIGHT * 0.55, w * 0.35) if n > 3 else WORD_HEIGHT * 0.5
        self.boxes: list[Any] = []
        self.stims: list[Any] = []
        x0 = -(n * w + (n - 1) * gap) / 2 + w / 2
        for i, (a, kl) in enumerate(zip(answers, key_labels, strict=False)):
            x = x0 + i * (w + gap)
            box = visual.Rect(win, width=w, height=height, pos=(x, y), units="height", lineColor=TEXT_COLOR,
                              fillColor=(0.9, 0.9, 0.9), lineWidth=3)
            label = visual.TextStim(win, **font_of(win),
                                    text=breakable(win, a.label, w * 0.92, text_h), height=text_h, color=TEXT_COLOR,
                                    units="height", pos=(x, y),
                                    wrapWidth=w * 0.92, bold=len(a.label) < 20)
            self.boxes.append(box)
            self.stims += [box, label]
            if kl.lower() != a.label.lower():  # a scale point's key is its number: not shown twice
                self.stims.append(visual.TextStim(win, **font_of(win),
                                                  text=kl, height=PAGE_HEIGHT * 0.75, color=HINT_COLOR,
                                                  units="height", pos=(x, y - height / 2 - 0.04)))
        # the scale's labelled ends, under its end points and inside the row's width
        for text, x, side in ((anchors[0], x0 - w / 2, "left"), (anchors[1], -x0 + w / 2, "right")):
            if text:
                self.stims.append(visual.TextStim(win, **font_of(win),
                                                  text=text, height=PAGE_HEIGHT * 0.8, color=TEXT_COLOR,
                                                  units="height", pos=(x, y - height / 2 - 0.06), wrapWidth=0.45,
                                                  anchorHoriz=side, alignText=side))

    def draw(self) -> None:
        for s in self.stims:
            s.draw()

    def at(self, mouse: Any) -> int | None:
        for i, b in enumerate(self.boxes):
            if b.contains(mouse):
                return i
        return None


class TaskWindow:
    """One task trial in the PsychoPy window (used by the kinds' units)."""

    def __init__(self, pres: Presenter, trial: Trial, settings: TaskSettings, plan: TaskPlan | None):
        from psychopy import visual  # PsychoPy loads only when a window opens

        self.pres, self.trial, self.s, self.plan = pres, trial, settings, plan
        self.win, self.visual = pres.win, visual
        self.t0 = 0.0
        self.raw: dict[str, Any] = {"presses": [], "pointers": []}
        self.started_at = ""
        self.word_onsets: list[float] = []
        self.word_durations: list[float] = []
        self._mouse: Any = None
        self._mouse_reset_at = 0.0

    # ---- times -------------------------------------------------------------------------------
    def rel(self, stamp: float) -> float:
        return _ms(stamp - self.t0)

    def text(self, text: str, *, y: float = 0.0, height: float = SENTENCE_HEIGHT, color: Any = TEXT_COLOR,
             font: str = "", wrap: float = WRAP, align: str = "center") -> Any:
        kw: dict[str, Any] = {"font": font} if font else font_of(self.win)
        if align != "center":
            kw["alignText"] = align
        stim = self.visual.TextStim(self.win, text=breakable(self.win, text, wrap, height), height=height, color=color,
                                    units="height", pos=(0, y), wrapWidth=wrap, **kw)
        stim.draw()  # render now, not between the flips that time it
        self.win.clearBuffer()
        return stim

    def hint(self, text: str, y: float = -0.42) -> Any:
        return self.text(text, y=y, height=PAGE_HEIGHT * 0.75, color=HINT_COLOR)

    # ---- screens -----------------------------------------------------------------------------
    def start(self, keys: list[str]) -> None:
        """Fixation (the trial's zero: the keyboard clock is reset on its flip), held for fixation_ms."""
        p = self.pres
        p.poll_keys = [p.quit_key] + [k for k in dict.fromkeys(keys) if k != p.quit_key]
        p.drain()
        p.keys.reset_clock_on_flip(self.win)
        self.t0 = p.flip(p.screens.fixation.draw, shot=f"{self.s.kind}_fixation")
        self.started_at = now_iso()
        p.log("FIX_ON", self.trial, "", "+", self.t0)
        p.hold(p.screens.fixation.draw, self.t0, p.exp.timing.fixation_ms)

    def rsvp(self, words: list[str]) -> None:
        """Word by word with the spec's word_ms and gap_ms (as the violation task shows them)."""
        p, tm = self.pres, self.pres.exp.timing
        stims = p.screens.prepare_words(tuple(words))
        for _i, stim in enumerate(stims):
            on = p.flip(stim.draw)
            p.hold(stim.draw, on, tm.word_ms)
            off = p.flip()
            self.word_onsets.append(self.rel(on))
            self.word_durations.append(_ms(off - on))
            p.hold(None, off, tm.gap_ms)

    def show(self, draw: Callable[[], None], shot: str) -> float:
        """Flip a new screen; returns its onset (ms on the trial clock)."""
        return self.rel(self.pres.flip(draw, shot=shot))

    def presses(self) -> list[dict[str, Any]]:
        return [{"key": e.name, "t": _ms(e.t)} for e in self.pres.events]

    def autopress(self, phase: str) -> None:
        if self.plan is not None and self.pres.autopilot is not None:
            for delay, key in self.plan.phases.get(phase, []):
                self.pres.autopilot.press_in(delay, key)

    def mouse_on(self) -> Any:
        """Show the pointer and start counting clicks from now (a unit that takes clicks calls it once)."""
        if self._mouse is None:
            from psychopy import event  # PsychoPy loads only when a window opens

            self._mouse = event.Mouse(win=self.win)
        self.win.mouseVisible = True
        self._mouse.clickReset()
        self._mouse_reset_at = self.pres.now()
        return self._mouse

    def record_click(self, buttons: Buttons) -> None:
        """Record a click since the last one (on which of `buttons`, -1 for none) in the raw record's pointers."""
        _, times = self._mouse.getPressed(getTime=True)
        if not times[0]:
            return
        t = self._mouse_reset_at + float(times[0])
        target = buttons.at(self._mouse)
        self.raw["pointers"].append({"type": "mouse", "t": self.rel(t), "target": -1 if target is None else target})
        self._mouse.clickReset()
        self._mouse_reset_at = self.pres.now()

    def wait_answer(self, draw: Callable[[], None], onset: float, answers: list[Answer], buttons: Buttons | None,
                    by_key: str = "answered_by", at_key: str = "answer_time") -> None:
        """Hold `draw` until an answer key is pressed or an answer box clicked; records which came first."""
        p = self.pres
        keys = {a.key for a in answers}
        mouse = self.s.mouse and buttons is not None
        if mouse:
            self.mouse_on()
        found: list[tuple[float, str]] = []

        def answered() -> bool:
            if found:
                return True
            if mouse:
                self.record_click(buttons)  # type: ignore[arg-type]
                hits = [c for c in self.raw["pointers"] if c["t"] >= onset and c["target"] >= 0]
                if hits:
                    found.append((hits[0]["t"], "mouse"))
            k = next((e for e in p.events if _ms(e.t) >= onset and e.name in keys), None)
            if k is not None and (not found or _ms(k.t) <= found[0][0]):
                found[:] = [(_ms(k.t), "key:" + k.name)]
            return bool(found)

        p.hold(draw, self.t0 + onset / 1000.0, FOREVER_MS, stop=answered)
        if mouse:
            self.win.mouseVisible = False
        self.raw[by_key], self.raw[at_key] = found[0][1], found[0][0]

    def wait_presses(self, draw: Callable[[], None] | None, onset: float, key: str, count: int) -> None:
        """Hold until `count` presses of `key` since the trial's zero (self-paced reading)."""
        p = self.pres
        p.hold(draw, self.t0 + onset / 1000.0, FOREVER_MS,
               stop=lambda: sum(1 for e in p.events if e.name == key) >= count)

    def wait_key(self, draw: Callable[[], None], onset: float, names: set[str], after: float) -> Any:
        """Hold until a press of one of `names` later than `after` (ms); returns it (completion typing)."""
        p = self.pres
        got: list[Any] = []

        def stop() -> bool:
            if not got:
                got.extend(e for e in p.events if _ms(e.t) > after and e.name in names)
            return bool(got)

        p.hold(draw, self.t0 + onset / 1000.0, FOREVER_MS, stop=stop)
        return got[0]

    # ---- the end -----------------------------------------------------------------------------
    def finish(self, order: list[int] | None) -> TrialResult:
        """Derive the row's fields, show feedback if the block gives it, flip the inter-trial blank."""
        p, tm = self.pres, self.pres.exp.timing
        self.raw["presses"] = self.presses()
        fields = derive(self.trial, self.s, order, self.raw)
        extra_task = fields.pop("_extra")
        correct = fields["correct"]
        fb_on = None
        fb_text = feedback_earned(p.exp, self.trial, correct, rsvp=False)
        if fb_text is not None:
            stim = p.screens.feedback[bool(correct)]
            fb_on = p.flip(stim.draw, shot=f"{self.s.kind}_feedback")
            p.hold(stim.draw, fb_on, tm.feedback_ms)
        iti_on = p.flip()
        p.log("END_TRIAL", self.trial, "", str(fields["response"]), None)
        extra: dict[str, Any] = {"task": self.s.kind, "timing_mode": p.policy.mode, **extra_task, "raw": self.raw,
                                 "keyboard_backend": p.keys.backend, "flip_latency_ms": _ms(p.flip_latency()),
                                 "feedback_onset_ms": None if fb_on is None else self.rel(fb_on),
                                 "iti_onset_ms": self.rel(iti_on)}
        if self.plan is not None:  # the plan, and when its presses were actually sent (ms on the trial's clock)
            extra["autopilot"] = {**self.plan.to_dict(), "sent_ms": p.autopilot.sent_ms() if p.autopilot else []}
        generic = row_fields(fields)  # the generic columns and the kind's own (its declared COLUMNS)
        return TrialResult(
            response=fields["response"], correct=correct, rt_ms=fields["rt_ms"], rt_sentence_end_ms=None,
            word_onsets_ms=self.word_onsets, word_durations_ms=self.word_durations,
            feedback_shown=fb_on is not None, feedback_text=fb_text, started_at=self.started_at,
            ended_at=now_iso(), iti_onset=iti_on, extra=extra, response_mode="task", generic=generic)


def answer_screen(w: TaskWindow, parts: list[Any], answers: list[Answer], *, shot: str, y: float = -0.2,
                  height: float = 0.14, anchors: tuple[str, str] = ("", "")) -> None:
    """Judgment, choice, rating, lexical decision: `parts` (stimuli) and the answer boxes on one
    screen, held until a key or a click answers; the screen's flip is the RT's zero."""
    buttons = Buttons(w.win, answers, [w.s.key_labels()[i] if i < len(w.s.keys) else a.key
                                       for i, a in enumerate(answers)], y=y, height=height, anchors=anchors)
    hint = w.hint(w.s.hint) if w.s.hint else None

    def draw() -> None:
        for p in parts:
            p.draw()
        buttons.draw()
        if hint is not None:
            hint.draw()

    onset = w.show(draw, shot)
    w.raw["response_onset"] = onset
    w.pres.log("RESPONSE_ON", w.trial, "", "", w.t0 + onset / 1000.0)
    w.autopress("answer")
    w.wait_answer(draw, onset, answers, buttons)
