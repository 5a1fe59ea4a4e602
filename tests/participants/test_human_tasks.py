"""The task kinds' human side without a window: what an answer means (logic.derive, shared by the
PsychoPy and browser runners), counterbalancing, settings, the registries, the session table.

References are hand counts: the reading times below are differences of press times written out,
the typed texts are spelled by hand, option positions are counted.
"""
from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

from experiments.schema import GENERAL_COLUMN_NAMES
from experiments.session import SessionWriter, read_rows
from experiments.tasks import registry
from experiments.tasks.record import TaskResultError, derive, plan, typed_text
from experiments.trials import Trial, TrialSequence, freeze_pairs
from kinds.self_paced_reading.task import trial_units
from participants.rows import table_columns
from participants.tasks import PSYCHOPY, settings_for
from participants.tasks.logic import screen_order
from participants.tasks.settings import task_settings
from participants.web.payload import BROWSER_KINDS, task_view

sys.path.insert(0, str(Path(__file__).parent.parent / "support"))
from task_examples import EXAMPLES, base_spec, example_sequence, load, task_section  # noqa: E402


def trial(task: str, i: int = 0, feedback: bool = False, **materials) -> Trial:
    return Trial(experiment="x", block="test", trial_index=i, block_trial_index=i, item_id=f"{i}:a",
                 feedback=feedback, item=str(i), factors=(("f", "a"),), task=task, role="test",
                 materials=freeze_pairs(dict(sorted(materials.items()))))


class Exp:  # the settings reader reads `task` and `language` only
    language = "en"

    def __init__(self, **task):
        from experiments.spec_model import Task

        self.task = Task(**task)  # the spec's own validation (experiments.tasks.config)


def seq_of(trials, seed=3, subject="s1") -> TrialSequence:
    return TrialSequence(experiment="x", subject_id=subject, seed=seed, spec_hash="h", trials=tuple(trials))


# ---- registries ---------------------------------------------------------------------------------
def test_each_runners_registry_agrees_with_the_task_kinds():
    kinds = registry()
    # every PsychoPy kind has its unit (violation detection's runs the RSVP trial); the page's task plugin
    # presents every browser kind whose renderer is its own (violation detection has twinlab-rsvp.js)
    psychopy = {k for k, v in kinds.items() if "psychopy" in v.runners}
    browser = {k for k, v in kinds.items() if "browser" in v.runners and v.renderer == "task"}
    assert set(PSYCHOPY) == psychopy and all(hasattr(PSYCHOPY[k], "present") or hasattr(PSYCHOPY[k], "run")
                                             for k in psychopy)
    assert {k for k in psychopy if hasattr(PSYCHOPY[k], "run")} == {k for k in psychopy if kinds[k].renderer == "rsvp"}
    assert set(BROWSER_KINDS) == browser and "violation_detection" not in browser
    # each browser kind's page code is its folder's page.js, registering its builder under the kind's name
    from participants.web.site import kind_pages

    registered = set()
    for page in kind_pages().values():
        registered |= set(re.findall(r'jsPsychTwinlabTask\.register\("(\w+)"', page.read_text(encoding="utf-8")))
    assert registered == browser and {p.parent.name for p in kind_pages().values()} == browser


# ---- judgment, lexical decision, rating ----------------------------------------------------------
def test_judgment_key_and_click_answers_and_their_rt():
    s = task_settings(Exp(kind="judgment", labels=[{"value": "yes", "text": "OK", "key": "f"},
                                                  {"value": "no", "text": "Bad", "key": "j"}]), "judgment")
    t = trial("judgment", sentence="a b", answer="no")
    raw = {"response_onset": 200.0, "presses": [{"key": "j", "t": 150.0}, {"key": "j", "t": 650.5}],
           "pointers": [], "answered_by": "key:j", "answer_time": 650.5}
    out = derive(t, s, None, raw)
    # the press during the fixation (150 ms) is not the answer; the one at 650.5 is: 450.5 ms after onset
    assert (out["response"], out["correct"], out["rt_ms"]) == ("no", True, 450.5)
    click = {"response_onset": 200.0, "presses": [], "pointers": [{"type": "touch", "t": 900.0, "target": 0}],
             "answered_by": "touch", "answer_time": 900.0}
    out = derive(t, s, None, click)
    assert (out["response"], out["correct"], out["rt_ms"]) == ("yes", False, 700.0)


@pytest.mark.parametrize("bad,message", [
    ({"answered_by": "key:f", "answer_time": 650.5}, "first answer key"),  # j came first
    ({"answered_by": "key:x", "answer_time": 650.5}, "not an answer key"),
    ({"answered_by": "mouse", "answer_time": 650.5}, "no mouse click"),
    ({"answered_by": None, "answer_time": None}, "waits for an answer"),
    ({"answer_time": 100.0, "answered_by": "key:j"}, "after the answers are shown"),
])
def test_judgment_records_that_cannot_be_this_trial_are_refused(bad, message):
    s = task_settings(Exp(kind="judgment"), "judgment")
    t = trial("judgment", sentence="a b", answer="no")
    raw = {"response_onset": 200.0, "presses": [{"key": "j", "t": 650.5}, {"key": "f", "t": 700.0}], "pointers": [],
           **bad}
    with pytest.raises(TaskResultError, match=message):
        derive(t, s, None, raw)


