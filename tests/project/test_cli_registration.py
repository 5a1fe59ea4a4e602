"""Each vertical registers its own `twinlab` commands; the ground floor names none of them."""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
UPPER = ("analysis", "participants", "model_subjects", "reproductions", "kinds")


def test_experiments_imports_no_package_above_it():
    for path in (REPO / "experiments").rglob("*.py"):  # experiments/tasks/ too (presented.py, earned.py)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for n in names:
                assert n.split(".")[0] not in UPPER, f"{path.name} imports {n}"


def imported_names(source: str) -> list[str]:
    """Every module a source imports: import statements anywhere (module level, inside functions, under
    TYPE_CHECKING) and importlib.import_module / __import__ calls on a literal or f-string name."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.append(node.module or "")
        elif isinstance(node, ast.Call) and node.args and (
                getattr(node.func, "attr", None) == "import_module" or getattr(node.func, "id", None) == "__import__"):
            arg = node.args[0]
            if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
                arg = arg.values[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                names.append(arg.value)
    return names


def test_imported_names_sees_a_late_import_and_an_import_by_name():
    src = ("import os\ndef f():\n    from participants.tasks import settings_for\n"
           "    importlib.import_module(f'model_subjects.{x}')\n    from . import sibling\n")
    assert imported_names(src) == ["os", "participants.tasks", "model_subjects."]


def test_participants_and_model_subjects_never_import_each_other():
    """DESIGN.md: the two subject verticals share only what is below them (experiments, stimuli); a rule both
    need (what a trial presents, what an answer earned) lives in experiments. Every module of each, every
    import in it, however late."""
    for pkg, other in (("participants", "model_subjects"), ("model_subjects", "participants")):
        files = sorted((REPO / pkg).rglob("*.py"))
        assert len(files) > 10, f"{pkg}: no modules found"
        for path in files:
            for n in imported_names(path.read_text(encoding="utf-8")):
                assert n.split(".")[0] != other, f"{path.relative_to(REPO)} imports {n}"


def test_every_vertical_declares_its_commands():
    from typer.main import get_command

    from experiments.cli import app
    from experiments.commands import command_packages

    assert dict(command_packages()) == {"analysis": "analysis", "model_subjects": "model_subjects",
                                        "participants": "participants", "participants_web": "participants.web",
                                        "reproductions": "reproductions"}
    commands = get_command(app).commands
    assert {"validate", "plan", "new", "stimuli", "doctor", "analyze", "report", "power", "import", "run-model",
            "sweep", "context", "people-jsonl", "run-human", "reproduce", "web"} <= set(commands)
    imports = commands["import"].real()
    assert {"lakretz2021", "web", "psychopy", "jspsych", "pcibex", "table"} <= set(imports.commands)
    assert set(commands["stimuli"].commands["import"].commands) == {"lakretz-text"}


def test_each_listing_says_what_the_command_itself_says():
    """A command is listed from its declaration without importing it: the declared line is the first paragraph of
    the command's own help, for every command of every group (a changed docstring must change its declaration)."""
    from experiments.commands import built_command, declared_commands, listing_help

    for decl in declared_commands():
        assert decl.help == listing_help(built_command(decl)), f"{decl.owner}: {decl.group} {decl.name}"


HEAVY = ("pandas", "numpy", "scipy", "matplotlib", "torch", "transformers", "rpy2", "psychopy", "vllm", "llama_cpp",
         "playwright")


def test_the_listing_imports_no_command_module():
    """`twinlab --help` reads the declarations only: no command's module, nothing heavy (the packages' light
    `__init__`s hold the declarations)."""
    import subprocess
    import sys

    from experiments.commands import declared_commands

    code = ("import sys\nfrom typer.testing import CliRunner\nfrom experiments.cli import app\n"
            "r = CliRunner().invoke(app, ['--help'])\nassert r.exit_code == 0, r.output\n"
            "print(' '.join(sorted(sys.modules)))")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    loaded = set(r.stdout.split())
    assert not {m for m in loaded if m.split(".")[0] in HEAVY}
    assert not loaded & {d.module for d in declared_commands()}


def test_python_m_runs_the_registered_app():
    """`python -m experiments.cli` must see what the packages registered (into the module proper)."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "experiments.cli", "import", "--help"], cwd=REPO,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "lakretz2021" in r.stdout and "web" in r.stdout, r.stdout + r.stderr
