"""Power by simulation from a pilot (`twinlab power`, `api.power`): the settings and their checks (`settings`),
the pilot (`pilot`), the design (`design`), the simulations in R (`sim`), the loop over sizes (`run`), power
and its interval (`stats`), the tested terms (`terms`), the analytic first pass (`analytic`), what a run
writes (`report`), one run (`main`) and the command (`cli`).

The settings' public names (PowerSettings, check_settings, PowerInputError, ...) stay importable from
`analysis.power`, read from `settings` when first asked for: importing `analysis.power.cli` (as `twinlab
--help` does) runs this file, and it must not load pandas."""
from __future__ import annotations

import importlib


def __getattr__(name: str):
    if name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module("analysis.power.settings"), name)
