"""Meaning: a judgment's accepting label is read from the labels' values, never their
order (a layout listing "no" first, F = Not acceptable, must not flip the `direct` protocol's answers);
`region_names` must name the regions the items have; `task.kind: forced_choice` on items without a
critical word is refused by `validate`, as `run-model` would refuse it. (The word limit that counts
what the model reads: tests/model_subjects/test_model_item_length.py.)"""
from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from experiments.spec import bundled_spec_path
from experiments.tasks import detection_values
from tests.cli_refusal import refused, twinlab
from tests.model_subjects.test_model_tasks_units import decide, proto, trial

YES_FIRST = [{"value": "yes", "text": "Acceptable", "key": "f"}, {"value": "no", "text": "Not acceptable", "key": "j"}]
NO_FIRST = [{"value": "no", "text": "Not acceptable", "key": "f"}, {"value": "yes", "text": "Acceptable", "key": "j"}]
GOOD, BAD = "The keys to the cabinet are on the table.", "The keys to the cabinet is on the table."


def test_the_accepting_label_is_read_from_the_values_not_the_order():
    for labels in (YES_FIRST, NO_FIRST):
        assert detection_values("judgment", {"labels": labels}) == ("yes", "no")
    two = lambda a, b: {"labels": [{"value": a, "text": a}, {"value": b, "text": b}]}  # noqa: E731
    assert detection_values("judgment", two("Ungrammatical", "grammatical")) == ("grammatical", "Ungrammatical")
    assert detection_values("judgment", two("nonsense", "makes sense")) == ("makes sense", "nonsense")
    # values that say neither accept nor reject: the documented default, the first label accepts
    assert detection_values("judgment", two("b", "a")) == ("b", "a")


@pytest.mark.parametrize("labels", [YES_FIRST, NO_FIRST], ids=["yes first", "no first"])
def test_direct_answers_the_same_under_either_layout(labels):
    """Known log-probabilities: the model prefers the grammatical member of the pair (-10 > -12). The good
    sentence's item (answer yes) is answered yes, correct; the bad one's (answer no) no, correct."""
    p = proto("judgment", "direct", labels=labels)
    good = decide(p, trial("judgment", sentence=GOOD, pair_sentence=BAD, answer="yes"), [[-10.0, -12.0]], None)
    bad = decide(p, trial("judgment", sentence=BAD, pair_sentence=GOOD, answer="no"), [[-12.0, -10.0]], None)
    assert (good.response, good.correct, good.margin) == ("yes", True, 2.0)
    assert (bad.response, bad.correct, bad.margin) == ("no", True, 2.0)
    # a model preferring the bad sentence is wrong on both, by the same margin
    wrong = decide(p, trial("judgment", sentence=GOOD, pair_sentence=BAD, answer="yes"), [[-13.0, -12.0]], None)
    assert (wrong.response, wrong.correct, wrong.margin) == ("no", False, -1.0)


def test_direct_refuses_a_judgment_without_two_labels():
    from model_subjects.protocols import ProtocolError

    p = proto("judgment", "direct", labels=[{"value": v, "text": v} for v in ("good", "odd", "bad")])
    with pytest.raises(ProtocolError, match="two labels"):
        p.check(trial("judgment", sentence=GOOD, pair_sentence=BAD, answer="good"))


def test_the_analysis_reads_acceptance_by_the_same_rule():
    from analysis.measures.judgments import add_judgment_columns

    d = pd.DataFrame({"task": ["judgment"] * 2, "response": ["yes", "no"], "correct_response": ["yes", "no"],
                      "task_settings": [json.dumps({"labels": NO_FIRST})] * 2})
    out = add_judgment_columns(d)
    assert list(out["accepted"]) == [1.0, 0.0] and list(out["signal"]) == [False, True]


