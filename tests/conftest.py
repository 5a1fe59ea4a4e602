"""Fixtures shared by several test files."""
from __future__ import annotations

import pytest

from tests.support.xdisplay import use_own_display_in_xdist_worker
from tests.support.xdist_exclusive import lock_dir, running

use_own_display_in_xdist_worker()  # before any test imports PsychoPy/pyglet, which read DISPLAY
_LOCKS = lock_dir()


def pytest_collection_modifyitems(config, items):
    """Every window and browser session runs on the clock (frames, onsets, key and click times): `timing`,
    unless marked `untimed` (an autopilot session or a look at what is drawn: nothing in it waits on a deadline).
    The timing tests go first (a stable sort: the same order on every xdist worker): on two workers they run
    one after the other at the start of the pass, then the rest runs side by side; a timing test queued
    behind a long CPU-bound one (a real-release refit) would leave the other worker idle while it waits."""
    for item in items:
        if (item.get_closest_marker("gui") or item.get_closest_marker("browser")) \
                and not item.get_closest_marker("untimed"):
            item.add_marker(pytest.mark.timing)
    items.sort(key=lambda item: item.get_closest_marker("timing") is None)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """A test marked `timing` runs with no other worker's test beside it (tests/support/xdist_exclusive.py)."""
    with running(item.get_closest_marker("timing") is not None, _LOCKS):
        return (yield)


@pytest.fixture(scope="module")
def r_ready():
    """R with lme4 started once per module (skipped, saying why, where R cannot start)."""
    from analysis.stats import mixed as m

    try:
        m.r_fitter()
    except m.MixedModelError as exc:  # pragma: no cover - the set-up installs R
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def bundled_backend():
    """The bundled model (SmolLM2-135M-Instruct, transformers, CPU), loaded once per test session."""
    from model_subjects.backends.base import ModelLoadError
    from model_subjects.backends.registry import load_backend

    try:
        return load_backend(None, threads=1)
    except ModelLoadError as exc:  # pragma: no cover - the set-up installs it
        pytest.skip(str(exc))
