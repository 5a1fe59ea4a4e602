"""The analysis package's modules import one way: no module reaches back, even lazily, into a
module that imports it. Read from the source with `ast` (function-level imports included, `if
TYPE_CHECKING:` blocks left out), so a circle cannot hide inside a function."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "analysis"


def _name(path: Path) -> str:
    """The dotted module name of a file under analysis/ (a package by its __init__'s folder)."""
    return ".".join(("analysis",) + path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


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
            out |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("analysis.")}
    return out - {_name(path)}


def graph() -> dict[str, set[str]]:
    """Every module of analysis/ and its rooms (subpackages), by dotted name, with the modules it imports."""
    mods = {_name(p): p for p in ROOT.rglob("*.py")}
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
    design, sections = g["analysis.report.design"], g["analysis.report.sections"]
    assert "analysis.pipeline" not in design and "analysis.api" not in design
    assert "analysis.pipeline" not in sections
    assert "analysis.report.plan" in g["analysis.pipeline"]  # the graph reads the rooms (not only the top)
    circles = [c for c in cycles(g) if {"analysis.api", "analysis.pipeline", "analysis.report.design",
                                        "analysis.report.sections"} & set(c)]
    assert circles == [], circles


def test_no_import_circle_in_analysis():
    assert cycles(graph()) == []


def test_the_checker_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