def _pairs_spec(tmp_path: Path, labels: list[dict], name: str) -> Path:
    """Four minimal pairs as a judgment design (each version's partner in pair_sentence)."""
    pairs = [("The dog near the cars barks.", "The dog near the cars bark."),
             ("The girls who the boy sees are happy.", "The girls who the boy sees is happy."),
             ("The author of the books writes well.", "The author of the books write well."),
             ("The keys to the cabinet are on the table.", "The keys to the cabinet is on the table.")]
    folder = tmp_path / name
    folder.mkdir()
    with open(folder / "items.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["item", "grammatical", "sentence", "pair_sentence", "answer"])
        for k, (good, bad) in enumerate(pairs, 1):
            w.writerow([k, "true", good, bad, "yes"])
            w.writerow([k, "false", bad, good, "no"])
    spec = {"name": "pairs", "seed": 3, "design": {"file": "items.csv", "factors": {"grammatical": ["true", "false"]},
                                                   "lists": "all"},
            "blocks": [{"name": "test", "role": "test"}],
            "task": {"kind": "judgment", "question": "Is this sentence acceptable?", "labels": labels},
            "texts": {"instructions": ["Read."]}}
    path = folder / "pairs.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


@pytest.mark.model
@pytest.mark.long
def test_the_bundled_model_answers_the_same_whatever_the_key_layout(tmp_path):
    """The held-out case: SmolLM2 with the `direct` protocol on a judgment whose labels list "no" first.
    Each row's stored answer and correctness are those of the yes-first layout, and correct is exactly
    'the model prefers the sentence' == 'the item's answer is yes' (from the row's own log-probabilities).
    Two runs of the bundled model: about 40 s on 2 cores, so in the long pass."""
    rows = {}
    for name, labels in (("yes_first", YES_FIRST), ("no_first", NO_FIRST)):
        out = tmp_path / f"out_{name}"
        r = twinlab("run-model", str(_pairs_spec(tmp_path, labels, name)), "--protocol", "direct", "--out", str(out),
                    "--threads", "1", timeout=300)
        assert r.returncode == 0, r.stderr
        (table,) = sorted(out.rglob("*_data.csv"))
        rows[name] = {x["item_id"]: x for x in csv.DictReader(table.open(encoding="utf-8"))}
    assert len(rows["yes_first"]) == 8 and rows["yes_first"].keys() == rows["no_first"].keys()
    for item, a in rows["yes_first"].items():
        b = rows["no_first"][item]
        ls, lp = json.loads(b["option_logprobs"])
        assert (a["response"], a["correct"]) == (b["response"], b["correct"])
        assert b["correct"] == str((ls > lp) == (b["correct_response"] == "yes"))
        assert b["response"] == ("yes" if ls > lp else "no")


def _spr_spec(tmp_path: Path, names) -> Path:
    src = bundled_spec_path("self_paced_reading")
    shutil.copy(src.parent / "self_paced_reading_items.csv", tmp_path / "self_paced_reading_items.csv")
    data = yaml.safe_load(src.read_text(encoding="utf-8"))
    data["task"]["region_names"] = names
    path = tmp_path / "spr.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_region_names_must_name_the_items_regions(tmp_path):
    five = ["subject", "verb", "pp", "main_verb", "end"]
    assert twinlab("validate", str(_spr_spec(tmp_path, five))).returncode == 0
    refused("validate", str(_spr_spec(tmp_path, five[:4])),
            match=["self_paced_reading_items.csv: line 2", "region_names names 4 region(s)", "the item has 5"])
    refused("validate", str(_spr_spec(tmp_path, ["subject", "verb", "pp", "Verb", "end"])),
            match=["region_names", "'Verb' is given twice"])


def test_forced_choice_on_items_without_a_critical_word_is_refused_by_validate(tmp_path):
    (tmp_path / "items.csv").write_text("item,a,sentence,answer\ni1,x,the cat sleeps .,no_violation\n"
                                        "i1,y,the cats sleeps .,violation\n", encoding="utf-8")
    spec = {"name": "fc", "seed": 1, "design": {"file": "items.csv", "factors": {"a": ["x", "y"]}, "lists": "all"},
            "blocks": [{"name": "test", "role": "test"}], "task": {"kind": "forced_choice"},
            "texts": {"instructions": ["Read."]}}
    (tmp_path / "fc.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    refused("validate", str(tmp_path / "fc.yaml"),
            match=["task.kind forced_choice", "lacks a marked critical word", "judgment or violation_detection"])
