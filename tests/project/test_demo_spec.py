"""The demo's study gives every model group 48 items per condition x violation with 8 subjects."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_each_demo_subject_meets_every_long_nested_cell_six_times():
    from experiments.design_compiler import compile_sequence
    from experiments.spec import load_spec

    exp = load_spec("lakretz2021_demo")
    seq = list(compile_sequence(exp, "m01", seed=exp.seed))
    test = [t for t in seq if t.block == "test"]
    assert len([t for t in seq if t.block == "training"]) == 40 and len(test) == 144
    cells = Counter((t.study_record.structure, t.condition, t.study_record.violation_position) for t in test)
    assert set(s for s, _, _ in cells) == {"long_nested"}
    assert len(cells) == 8 * 3 and set(cells.values()) == {6}
    subjects = int(re.search(r'TWINLAB_DEMO_SUBJECTS:-(\d+)', (REPO / "scripts" / "demo.sh").read_text()).group(1))
    assert subjects * 6 >= 48
