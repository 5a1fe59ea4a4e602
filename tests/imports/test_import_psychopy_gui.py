"""The fixtures' generator re-run: the real PsychoPy compiles and runs the Builder study under Xvfb
for one participant, and the import of the file it writes accounts for every row."""
from __future__ import annotations

import csv
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "support"))

pytestmark = [pytest.mark.gui, pytest.mark.long]


def test_psychopy_writes_a_file_the_import_reads_whole(tmp_path):
    if shutil.which("xdotool") is None or shutil.which("Xvfb") is None:
        pytest.skip("needs Xvfb and xdotool")
    from psychopy_builder_study import generate

    from participants.imports.api import import_study

    [written] = generate(tmp_path / "pp", [("P07", "001", "2", 7)])
    with open(written, encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.DictReader(fh))
    trials = [r for r in rows if r.get("trials.thisN") or r.get("practice.thisN")]
    assert len(trials) == 10 and {r["participant"] for r in rows} == {"P07"}
    report = import_study("psychopy", [written], {"labels": {"f": "yes", "j": "no"}}, tmp_path / "out")
    assert report.trials == 10 and sum(report.excluded.values()) == len(rows) - 10 and report.accounted
    assert report.tool_versions == [rows[0]["psychopyVersion"]]
