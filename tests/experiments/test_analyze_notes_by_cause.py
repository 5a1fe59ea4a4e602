"""Fits that fail for one cause are said once: `analyze` on one person's reading sessions names the cause (a random
effect needs two or more subjects) in one line listing the fits, R's own error echoes are never printed, and a
formula whose column is empty says that column (not "no complete rows")."""
from __future__ import annotations

import json

import pytest

from analysis.stats.fit_items import grouped_notes
from tests.cli_refusal import twinlab
from tests.support import reading_synthetic as rs


def test_grouped_notes_one_line_per_cause():
    notes = ["a: not fitted (cause one)", "other note", "b: not fitted (cause one)", "c: not fitted (cause two)"]
    assert grouped_notes(notes) == ["not fitted (cause one): a, b (2 fits)", "other note", "not fitted (cause two): c"]


@pytest.mark.slow
def test_one_person_reading_fits_are_one_note(tmp_path, r_ready):
    rs.reading_design(tmp_path / "spr", n_subjects=1, n_items=8, model=False)
    r = twinlab("analyze", str(tmp_path / "spr"), "-o", str(tmp_path / "out"), timeout=600)
    both = r.stdout + r.stderr
    assert r.returncode == 0 and "Traceback" not in both, both
    assert "R[write to console]" not in both and "Error:" not in both, both
    skipped = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["skipped"]
    one = [n for n in skipped if "need two or more people" in n]
    assert len(one) == 1 and "4 fit(s)" in one[0] and one[0].count("reading region") == 4, skipped
    assert sum("need two or more people" in ln for ln in both.splitlines()) == 1, both
