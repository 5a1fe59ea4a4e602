"""Tests that measure the clock run alone, even on several pytest-xdist workers.

Why: the default and long passes run on two workers (scripts/test.sh); a test marked `timing` checks frame,
onset or response-time precision, which another worker's R fit or model run beside it would spoil (one of
the 2 cores taken away mid-session). Every test holds a shared lock while it runs (set-up, call and
tear-down: module fixtures started for it included); a `timing` test holds it exclusively, so it starts only
when the other worker's test is done, and that worker waits until it ends. A turnstile lock in front gives a
waiting `timing` test its turn (without it, the other worker could take the shared lock again and again).
flock(2) locks: the kernel drops them when a worker dies.
"""
from __future__ import annotations

import fcntl
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


def lock_dir() -> Path | None:
    """One folder per xdist run, shared by its workers; None outside xdist (nothing to share the CPU with)."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not os.environ.get("PYTEST_XDIST_WORKER") or not run or not run.isalnum():
        return None
    d = Path(tempfile.gettempdir()) / f"twinlab-xdist-{run}"
    d.mkdir(exist_ok=True)
    return d


@contextmanager
def running(exclusive: bool, folder: Path | None) -> Iterator[None]:
    """Hold the run's lock while one test runs: exclusively for a timing test, shared for any other."""
    if folder is None:
        yield
        return
    with open(folder / "turnstile", "a+b") as turnstile, open(folder / "cpu", "a+b") as cpu:
        fcntl.flock(turnstile, fcntl.LOCK_EX)  # wait behind a timing test that is waiting for its turn
        try:
            fcntl.flock(cpu, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        finally:
            fcntl.flock(turnstile, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(cpu, fcntl.LOCK_UN)
