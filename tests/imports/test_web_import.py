"""`twinlab import web`: records as the built page saves them -> verified sessions; bad input refused, nothing written.

The real formats (the page's JSON lines, jsPsych's CSV and JSON exports) come from a real page in
tests/participants/test_web_browser.py; here records are built like the page builds them to cover the refusals.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from experiments.design_compiler import compile_sequence
from experiments.session import read_rows, session_paths
from experiments.spec import load_spec
from participants.web.importer import WebImportError, import_web

try:  # the repository root, or tests/, is on sys.path
    from tests.web_support import ROOT, italian_spec, page_report
except ModuleNotFoundError:
    from web_support import ROOT, italian_spec, page_report


def _records(exp, pid="P05", slot="web002", n=3, session=1):
    seq = compile_sequence(exp, slot, None, session=session)
    return [{"twinlab_web": 1, "experiment": exp.name, "spec_hash": seq.spec_hash, "sequence_hash": seq.sequence_hash,
             "slot_subject_id": slot, "participant": pid, "session": session, "info": {"STUDY_ID": "s"},
             "client": {}, "result": page_report(seq[i], exp, answer="violation" if i % 2 else None)}
            for i in range(n)]


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_records_become_sessions_and_repeats_of_a_trial_are_counted(tmp_path):
    exp = load_spec(italian_spec(tmp_path, trials=4))
    recs = _records(exp) + _records(exp, pid="P06", slot="web001", n=4)
    f = _write(tmp_path / "results.txt", recs + [recs[1], {"not": "ours"}])  # a repeat, a foreign line
    s = import_web([f], exp, tmp_path / "out")
    assert (s.records, s.duplicates_dropped, s.other_rows, s.sessions_written, s.rows_written) == (8, 1, 1, 2, 7)
    rows = read_rows(session_paths(tmp_path / "out", exp.name, "P05", 1)[0])
    seq = compile_sequence(exp, "web002", None)
    assert [r["item_id"] for r in rows] == [t.item_id for t in seq.trials[:3]]
    assert [r["response"] for r in rows] == ["none", "violation", "none"] and rows[0]["subject_id"] == "P05"
    metas = {p: json.loads(session_paths(tmp_path / "out", exp.name, p, 1)[1].read_text()) for p in ("P05", "P06")}
    assert metas["P05"]["status"] == "incomplete" and metas["P06"]["status"] == "completed"
    with pytest.raises(WebImportError, match="already exists"):  # never overwritten
        import_web([f], exp, tmp_path / "out")


@pytest.mark.parametrize("break_it, message", [
    (lambda r: r[0].update(spec_hash="0" * 16), "spec_hash"),
    (lambda r: r[0].update(sequence_hash="0" * 16), "sequence_hash"),
    (lambda r: r[1].update(sequence_hash="0" * 16), "two different sequences"),
    (lambda r: r.pop(1), "out of order"),
    (lambda r: r[1]["result"].update(response="no_violation"), "response"),
    (lambda r: r[1].update(participant="../x"), "letters and digits"),
    (lambda r: r.append({**r[0], "result": {**r[0]["result"], "answered_by": "key:f"}}), "twice, with different"),
])
def test_bad_records_are_refused_naming_the_line_and_nothing_is_written(tmp_path, break_it, message):
    exp = load_spec(italian_spec(tmp_path, trials=4))
    recs = _records(exp)
    break_it(recs)
    f = _write(tmp_path / "results.jsonl", recs)
    with pytest.raises(WebImportError, match=message):
        import_web([f], exp, tmp_path / "out")
    assert not (tmp_path / "out" / "data").exists()


def test_the_command_exits_2_with_one_line(tmp_path):
    spec = italian_spec(tmp_path, trials=4)
    f = _write(tmp_path / "r.jsonl", ["garbage"])
    (tmp_path / "r.jsonl").write_text("{not json\n")
    r = subprocess.run([sys.executable, "-m", "experiments.cli", "import", "web", str(f), "--spec", str(spec),
                        "--out", str(tmp_path / "out")], cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                       capture_output=True, text=True)
    assert r.returncode == 2 and "r.jsonl, line 1: not valid JSON" in r.stderr and "Traceback" not in r.stderr
