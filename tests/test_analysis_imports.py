"""The analysis package's modules import one way (issue 31.7): no module reaches back, even lazily, into a
module that imports it. Read from the source with `ast` (function-level imports included, `if
TYPE_CHECKING:` blocks left out), so a circle cannot hide inside a function."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "analysis"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for b in node.body for n in ast.walk(b)}
    out = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("analysis"):
            if node.module == "analysis":
                out |= {a.name for a in node.names}
            else:
                out.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            out |= {a.name.split(".")[1] for a in node.names if a.name.startswith("analysis.")}
    return out - {path.stem}


def graph() -> dict[str, set[str]]:
    mods = {p.stem: p for p in ROOT.glob("*.py") if p.stem != "__init__"}
    return {m: {d for d in _imports(p) if d in mods} for m, p in mods.items()}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    found, state, stack = [], {}, []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in sorted(g[m]):
            if state.get(d) == 1:
                found.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(g):
        if m not in state:
            visit(m)
    return found


def test_the_report_modules_form_no_circle():
    g = graph()
    assert "pipeline" not in g["design_report"] and "api" not in g["design_report"]
    assert "pipeline" not in g["sections"]
    circles = [c for c in cycles(g) if {"api", "pipeline", "design_report", "sections"} & set(c)]
    assert circles == [], circles


def test_no_import_circle_in_analysis():
    assert cycles(graph()) == []


def test_the_checker_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
