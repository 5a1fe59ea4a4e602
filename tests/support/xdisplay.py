"""A private virtual X display (Xvfb) for one test process.

Why: `scripts/test.sh` runs the default and long passes on two pytest-xdist workers; PsychoPy windows and
xdotool key presses of two workers on one display would find (and focus) each other's windows. Each worker
starts its own Xvfb (`-displayfd` lets the server pick a free number: no lock-file race as with
`xvfb-run -a`) and every window and subprocess of that worker uses it.
"""
from __future__ import annotations

import atexit
import os
import select
import shutil
import subprocess
import time

SCREEN = "1280x1024x24"


def start_display(timeout_s: float = 20.0) -> tuple[str, subprocess.Popen] | None:
    """Start Xvfb on a free display; returns (":N", the server process), or None where Xvfb is absent or
    did not start in time."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        return None
    r, w = os.pipe()
    proc = subprocess.Popen([xvfb, "-displayfd", str(w), "-screen", "0", SCREEN, "-nolisten", "tcp"],
                            pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(w)
    buf, t0 = b"", time.monotonic()
    while b"\n" not in buf and time.monotonic() - t0 < timeout_s and proc.poll() is None:
        ready, _, _ = select.select([r], [], [], 0.2)
        if ready:
            buf += os.read(r, 64)
    os.close(r)
    if b"\n" not in buf:
        proc.kill()
        return None
    return ":" + buf.decode().strip(), proc


def stop_display(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:  # pragma: no cover - Xvfb ends on SIGTERM
        proc.kill()


def use_own_display_in_xdist_worker() -> str | None:
    """In a pytest-xdist worker: start a private display and point DISPLAY (inherited by every subprocess)
    at it, for the worker's life. Outside a worker: nothing (the pass runs under xvfb-run)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return None
    started = start_display()
    if started is None:
        return None  # no Xvfb: the GUI tests skip or fail, saying so, as without xdist
    display, proc = started
    os.environ["DISPLAY"] = display
    os.environ.pop("XAUTHORITY", None)  # xvfb-run's cookie is for its own display, not this one
    atexit.register(stop_display, proc)
    return display
