"""Each vertical registers its own `twinlab` commands; the ground floor names none of them."""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
UPPER = ("analysis", "participants", "model_subjects", "reproductions")


def test_experiments_imports_no_package_above_it():
    for path in (REPO / "experiments").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for n in names:
                assert n.split(".")[0] not in UPPER, f"{path.name} imports {n}"


def test_every_vertical_registers_its_commands():
    from typer.main import get_command

    from experiments.cli import app, command_registrars

    assert dict(command_registrars()) == {"analysis": "analysis.cli:register",
                                          "model_subjects": "model_subjects.cli:register",
                                          "participants": "participants.cli:register",
                                          "reproductions": "reproductions.cli:register"}
    commands = set(get_command(app).commands)
    assert {"validate", "plan", "stimuli", "doctor", "analyze", "report", "import", "run-model", "sweep", "run-human",
            "reproduce"} <= commands
