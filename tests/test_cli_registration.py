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
                                          "participants_web": "participants.web.cli:register",
                                          "reproductions": "reproductions.cli:register"}
    commands = get_command(app).commands
    assert {"validate", "plan", "stimuli", "doctor", "analyze", "report", "import", "run-model", "sweep", "run-human",
            "reproduce", "web"} <= set(commands)
    assert {"lakretz2021", "web"} <= set(commands["import"].commands)  # two packages add to one sub-app
    assert set(commands["stimuli"].commands["import"].commands) == {"lakretz-text"}


def test_python_m_runs_the_registered_app():
    """`python -m experiments.cli` must see what the packages registered (into the module proper)."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "experiments.cli", "import", "--help"], cwd=REPO,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "lakretz2021" in r.stdout and "web" in r.stdout, r.stdout + r.stderr
