"""Task protocols' decisions from hand-coded scores (no model): what each protocol answers, its margin,
its columns; and how the runner writes them (generic cells, a Lakretz-only table)."""
from __future__ import annotations

import json
import math

import pytest

from experiments.schema import COLUMN_NAMES
from experiments.session import columns_into_extra
from experiments.tasks.config import settings_for
from experiments.trials import Trial, freeze_pairs
from model_subjects.decisions import Scored
from model_subjects.decisions import decide as decision_step
from model_subjects.protocols import ProtocolError, get_protocol
from model_subjects.requests import LoglikelihoodResult
from model_subjects.runner import generic_cells


def decide(p, t, scores, results=None, generation="", measured=None):
    """The runners' decision step on hand-coded scores."""
    return decision_step(p, t, Scored(scores, results or [], generation, measured))


def trial(task: str, **mat) -> Trial:
    return Trial(experiment="t", block="test", trial_index=0, block_trial_index=0, item_id="1:a",
                 feedback=False, item="1", task=task, role="test", materials=freeze_pairs(mat))


class _Task:
    def __init__(self, kind: str, **given):
        self.kind, self.given = kind, given

    def settings(self):
        return settings_for(self.kind, self.given)


def proto(kind: str, name: str, **given):
    return get_protocol(name, task=_Task(kind, **given))


def res(lp: float, n: int) -> LoglikelihoodResult:
    return LoglikelihoodResult(lp, False, n)


def test_judgment_meta_with_three_labels():
    p = proto("judgment", "meta", labels=[{"value": "good", "text": "Good"}, {"value": "odd", "text": "Odd"},
                                          {"value": "bad", "text": "Bad"}])
    t = trial("judgment", sentence="s", answer="odd")
    assert [o.continuation for o in p.queries(t)[0].options] == [" Good", " Odd", " Bad"]
    d = decide(p, t, [[-2.0, -1.0, -3.0]], [[res(-2, 1), res(-1, 1), res(-3, 1)]])
    assert (d.response, d.correct, d.margin, d.answer_text) == ("odd", True, 1.0, " Odd")


def test_judgment_direct_first_label_accepts():
    p = proto("judgment", "direct")
    t = trial("judgment", sentence="good one", pair_sentence="bad one", answer="no")
    d = decide(p, t, [[-10.0, -12.0]], None)
    assert d.response == "yes" and d.correct is False and d.margin == -2.0


def test_choice_direct_mean_can_differ_from_sum():
    t = trial("choice", prefix="p", options=["a", "b"], answer="b")
    scores, results = [[-4.0, -6.0]], [[res(-4.0, 1), res(-6.0, 3)]]  # sums prefer a; means prefer b (-2 > -4)
    d_sum = decide(proto("choice", "direct"), t, scores, results)
    d_mean = decide(proto("choice", "direct:mean"), t, scores, results)
    assert d_sum.response == "a" and d_sum.correct is False and d_sum.margin == -2.0
    assert d_mean.response == "b" and d_mean.correct is True and d_mean.margin == 2.0
    assert d_sum.columns["option_mean_logprobs"] == [-4.0, -2.0]


def test_choice_meta_averages_the_two_orders():
    p = proto("choice", "meta")
    t = trial("choice", options=["A", "B", "C"], answer="C")
    # order 1 (A B C): "1" best; order 2 (C B A): "1" best too (a position bias); C wins on average
    d = decide(p, t, [[-1.0, -3.0, -2.5], [-0.5, -3.0, -4.0]], None)
    assert d.option_logprobs == pytest.approx([(-1.0 - 4.0) / 2, -3.0, (-2.5 - 0.5) / 2])
    assert d.response == "C" and d.correct is True and d.extra["chosen_per_order"] == [0, 2]


def test_rating_meta_expected_and_argmax():
    p = proto("rating", "meta", scale={"points": 3})
    lps = [math.log(0.2), math.log(0.5), math.log(0.3)]
    d = decide(p, trial("rating", sentence="s"), [lps], None)
    assert d.columns["rating"] == 2 and d.columns["rating_expected"] == pytest.approx(0.2 + 1.0 + 0.9)
    assert d.correct is None and d.answer_text == " 2"


def test_completion_production_scores_first_word():
    p = proto("completion", "production")
    t = trial("completion", prefix="He drank a cup of", target="tea", accepted=["coffee"])
    assert decide(p, t, [[-1.0]], None, " Coffee, then left").correct is True
    assert decide(p, t, [[-1.0]], None, " milk.").correct is False
    assert decide(p, t, [[-1.0]], None, "").response == ""


def test_protocol_names_and_errors():
    assert proto("choice", "direct").name == "choice:direct"
    assert get_protocol("surprisal:bow:nobos").name == "surprisal:bow:nobos"
    with pytest.raises(ProtocolError, match="known: meta, direct, surprisal"):
        proto("judgment", "production")
    with pytest.raises(ProtocolError, match="unknown surprisal option"):
        get_protocol("surprisal:eos")
    with pytest.raises(ProtocolError, match="needs `options`"):
        proto("choice", "direct").queries(trial("choice", prefix="p"))


def test_generic_cells_and_a_lakretz_only_table():
    cells = generic_cells({"word_surprisal_bits": [1.23456789, None], "rating": 3.0, "target_rank": 2, "x": None})
    assert cells == {"word_surprisal_bits": "[1.234568, null]", "rating": 3.0, "target_rank": 2}

    # a session table with only the Lakretz columns: the others move into extra.columns (None left out)
    row = {"subject_id": "m01", "extra": json.dumps({"prompt": "p"}), "rating": 3.0, "item": "1", "text": None}
    out = columns_into_extra(row, [c for c in row if c not in COLUMN_NAMES])
    assert set(out) == {"subject_id", "extra"}
    assert json.loads(out["extra"]) == {"prompt": "p", "columns": {"rating": 3.0, "item": "1"}}
    assert columns_into_extra(row, []) == row
    again = columns_into_extra({**out, "rating": 4.0}, ["rating"])  # beside what extra.columns holds
    assert json.loads(again["extra"])["columns"] == {"rating": 4.0, "item": "1"}


def test_every_kind_the_model_runner_presents_registers_its_model_unit():
    """The model side of each kind is looked up, never branched on: every kind whose `runners` hold "model"
    has a registered model unit (violation detection and forced choice included), its declared protocols and
    its default are among the unit's names, and each name builds a protocol of that kind's unit."""
    from experiments.tasks import registry
    from model_subjects.tasks.registry import default_protocol, model_kinds, protocol_names, task_protocol

    presented = {name for name, k in registry().items() if "model" in k.runners}
    assert presented == set(model_kinds())
    for name in presented:
        names = protocol_names(name)
        assert set(registry()[name].model_protocols) <= set(names), name
        assert default_protocol(name) in names and default_protocol(name, "panel") in names + ["panel_judgment"], name
        for p in names:
            if p != "panel_judgment":
                assert task_protocol(name, p) is not None
    assert default_protocol("violation_detection", "panel") == "panel_judgment"
    assert default_protocol("violation_detection") == "violation_judgment" and default_protocol("judgment") == "meta"