def test_lexical_decision_and_rating():
    s = task_settings(Exp(kind="violation_detection"), "lexical_decision")
    assert [(v, k) for (v, _), k in zip(s.labels, s.keys, strict=False)] == [("nonword", "f"), ("word", "j")]
    out = derive(trial("lexical_decision", sentence="tible", answer="nonword"), s, None,
                 {"response_onset": 0.0, "presses": [{"key": "f", "t": 512.25}], "answered_by": "key:f",
                  "answer_time": 512.25})
    assert (out["response"], out["correct"], out["rt_ms"]) == ("nonword", True, 512.25)
    r = task_settings(Exp(kind="rating", scale={"points": 5, "low_label": "bad", "high_label": "good"}), "rating")
    assert r.keys == ("1", "2", "3", "4", "5")
    out = derive(trial("rating", sentence="a"), r, None,
                 {"response_onset": 10.0, "presses": [], "pointers": [{"type": "mouse", "t": 300.0, "target": 3}],
                  "answered_by": "mouse", "answer_time": 300.0})
    assert (out["response"], out["rating"], out["correct"], out["rt_ms"]) == ("4", 4.0, None, 290.0)
    with pytest.raises(ValueError, match="scale"):
        task_settings(Exp(kind="rating", scale={"points": 12}), "rating")
    with pytest.raises(ValueError, match="given twice"):
        task_settings(Exp(kind="judgment", labels=[{"value": "y", "text": "Y", "key": "f"},
                                                   {"value": "n", "text": "N", "key": "f"}]), "judgment")


# ---- choice: counterbalanced positions ------------------------------------------------------------
def test_choice_positions_are_counterbalanced_deterministic_and_recorded():
    trials = [trial("choice", i, options=["good one", "bad one"], answer="good one") for i in range(8)]
    seq = seq_of(trials)
    orders = [screen_order(t, seq, None) for t in trials]
    assert orders == [screen_order(t, seq_of(trials), None) for t in trials]  # same seed and subject: same screens
    # over 8 consecutive trials each option is in each position 4 times (hand count)
    assert Counter(o[0] for o in orders) == {0: 4, 1: 4}
    three = [trial("choice", i, options=["a", "b", "c"]) for i in range(6)]
    pos = Counter((p, o) for t in three for p, o in enumerate(screen_order(t, seq_of(three), None)))
    assert set(pos.values()) == {2}  # 6 trials: each of 3 options twice in each of 3 positions
    s = settings_for(Exp(kind="choice"), trials[0])
    t = next(t for t, o in zip(trials, orders, strict=False) if o == [1, 0])  # the bad one on the left
    out = derive(t, s, [1, 0], {"response_onset": 0.0, "presses": [{"key": "j", "t": 400.0}],
                                "answered_by": "key:j", "answer_time": 400.0})
    assert (out["response"], out["correct"], out["chosen_position"], json.loads(out["option_order"])) == \
        ("good one", True, 1, [1, 0])


# ---- self-paced reading -----------------------------------------------------------------------------
def test_self_paced_reading_word_and_region_times_are_key_to_key():
    t = trial("self_paced_reading", sentence="The horse raced past the barn fell.",
              regions="The horse | raced | past the barn | fell.", question="Did it fall?",
              question_options=["yes", "no"], question_answer="yes")
    s = task_settings(Exp(kind="self_paced_reading"), "self_paced_reading")
    units, regions = trial_units(t, s.reveal)
    assert units == ["The", "horse", "raced", "past", "the", "barn", "fell."]
    assert regions == [[0, 1], [2], [3, 4, 5], [6]]
    press = [1000.0, 1300.0, 1650.0, 2100.0, 2350.0, 2600.0, 3000.0, 3500.0]  # 8 presses read 7 words
    steps = [800.0] + [p + 8.0 for p in press[:7]]
    raw = {"steps": steps, "presses": [{"key": "space", "t": p} for p in press] + [{"key": "j", "t": 4400.0}],
           "question_onset": 3510.0, "question_answered_by": "key:j", "question_answer_time": 4400.0}
    out = derive(t, s, None, raw)
    assert json.loads(out["word_rts_ms"]) == [300.0, 350.0, 450.0, 250.0, 250.0, 400.0, 500.0]
    assert json.loads(out["region_rts_ms"]) == [650.0, 450.0, 900.0, 500.0]
    assert (out["response"], out["correct"], out["rt_ms"]) == ("no", False, 890.0)
    by_region = task_settings(Exp(kind="self_paced_reading", reveal="region"), "self_paced_reading")
    raw_r = {"steps": [800.0, 1010.0, 1310.0, 1660.0, 2110.0], "question_onset": 2400.0,
             "presses": [{"key": "space", "t": p} for p in press[:5]] + [{"key": "f", "t": 2900.0}],
             "question_answered_by": "key:f", "question_answer_time": 2900.0}
    out = derive(t, by_region, None, raw_r)
    assert json.loads(out["region_rts_ms"]) == [300.0, 350.0, 450.0, 250.0] and out["word_rts_ms"] is None
    with pytest.raises(TaskResultError, match="8 presses"):
        derive(t, s, None, {**raw, "presses": raw["presses"][:5]})
    with pytest.raises(TaskResultError, match="shown before the press"):
        derive(t, s, None, {**raw, "steps": [800.0, 900.0] + steps[2:]})


