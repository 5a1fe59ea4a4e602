"""`twinlab import jspsych` with its defaults on what the real jsPsych 6.0.4 and 7.3.4 wrote in Chromium
(tests/data/imports/jspsych_corpus, PROVENANCE.md): jsPsych 6's `key_press` key codes, `button_pressed`, `responses`
JSON strings, jsPsych 7's `response`, and the ways labs store a run (`.csv()`, `.json()`, double-encoded JSON, JATOS
component results one per line and concatenated). Each expected number is a hand count made here with csv/json:
the records with an `item`, their `phase`, the key code as its letter, the study's own `correct`, the mean of the
non-null `rt`.
"""
from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path

import pytest

from participants.imports.api import import_study
from participants.imports.jspsych import read_jspsych

CORPUS = Path(__file__).parent.parent / "data" / "imports" / "jspsych_corpus"
V6 = CORPUS / "v6"
FILES = ("v6/v6_s01.csv", "v6/v6_s01.json", "v6/v6_s02_double.json", "v6/v6_jatos_lines.txt",
         "v6/v6_jatos_concatenated.txt", "v7/v7_s01.csv", "v7/v7_s02.json", "v7/v7_jatos_results.txt")


def records(name: str) -> list[dict]:
    """Every record of the file, read by hand for the way it was stored."""
    text = (CORPUS / name).read_text(encoding="utf-8")
    if name.endswith(".csv"):
        return list(csv.DictReader(text.splitlines()))
    if "double" in name:
        return json.loads(json.loads(text))
    if "concatenated" in name:
        return [r for array in json.loads("[" + text.replace("][", "],[") + "]") for r in array]
    if "lines" in name or "jatos" in name:
        return [r for line in text.splitlines() if line.strip() for r in json.loads(line)]
    return json.loads(text)


def absent(v) -> bool:
    return v in (None, "", "null")


def hand(name: str) -> dict[str, dict]:
    """person -> trials, practice, answers (letters), accuracy, mean RT."""
    people: dict[str, dict] = defaultdict(lambda: {"trials": 0, "practice": 0, "answers": [], "correct": 0,
                                                   "rts": []})
    for r in records(name):
        if absent(r.get("item")):
            continue
        p = people[str(r.get("subject") or r["PROLIFIC_PID"])]
        p["trials"] += 1
        p["practice"] += r["phase"] == "practice"
        if "key_press" in r:      # jsPsych 6.0: the key code (70), by hand its letter
            p["answers"].append(None if absent(r["key_press"]) else chr(int(r["key_press"])).lower())
        else:                     # jsPsych 7: the key itself
            p["answers"].append(None if absent(r["response"]) else r["response"])
        p["correct"] += str(r["correct"]).lower() == "true"
        if not absent(r["rt"]):
            p["rts"].append(float(r["rt"]))
    return {k: {"trials": v["trials"], "practice": v["practice"], "answers": v["answers"],
                "accuracy": v["correct"] / v["trials"], "mean_rt": sum(v["rts"]) / len(v["rts"])}
            for k, v in people.items()}


def mine(name: str) -> dict[str, dict]:
    path = CORPUS / name
    result = read_jspsych([path], None)
    assert len(result.trials) + len(result.excluded) == result.rows_read[str(path)] == len(records(name))
    out: dict[str, dict] = {}
    for pid in dict.fromkeys(t.participant for t in result.trials):
        ts = [t for t in result.trials if t.participant == pid]
        rts = [t.rt_ms for t in ts if t.rt_ms is not None]
        out[pid] = {"trials": len(ts), "practice": sum(t.phase == "practice" for t in ts),
                    "answers": [t.response for t in ts], "accuracy": sum(bool(t.correct) for t in ts) / len(ts),
                    "mean_rt": sum(rts) / len(rts)}
    return out


@pytest.mark.parametrize("name", FILES)
def test_each_way_of_storing_a_jspsych_6_or_7_run_equals_the_hand_count(name):
    want = hand(name)
    assert all(p["trials"] == (10 if name.startswith("v6") else 14) and p["practice"] == 2 for p in want.values())
    got = mine(name)
    assert got.keys() == want.keys()
    for pid, w in want.items():
        assert got[pid]["answers"] == w["answers"], pid           # 70 -> f, 74 -> j; a timed-out judgment: none
        assert {k: got[pid][k] for k in ("trials", "practice")} == {k: w[k] for k in ("trials", "practice")}
        assert got[pid]["accuracy"] == pytest.approx(w["accuracy"]) and got[pid]["mean_rt"] == pytest.approx(
            w["mean_rt"])


def test_a_timed_out_judgment_and_the_expected_key_are_key_names():
    result = read_jspsych([V6 / "v6_s02_double.json"], None)
    assert {t.expected for t in result.trials} == {"f", "j"} and sum(t.response is None for t in result.trials) == 1
    assert result.tool_version[str(V6 / "v6_s02_double.json")] == ""       # jsPsych 6 states no version


def test_refusals_of_json_name_records(tmp_path):
    from participants.imports.records import ImportInputError

    recs = records("v6/v6_s01.json")
    recs[4]["trial_index"] = 1                                               # out of order: record 5
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(recs), encoding="utf-8")
    with pytest.raises(ImportInputError, match="record 5"):
        read_jspsych([path], None)
    path.write_text(json.dumps(recs[:3] + [7]), encoding="utf-8")
    with pytest.raises(ImportInputError, match="record 4: not a trial object"):
        read_jspsych([path], None)
    path.write_text(json.dumps("[{\"trial_index\": 0"), encoding="utf-8")             # a torn double-encoded file
    with pytest.raises(ImportInputError, match="line 1: a JSON string that is not JSON itself"):
        read_jspsych([path], None)


def test_a_full_import_of_jspsych6_runs_with_the_defaults(tmp_path):
    report = import_study("jspsych", [V6 / "v6_s01.json", V6 / "v6_s02_double.json"], None, tmp_path / "s")
    want = {**hand("v6/v6_s01.json"), **hand("v6/v6_s02_double.json")}
    assert report.trials == sum(w["trials"] for w in want.values()) and report.practice_trials == 4
    assert report.task == "judgment" and report.people == 2 and report.accounted


def test_jatos_lines_each_double_encoded_give_the_same_trials(tmp_path):
    """A JATOS file whose every component result was stored as a JSON string of its array."""
    lines = (V6 / "v6_jatos_lines.txt").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "double_lines.txt"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    plain, double = read_jspsych([V6 / "v6_jatos_lines.txt"], None), read_jspsych([path], None)
    assert [(t.participant, t.item, t.response, t.rt_ms) for t in double.trials] == \
        [(t.participant, t.item, t.response, t.rt_ms) for t in plain.trials]


def test_a_button_study_answers_in_button_pressed(tmp_path):
    """jsPsych 6 stores a button's index in `button_pressed` and keys in `key_press`: a study whose items are on
    its html-button-response screens is answered by the button (the field its trials fill), not by key_press."""
    recs = records("v6/v6_s01.json")
    for r in recs:
        if r.get("trial_type") == "html-button-response":
            r["item"], r["phase"] = "b1", "test"
        elif "item" in r:
            r["item"] = None
    path = tmp_path / "buttons.json"
    path.write_text(json.dumps(recs), encoding="utf-8")
    result = read_jspsych([path], None)
    want = [str(r["button_pressed"]) for r in recs if r.get("item") == "b1"]
    assert [t.response for t in result.trials] == want == ["0"]
