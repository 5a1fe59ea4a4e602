"""Twins, part 1: log P(each person's answer) under each model group, against hand arithmetic.

Invented sessions in the table format (tests/support/design_synthetic.py), with option log-probabilities chosen
by hand, so every number here is checked against a computation written out in the test."""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "support"))
from design_synthetic import base_row, write_session  # noqa: E402

from analysis import api  # noqa: E402
from analysis.twins.answers import answer_index, likelihood  # noqa: E402

F = {"grammatical": ["true", "false"]}
LABELS = ["yes", "no"]
# the model's log-probabilities of (yes, no) per item and condition (not normalised on purpose)
LP = {(1, "true"): [-0.5, -2.0], (1, "false"): [-1.0, -0.7], (2, "true"): [-0.2, -3.0], (2, "false"): [-2.5, -0.4]}


def _rows(subject: str, kind: str, answers: dict, model: bool) -> list[dict]:
    rows = []
    for t, ((item, g), ans) in enumerate(answers.items()):
        r = base_row("tw", subject, kind, t, item, {"grammatical": g}, "judgment", {"sentence": f"s{item}{g}"})
        r.update(response=ans, correct=str(ans == ("yes" if g == "true" else "no")))
        if model:
            r.update(option_labels=json.dumps(LABELS), option_logprobs=json.dumps(LP[(item, g)]),
                     context_mode="none", protocol="judgment:meta")
        rows.append(r)
    return rows


@pytest.fixture(scope="module")
def frame(tmp_path_factory):
    root = tmp_path_factory.mktemp("tw")
    people = {"P1": {(1, "true"): "yes", (2, "false"): "no"}, "P2": {(1, "false"): "yes", (2, "true"): "yes"},
              "P3": {(1, "true"): "no", (2, "false"): "maybe"}}  # 'maybe' is not among the model's options
    for pid, ans in people.items():
        write_session(root / "people", "tw", pid, _rows(pid, "human", ans, False), F)
    cells = {k: "yes" for k in LP}
    write_session(root / "m", "tw", "m01", _rows("m01", "model", cells, True), F, meta={"model": {"name": "lm"}})
    return api.load_sessions([root / "people", root / "m"]), people


def _hand(item: int, g: str, ans: str) -> float:
    a = np.array(LP[(item, g)])
    return float(a[LABELS.index(ans)] - math.log(np.exp(a).sum()))


def test_per_trial_loglik_is_the_renormalised_option_score(frame):
    df, people = frame
    lk = likelihood(df, seed=3, n_boot=200)
    t = lk.trials
    assert len(t) == 5  # six person trials, one answer not among the options
    for _, r in t.iterrows():
        pid = r["person"].split(":")[-1]
        item, g = int(r["item"]), r["item_id"].split(":")[1]
        assert r["loglik"] == pytest.approx(_hand(item, g, people[pid][(item, g)]), abs=1e-9)
        assert r["loglik_chance"] == pytest.approx(-math.log(2))
    s = lk.summary.set_index("trials_used").loc["all"]
    total = sum(_hand(i, g, a) for pid, ans in people.items() for (i, g), a in ans.items() if a != "maybe")
    assert s["loglik"] == pytest.approx(total) and s["trials"] == 5 and s["people"] == 3 and s["items"] == 2
    assert s["pseudo_r2"] == pytest.approx(1 - total / (5 * -math.log(2)))
    assert s["ci_low"] <= s["loglik_per_trial"] <= s["ci_high"]


def test_an_answer_not_among_the_options_is_counted_and_named(frame):
    df, _ = frame
    lk = likelihood(df, n_boot=50)
    assert lk.missing[["answer"]].to_dict("records") == [{"answer": "maybe"}]
    assert any("1 person trial(s) not scored" in n and "maybe" in n for n in lk.notes)


