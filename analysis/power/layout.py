"""`twinlab power` runs with the process's address-space layout fixed, so the same command gives the same bits.

Why: lme4's compiled code on Linux gives one of two results in the last bits of a deviance from one process to
the next, a lottery on the address-space layout (ASLR; docs/analysis/power.md); the pilot's fit and
every simulated refit move by 1e-9 to 1e-7, so two runs of one command wrote two different power_sims.csv.
Under a fixed layout (the personality flag ADDR_NO_RANDOMIZE, what `setarch -R` sets) every run gives the same
bits, whatever the folders named or the environment. The command sets the flag for itself and executes itself
again once, before anything is read or R starts; where the flag cannot be set (another system, a sandbox that
refuses the call) the run goes on as before and says so.
"""
from __future__ import annotations

import ctypes
import os
import sys

ADDR_NO_RANDOMIZE = 0x0040000  # linux/personality.h
QUERY = 0xFFFFFFFF  # personality(0xffffffff) reads the flags without changing them


def layout_fixed() -> bool:
    """Whether this process runs with the address-space layout fixed (ADDR_NO_RANDOMIZE)."""
    flags = _personality(QUERY)
    return flags is not None and bool(flags & ADDR_NO_RANDOMIZE)


def run_with_fixed_layout() -> str:
    """Execute this command again with the layout fixed, unless it already is or this process was not started to
    run it (returns ''); returns why the layout could not be fixed when it cannot (the caller says it); never
    returns after a successful exec."""
    if not started_as_power():
        return ""  # a process that embeds the command (a test's runner, a notebook) is never executed again
    if not sys.platform.startswith("linux"):
        return f"the address-space layout cannot be fixed on {sys.platform}"
    flags = _personality(QUERY)
    if flags is None:
        return "the system refused to read the process's personality"
    if flags & ADDR_NO_RANDOMIZE:
        return ""
    if _personality(flags | ADDR_NO_RANDOMIZE) is None:
        return "the system refused to fix the address-space layout (personality ADDR_NO_RANDOMIZE)"
    argv = [sys.executable, *sys.orig_argv[1:]]
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(sys.executable, argv)
    except OSError as exc:  # the flag stays set for children; this process keeps its layout
        return f"cannot execute {sys.executable} again ({exc.strerror or exc})"
    return ""  # not reached


def started_as_power() -> bool:
    """Whether this process was started to run `twinlab power` (its first argument that is not an option is
    `power`): only then is it the command's own process, which may execute itself again."""
    first = next((a for a in sys.argv[1:] if not a.startswith("-")), None)
    return first == "power"


def _personality(persona: int) -> int | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        out = int(libc.personality(ctypes.c_ulong(persona)))
    except (OSError, AttributeError):
        return None
    return None if out == -1 else out
