"""No column of the trial table claims a value the items do not give:
`grammatical` comes from a declared factor named grammatical, else from the item's answer for the
judgment-like kinds (accepting value -> True, rejecting -> False: experiments.tasks.detection_values),
else it is empty. References: the items' own answers and factor levels, read from the files here."""
from __future__ import annotations

import dataclasses

from experiments.design_compiler import compile_sequence
from experiments.spec import load_spec
from experiments.tasks import detection_values
from experiments.trials import freeze_pairs


def rows(spec: str, detection=None):
    exp = load_spec(spec)
    seq = compile_sequence(exp, "p01", exp.seed)
    return [(t, t.to_row(detection)) for t in seq]


def test_a_declared_grammatical_factor_fills_the_column():
    for t, r in rows("acceptability_rating"):
        level = t.factor_levels.get("grammatical")
        assert r["grammatical"] is ({"true": True, "false": False}[level] if level else None)


def test_a_design_without_such_a_factor_or_answer_leaves_it_empty():
    got = {r["grammatical"] for _, r in rows("minimal_pairs_2afc")}  # choice: no accepting answer
    assert got == {None}
    got = {r["grammatical"] for _, r in rows("cloze")}
    assert got == {None}


def test_judgment_like_kinds_fill_it_from_the_answer():
    for t, r in rows("lexical_decision"):
        assert r["grammatical"] is {"word": True, "nonword": False}[t.mat["answer"]]
    exp = load_spec("acceptability_yesno")
    t = next(t for t in compile_sequence(exp, "p01", exp.seed) if t.task == "judgment")
    no_factor = dataclasses.replace(t, factors=(("cond", "a"),),
                                    materials=freeze_pairs({**t.mat, "answer": "bad"}))
    # labels ok/bad: the first label accepts, so an item whose answer is `bad` is not grammatical
    det = detection_values("judgment", {"labels": [{"value": "ok", "text": "OK"}, {"value": "bad", "text": "B"}]})
    assert det == ("ok", "bad")
    assert no_factor.to_row(det)["grammatical"] is False
    assert dataclasses.replace(no_factor, materials=freeze_pairs({**t.mat, "answer": "ok"})).to_row(
        det)["grammatical"] is True
    assert no_factor.to_row(None)["grammatical"] is None  # judgment without its labels: no claim


def test_lakretz_rows_keep_their_column():
    exp = load_spec("lakretz2021_demo")
    seq = compile_sequence(exp, "p01", exp.seed)
    assert all(t.to_row()["grammatical"] is (t.study_record.violation_position == "none") for t in seq)


def test_detection_for_a_trial_of_another_kind_than_the_specs():
    """The runners' rule: the spec's labels for its own kind, the overrides' labels when given, else the
    trial kind's defaults (the test harness runs task trials under a Lakretz spec)."""
    from experiments.tasks.detection import detection_for

    lak = load_spec("lakretz2021_demo").task
    assert detection_for("lexical_decision", lak) == ("word", "nonword")
    assert detection_for("judgment", lak) == ("yes", "no")
    assert detection_for("judgment", lak, {"labels": [{"value": "b", "text": "B"}, {"value": "a", "text": "A"}]}) \
        == ("b", "a")
    assert detection_for("violation_detection", lak) == ("no_violation", "violation")
