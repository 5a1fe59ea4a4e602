"""The lock that keeps `timing` tests alone on several xdist workers (tests/support/xdist_exclusive.py):
a timing test waits for the running test to end, blocks the others while it runs, and is not starved by a
worker that keeps starting tests. Checked with real processes and the real flock locks."""
from __future__ import annotations

import multiprocessing as mp
import time
from pathlib import Path

from tests.support.xdist_exclusive import lock_dir, running


def _hold(folder: str, exclusive: bool, start_after: float, hold: float, log: mp.Queue, name: str) -> None:
    time.sleep(start_after)
    with running(exclusive, Path(folder)):
        log.put((name, "in", time.monotonic()))
        time.sleep(hold)
        log.put((name, "out", time.monotonic()))


def _events(tmp_path: Path, plan: list[tuple[str, bool, float, float]]) -> list[tuple[str, str]]:
    ctx = mp.get_context("fork")
    log = ctx.Queue()
    procs = [ctx.Process(target=_hold, args=(str(tmp_path), ex, after, hold, log, name))
             for name, ex, after, hold in plan]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
    got = sorted((log.get(timeout=5) for _ in range(2 * len(plan))), key=lambda e: e[2])
    return [(n, what) for n, what, _ in got]


def test_a_timing_test_runs_alone(tmp_path):
    # a shared holder runs; the exclusive one asks 0.2 s later: it starts only after the first ends, and a
    # second shared one asking meanwhile (0.4 s) waits behind it (the turnstile)
    ev = _events(tmp_path, [("other", False, 0.0, 1.0), ("timing", True, 0.2, 0.6), ("next", False, 0.4, 0.2)])
    assert ev == [("other", "in"), ("other", "out"), ("timing", "in"), ("timing", "out"), ("next", "in"),
                  ("next", "out")], ev


def test_shared_holders_run_side_by_side(tmp_path):
    ev = _events(tmp_path, [("a", False, 0.0, 0.8), ("b", False, 0.2, 0.2)])
    assert ev == [("a", "in"), ("b", "in"), ("b", "out"), ("a", "out")], ev


def test_no_lock_outside_xdist(monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    assert lock_dir() is None
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    monkeypatch.setenv("PYTEST_XDIST_TESTRUNUID", "../x")  # never a path out of the temporary folder
    assert lock_dir() is None


def test_windows_and_browsers_are_timing_unless_marked_untimed():
    """tests/conftest.py: a gui or browser test is `timing` (run alone), one marked `untimed` is not (it runs
    beside others), and the timing tests come first. Checked on the real collection of three files."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    files = ["tests/experiments/test_lists.py", "tests/reproductions/test_hu_levy_mandarin_study.py",
             "tests/participants/test_human_tasks_gui.py"]

    def collected(mark: str) -> list[str]:
        r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q",
                            "-m", mark, *files], cwd=root, capture_output=True, text=True, timeout=120,
                           env={**os.environ, "PYTEST_ADDOPTS": ""})
        return [ln for ln in r.stdout.splitlines() if "::" in ln]

    timing, every = collected("timing"), collected("long or not long")
    assert "tests/experiments/test_lists.py::test_run_human_reads_the_list_given" in every
    assert not any(t.startswith(("tests/experiments/test_lists.py",
                                 "tests/reproductions/test_hu_levy_mandarin_study.py::test_psychopy_draws",
                                 "tests/reproductions/test_hu_levy_mandarin_study.py::test_chromium_draws"))
                   for t in timing), timing
    gui_sessions = [t for t in every if "test_a_four_trial_psychopy_session_of_each_task_kind" in t]
    assert gui_sessions and set(gui_sessions) <= set(timing)
    assert every[: len(timing)] == timing  # the timing tests first, in collection order
