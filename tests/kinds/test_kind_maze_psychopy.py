"""Maze in PsychoPy (run-human, a real window under Xvfb, the autopilot): in both error modes every row is the
autopilot's intended picks, read back from the presses by the kind's one rule; one reading time per word
reached; screenshots of the pair and (redo) of the error text."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from experiments.session import read_rows

pytestmark = [pytest.mark.gui, pytest.mark.slow, pytest.mark.long, pytest.mark.untimed]
ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "tests" / "support" / "maze" / "maze.yaml"


@pytest.mark.parametrize("mode", ["end", "redo"])
def test_an_autopilot_session_in_psychopy(tmp_path, mode):
    if shutil.which("xvfb-run") is None:
        pytest.skip("xvfb-run is not installed")
    data = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    data["task"]["error_mode"] = mode
    spec = tmp_path / "maze.yaml"
    spec.write_text(yaml.safe_dump(data), encoding="utf-8")
    shutil.copy(SPEC.parent / "maze_items.csv", tmp_path / "maze_items.csv")
    out, shots = tmp_path / "data", tmp_path / "shots"
    r = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1280x1024x24", sys.executable, "-m", "experiments.cli",
                        "run-human", str(spec), "--participant", "autopilot3", "--out", str(out), "--autopilot",
                        "--autopilot-accuracy", "0.4", "--screenshots", str(shots), "--allow-refresh-mismatch"],
                       cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    rows = read_rows(next(out.rglob("*_data.csv")))
    assert len(rows) == 4 and any(row["correct"] == "False" for row in rows)
    for row in rows:
        ex = json.loads(row["extra"])
        assert row["response"] == ex["autopilot"]["intended_response"]
        n = len(json.loads(row["materials"])["sentence"].split())
        rts = json.loads(row["word_rts_ms"])
        first_error = int(row["first_error"]) if row["first_error"] else None  # the kind's column
        right = json.loads(row["word_correct"])
        assert first_error == (right.index(False) if False in right else None) and len(right) == n
        reached = n if mode == "redo" or first_error is None else first_error + 1
        assert (len(rts) == n and all(x is not None and x > 0 for x in rts[:reached])
                and rts[reached:] == [None] * (n - reached))
        assert [x is not None for x in right] == [k < reached for k in range(n)]
        # the column is a count of the picks: the response's word k is the sentence's where its first pick was right
        sentence = json.loads(row["materials"])["sentence"].split()
        assert right[:reached] == [p == w for p, w in zip(row["response"].split(), sentence, strict=False)]
        if mode == "redo" and first_error is not None:
            assert ex["word_right_rts_ms"][first_error] > rts[first_error] and ex["raw"]["error_onsets"]
    names = {p.name for p in shots.rglob("*.png")}
    assert any("maze_0" in n for n in names), names
