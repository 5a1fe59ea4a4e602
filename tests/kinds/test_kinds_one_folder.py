"""A kind is one folder: the layers find kinds through one registry (experiments/kinds.py)
and never import a kind's module by name nor branch on a kind's name; each built-in kind's folder holds its
parts; a toy kind's folder (tests/support/kinds/) is the only thing a test adds for it. Read from the source
(ast), so a late import or an import by a literal name counts."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("analysis", "experiments", "model_subjects", "participants", "reproductions", "stimuli")
PARTS = {"__init__.py", "task.py", "view.py", "page.js", "model.py", "analysis.py", "importer.py", "README.md"}
# none: the Lakretz study's materials (which name violation detection) left the core for studies/ (a study
# stands above the kinds it uses and may name them)
ALLOWED_COMPARISONS: set[tuple[str, str]] = set()

sys.path.insert(0, str(Path(__file__).parent.parent / "support"))
from toy_kinds import installed  # noqa: E402


def builtin_kinds() -> list[str]:
    return sorted(p.name for p in (ROOT / "kinds").iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))


def layer_files() -> list[Path]:
    return sorted(f for pkg in LAYERS for f in (ROOT / pkg).rglob("*.py") if "node_modules" not in f.parts)


def imported_names(tree: ast.AST) -> list[str]:
    """Modules imported anywhere in `tree` (statements, and import_module/__import__ on a literal name)."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.append(node.module or "")
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) and (
                getattr(node.func, "attr", None) == "import_module" or getattr(node.func, "id", None) == "__import__"):
            names.append(str(node.args[0].value))
    return names


def kind_comparisons(tree: ast.AST, kinds: set[str]) -> list[tuple[int, str]]:
    """Comparisons with a kind's name (`== "judgment"`, `in ("choice", ...)`): a branch on the kind."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                values = [side] if isinstance(side, ast.Constant) else list(getattr(side, "elts", []))
                found += [(node.lineno, v.value) for v in values if isinstance(v, ast.Constant) and v.value in kinds]
    return found


def test_the_scan_sees_a_kind_import_and_a_branch_on_a_kind():
    tree = ast.parse("def f(t):\n    from kinds.judgment.task import KIND\n    "
                     "importlib.import_module('kinds.choice')\n"
                     "    return t.task == 'judgment' or t.task in ('rating', 'x')\n")
    assert imported_names(tree) == ["kinds.judgment.task", "kinds.choice"]
    assert kind_comparisons(tree, {"judgment", "rating"}) == [(4, "judgment"), (4, "rating")]


def test_no_layer_imports_a_kind_or_branches_on_a_kinds_name():
    files = layer_files()
    assert len(files) > 100  # the scan reads the real tree
    kinds = set(builtin_kinds())
    imports, branches = [], []
    for f in files:
        rel = f.relative_to(ROOT).as_posix()
        tree = ast.parse(f.read_text(encoding="utf-8"))
        imports += [f"{rel}: {n}" for n in imported_names(tree) if n == "kinds" or n.startswith("kinds.")]
        branches += [f"{rel}:{line}: {k}" for line, k in kind_comparisons(tree, kinds)
                     if (rel, k) not in ALLOWED_COMPARISONS]
    assert imports == [] and branches == []


REGISTRY_LOOKUPS = {"kind_attrs", "kind_part", "kind_file", "kind_module"}


def named_kind_lookups(tree: ast.AST, kinds: set[str]) -> list[tuple[int, str]]:
    """A layer reaching one named kind through the registry: `kind_attrs("judgment", ...)` and its siblings,
    a re-export table `{name: ("judgment", "analysis")}`, or a kind's name kept in a constant (`X = "rating"`)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name in REGISTRY_LOOKUPS and node.args[0].value in kinds:
                found.append((node.lineno, node.args[0].value))
        elif (isinstance(node, ast.Tuple) and len(node.elts) == 2
              and all(isinstance(e, ast.Constant) for e in node.elts)):
            kind, part = (e.value for e in node.elts)
            if kind in kinds and part in {"task", "view", "model", "analysis", "importer"}:
                found.append((node.lineno, kind))
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value in kinds:
            found.append((node.lineno, node.value.value))
    return found


# layer files that still reach a named kind through the registry ("kind names in core code: none"),
# each with the reason; an entry no longer needed fails the test, so the list only shrinks
NAMED_KINDS_LEFT: dict[str, str] = {}  # none left; a new entry needs a reason a reviewer accepts