def test_no_people_and_no_option_scores_each_get_a_sentence(frame):
    df, _ = frame
    lk = likelihood(df[df["subject_kind"] == "model"], n_boot=50)
    assert lk.trials.empty and any("No people" in n for n in lk.notes)
    d = df.copy()
    d.loc[d["subject_kind"] == "model", "option_logprobs"] = json.dumps([-1.0])
    lk = likelihood(d, n_boot=50)
    assert lk.trials.empty and any("records no scores of two or more options" in n for n in lk.notes)


def test_answer_index_reads_ratings_and_direct_judgments():
    assert answer_index(["1", "2", "3"], 2.0) == 1
    assert answer_index(["The cat sleeps.", "The cat sleep."], "no", "judgment:direct",
                        json.dumps({"labels": [{"value": "yes"}, {"value": "no"}]})) == 1
    assert answer_index(["a", "b"], None) is None


def test_item_shares_jsd_and_calibration_against_hand_counts(frame):
    from analysis.twins.items import agreement, calibration, item_shares, jsd_bits

    df, people = frame
    s = item_shares(df)
    # item 1, true: P1 said yes (P3 said no) -> shares 1/2, 1/2; model p = softmax(-0.5, -2.0)
    x = s[s["item_id"] == "1:true"].sort_values("option_index")
    assert x["people_share"].tolist() == [0.5, 0.5] and x["people"].tolist() == [2, 2]
    p = np.exp(LP[(1, "true")]) / np.exp(LP[(1, "true")]).sum()
    np.testing.assert_allclose(x["model_p"], p)
    # item 2, false: P1 said no, P3's 'maybe' is not an option -> one person, share (0, 1)
    y = s[s["item_id"] == "2:false"].sort_values("option_index")
    assert y["people_share"].tolist() == [0.0, 1.0] and y["people"].tolist() == [1, 1]
    q = np.exp(LP[(2, "false")]) / np.exp(LP[(2, "false")]).sum()
    hand = 0.5 * sum(a * np.log2(a / ((a + b) / 2)) for a, b in zip([0.0, 1.0], q, strict=False) if a > 0) \
        + 0.5 * sum(b * np.log2(b / ((a + b) / 2)) for a, b in zip([0.0, 1.0], q, strict=False))
    assert jsd_bits(np.array([0.0, 1.0]), q) == pytest.approx(hand)
    agree, per = agreement(s, n_boot=100)
    assert per.set_index("item_id").loc["2:false", "jsd_bits"] == pytest.approx(hand)
    assert agree["items"].iloc[0] == 4
    cal = calibration(s)
    assert cal["answers"].sum() == s["people"].sum()  # every (item, option) in one bin


def test_typed_answers_are_log_p_of_the_word_and_others_counted(tmp_path):
    """Completion from none sessions: a word that is the target (normalised) gets log P(target); another word
    is counted as not scored (the sessions hold the target only); no chance, so no pseudo-R²."""
    def rows(subject, kind, answers, model):
        out = []
        for t, (item, ans) in enumerate(answers.items()):
            r = base_row("cz", subject, kind, t, item, {"grammatical": "true"}, "completion",
                         {"prefix": f"p{item}", "target": "bread"})
            r.update(response=ans)
            if model:
                r.update(option_labels=json.dumps(["bread"]), option_logprobs=json.dumps([-1.5 - item]),
                         context_mode="none", protocol="completion:direct")
            out.append(r)
        return out
    write_session(tmp_path / "p", "cz", "P1", rows("P1", "human", {1: "Bread.", 2: "toast"}, False), F)
    write_session(tmp_path / "m", "cz", "m01", rows("m01", "model", {1: "x", 2: "x"}, True), F,
                  meta={"model": {"name": "lm"}})
    lk = likelihood(api.load_sessions([tmp_path / "p", tmp_path / "m"]), n_boot=50)
    assert lk.trials["loglik"].tolist() == [-2.5] and lk.trials["answer"].tolist() == ["Bread."]
    assert lk.missing["answer"].tolist() == ["toast"] and "only the target" in lk.missing["why"].iloc[0]
    s = lk.summary.iloc[0]
    assert s["loglik"] == -2.5 and math.isnan(s["pseudo_r2"]) and math.isnan(s["loglik_chance"])
