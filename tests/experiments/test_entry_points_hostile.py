"""Third parties' kinds and studies from entry points: one that is broken, takes a built-in's name or declares a
core column is refused by name (a warning line naming the entry point and why), never replaces a built-in, and
never stops the built-ins' commands (`--help`, `validate` of a bundled spec) with a traceback.

The packages are installed as a real distribution would be: a `*.dist-info` folder with its entry_points.txt on
the path of a child process (PYTHONPATH), beside the packages it names."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.cli_refusal import ROOT, twinlab

ENTRY_POINTS = """[twinlab.kinds]
broken_kind = broken_kind_pkg
maze = evil_maze_pkg
core_column_kind = core_column_pkg
spaced_kind = ok_kind_pkg

[twinlab.studies]
broken_study = broken_study_pkg
lakretz2021 = evil_study_pkg
layout_study = layout_study_pkg
"""
PACKAGES = {
    "broken_kind_pkg": 'raise ImportError("broken on purpose")\n',
    "evil_maze_pkg": "ORDER = -1\n",
    "core_column_pkg": 'COLUMNS = (("subject_id", "string", "mine now"),)\n',
    "ok_kind_pkg": "ORDER = 'first'\n",
    "broken_study_pkg": "import twinlab_no_such_module_here\n",
    "evil_study_pkg": "IMPORTERS = {}\n",
    "layout_study_pkg": 'TABLE = "columns"\n',
    "layout_study_pkg/columns": 'HEADER = ("subject_id",)\nCOLUMNS = ()\n',
}
WHY = {
    "broken_kind = broken_kind_pkg": "fails to import (ImportError: broken on purpose)",
    "maze = evil_maze_pkg": "it takes the built-in task kind 'maze' (kinds.maze), which is kept",
    "core_column_kind = core_column_pkg": "column 'subject_id' is declared by the core",
    "spaced_kind = ok_kind_pkg": "its ORDER must be a number",
    "broken_study = broken_study_pkg": "fails to import (ModuleNotFoundError",
    "lakretz2021 = evil_study_pkg": "it takes the built-in study 'lakretz2021'",
    "layout_study = layout_study_pkg": "declares a trial-table layout (HEADER); a built-in study's layout is kept",
}


def _site(tmp: Path) -> str:
    site = tmp / "site"
    meta = site / "hostile_extras-0.1.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: hostile-extras\nVersion: 0.1\n", encoding="utf-8")
    (meta / "entry_points.txt").write_text(ENTRY_POINTS, encoding="utf-8")
    for name, body in PACKAGES.items():
        package, _, module = name.partition("/")
        (site / package).mkdir(exist_ok=True)
        (site / package / f"{module or '__init__'}.py").write_text(body, encoding="utf-8")
    return f"{ROOT}{os.pathsep}{site}"


def test_hostile_entry_points_are_refused_by_name_and_builtins_keep_working(tmp_path):
    env = {"PYTHONPATH": _site(tmp_path)}
    for args in (["--help"], ["validate", "lakretz2021_demo"]):
        r = twinlab(*args, env=env, timeout=120)
        both = r.stdout + r.stderr
        assert r.returncode == 0 and "Traceback" not in both, both
        warned = [ln for ln in r.stderr.splitlines() if ln.startswith("warning: twinlab.")]
        for ep, why in WHY.items():
            line = next((ln for ln in warned if f"entry point '{ep}' refused: " in ln), None)
            assert line is not None and why in line, (ep, r.stderr)
    probe = ("from experiments.kinds import kind_module, kind_names; from experiments.studies import study_module;"
             "print(kind_module('maze').__name__, study_module('lakretz2021').__name__,"
             "[n for n in kind_names() if n.endswith('_kind')])")
    r = subprocess.run([sys.executable, "-c", probe], env={**os.environ, **env}, capture_output=True, text=True,
                       timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["kinds.maze", "studies.lakretz2021", "[]"], r.stdout
