"""`reproduce hu-levy2023-human`: the paper's word and sentence comparisons as a `choice` study for
people, written from the release (here its format's fixture) and compiled like any design."""
from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

from experiments.design_compiler import compile_sequence
from experiments.spec import load_spec

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "hu_levy2023" / "datasets"


def twinlab(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "experiments.cli", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1"})


def test_study_holds_every_dtfit_and_blimp_item_once_as_a_two_option_choice(tmp_path):
    r = twinlab("reproduce", "hu-levy2023-human", "--data", str(DATA), "--items", "0", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr + r.stdout
    with open(DATA / "exp2" / "dtfit" / "corpus.csv", encoding="utf-8", newline="") as fh:
        n_dtfit = sum(1 for _ in csv.DictReader(fh))
    with open(DATA / "exp3" / "blimp" / "corpus.csv", encoding="utf-8", newline="") as fh:
        n_blimp = sum(1 for _ in csv.DictReader(fh))
    exp = load_spec(tmp_path / "hu_levy2023_human.yaml")
    seq = compile_sequence(exp, "P01")
    assert len(seq) == n_dtfit + n_blimp
    word = [t for t in seq if dict(t.factors)["comparison"] == "word"]
    assert len(word) == n_dtfit and all(t.task == "choice" and len(t.mat["options"]) == 2 for t in seq)
    assert all(t.mat["answer"] == t.mat["options"][0] and t.mat["prefix"] for t in word)
    again = twinlab("reproduce", "hu-levy2023-human", "--data", str(DATA), "--out", str(tmp_path))
    assert again.returncode == 2 and "--force" in again.stderr + again.stdout
