"""`twinlab power` on pilots with odd data (an imported study without answers, every RT missing, one condition):
one message naming the column or factor at fault, exit 2, no traceback, nothing written."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.cli_refusal import refused
from tests.support.power_synthetic import pilot


def _blank(root: Path, column: str) -> None:
    for f in (root / "data").glob("*_data.csv"):
        with f.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        for r in rows:
            r[column] = ""
        with f.open("w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


@pytest.mark.parametrize("column, formula, said", [
    ("correct", "correct ~ cond + (1 | subject) + (1 | item)", "column 'correct' is empty in all 32 rows"),
    ("rt_ms", "rt_ms ~ cond + (1 | subject) + (1 | item)", "column 'rt_ms' is empty in all 32 rows"),
])
def test_an_empty_column_is_named(tmp_path, column, formula, said):
    pilot(tmp_path / "p", n_subjects=4, n_items=8, seed=1)
    _blank(tmp_path / "p", column)
    out = tmp_path / "out"
    refused("power", str(tmp_path / "p"), "--formula", formula, "--term", "cond", "--subjects", "4", "--sims", "5",
            "-o", str(out), match=said, timeout=300)
    assert not out.exists()


def test_one_condition_is_named(tmp_path):
    pilot(tmp_path / "p", n_subjects=4, n_items=8, seed=1, levels=("a",))
    out = tmp_path / "out"
    refused("power", str(tmp_path / "p"), "--formula", "correct ~ cond + (1 | subject) + (1 | item)", "--term", "cond",
            "--subjects", "4", "--sims", "5", "-o", str(out), match="factor 'cond' has only one level", timeout=300)
    assert not out.exists()
