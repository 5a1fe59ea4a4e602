"""Maze for models with the bundled model (run-model, the real runner): the choice at each word is the direct
comparison log P(word | prefix) against log P(distractor | prefix) computed here by the backend itself; the
surprisal is -log2 P(word | prefix); `end` mode stops asking at the first error; a running context works and
shows the picks."""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from experiments.session import read_rows

pytestmark = [pytest.mark.model, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "tests" / "support" / "maze" / "maze.yaml"


def run_model(tmp: Path, *extra: str, mode: str = "end", feedback: bool = False) -> list[dict]:
    spec = tmp / "maze.yaml"
    data = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    data["task"]["error_mode"] = mode
    data["blocks"][0]["feedback"] = feedback
    spec.write_text(yaml.safe_dump(data), encoding="utf-8")
    shutil.copy(SPEC.parent / "maze_items.csv", tmp / "maze_items.csv")
    r = subprocess.run([sys.executable, "-m", "experiments.cli", "run-model", str(spec), "-n", "1", "--out",
                        str(tmp / "out"), *extra], cwd=ROOT, capture_output=True, text=True, timeout=600,
                       env={**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    return read_rows(next((tmp / "out").rglob("*_data.csv")))


@pytest.fixture(scope="module")
def backend():
    from model_subjects.backends.registry import load_backend

    return load_backend(None)


def direct(backend, context: str, conts: list[str]) -> list[float]:
    from model_subjects.requests import LoglikelihoodRequest

    return [r.logprob for r in backend.loglikelihood([LoglikelihoodRequest(context, c) for c in conts])]


@pytest.mark.parametrize("mode", ["end", "redo"])
def test_the_choice_is_the_direct_comparison_of_log_probabilities(backend, tmp_path, mode):
    from kinds.maze.task import distractors

    rows = run_model(tmp_path, mode=mode)
    assert rows and all(r["protocol"] == "maze:choice" for r in rows)
    checked = 0
    for r in rows:
        mat = json.loads(r["materials"])
        ws, ds = mat["sentence"].split(), distractors(mat)
        ex = json.loads(r["extra"])
        bits = json.loads(r["word_surprisal_bits"])
        picks = r["response"].split()
        right = json.loads(r["word_correct"])  # the kind's column (not `extra`)
        first_error = int(r["first_error"]) if r["first_error"] else None
        assert "word_correct" not in ex and "first_error" not in ex and len(right) == len(ws)
        assert first_error == (right.index(False) if False in right else None)
        for k in range(1, len(ws)):
            lw, ld = direct(backend, " ".join(ws[:k]), [" " + ws[k], " " + ds[k - 1]])
            assert bits[k] == pytest.approx(-lw / math.log(2), abs=2e-3)
            asked = mode == "redo" or first_error is None or k <= first_error
            if not asked:  # end mode: the words after the first error are not asked
                assert ex["word_margins"][k] is None and right[k] is None and len(picks) == first_error + 1
                continue
            assert ex["word_margins"][k] == pytest.approx(lw - ld, abs=2e-3)
            assert right[k] == (lw >= ld) and picks[k] == (ws[k] if lw >= ld else ds[k - 1])
            checked += 1
        assert (r["correct"] == "True") == (first_error is None)
    assert checked >= 20


def test_a_running_context_shows_the_picks(tmp_path):
    rows = run_model(tmp_path, "--context", "running")
    assert [r["context_mode"] for r in rows] == ["running"] * len(rows)
    chars = [json.loads(r["extra"])["context_chars"] for r in rows]
    assert chars == sorted(chars) and chars[-1] > chars[0]  # each finished trial adds its picks to the history
    from experiments.spec import load_spec
    from model_subjects.context import parse_context, rebuild_contexts, sha256

    texts = rebuild_contexts(load_spec(tmp_path / "maze.yaml"), rows, parse_context("running"), "maze:choice")
    assert [sha256(t) for t in texts] == [json.loads(r["extra"])["context_sha256"] for r in rows]
    for k in range(1, len(rows)):  # the picks of every earlier trial, each on its own line
        assert all(r["response"] + "\n" in texts[k] for r in rows[:k]), texts[k]


def test_the_learning_sections_take_a_maze_design_with_feedback(tmp_path):
    """The report's learning sections read the generic columns: a maze design with feedback gets them, beside
    the kind's own section, found through the registry."""
    run_model(tmp_path, "--context", "running", feedback=True)
    r = subprocess.run([sys.executable, "-m", "experiments.cli", "analyze", str(tmp_path / "out" / "data"), "--out",
                        str(tmp_path / "res"), "--no-mixed", "--n-boot", "20"], cwd=ROOT, capture_output=True,
                       text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stdout + r.stderr
    ids = [s["id"] for s in json.loads((tmp_path / "res" / "results.json").read_text(encoding="utf-8"))["sections"]]
    assert {"task_maze", "learning_first_encounter", "learning_curves"} <= set(ids), ids
