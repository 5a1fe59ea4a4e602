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


@pytest.fixture(scope="session")
def bundled_backend():
    """The bundled model (SmolLM2-135M-Instruct, transformers, CPU), loaded once per test session."""
    from model_subjects.backend import ModelLoadError
    from model_subjects.registry import load_backend

    try:
        return load_backend(None, threads=1)
    except ModelLoadError as exc:  # pragma: no cover - the set-up installs it
        pytest.skip(str(exc))
