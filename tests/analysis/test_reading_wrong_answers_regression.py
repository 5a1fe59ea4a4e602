"""`analyze --exclude-wrong-answers` on reading sessions: trials without a question (an empty `correct`, pandas'
NA) are kept, wrong answers are left out and counted by words, and the command never ends in a TypeError."""
from __future__ import annotations

import csv
import json
from pathlib import Path

from tests.cli_refusal import twinlab
from tests.support import reading_synthetic as rs


def _mark_answers(root: Path) -> int:
    """Give the first file's trials answers (False, True, then empty, repeating); returns how many are wrong."""
    path = sorted((root / "data").glob("*_data.csv"))[0]
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for k, r in enumerate(rows):
        r["correct"] = ["False", "True", ""][k % 3]
        mat = json.loads(r["materials"])
        r["materials"] = json.dumps(mat | {"question": "Was the sentence about a box?"})
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return sum(1 for k, _ in enumerate(rows) if k % 3 == 0)


def test_exclude_wrong_answers_with_reading_sessions(tmp_path):
    root = tmp_path / "spr"
    rs.reading_design(root, n_subjects=3, n_items=8, model=False)
    wrong_trials = _mark_answers(root)
    for extra in ([], ["--exclude-wrong-answers"]):
        out = tmp_path / f"out{len(extra)}"
        r = twinlab("analyze", str(root), *extra, "--no-mixed", "-o", str(out), timeout=300)
        assert r.returncode == 0 and "Traceback" not in r.stdout + r.stderr, r.stdout + r.stderr
        text = json.loads((out / "results.json").read_text())["sections"]
        rules = next(s["text"] for s in text if "`wrong_answer`" in s.get("text", ""))
        said = rules.split("`wrong_answer`")[1]
        if not extra:
            assert said.startswith(": off"), rules
            continue
        # every synthetic sentence has 10 words: each wrong trial removes its 10 word times, the others none
        assert int(said.split("word(s) removed")[0].split("(")[-1]) == 10 * wrong_trials, rules
