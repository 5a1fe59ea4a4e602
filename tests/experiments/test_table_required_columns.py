"""The Lakretz columns (structure, dependency, violation_position) are violation
detection's. A Lakretz session's table must fill them; a general design's table keeps them in its header
(byte for byte, for recorded sessions) but is not refused when they are empty."""
from __future__ import annotations

import csv

import pytest

from analysis.load import LoadError, load
from experiments.design_compiler import compile_sequence
from experiments.schema import COLUMN_NAMES, REQUIRED, check_row, required_columns
from experiments.spec import bundled_spec_path, load_spec
from studies.lakretz2021.columns import TABLE_REQUIRED


def write_table(spec: str, path, blank: tuple[str, ...]) -> None:
    seq = compile_sequence(load_spec(bundled_spec_path(spec)), "S01")
    cols = seq.table_columns()
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for t in seq.trials:
            row = {**t.to_row(), "subject_id": "S01", "subject_kind": "model", "session": 1,
                   "spec_hash": seq.spec_hash, "sequence_hash": seq.sequence_hash, "correct": True}
            row.update({c: None for c in blank})
            r = check_row(row, cols)
            w.writerow(["" if r[c] is None else r[c] for c in cols])


def test_required_columns_by_kind_of_table():
    assert REQUIRED[:5] == ("subject_id", "subject_kind", "experiment", "block", "trial_index")
    assert set(TABLE_REQUIRED) <= set(REQUIRED) and set(TABLE_REQUIRED) <= set(COLUMN_NAMES)
    assert required_columns(False) == REQUIRED
    assert required_columns(True) == tuple(c for c in REQUIRED if c not in TABLE_REQUIRED)
    assert "structure" not in required_columns(True) and "condition" in required_columns(True)


def test_general_design_table_need_not_fill_the_lakretz_columns(tmp_path):
    p = tmp_path / "cloze_S01_data.csv"
    write_table("cloze", p, TABLE_REQUIRED)
    df, _info = load([p])
    assert len(df) == 8 and df["structure"].isna().all() and df["violation_position"].isna().all()


def test_lakretz_table_must_fill_them(tmp_path):
    p = tmp_path / "demo_S01_data.csv"
    write_table("lakretz2021_demo", p, ())
    load([p])  # filled: loads
    write_table("lakretz2021_demo", p, ("structure",))
    with pytest.raises(LoadError, match=r"column 'structure', line 2: value is empty but the column is required"):
        load([p])
