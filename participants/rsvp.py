"""One trial on screen: fixation, RSVP words, response window, feedback; and text pages.

Every onset is the timestamp `win.flip()` returns for the frame that shows it; a word's duration
is the time from its flip to the flip that removes it. `Presenter.hold` keeps a screen up either
for a whole number of frames (display with vsync) or until the clock says so (no vsync), polling
the keyboard and the quit key all the while.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from experiments.screen_texts import confirm_keys, page_hint
from experiments.session import now_iso
from experiments.spec import Experiment
from experiments.tasks.earned import feedback_earned, kind_of, rsvp_rules
from experiments.trials import Trial
from participants.autopilot import Autopilot
from participants.keys import KeyEvent, Keys
from participants.screens import Screens, Screenshots
from participants.timing import TimingPolicy

PAGE_MIN_S = 0.3  # a text page ignores presses this early (a key held from the previous screen)
# Clock mode waits in short sleeps and spins only for the last millisecond: on a busy machine a
# process that sleeps is woken promptly, one that spins gets preempted (measured on 2 loaded cores:
# max word-duration error 2-3 ms with these values, 5-8 ms when spinning for the last 4 ms).
SPIN_S = 0.001
SLEEP_S = 0.0005
LATENCY_WINDOW = 25  # flips in the running estimate of flip latency (clock mode)


class QuitRequested(Exception):
    """The participant or experimenter pressed the quit key and confirmed."""


class TrialInterrupted(Exception):
    """The quit prompt was declined during a trial: the trial is shown again from the start."""


@dataclass
class TrialResult:
    response: str
    correct: bool
    rt_ms: float | None
    rt_sentence_end_ms: float | None
    word_onsets_ms: list[float]
    word_durations_ms: list[float]
    feedback_shown: bool
    feedback_text: str | None
    started_at: str
    ended_at: str
    iti_onset: float  # flip time of the inter-trial blank (the session holds it)
    extra: dict[str, Any] = field(default_factory=dict)
    response_mode: str = "key"
    early_response: str | None = None  # panel mode: answer of the first press before the panel
    early_response_unit: int | None = None  # the RSVP unit on screen (or last shown) at that press
    early_response_ms: float | None = None  # that press, from the first unit's onset
    generic: dict[str, Any] = field(default_factory=dict)  # task trials: the generic columns (participants/tasks)


def _ms(x: float) -> float:
    return round(x * 1000.0, 3)


def _unit_at(onsets: list[float], t: float) -> int | None:
    """The RSVP unit on screen (or last shown) at time `t`; None before the first unit's onset."""
    return max((j for j, o in enumerate(onsets) if o <= t), default=None)


