"""Open the PsychoPy window and keyboard, measure the refresh rate, decide the timing policy."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable

from participants.keys import Keys
from participants.screens import BACKGROUND
from participants.timing import RefreshMeasurement, TimingPolicy, decide_timing, measure_refresh

# Test hook: time by frames at this rate whatever the measurement says, so the frame-counting path
# (and dropped-frame counting) runs under Xvfb too. Recorded as a warning; never for real data.
FORCE_FRAMES_ENV = "TWINLAB_TEST_FORCE_FRAMES_HZ"


def forced_frames_policy(hz: float, expected: float | None) -> TimingPolicy:
    return TimingPolicy("frames", True, hz, 1000.0 / hz, expected, warnings=[
        f"TEST HOOK {FORCE_FRAMES_ENV}={hz:g}: timing by frames at an assumed {hz:g} Hz, not the measured rate; "
        "these are not valid timings"])


@dataclass
class Display:
    win: Any
    keys: Keys
    measurement: RefreshMeasurement
    policy: TimingPolicy
    info: dict[str, Any] = field(default_factory=dict)

    def close(self) -> None:
        try:
            self.keys.kb.stop()
        except Exception:
            pass
        try:
            self.win.close()
        except Exception:
            pass


def _gl_info() -> dict[str, str]:
    try:
        from pyglet import gl  # pyglet loads only when a window opens

        return {"gl_vendor": gl.gl_info.get_vendor(), "gl_renderer": gl.gl_info.get_renderer(),
                "gl_version": gl.gl_info.get_version()}
    except Exception as exc:  # pragma: no cover - depends on the GL stack
        return {"gl_info_error": str(exc)}


def open_display(cfg: Any, log: Callable[[str], None] = print) -> Display:
    """Window + keyboard + refresh measurement + policy (the caller checks `policy.refuse`)."""
    import psychopy  # PsychoPy loads only when a window opens
    from psychopy import logging  # PsychoPy loads only when a window opens

    logging.console.setLevel(logging.ERROR)  # our own warnings are clearer; PsychoPy's go to its log
    from psychopy import visual  # PsychoPy loads only when a window opens
    from psychopy.hardware import keyboard  # PsychoPy loads only when a window opens

    win = visual.Window(
        size=cfg.window_size, fullscr=cfg.fullscreen, screen=cfg.screen, units="height", color=BACKGROUND,
        colorSpace="rgb", winType="pyglet", allowGUI=not cfg.fullscreen, checkTiming=False, waitBlanking=True,
        title=f"twinlab: {cfg.spec.name}",
    )
    try:
        win.mouseVisible = False
        keys = Keys(keyboard.Keyboard())
        log("measuring the display refresh rate ...")
        measurement = measure_refresh(win)
        expected = (cfg.expected_refresh_hz if cfg.expected_refresh_hz is not None
                    else cfg.spec.timing.expected_refresh_hz)
        policy = decide_timing(measurement, expected_hz=expected, tolerance_hz=cfg.spec.timing.refresh_tolerance_hz,
                               allow_mismatch=cfg.allow_refresh_mismatch)
        forced = os.environ.get(FORCE_FRAMES_ENV)
        if forced:
            policy = forced_frames_policy(float(forced), expected)
        if policy.mode == "frames":
            win.refreshThreshold = policy.frame_ms / 1000.0 * 1.5  # a flip later than 1.5 frames = a drop
        info = {
            "psychopy": psychopy.__version__,
            "window_size": [int(x) for x in win.size],
            "fullscreen": bool(cfg.fullscreen),
            "screen": cfg.screen,
            "x_display": os.environ.get("DISPLAY"),
            "keyboard_backend": keys.backend,
            **_gl_info(),
        }
        log(f"refresh: {measurement.summary()} -> timing by {policy.mode}")
        return Display(win=win, keys=keys, measurement=measurement, policy=policy, info=info)
    except BaseException:
        win.close()
        raise
