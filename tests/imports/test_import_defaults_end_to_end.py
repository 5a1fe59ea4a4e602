"""A Builder study whose practice and test conditions files number their words alike imports with the defaults:
practice items are their own (practice-<item>), every trial with its answer, equal to a hand count."""
from __future__ import annotations

import csv
import json
from pathlib import Path

from participants.imports.api import import_study

DATA = Path(__file__).parent.parent / "data" / "imports" / "psychopy_corpus" / "expra_lexical_decision" / "data"


def test_lexical_decision_with_stim_resp_imports_with_the_defaults(tmp_path):
    src = next(DATA.glob("*.csv"))
    rows = list(csv.DictReader(open(src, newline="", encoding="utf-8")))
    answered = [r for r in rows if r.get("stim_resp.keys")]
    practice = [r for r in answered if r.get("practice_trials.thisN", "") != ""]
    report = import_study("psychopy", [src], None, tmp_path / "out", spec_out=tmp_path / "spec" / "s.yaml")
    assert report.people == 1
    assert any("practice named like a test item" in n for n in report.notes)
    table = next((tmp_path / "out" / "data").glob("*_data.csv"))
    got = list(csv.DictReader(open(table, newline="", encoding="utf-8")))
    assert len(got) == len(answered) == 310 and sum(r["role"] == "practice" for r in got) == len(practice) == 10
    assert all(r["response"] for r in got)
    assert sum(r["correct"] == "True" for r in got) == sum(r["stim_resp.corr"] == "1" for r in answered)
    items = {r["item"] for r in csv.DictReader(open(tmp_path / "spec" / "s_items.csv", newline="", encoding="utf-8"))
             if r["role"] == "practice"} if (tmp_path / "spec" / "s_items.csv").exists() else None
    meta = json.loads(table.with_suffix(".json").read_text(encoding="utf-8"))
    assert meta["status"] == "completed"
    if items is not None:
        assert all(i.startswith("practice-") for i in items)


def test_people_who_answered_with_space_get_a_spec_whose_pages_continue_on_another_key(tmp_path):
    """A study answered with SPACE and J: the spec read from the data keeps the keys and moves the continue key
    (an answer key equal to the continue key is refused by validate)."""
    from experiments.spec import load_spec

    table = tmp_path / "t.csv"
    table.write_text("participant,session,item,condition,sentence,response,answer,rt\n"
                     "S1,1,1,a,Sentence one.,space,space,512\nS1,1,2,b,Sentence two.,j,space,640\n"
                     "S2,1,1,b,Sentence one!,j,j,700\nS2,1,2,a,Sentence two!,space,space,455\n", encoding="utf-8")
    import_study("table", [table], None, tmp_path / "out", spec_out=tmp_path / "spec" / "s.yaml")
    exp = load_spec(tmp_path / "spec" / "s.yaml")
    assert exp.task.response_key == "return"
    assert sorted(lab.key for lab in exp.task.settings().labels) == ["j", "space"]