class Presenter:
    """Flips, holds and polls for one window, under one timing policy."""

    def __init__(self, win: Any, keys: Keys, policy: TimingPolicy, screens: Screens, shots: Screenshots,
                 exp: Experiment, autopilot: Autopilot | None = None):
        from psychopy import logging  # PsychoPy loads only when a window opens

        self.win, self.keys, self.policy, self.screens, self.shots = win, keys, policy, screens, shots
        self.exp = exp
        self.autopilot = autopilot
        if autopilot is not None:
            autopilot.clock = keys.now  # presses sent, on the axis of the presses recorded (the trial's zero)
        self._clock = logging.defaultClock  # the clock win.flip() timestamps are read from
        self.response_key = exp.task.response_key
        self.quit_key = exp.task.quit_key
        self.texts = screens.texts
        self.confirm_yes, self.confirm_no = confirm_keys(exp.language)  # the quit prompt's keys
        self.panel = exp.task.panel if exp.task.response == "panel" else None
        # panel key -> answer; the keys polled on every screen
        self.answer_of: dict[str, str] = {k: a for a, k in self.panel.keys.items()} if self.panel else {}
        self.poll_keys = [self.response_key, self.quit_key] + list(self.answer_of)
        self.event_log: Any = None  # participants.eventlog.EventLog, set by the session
        self._mouse: Any = None
        self._mouse_reset_at = 0.0
        self._clicks: list[tuple[float, str | None]] = []  # this panel's clicks: (time, answer box or None)
        self.quit_prompts: list[dict[str, Any]] = []
        self._events: list[KeyEvent] = []
        self._in_trial = False
        self._latencies: list[float] = []

    # ---- what the task units read (participants/tasks): public, so they never touch the state above
    @property
    def events(self) -> tuple[KeyEvent, ...]:
        """The key events polled since the last `drain` (times on the trial's keyboard clock)."""
        return tuple(self._events)

    @contextmanager
    def task_trial(self) -> Iterator[None]:
        """A task trial in progress: the quit prompt says so (in_trial) and the polled keys are restored after."""
        saved_keys = self.poll_keys
        self.drain()
        self._in_trial = True
        try:
            yield
        finally:
            self._in_trial = False
            self.poll_keys = saved_keys
            self.win.mouseVisible = False

    # ---- primitives --------------------------------------------------------------------------
    def now(self) -> float:
        return float(self._clock.getTime())

    def flip(self, draw: Callable[[], None] | None = None, shot: str | None = None) -> float:
        called = self.now()
        if draw is not None:
            draw()
        grabbed = bool(shot) and self.shots.want(shot)
        if grabbed:
            self.shots.grab(shot)  # type: ignore[arg-type]
        stamp = float(self.win.flip())
        if not grabbed:  # a screenshot is a one-off delay, not the display's latency
            self._latencies.append(stamp - called)
            del self._latencies[:-LATENCY_WINDOW]
        return stamp

    def flip_latency(self) -> float:
        """Typical time from calling flip() to its timestamp (recent median), in seconds."""
        if not self._latencies:
            return 0.0
        return sorted(self._latencies)[len(self._latencies) // 2]

    def poll(self) -> None:
        """Send due autopilot presses, collect response-key presses, handle the quit key."""
        if self.autopilot is not None:
            self.autopilot.tick()
        for e in self.keys.poll(self.poll_keys):
            if e.name == self.quit_key:
                self._quit_prompt()
            else:
                self._events.append(e)

    def hold(self, draw: Callable[[], None] | None, onset: float, ms: float,
             stop: Callable[[], bool] | None = None) -> None:
        """Keep the current screen up for `ms` after `onset` (the next flip ends it)."""
        if self.policy.mode == "frames":
            for _ in range(self.policy.frames(ms) - 1):
                self.poll()
                if stop is not None and stop():
                    return
                if draw is not None:
                    draw()
                self.win.flip()
            self.poll()
            return
        # aim the *completion* of the next flip (its timestamp) at the deadline
        deadline = onset + ms / 1000.0 - self.flip_latency()
        while True:
            self.poll()
            if stop is not None and stop():
                return
            remaining = deadline - self.now()
            if remaining <= 0:
                return
            if remaining > SPIN_S:
                time.sleep(SLEEP_S)

    def drain(self) -> None:
        """Handle a quit key pressed just now, then forget all presses (a new screen starts)."""
        self.poll()
        self.keys.clear()
        self._events = []

    # ---- quitting ----------------------------------------------------------------------------
    def _quit_prompt(self) -> None:
        """Ask for confirmation; raise QuitRequested on yes, TrialInterrupted on no mid-trial."""
        if self.autopilot is not None:
            self.autopilot.cancel()
        asked = now_iso()
        self.screens.set_page(self.texts["quit_prompt"], self.texts["quit_hint"])
        self.flip(self.screens.draw_page, shot="quit_confirm")
        answer = None
        while answer is None:  # the quit key again also means yes
            for e in self.keys.poll([self.confirm_yes, self.confirm_no, self.quit_key]):
                answer = "n" if e.name == self.confirm_no else "y"
                break
            time.sleep(0.005)
        self.quit_prompts.append({"at": asked, "answer": answer, "in_trial": self._in_trial})
        if answer == "y":
            raise QuitRequested("quit key pressed and confirmed")
        self.keys.clear()
        if self._in_trial:
            raise TrialInterrupted()

    # ---- text pages --------------------------------------------------------------------------
    def page(self, text: str, name: str | None = None, hint: str | None = None,
             timeout_s: float | None = None) -> None:
        """Show a text page until the response key is pressed (or `timeout_s` passes)."""
        if hint is None:
            hint = page_hint(text, self.texts["continue_hint"], self.texts["continue_key_label"])
        shown = None
        while True:
            if shown is None:  # (re)draw: first time, or after a declined quit prompt
                self.screens.set_page(text, hint)
                self.drain()
                if self.autopilot is not None:
                    self.autopilot.page()
                shown = self.flip(self.screens.draw_page, shot=name)
            prompts = len(self.quit_prompts)
            self.poll()
            if len(self.quit_prompts) != prompts:
                shown = None
                continue
            if self.now() - shown < PAGE_MIN_S:
                self._events = []  # a key still held from the previous screen
            elif any(e.name == self.response_key for e in self._events):
                return
            if timeout_s is not None and self.now() - shown >= timeout_s:
                return
            time.sleep(0.005)

    # ---- a trial -----------------------------------------------------------------------------
    def log(self, event: str, trial: Trial, unit: Any = "", text: str = "", t: float | None = None) -> None:
        if self.event_log is not None:
            self.event_log.write(event, trial.block, trial.trial_index, unit, text, t)

    def run_trial(self, trial: Trial) -> TrialResult:
        """Present one trial and return what happened (the caller writes the row)."""
        self.drain()  # a quit key pressed in the inter-trial interval is honoured, not lost
        self._in_trial = True
        try:
            return self._run_panel_trial(trial) if self.panel is not None else self._run_trial(trial)
        finally:
            self._in_trial = False
            self.win.recordFrameIntervals = False
            if self._mouse is not None:
                self.win.mouseVisible = False

    def _present_sentence(self, trial: Trial, stims: list, press_at: tuple[float, str | None] | None,
                          multiword_shots: bool = False) -> tuple[bool, int, float, str, list[float], list[float]]:
        """Fixation then the RSVP units, timed by the policy: the part both response modes share.

        `press_at` (seconds after the critical unit's onset, key or None for the response key) is the
        autopilot's planned press. Returns (frames mode, dropped frames so far, fixation onset t0,
        start time, unit onsets, unit offsets); the caller stops frame recording when its trial ends.
        """
        tm, sc, ci = self.exp.timing, self.screens, trial.study_record.critical_index
        frames = self.policy.mode == "frames"
        dropped_before = self.win.nDroppedFrames
        self.win.recordFrameIntervals = frames

        self.keys.reset_clock_on_flip(self.win)
        t0 = self.flip(sc.fixation.draw, shot="fixation")
        started_at = now_iso()
        self.log("FIX_ON", trial, "", "+", t0)
        self.hold(sc.fixation.draw, t0, tm.fixation_ms)
        onsets: list[float] = []
        offsets: list[float] = []
        for i, stim in enumerate(stims):
            multiword = multiword_shots and " " in trial.words[i]
            on = self.flip(stim.draw, shot="word" if i == ci else "multiword_unit" if multiword else None)
            self.log("WORD_ON", trial, i, trial.words[i], on)
            if i == ci and press_at is not None:
                self.autopilot.press_in(*press_at)  # type: ignore[union-attr]
            self.hold(stim.draw, on, tm.word_ms)
            off = self.flip()
            self.log("WORD_OFF", trial, i, "", off)
            onsets.append(on)
            offsets.append(off)
            if i < len(stims) - 1:
                self.hold(None, off, tm.gap_ms)
        return frames, dropped_before, t0, started_at, onsets, offsets

    def _start_trial(self, trial: Trial) -> list:
        """The units' stimuli, a fresh key buffer, no autopilot press left over: how both modes begin."""
        stims = self.screens.prepare_words(trial.words)
        self.drain()
        if self.autopilot is not None:
            self.autopilot.cancel()
        return stims

    def _sentence_extra(self, t0: float, onsets: list[float], offsets: list[float], crit: float) -> dict[str, Any]:
        """The extra fields on the fixation and RSVP timing: the first ones of the row in both response modes."""
        return {
            "timing_mode": self.policy.mode,
            "word_ms_planned": round(self.policy.planned_ms(self.exp.timing.word_ms), 3),
            "gap_durations_ms": [_ms(onsets[j + 1] - offsets[j]) for j in range(len(onsets) - 1)],
            "fixation_ms_measured": _ms(onsets[0] - t0),
            "critical_onset_ms": _ms(crit - t0),
            "sentence_end_ms": _ms(offsets[-1] - t0),
        }

    def _add_timing_extra(self, extra: dict[str, Any], frames: bool, dropped_before: int, plan: Any) -> None:
        """Keyboard, flip latency, dropped frames (frame-timed displays) and the autopilot's plan: the last
        extra fields of the row in both response modes."""
        extra["keyboard_backend"] = self.keys.backend
        extra["flip_latency_ms"] = _ms(self.flip_latency())
        if frames:
            extra["dropped_frames"] = int(self.win.nDroppedFrames - dropped_before)
            extra["word_frames"] = self.policy.frames(self.exp.timing.word_ms)
        if plan is not None:
            extra["autopilot"] = {**plan.to_dict(), "sent_ms": self.autopilot.sent_ms()}  # type: ignore[union-attr]

    @staticmethod
    def _word_fields(t0: float, onsets: list[float], offsets: list[float]) -> dict[str, Any]:
        """The TrialResult fields on the units' onsets and durations, the same in both response modes."""
        return {"word_onsets_ms": [_ms(o - t0) for o in onsets],
                "word_durations_ms": [_ms(off - on) for on, off in zip(onsets, offsets, strict=False)]}

    def _feedback_then_blank(self, trial: Trial, correct: bool | None,
                             log_feedback: bool = False) -> tuple[str | None, float | None, float]:
        """Feedback on `correct` (None: not answered) if the trial has it, then the inter-trial blank.

        Both response modes end a trial this way; frame recording stops before the blank's flip.
        `log_feedback` writes the panel mode's FeedbackOn/FeedbackOff events. Returns (feedback text,
        feedback onset, blank onset).
        """
        tm, sc = self.exp.timing, self.screens
        fb_on = None
        fb_text = feedback_earned(self.exp, trial, correct, rsvp=True)
        if fb_text is not None:
            stim = sc.feedback[bool(correct)] if correct is not None else sc.no_response
            fb_on = self.flip(stim.draw, shot="feedback_correct" if correct else "feedback_incorrect"
                              if correct is False else "feedback_no_response")
            if log_feedback:
                self.log("FeedbackOn", trial, "", fb_text, fb_on)
            self.hold(stim.draw, fb_on, tm.feedback_ms)
        self.win.recordFrameIntervals = False
        iti_on = self.flip()
        if log_feedback and fb_on is not None:
            self.log("FeedbackOff", trial, "", "", iti_on)
        return fb_text, fb_on, iti_on

    # ---- a key trial -------------------------------------------------------------------------
    def _key_response_window(self, t0: float, onsets: list[float],
                             sentence_end: float) -> tuple[float | None, KeyEvent | None]:
        """The gap after the last word (it belongs to the response window), then the prompt, until the
        first press in the window or `response_ms`: (prompt onset or None, the press counted or None)."""
        tm, sc = self.exp.timing, self.screens
        window_start = onsets[0] if self.exp.task.respond_during_sentence else sentence_end

        def first_valid() -> KeyEvent | None:
            for e in self._events:
                if t0 + e.t >= window_start:
                    return e
            return None

        self.hold(None, sentence_end, tm.gap_ms, stop=lambda: first_valid() is not None)
        prompt_on = None
        if first_valid() is None:
            prompt_on = self.flip(sc.prompt.draw, shot="response_prompt")
            self.hold(sc.prompt.draw, prompt_on, tm.response_ms, stop=lambda: first_valid() is not None)
        return prompt_on, first_valid()

    def _key_presses(self, t0: float, onsets: list[float], sentence_end: float,
                     press: KeyEvent | None) -> list[dict[str, Any]]:
        """Every press of a key trial: its phase, the word on screen, whether it is the one counted."""
        presses = []
        for e in self._events:
            t = t0 + e.t
            phase = "fixation" if t < onsets[0] else "sentence" if t < sentence_end else "response"
            presses.append({"key": e.name, "t_ms": _ms(e.t), "phase": phase, "word_index": _unit_at(onsets, t),
                            "counted": press is e})
        return presses

    def _run_trial(self, trial: Trial) -> TrialResult:
        """A key trial: fixation, RSVP words, the response window (a press or none), feedback, blank."""
        tm = self.exp.timing
        # the trial's kind's rules (violation detection's: kinds/violation_detection/task.py), looked up before it
        # starts
        key_response, outcome, response_times = rsvp_rules(self.exp, trial, "key_response", "outcome", "response_times")
        stims = self._start_trial(trial)
        ci = trial.study_record.critical_index
        plan = None
        if self.autopilot is not None:
            after = (len(trial.words) - ci) * (tm.word_ms + tm.gap_ms) + tm.response_ms
            plan = self.autopilot.plan(trial, after, kind_of(self.exp, trial))
        press_at = (plan.rt_ms / 1000.0, None) if plan is not None and plan.rt_ms is not None else None
        frames, dropped_before, t0, started_at, onsets, offsets = self._present_sentence(trial, stims, press_at)
        crit, sentence_end = onsets[ci], offsets[-1]
        prompt_on, press = self._key_response_window(t0, onsets, sentence_end)
        response = key_response(press is not None)
        correct = bool(outcome(trial, response))
        rts = response_times(t0 + press.t if press else None, crit, sentence_end, None, _ms)
        fb_text, fb_on, iti_on = self._feedback_then_blank(trial, correct)
        ended_at = now_iso()
        self.log("END_TRIAL", trial, "", "CORRECT" if correct else "WRONG", None)

        rel = lambda t: _ms(t - t0)  # noqa: E731
        presses = self._key_presses(t0, onsets, sentence_end, press)
        extra: dict[str, Any] = {
            **self._sentence_extra(t0, onsets, offsets, crit),
            "prompt_onset_ms": rel(prompt_on) if prompt_on is not None else None,
            "feedback_onset_ms": rel(fb_on) if fb_on is not None else None,
            "iti_onset_ms": rel(iti_on),
            "presses": presses,
            "response_phase": next((p["phase"] for p in presses if p["counted"]), None),
        }
        self._add_timing_extra(extra, frames, dropped_before, plan)
        return TrialResult(
            response=response,
            correct=correct,
            rt_ms=rts[0], rt_sentence_end_ms=rts[1],
            **self._word_fields(t0, onsets, offsets),
            feedback_shown=bool(trial.feedback),
            feedback_text=fb_text,
            started_at=started_at,
            ended_at=ended_at,
            iti_onset=iti_on,
            extra=extra,
        )

    # ---- a panel trial -----------------------------------------------------------------------
    def _mouse_click(self) -> tuple[str, float] | None:
        """(answer, time) of a left click on an answer box since the panel appeared, else None.

        A click is detected from its press time (PsychoPy records it as the press event is
        dispatched), so a quick click released before the next poll still counts. Every click,
        inside a box or not, is kept in `_clicks` for the trial's list of presses.
        """
        if self._mouse is None:
            return None
        _, times = self._mouse.getPressed(getTime=True)
        if not times[0]:
            return None
        t = self._mouse_reset_at + float(times[0])
        answer = self.screens.panel.answer_at(self._mouse)  # type: ignore[union-attr]
        self._clicks.append((t, answer))
        if answer is None:  # a click outside the boxes: wait for the next one
            self._mouse.clickReset()
            self._mouse_reset_at = self.now()
            return None
        return answer, t

    def _show_mouse(self) -> None:
        """Show the pointer for a panel answered by clicks (its Mouse is made once per window)."""
        if self._mouse is None:
            from psychopy import event  # PsychoPy loads only when a window opens

            self._mouse = event.Mouse(win=self.win)
        self.win.mouseVisible = True

    def _panel_choice(self, t0: float, panel_on: float,
                      clicked: list[tuple[str, float]]) -> tuple[str, float, str] | None:
        """The panel's answer: the first answer key pressed after the panel's onset or the first click on a
        box, whichever came first (a key on a tie): (answer, time, 'key:<name>' or 'mouse'), else None."""
        key_answer = next(((self.answer_of[e.name], t0 + e.t, e.name) for e in self._events
                           if t0 + e.t >= panel_on and e.name in self.answer_of), None)
        if key_answer is not None and (not clicked or key_answer[1] <= clicked[0][1]):
            return (key_answer[0], key_answer[1], "key:" + key_answer[2])
        if clicked:
            return (clicked[0][0], clicked[0][1], "mouse")
        return None

    def _panel_wait(self, trial: Trial, t0: float, plan: Any) -> tuple[float, tuple[str, float, str] | None]:
        """The two-option panel until an answer (key or click) or `response_ms`: (panel onset, choice)."""
        tm, sc, panel = self.exp.timing, self.screens, self.panel
        assert panel is not None and sc.panel is not None
        if panel.mouse:
            self._show_mouse()
        clicked: list[tuple[str, float]] = []
        self._clicks = []

        def answered() -> bool:
            if clicked:
                return True
            c = self._mouse_click() if panel.mouse else None
            if c is not None:
                clicked.append(c)
                return True
            return any(t0 + e.t >= panel_on and e.name in self.answer_of for e in self._events)

        panel_on = self.flip(sc.panel.draw, shot="response_panel")
        if panel.mouse:
            self._mouse.clickReset()
            self._mouse_reset_at = self.now()
        self.log("PanelOn", trial, "", "", panel_on)
        if plan is not None and plan.rt_ms is not None:
            self.autopilot.press_in(plan.rt_ms / 1000.0, panel.keys[plan.intended_response])  # type: ignore[union-attr]
        self.hold(sc.panel.draw, panel_on, tm.response_ms, stop=answered)
        answered()
        choice = self._panel_choice(t0, panel_on, clicked)
        if self._mouse is not None:
            self.win.mouseVisible = False
        return panel_on, choice

    def _panel_presses(self, trial: Trial, t0: float, onsets: list[float], sentence_end: float,
                       panel_on: float) -> tuple[list[dict[str, Any]], tuple[str, int | None, float] | None]:
        """Every press and click of a panel trial in time order, and the early response: the first answer
        key pressed during the sentence or the panel delay (answer, unit, ms from the first unit's onset).
        The presses before the panel go to the event log (KEY_PRESS)."""
        presses = []
        early = None
        for e in self._events:
            t = t0 + e.t
            phase = ("fixation" if t < onsets[0] else "sentence" if t < sentence_end else
                     "panel_delay" if t < panel_on else "panel")
            unit = _unit_at(onsets, t)
            answer = self.answer_of.get(e.name)
            presses.append({"key": e.name, "t_ms": _ms(e.t), "phase": phase, "unit": unit, "answer": answer})
            if phase in ("sentence", "panel_delay"):
                self.log("KEY_PRESS", trial, unit, (answer or e.name).upper(), t)
                if early is None and answer is not None:
                    early = (answer, unit, _ms(t - onsets[0]))
        # mouse clicks on the panel, listed as presses are ("key": "mouse"; answer None: outside the boxes)
        presses += [{"key": "mouse", "t_ms": _ms(t - t0), "phase": "panel", "unit": len(onsets) - 1,
                     "answer": answer} for t, answer in self._clicks]
        presses.sort(key=lambda p: p["t_ms"])
        return presses, early

    def _run_panel_trial(self, trial: Trial) -> TrialResult:
        """Lakretz et al. (2021): fixation, RSVP units (presses recorded as early responses), blank,
        fixation, then the two-option panel until an answer (key or click) or `response_ms`, feedback."""
        tm, sc, panel = self.exp.timing, self.screens, self.panel
        assert panel is not None and sc.panel is not None
        outcome, response_times = rsvp_rules(self.exp, trial, "outcome", "response_times")  # the trial's kind's
        stims = self._start_trial(trial)
        ci = trial.study_record.critical_index
        plan = (self.autopilot.plan_panel(trial, tm.response_ms, kind_of(self.exp, trial))
                if self.autopilot is not None else None)
        press_at = ((plan.early_ms / 1000.0, panel.keys["violation"])
                    if plan is not None and plan.early_ms is not None else None)
        frames, dropped_before, t0, started_at, onsets, offsets = self._present_sentence(
            trial, stims, press_at, multiword_shots=True)
        sentence_end = offsets[-1]
        self.hold(None, sentence_end, tm.gap_ms)
        fix2 = self.flip(sc.fixation.draw, shot="panel_fixation")
        self.log("FIX2PANEL_ON", trial, "", "+", fix2)
        self.hold(sc.fixation.draw, fix2, tm.panel_delay_ms)
        panel_on, choice = self._panel_wait(trial, t0, plan)
        response = choice[0] if choice else "none"
        correct: bool | None = outcome(trial, response, answered=choice is not None)
        rt, rt_end = response_times(choice[1] if choice else None, onsets[ci], sentence_end, panel_on, _ms)
        self.log("PanelResp", trial, "", response.upper() if choice else "", None if rt is None else rt / 1000.0)
        fb_text, fb_on, iti_on = self._feedback_then_blank(trial, correct, log_feedback=True)
        ended_at = now_iso()

        rel = lambda t: _ms(t - t0)  # noqa: E731
        presses, early = self._panel_presses(trial, t0, onsets, sentence_end, panel_on)
        self.log("END_TRIAL", trial, "", "CORRECT" if correct else "WRONG" if correct is False else "NO_RESPONSE", None)
        extra: dict[str, Any] = {
            **self._sentence_extra(t0, onsets, offsets, onsets[ci]),
            "panel_fixation_onset_ms": rel(fix2),
            "panel_onset_ms": rel(panel_on),
            "panel_delay_ms_measured": _ms(panel_on - fix2),
            "answered_by": choice[2] if choice else None,
            "feedback_onset_ms": rel(fb_on) if fb_on is not None else None,
            "iti_onset_ms": rel(iti_on),
            "presses": presses,
        }
        self._add_timing_extra(extra, frames, dropped_before, plan)
        return TrialResult(
            response=response,
            correct=correct,  # type: ignore[arg-type]
            rt_ms=rt,
            rt_sentence_end_ms=rt_end,
            **self._word_fields(t0, onsets, offsets),
            feedback_shown=bool(trial.feedback),
            feedback_text=fb_text,
            started_at=started_at,
            ended_at=ended_at,
            iti_onset=iti_on,
            extra=extra,
            response_mode="panel",
            early_response=early[0] if early else None,
            early_response_unit=early[1] if early else None,
            early_response_ms=early[2] if early else None,
        )
