"""Every bundled example of a general design, end to end through the real commands: validate, plan
(the compiler's lists), a model subject (its task's default protocol) and `analyze` (its task's tables).
Catches what a unit test of one part cannot: a command that does not pass the spec's task through."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = {  # spec -> task kind
    "agreement_attraction": "violation_detection", "acceptability_yesno": "judgment",
    "minimal_pairs_2afc": "choice", "acceptability_rating": "rating", "cloze": "completion",
    "self_paced_reading": "self_paced_reading", "lexical_decision": "lexical_decision",
    "maze": "maze",
}


def twinlab(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "experiments.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("spec", sorted(EXAMPLES))
def test_example_validates_and_plans_with_item_list_and_factor_columns(spec, tmp_path):
    v = twinlab("validate", spec)
    assert v.returncode == 0, v.stderr + v.stdout
    out = tmp_path / "plan.csv"
    p = twinlab("plan", spec, "-s", "S01", "--out", str(out))
    assert p.returncode == 0, p.stderr + p.stdout
    with open(out, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and {"item", "list", "task"} <= set(rows[0])
    kinds = {r["task"] for r in rows}
    assert kinds == {EXAMPLES[spec]}, kinds


@pytest.mark.slow
@pytest.mark.model
@pytest.mark.long
@pytest.mark.parametrize("spec", sorted(EXAMPLES))
def test_example_runs_a_model_subject_and_analyze_writes_its_tables(spec, tmp_path):
    r = twinlab("run-model", spec, "--subjects", "1", "--trials", "4", "--out", str(tmp_path / "m"))
    assert r.returncode == 0, r.stderr[-2000:] + r.stdout[-2000:]
    tables = list((tmp_path / "m").rglob("*_data.csv"))
    assert len(tables) == 1
    with open(tables[0], encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 4 and {r["subject_kind"] for r in rows} == {"model"}
    kind = EXAMPLES[spec]
    if kind == "self_paced_reading":  # per-word surprisal, one value per word
        for row in rows:
            assert len(json.loads(row["word_surprisal_bits"])) == len(row["words"].split(" "))
    elif kind == "lexical_decision":  # direct: log P of the string as a word, a measure (no threshold)
        assert all(json.loads(row["option_logprobs"])[0] < 0 for row in rows)
    elif kind == "rating":
        assert all(row["rating"] and row["rating_expected"] for row in rows)
    else:
        assert all(row["response"] for row in rows)
    meta = json.loads(tables[0].with_suffix(".json").read_text(encoding="utf-8"))
    assert meta["design"]["list"] == 1 and meta["design"]["factors"]
    a = twinlab("analyze", str(tmp_path / "m"), "--out", str(tmp_path / "report"))
    assert a.returncode == 0, a.stderr[-2000:] + a.stdout[-2000:]
    assert (tmp_path / "report" / "report.html").exists()
