"""The options only a study's data read are the study's: declared beside its report plans (`ANALYSIS_OPTIONS`,
`FOCUS_FORM` in studies/lakretz2021/__init__.py), shown under the study's heading of `analyze --help`, checked
before any work, and named nowhere in the core's `analyze`."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FLAGS = ("--training-block", "--rejected-rule", "--keep-outliers")


def analyze(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "experiments.cli", "analyze", *args], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "COLUMNS": "200", "PYTHONPATH": str(ROOT)}, timeout=300)


def test_the_study_options_are_under_the_studys_heading():
    from studies.lakretz2021 import TITLE

    out = analyze("--help").stdout
    heading = out.index(TITLE[:40])
    assert all(out.index(f) > heading for f in FLAGS)
    assert out.index("--allow-spec-versions") < heading  # the core's options come before, in their own panel
    assert "STRUCTURE:CONDITION:inner|outer" in out  # the study's form of --focus, in its help


def test_the_core_command_names_none_of_them():
    text = (ROOT / "analysis" / "cli.py").read_text(encoding="utf-8")
    assert not [f for f in FLAGS if f in text] and "STRUCTURE:CONDITION" not in text


def test_a_bad_study_option_is_refused_before_any_work(tmp_path):
    (tmp_path / "data").mkdir()
    r = analyze(str(tmp_path / "data"), "--out", str(tmp_path / "out"), "--rejected-rule", "lenient")
    assert r.returncode == 2 and "--rejected-rule must be paper or strict, not 'lenient'" in r.stderr + r.stdout
    assert not (tmp_path / "out").exists()