def scan_named_kinds() -> dict[str, list[str]]:
    kinds, out = set(builtin_kinds()), {}
    for f in layer_files():
        tree = ast.parse(f.read_text(encoding="utf-8"))
        if found := named_kind_lookups(tree, kinds):
            out[f.relative_to(ROOT).as_posix()] = [f"{line}: {k}" for line, k in found]
    return out


def test_the_scan_sees_a_named_kind_lookup():
    tree = ast.parse("X = 'rating'\nT = {'a': ('judgment', 'analysis')}\n"
                     "def f(t):\n    return kind_attrs('choice', 'task', 'x'), kind_attrs(t.task, 'task', 'x')\n")
    assert named_kind_lookups(tree, {"rating", "judgment", "choice"}) == [(1, "rating"), (2, "judgment"), (4, "choice")]


def test_no_layer_reaches_a_named_kind_beyond_the_listed_exceptions():
    found = scan_named_kinds()
    assert not {f: v for f, v in found.items() if f not in NAMED_KINDS_LEFT}, "a layer names a kind"
    assert not set(NAMED_KINDS_LEFT) - set(found), "an exception no longer needed: drop it from NAMED_KINDS_LEFT"


def test_each_built_in_kind_is_one_folder_of_its_parts():
    from experiments.kinds import kind_names, kind_part

    names = builtin_kinds()
    assert names and set(names) <= set(kind_names())
    for name in names:
        folder = ROOT / "kinds" / name
        files = {p.name for p in folder.iterdir() if not p.name.startswith((".", "__pycache__"))}
        assert {"__init__.py", "task.py", "README.md"} <= files <= PARTS, (name, files)
        assert kind_part(name, "task").KIND.name == name
        # the subject verticals meet only below them: a kind's view never imports its model side, nor back
        for part, other in (("view.py", "model_subjects"), ("model.py", "participants")):
            if (folder / part).is_file():
                tree = ast.parse((folder / part).read_text(encoding="utf-8"))
                assert not [n for n in imported_names(tree) if n.split(".")[0] == other], (name, part)


# the kinds built in before the first kind added as one folder (maze): their listing order is fixed (the runners'
# lists, the report's sections); a kind added later takes its place by its ORDER and edits nothing here
FIRST_KINDS = ("violation_detection", "forced_choice", "judgment", "choice", "rating", "completion",
               "self_paced_reading", "lexical_decision")


def declared_order(name: str) -> tuple[float, str]:
    """(ORDER, name) as the kind's folder states it, read from its __init__.py's source (not imported)."""
    tree = ast.parse((ROOT / "kinds" / name / "__init__.py").read_text(encoding="utf-8"))
    orders = [n.value.value for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
              and any(getattr(t, "id", None) == "ORDER" for t in n.targets)]
    return (orders[0] if orders else 1000, name)


def test_the_listing_order_is_the_kinds_declared_order():
    from experiments.kinds import DEFAULT_ORDER, kind_names

    assert DEFAULT_ORDER == 1000  # declared_order's default for a folder without ORDER
    listed = [k for k in kind_names() if k in builtin_kinds()]
    assert sorted(listed) == builtin_kinds()
    assert listed == sorted(listed, key=declared_order)
    assert [k for k in listed if k in FIRST_KINDS] == list(FIRST_KINDS)


def test_a_toy_kind_is_its_folder_and_nothing_else(tmp_path):
    """Installing the toy (its folder on the path and its entry point, as a package's metadata) adds exactly
    that kind to every layer's view of the registry; no product file names it."""
    from analysis.kind_sections import analysis_kinds
    from experiments.kinds import kind_names
    from experiments.tasks import registry
    from model_subjects.tasks.registry import model_kinds

    before = kind_names()
    toy_files = {p.name for p in (ROOT / "tests" / "support" / "kinds" / "colour_toy_b").iterdir()
                 if p.suffix == ".py"}
    assert toy_files == {"__init__.py", "task.py", "model.py", "analysis.py"}
    with installed("colour_toy_b", tmp_path):
        assert set(kind_names()) - set(before) == {"colour_toy_b"} and set(before) <= set(kind_names())
        assert "colour_toy_b" in registry() and "colour_toy_b" in model_kinds() and "colour_toy_b" in analysis_kinds()
    assert kind_names() == before
    assert not [f for f in layer_files() + sorted((ROOT / "kinds").rglob("*.py"))
                if "colour_toy" in f.read_text(encoding="utf-8")]
