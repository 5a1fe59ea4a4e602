"""Fixtures shared by several test files."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def r_ready():
    """R with lme4 started once per module (skipped, saying why, where R cannot start)."""
    from analysis import mixed as m

    try:
        m._r()
    except m.MixedModelError as exc:  # pragma: no cover - the set-up installs R
        pytest.skip(str(exc))
