"""A study is a package: the Lakretz et al. (2021) paradigm lives in studies/lakretz2021/,
found through the one registry of studies (experiments/studies.py), and no core module names it: neither an
import of the study's modules nor the literal names of its cells. What still does is listed below with the
reason, each entry a piece of the move still to do; an entry no longer needed fails the test, so the lists
only shrink. Read from the source (ast), so a late import or an import by a literal name counts."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = ("analysis", "experiments", "kinds", "model_subjects", "participants", "reproductions", "stimuli")
STUDY = "studies.lakretz2021"

# core files that still import the study, each with the reason (none left;
# a new entry needs a reason a reviewer accepts)
IMPORTS_LEFT: dict[str, str] = {}
# core files that still hold the literal name of a Lakretz cell, each with the reason
NAMES_LEFT: dict[str, str] = {}


def cell_names() -> set[str]:
    """The study's cell names, from the study itself: its structures and the long-nested conditions."""
    from studies.lakretz2021.appendix_c import LONG_NESTED_ORDER
    from studies.lakretz2021.frame import STRUCTURE_OF

    return set(STRUCTURE_OF.values()) | set(LONG_NESTED_ORDER)


def core_files() -> list[Path]:
    return sorted(f for pkg in CORE for f in (ROOT / pkg).rglob("*.py") if "node_modules" not in f.parts)


def study_imports(tree: ast.AST) -> list[str]:
    """Modules of the study imported anywhere (statements, import_module/__import__ on a literal name)."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.append(node.module or "")
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) and (
                getattr(node.func, "attr", None) == "import_module" or getattr(node.func, "id", None) == "__import__"):
            names.append(str(node.args[0].value))
    return [n for n in names if n == STUDY or n.startswith(STUDY + ".") or n == "studies"]


def named_cells(tree: ast.AST, names: set[str]) -> list[str]:
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in names]


def scan() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    names = cell_names()
    imports, literals = {}, {}
    for f in core_files():
        rel, tree = f.relative_to(ROOT).as_posix(), ast.parse(f.read_text(encoding="utf-8"))
        if found := study_imports(tree):
            imports[rel] = found
        if found := named_cells(tree, names):
            literals[rel] = found
    return imports, literals


def test_the_scan_sees_an_import_of_the_study_and_a_cell_name():
    tree = ast.parse("def f(t):\n    from studies.lakretz2021.cells import X\n"
                     "    importlib.import_module('studies.lakretz2021.report')\n    return t == 'PSP'\n")
    assert study_imports(tree) == ["studies.lakretz2021.cells", "studies.lakretz2021.report"]
    assert named_cells(tree, cell_names()) == ["PSP"]
    assert {"long_nested", "short_nested", "PSP", "SSS"} <= cell_names()


def test_no_core_module_names_the_study_beyond_the_listed_exceptions():
    imports, literals = scan()
    assert not {f: v for f, v in imports.items() if f not in IMPORTS_LEFT}, "a core module imports the study"
    assert not {f: v for f, v in literals.items() if f not in NAMES_LEFT}, "a core module names a Lakretz cell"
    assert not set(IMPORTS_LEFT) - set(imports), "an exception no longer needed: drop it from IMPORTS_LEFT"
    assert not set(NAMES_LEFT) - set(literals), "an exception no longer needed: drop it from NAMES_LEFT"


def test_the_registry_finds_the_study_and_its_importer():
    from experiments.studies import declared, study_names, study_part
    from participants.imports.registry import get_importer

    assert "lakretz2021" in study_names()
    assert study_part("lakretz2021", "no_such_part") is None
    assert study_part("lakretz2021", "importers.cli").__name__ == "studies.lakretz2021.importers.cli"
    assert declared("IMPORTERS")["lakretz2021"][0]["name"] == "lakretz2021"
    assert get_importer("lakretz2021").module == "studies.lakretz2021.importers.cli"
    assert callable(get_importer("lakretz2021").command())


def test_the_old_homes_are_gone():
    old = ["experiments/sources/lakretz_cells.py", "experiments/sources/lakretz_order.py",
           "experiments/tasks/lakretz_materials.py", "analysis/lakretz.py", "analysis/lakretz_report.py",
           "analysis/appendix_c.py", "stimuli/lakretz_text.py", "analysis/importers/lakretz2021.py"]
    assert not [p for p in old if (ROOT / p).exists()]
    assert not list((ROOT / "analysis" / "importers").glob("lakretz*.py"))