# ---- completion --------------------------------------------------------------------------------------
def test_completion_text_keystrokes_and_accepted_variants():
    assert typed_text(["b", "r", "x", "backspace", "e", "a", "d", "space", "apostrophe", "s"]) == "bread 's"
    t = trial("completion", prefix="She spread butter on her", target="bread", accepted=["toast"])
    s = task_settings(Exp(kind="completion"), "completion")
    keys = [("t", 500.0), ("o", 600.0), ("a", 700.0), ("s", 800.0), ("t", 900.0)]
    raw = {"response_onset": 100.0,
           "presses": [{"key": k, "t": tt} for k, tt in keys] + [{"key": "return", "t": 1200.0}],
           "submit_time": 1200.0, "text": "toast"}
    out = derive(t, s, None, raw)
    assert (out["response"], out["response_text"], out["correct"], out["rt_ms"]) == ("toast", "toast", True, 400.0)
    assert json.loads(out["keystrokes"]) == [["t", 400.0], ["o", 500.0], ["a", 600.0], ["s", 700.0], ["t", 800.0]]
    with pytest.raises(TaskResultError, match="the keys typed give 'toast'"):
        derive(t, s, None, {**raw, "text": "bread"})
    wrong = derive(trial("completion", prefix="p", target="bread"), s, None, raw)
    assert wrong["correct"] is False


# ---- the autopilot's plans and the page's view --------------------------------------------------------
@pytest.mark.parametrize("kind", list(EXAMPLES))
def test_plans_answer_every_kind_and_the_page_gets_the_same_screens(kind, tmp_path):
    exp = load(base_spec(tmp_path, kind))
    seq = example_sequence(kind, exp, "autopilot1", 25, 4)
    for t in seq:
        s = settings_for(exp, t, task_section(kind))
        order = screen_order(t, seq, None) if kind == "choice" else None
        p = plan(t, s, order, seed="autopilot1", accuracy=1.0)
        assert p.phases and (p.intended_correct in (True, None))
        view = task_view(t, seq, exp, task_section(kind))
        if kind == "choice":  # the page shows the options in the counterbalanced order
            assert [a["value"] for a in view["answers"]] == [t.mat["options"][i] for i in order]
        if kind == "self_paced_reading":
            assert view["units"] == trial_units(t, s.reveal)[0]


# ---- the session table of a general design ---------------------------------------------------------------
def test_a_general_designs_table_has_the_generic_and_factor_columns(tmp_path):
    exp = load(base_spec(tmp_path, "judgment"))
    seq = example_sequence("judgment", exp, "p1", 25, 2)
    cols = table_columns(seq)
    assert cols == GENERAL_COLUMN_NAMES  # the core's columns: a judgment adds none, the study's are not there
    cloze = example_sequence("completion", load(base_spec(tmp_path, "completion")), "p1", 25, 2)
    assert table_columns(cloze)[-1] == "constraint"
    w = SessionWriter.create(tmp_path / "d", experiment="x", subject_id="p1", session=1, subject_kind="human",
                             spec_hash="h", sequence_hash="s", n_trials=1, columns=table_columns(cloze))
    w.append({**cloze[0].to_row(), "response_text": "kite"})
    w.close()
    row = read_rows(w.csv_path)[0]
    assert (row["constraint"], row["response_text"], row["task"]) == (cloze[0].condition, "kite", "completion")


def test_built_in_labels_and_hints_follow_the_specs_language():
    it = Exp(kind="judgment")
    it.language = "it-CH"
    assert [lab for _, lab in task_settings(it, "judgment").labels] == ["Sì", "No"]
    spr = Exp(kind="self_paced_reading")
    spr.language = "it"
    assert task_settings(spr, "self_paced_reading").hint == "Premi SPAZIO per la parola successiva"
    assert task_settings(Exp(kind="completion"), "completion").hint == "Type your answer and press ENTER"
    assert task_settings(Exp(kind="completion", hint=""), "completion").hint == ""  # the spec's own wins
