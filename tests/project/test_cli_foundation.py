"""CLI smoke tests: validate, plan, stimuli generate/prompts, clean errors without tracebacks."""
from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
from typer.testing import CliRunner

from experiments.cli import app

runner = CliRunner()


def test_validate_bundled_spec():
    r = runner.invoke(app, ["validate", "lakretz2021_nested"])
    assert r.exit_code == 0, r.output
    assert "OK lakretz2021_nested spec_hash=" in r.output


def test_validate_broken_spec_exits_2_with_message(tmp_path):
    p = tmp_path / "b.yaml"
    p.write_text("name: x\nblocks: []\ntexts: {instructions: [hi]}\n")
    r = runner.invoke(app, ["validate", str(p)])
    assert r.exit_code == 2
    assert "blocks" in r.output and "Traceback" not in r.output


def test_plan_writes_csv_and_json_with_hash(tmp_path):
    r = runner.invoke(app, ["plan", "lakretz2021_nested", "--subject", "S03", "--out", str(tmp_path / "p.csv")])
    assert r.exit_code == 0, r.output
    df = pd.read_csv(tmp_path / "p.csv")
    assert len(df) == 184 and df["sequence_hash"].nunique() == 1
    r2 = runner.invoke(app, ["plan", "lakretz2021_nested", "--subject", "S03", "--out", str(tmp_path / "p.json")])
    body = json.loads((tmp_path / "p.json").read_text())
    assert len(body["trials"]) == 184
    assert f"sequence_hash={df['sequence_hash'][0]}" in r2.output


def test_stimuli_generate_and_prompts(tmp_path):
    out = tmp_path / "items.csv"
    r = runner.invoke(app, ["stimuli", "generate", "--out", str(out), "--per-condition", "3",
                            "--structure", "long_nested", "--structure", "short_nested"])
    assert r.exit_code == 0, r.output
    assert len(pd.read_csv(out)) == 3 * 8 + 3 * 4
    r = runner.invoke(app, ["stimuli", "generate", "--out", str(out), "--structure", "nope"])
    assert r.exit_code == 2 and "unknown structure" in r.output
    r = runner.invoke(app, ["stimuli", "prompts", "eightshot_a"])
    assert r.output.count("\n") == 8 and "The dogs eat meat." in r.output


def test_console_script_is_installed():
    exe = subprocess.run([sys.executable, "-m", "experiments.cli", "--help"], capture_output=True, text=True)
    assert exe.returncode == 0 and "plan" in exe.stdout
