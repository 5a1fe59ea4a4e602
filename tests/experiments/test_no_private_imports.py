"""No private name crosses a top-level package: a `from X import _name` whose module's top-level package is
not the importer's is refused (read from the source with ast, every import counted: at module level, inside
a function, under TYPE_CHECKING). What one package needs from another is published under a public name (a
kind's helpers: kinds/api.py)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SKIP = {".venv", ".venv-vllm", "node_modules", ".rlib", ".git"}


def python_files() -> list[Path]:
    return [p for p in ROOT.rglob("*.py") if not SKIP & set(p.relative_to(ROOT).parts)]


def package_of(path: Path) -> str:
    """The importer's top-level package: its first folder (a test module's is `tests`)."""
    return path.relative_to(ROOT).parts[0].removesuffix(".py")


def private_imports(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            top = node.module.split(".")[0]
            crosses = top != package_of(path) and not (package_of(path) == "tests" and top.startswith("test"))
            for alias in node.names:
                if crosses and alias.name.startswith("_") and not alias.name.startswith("__"):
                    out.append(f"{path.relative_to(ROOT)}:{node.lineno}: from {node.module} import {alias.name}")
    return out


def test_the_finder_finds_one(tmp_path):
    f = ROOT / "kinds" / "_probe_private_import.py"
    try:
        f.write_text("from experiments.tasks.config import _Hidden\nfrom kinds.api import TaskKind\n", encoding="utf-8")
        assert private_imports(f) == ["kinds/_probe_private_import.py:1: from experiments.tasks.config import _Hidden"]
    finally:
        f.unlink()


def test_no_private_name_crosses_a_package():
    found = [hit for p in python_files() for hit in private_imports(p)]
    assert found == [], "\n".join(found)
