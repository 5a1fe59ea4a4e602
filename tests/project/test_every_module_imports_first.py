"""Every product module imports when it is the first of the project's modules a process imports: an import circle
that only one import order hides (module A's top imports B, whose top imports A) is found here, not by a user."""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("stimuli", "experiments", "participants", "model_subjects", "analysis", "reproductions", "kinds", "studies")


def product_modules() -> list[str]:
    out = []
    for pkg in PACKAGES:
        for f in sorted((ROOT / pkg).rglob("*.py")):
            rel = f.relative_to(ROOT).with_suffix("")
            if "node_modules" in rel.parts or rel.parts[-1] == "__main__" or "_template" in rel.parts:
                continue
            out.append(".".join(rel.parts[:-1] if rel.parts[-1] == "__init__" else rel.parts))
    return out


def _forget_project() -> None:
    for name in [m for m in sys.modules if m.split(".")[0] in PACKAGES]:
        del sys.modules[name]


def test_every_module_imports_first():
    circles = []
    kept = dict(sys.modules)
    try:
        for name in product_modules():
            _forget_project()
            try:
                importlib.import_module(name)
            except ImportError as exc:
                if "partially initialized" in str(exc) or "circular" in str(exc):
                    circles.append(f"{name}: {exc}")
            except Exception:  # noqa: BLE001 - a module that needs a display or a server: not an import circle
                pass
    finally:
        _forget_project()
        sys.modules.update(kept)
    assert not circles, "\n".join(circles)
