"""The shape rules of the code (the lab's style): no function over 80 lines in the product, and in analysis/ an
import inside a function only with its reason in one line (a comment on it, on the line above, or on the first
import of the group it belongs to: "analysis/ gets rooms"). Read from the source (ast)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("analysis", "experiments", "kinds", "model_subjects", "participants", "reproductions", "stimuli",
           "studies", "scripts", "benchmarks")
MAX_LINES = 80


def python_files(packages: tuple[str, ...]) -> list[Path]:
    return sorted(f for pkg in packages for f in (ROOT / pkg).rglob("*.py") if "node_modules" not in f.parts)


def long_functions(tree: ast.AST, limit: int = MAX_LINES) -> list[tuple[str, int]]:
    """(name, lines) of every function whose body is longer than `limit` lines: decorators and the signature left
    out (a command's signature is its declared options, typer's form, data rather than steps)."""
    return [(n.name, size) for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and (size := n.end_lineno - n.body[0].lineno + 1) > limit]


def unexplained_late_imports(source: str) -> list[int]:
    """Lines of imports inside functions with no reason: no comment on the statement, on the line above, or on
    the import that opens its group (consecutive imports share the reason of the first)."""
    lines, found = source.splitlines(), []
    for fn in ast.walk(ast.parse(source)):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        explained = False
        for node in ast.walk(fn):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            own = "#" in "".join(lines[node.lineno - 1:node.end_lineno])
            above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
            follows_import = above.startswith(("from ", "import ")) or above.endswith(")")
            explained = own or above.startswith("#") or (follows_import and explained)
            if not explained:
                found.append(node.lineno)
    return found


def test_the_scans_see_what_they_look_for():
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES + 1))
    assert long_functions(ast.parse(f"def f(\n    a=1,\n    b=2,\n):\n{body}\n")) == [("f", MAX_LINES + 1)]
    assert long_functions(ast.parse(f"def f(\n    a=1,\n    b=2,\n):\n{body[body.index(chr(10)) + 1:]}\n")) == []
    src = ("def f():\n    import torch  # late: heavy\n    import numpy\n\n    x = 1\n    import pandas\n"
           "def g():\n    # late: R starts slowly\n    from rpy2 import robjects\n")
    assert unexplained_late_imports(src) == [6]


def test_no_function_over_80_lines():
    found = {f.relative_to(ROOT).as_posix(): long for f in python_files(PRODUCT)
             if (long := long_functions(ast.parse(f.read_text(encoding="utf-8"))))}
    assert not found


def test_every_late_import_in_analysis_says_why():
    found = {f.relative_to(ROOT).as_posix(): lines for f in python_files(("analysis",))
             if (lines := unexplained_late_imports(f.read_text(encoding="utf-8")))}
    assert not found
