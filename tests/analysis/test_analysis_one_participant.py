"""`analyze` of one participant (or one condition): the fits that need two or more people (or levels) are named in
one line and skipped before R is asked, not one R error per fit; and `validate` calls lists UNBALANCED only when
their condition counts differ.

People are imported by the real CLI (`twinlab import pcibex`) from PennController results files (the chunked
reading study of tests/analysis/test_reading_regions_read_at_once.py, one submission of it; PennController's own rating
results in tests/data/imports/pcibex)."""
from __future__ import annotations

import csv
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from analysis.stats.fit_items import fit_or_note
from analysis.stats.formula import merge_level_notes
from analysis.stats.formula_fit import fit_formula
from tests.analysis.test_reading_regions_read_at_once import MAP, results_file

ROOT = Path(__file__).resolve().parents[2]
RATING = ROOT / "tests" / "data" / "imports" / "pcibex" / "penncontroller_rating_results"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "experiments.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=600)


@pytest.mark.slow
def test_one_participant_is_said_once_naming_the_fits_it_stops(tmp_path, r_ready):
    path = results_file(tmp_path)
    text = path.read_text(encoding="utf-8")
    one = text[:text.index("#\n# Results on", 10)]   # the first submission only: one person
    path.write_text(one, encoding="utf-8")
    (tmp_path / "map.yaml").write_text(MAP, encoding="utf-8")
    assert cli("import", "pcibex", str(path), "--map", "map.yaml", "--out", "one", cwd=tmp_path).returncode == 0
    r = cli("analyze", "one", "--out", "report", "--n-boot", "50", cwd=tmp_path)
    said = r.stdout + r.stderr
    assert r.returncode == 0 and "Traceback" not in said, said
    assert "grouping factors" not in said and "R[write to console]" not in said
    notes = " ".join(said.split()).split("note: ")[1:]
    level = [n for n in notes if "need two or more people" in n]
    assert len(level) == 1, notes
    assert "3 fit(s) that need two or more people (subject_id), and the rows fitted hold 1" in level[0]
    for name in ("R1 (Noah)", "R2 (was leaving)", "R3 (early.)"):
        assert f"reading region {name}" in level[0]


def test_one_condition_is_said_once_for_every_fit_it_stops():
    """Two fits of a frame whose rows hold one condition: one line naming both (no R is started: the check
    comes first)."""
    d = pd.DataFrame({"rt_ms": [510.0, 620.0, 580.0, 700.0], "condition": ["a"] * 4,
                      "subject_id": ["p1", "p1", "p2", "p2"], "item": ["1", "2", "1", "2"]})
    skipped: list[str] = ["an earlier note"]
    for label in ("fit one", "fit two"):
        assert fit_or_note(lambda: fit_formula(d, "rt_ms ~ condition"), label, skipped) is None
    merged = merge_level_notes(skipped)
    assert merged == ["an earlier note", "not fitted, 2 fit(s) that need two or more levels of condition, and the "
                                         "rows fitted hold 1 (a): fit one; fit two"]


def test_validate_calls_lists_unbalanced_only_when_their_counts_differ(tmp_path):
    """PennController's rating study: two people, each saw 6 items of condition 4 and 2 of condition 5 (the
    same counts in both lists, counted here from the file): not UNBALANCED."""
    labels = "".join(f'  "{k}": "{k + 1}"\n' for k in range(9))
    (tmp_path / "map.yaml").write_text(f"condition: Group\nstimulus: Item number\nlabels:\n{labels}", encoding="utf-8")
    r = cli("import", "pcibex", str(RATING), "--map", "map.yaml", "--out", "people", "--spec-out", "rating.yaml",
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    per_list = []
    for f in sorted((tmp_path / "people" / "data").glob("*_data.csv")):
        with open(f, encoding="utf-8", newline="") as fh:
            per_list.append(Counter(row["condition"] for row in csv.DictReader(fh)))
    assert len(per_list) == 2 and per_list[0] == per_list[1] and len(set(per_list[0].values())) > 1
    r = cli("validate", "rating.yaml", cwd=tmp_path)
    shown = ", ".join(f"{c} {n}" for c, n in sorted(per_list[0].items()))
    said = " ".join((r.stdout + r.stderr).split())
    assert r.returncode == 0 and "UNBALANCED" not in said
    assert "lists: given (2 list(s): list 1: 8 test rows" in said
    assert f"every list has the same conditions ({shown}), not each equally often" in said
