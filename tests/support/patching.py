"""Replace a function wherever the project bound it: its module and every module that imported it by name.

Why: modules import what they use at their top (`from experiments.design_compiler import compile_sequence`), so
patching the defining module alone leaves the callers' own names pointing at the original."""
from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

import pytest

PROJECT = ("stimuli", "experiments", "participants", "model_subjects", "analysis", "reproductions", "kinds", "studies")


def patch_everywhere(monkeypatch: pytest.MonkeyPatch, module: ModuleType, name: str, replacement: Any) -> int:
    """Set `name` to `replacement` in `module` and in every loaded project module bound to the same object;
    returns how many modules were patched."""
    real = getattr(module, name)
    patched = 0
    for mod_name, mod in list(sys.modules.items()):
        if mod is not None and mod_name.split(".")[0] in PROJECT and getattr(mod, name, None) is real:
            monkeypatch.setattr(mod, name, replacement)
            patched += 1
    return patched
