"""Keyboard input for a session, and the two ways to inject key presses for demos and tests.

Key times come from `psychopy.hardware.keyboard.Keyboard`: its clock is reset on the flip that
starts a trial (`win.callOnFlip`), so a press's `rt` plus that flip's timestamp puts the press on
the same time axis as every word onset, whichever keyboard backend (ptb, iohub, event) is active.

Injection: `XTestInjector` sends real key events through the X server (XTEST extension), so an
injected press travels the same path as a participant's (X server -> keyboard backend -> runner).
Where no X display is available, `QueueInjector` hands presses straight to `Keys` instead.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
from dataclasses import dataclass
from typing import Any, Protocol

# PsychoPy key names -> X keysym names (letters and digits are the same in both)
_X_KEYSYMS = {"space": "space", "escape": "Escape", "return": "Return", "enter": "Return",
              "left": "Left", "right": "Right", "up": "Up", "down": "Down", "tab": "Tab",
              "backspace": "BackSpace", "lshift": "Shift_L", "rshift": "Shift_R"}


@dataclass(frozen=True)
class KeyEvent:
    name: str
    t: float  # seconds on the keyboard clock (since its last reset)


class Keys:
    """The session's keyboard: polls PsychoPy's Keyboard and merges presses injected in-process."""

    def __init__(self, kb: Any):
        self.kb = kb
        self._queued: list[KeyEvent] = []
        self._seen: list[Any] = []  # recent KeyPress objects already reported

    @property
    def backend(self) -> str:
        try:
            return str(self.kb.getBackend())
        except Exception:  # pragma: no cover - older PsychoPy
            return "unknown"

    def reset_clock_on_flip(self, win: Any) -> None:
        """Reset the keyboard clock right after the next flip (the trial's zero)."""
        win.callOnFlip(self.kb.clock.reset)

    def now(self) -> float:
        return float(self.kb.clock.getTime())

    def clear(self) -> None:
        """Forget every press so far, including keys still held (their release must not count later)."""
        self.kb.clearEvents()
        still_down = getattr(getattr(self.kb, "device", None), "_keysStillDown", None)
        if still_down is not None:
            still_down.clear()
        self._queued.clear()
        self._seen.clear()

    def queue(self, name: str) -> None:
        """In-process injection (no X server): a press of `name` now."""
        self._queued.append(KeyEvent(name, self.now()))

    def poll(self, names: list[str]) -> list[KeyEvent]:
        """Presses of `names` since the last poll, oldest first (key-down times)."""
        # A press still held comes back from waitRelease=False; a quick tap already released by now
        # only from waitRelease=True. PsychoPy may hand the same press back twice (press, release),
        # hence the identity check against recent presses.
        fresh: list[Any] = []
        for wait_release in (False, True):
            for k in self.kb.getKeys(keyList=names, waitRelease=wait_release, clear=True):
                if not any(k is s for s in self._seen) and not any(k is f for f in fresh):
                    fresh.append(k)
        self._seen = (self._seen + fresh)[-64:]
        got = [KeyEvent(str(k.name), float(k.rt)) for k in fresh]
        if self._queued:
            got += [e for e in self._queued if e.name in names]
            self._queued = [e for e in self._queued if e.name not in names]
        return sorted(got, key=lambda e: e.t)


class Injector(Protocol):
    kind: str

    def press(self, name: str) -> None: ...

    def release(self, name: str) -> None: ...


class QueueInjector:
    """Presses go straight into `Keys` (used when there is no X display to send events to)."""

    kind = "in-process queue"

    def __init__(self, keys: Keys):
        self.keys = keys

    def press(self, name: str) -> None:
        self.keys.queue(name)

    def release(self, name: str) -> None:
        pass


class XTestInjector:
    """Real key events through the X server's XTEST extension (what xdotool does), via ctypes."""

    kind = "X11 XTEST"

    def __init__(self) -> None:
        if not os.environ.get("DISPLAY"):
            raise OSError("no DISPLAY")
        x11 = ctypes.cdll.LoadLibrary(ctypes.util.find_library("X11") or "libX11.so.6")
        xtst = ctypes.cdll.LoadLibrary(ctypes.util.find_library("Xtst") or "libXtst.so.6")
        x11.XOpenDisplay.restype = ctypes.c_void_p
        x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
        x11.XStringToKeysym.restype = ctypes.c_ulong
        x11.XStringToKeysym.argtypes = [ctypes.c_char_p]
        x11.XKeysymToKeycode.restype = ctypes.c_ubyte
        x11.XKeysymToKeycode.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
        x11.XFlush.argtypes = [ctypes.c_void_p]
        x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
        xtst.XTestFakeKeyEvent.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong]
        dpy = x11.XOpenDisplay(None)
        if not dpy:
            raise OSError(f"cannot open X display {os.environ.get('DISPLAY')}")
        self._x11, self._xtst, self._dpy = x11, xtst, dpy
        self._codes: dict[str, int] = {}

    def _code(self, name: str) -> int:
        if name not in self._codes:
            sym = self._x11.XStringToKeysym(_X_KEYSYMS.get(name, name).encode())
            code = self._x11.XKeysymToKeycode(self._dpy, sym) if sym else 0
            if not code:
                raise ValueError(f"no X keycode for key {name!r}")
            self._codes[name] = code
        return self._codes[name]

    def press(self, name: str) -> None:
        self._send(name, True)

    def release(self, name: str) -> None:
        self._send(name, False)

    def _send(self, name: str, down: bool) -> None:
        self._xtst.XTestFakeKeyEvent(self._dpy, self._code(name), 1 if down else 0, 0)
        self._x11.XFlush(self._dpy)

    def close(self) -> None:
        if self._dpy:
            self._x11.XCloseDisplay(self._dpy)
            self._dpy = None


def make_injector(keys: Keys) -> Injector:
    """XTEST where an X display is reachable (the real input path), else the in-process queue."""
    try:
        return XTestInjector()
    except (OSError, AttributeError):
        return QueueInjector(keys)
