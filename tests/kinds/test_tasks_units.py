"""The task units (experiments/tasks): scoring against hand-coded answers, the spec's `task:` settings,
the runners' registries against `TaskKind.runners`, and `validate` refusing a task a runner cannot present."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from experiments.spec import SpecError, bundled_spec_path, parse_spec
from experiments.tasks import get_task, registry, runner_problems
from experiments.tasks.regions import regions
from experiments.tasks.scoring import normalize_answer
from experiments.trials import Trial, freeze_pairs
from kinds.choice.task import chosen_position, option_order
from kinds.completion.task import accepted_answers
from kinds.rating.task import rating_value
from kinds.self_paced_reading.task import masked, region_sums


def trial(task: str, **mat) -> Trial:
    return Trial(experiment="x", block="test", trial_index=0, block_trial_index=0, item_id="1:a",
                 feedback=False, item="1", task=task, role="test", materials=freeze_pairs(mat))


@pytest.mark.parametrize("text,norm", [("Dog", "dog"), (" dog. ", "dog"), ("«Dog»!", "dog"), ("DON'T", "don't"),
                                       ("...", ""), ("Straße", "straße"), ("STRASSE", "strasse"),
                                       ("  two \u00a0 words. ", "two words"), ("two words", "two words")])
def test_normalize_answer(text, norm):
    assert normalize_answer(text) == norm


def test_completion_scoring_target_and_variants():
    t = trial("completion", prefix="He drank a cup of", target="tea", accepted=["coffee", "Tea."])
    score = get_task("completion").score
    assert accepted_answers(t.mat) == ["tea", "coffee"]
    assert score(t, "Tea") is True and score(t, " tea!") is True and score(t, "COFFEE.") is True
    assert score(t, "teas") is False and score(t, "") is False and score(t, "milk") is False
    assert score(t, None) is None
    piped = trial("completion", prefix="p", target="car", accepted="auto|Automobile")
    assert score(piped, "automobile") is True and score(piped, "bus") is False


def test_judgment_choice_lexical_scoring():
    j = trial("judgment", sentence="The cats sleeps.", answer="no")
    assert get_task("judgment").score(j, "no") is True and get_task("judgment").score(j, "yes") is False
    assert get_task("judgment").score(j, None) is None
    assert get_task("judgment").score(trial("judgment", sentence="s"), "yes") is None  # a filler: no answer
    c = trial("choice", options=["The cat sleeps.", "The cat sleep."], answer="The cat sleeps.")
    assert (get_task("choice").score(c, "The cat sleeps.") is True
            and get_task("choice").score(c, "The cat sleep.") is False)
    ld = trial("lexical_decision", sentence="blick", answer="nonword")
    assert (get_task("lexical_decision").score(ld, "nonword") is True
            and get_task("lexical_decision").score(ld, "word") is False)
    assert get_task("rating").score(trial("rating", sentence="s"), "5") is None
    spr = trial("self_paced_reading", sentence="a b", question="q?", question_options=["yes", "no"],
                question_answer="yes")
    assert get_task("self_paced_reading").score(spr, "yes") is True
    assert get_task("self_paced_reading").score(trial("self_paced_reading", sentence="a b"), "yes") is None


def lakretz_trial(violation_position: str, correct_response: str) -> Trial:
    return Trial.of_record(experiment="x", block="test", trial_index=0, block_trial_index=0, item_id="1:a",
                           feedback=False, structure="single", condition="S", dependency=None,
                           violation_position=violation_position, words=("the", "boy", "runs"), critical_index=2,
                           critical_word="runs", correct_form="runs", alternative_word="run",
                           correct_response=correct_response, lexicon="x")


def test_violation_detection_scoring_skips_fillers():
    vd = get_task("violation_detection").score
    t = lakretz_trial("none", "no_violation")
    assert vd(t, "no_violation") is True and vd(t, "violation") is False and vd(t, None) is None
    filler = lakretz_trial("other", "violation")
    assert vd(filler, "violation") is None and vd(filler, "no_violation") is None


def test_lakretz_trial_reads_its_record_from_violation_detections_materials():
    t = lakretz_trial("none", "no_violation")
    assert (t.study_record.critical_word, t.study_record.critical_index, t.words, t.study_record.prefix_words) == (
        "runs", 2, ("the", "boy", "runs"), ("the", "boy"))
    assert t.mat["critical_word"] == "runs" and not t.is_generic and t.study_record.grammatical
    flipped = t.with_materials(critical_word="run", violation_position="inner", correct_response="violation")
    assert (flipped.study_record.critical_word == "run" and not flipped.study_record.grammatical
            and flipped.study_record.lexicon == "x")
    with pytest.raises(TypeError, match="unknown"):
        t.with_materials(nonsense=1)
    # a general design's trial: no Lakretz materials, its Lakretz columns follow from it (as always written)
    g = trial("judgment", sentence="The dog barks .", answer="yes")
    assert g.is_generic and (g.study_record.structure, g.study_record.critical_index, g.words,
                             g.study_record.correct_response) == ("x", -1, ("The", "dog", "barks", "."), "yes")


def test_rating_value():
    assert rating_value("5", 7) == 5 and rating_value(7.0, 7) == 7
    assert rating_value("8", 7) is None and rating_value("2.5", 7) is None and rating_value("", 7) is None


def test_option_order_is_a_seeded_permutation():
    a = option_order(4, "counterbalance", "p01:3:a")
    assert sorted(a) == [0, 1, 2, 3] and a == option_order(4, "counterbalance", "p01:3:a")
    assert option_order(4, "fixed", "p01:3:a") == [0, 1, 2, 3]
    orders = {tuple(option_order(2, "counterbalance", f"p01:{k}")) for k in range(40)}
    assert orders == {(0, 1), (1, 0)}  # both positions occur
    assert chosen_position([1, 0], ["A", "B"], "A") == 1 and chosen_position([1, 0], ["A", "B"], "C") is None


def test_regions_and_moving_window():
    mat = {"sentence": "The horse raced past the barn fell.", "regions": "The horse | raced past the barn | fell."}
    assert regions(mat) == [[0, 1], [2, 3, 4, 5], [6]]
    assert region_sums([1, 2, 3, 4, 5, 6, 7], mat) == [3, 18, 7]
    assert regions({"sentence": "a b"}) == [[0], [1]]
    with pytest.raises(ValueError, match="do not split"):
        regions({"sentence": "a b c", "regions": "a | b"})
    assert masked(["The", "horse", "raced"], [1]) == "--- horse -----"


# ---------------------------------------------------------------------------------- spec
def spec_with(task: dict) -> dict:
    data = yaml.safe_load(bundled_spec_path("lakretz2021_demo").read_text())
    data["task"] = task
    return data


def test_task_settings_defaults_and_values():
    exp = parse_spec(spec_with({"kind": "rating", "scale": {"points": 5, "low_label": "bad", "high_label": "good"}}))
    s = exp.task.settings()
    assert s.scale.points == 5 and s.scale.point_keys == ["1", "2", "3", "4", "5"] and s.question
    exp = parse_spec(spec_with({"kind": "judgment", "labels": [{"value": "ok", "text": "OK", "key": "a"},
                                                              {"value": "bad", "text": "Bad", "key": "l"}]}))
    assert [lab.value for lab in exp.task.settings().labels] == ["ok", "bad"]
    assert exp.task.settings().presentation == "whole"
    assert parse_spec(spec_with({"kind": "choice"})).task.settings().positions == "counterbalance"
    assert parse_spec(spec_with({"kind": "self_paced_reading"})).task.settings().presentation == "moving_window"
    # violation detection's settings are its unit's model, read from the Task's own first-release fields
    vd = parse_spec(spec_with({})).task
    assert (vd.settings().response, vd.settings().response_key) == (vd.response, vd.response_key) == ("key", "space")
    panel = {"labels": {"violation": "BAD", "no_violation": "OK"}, "left": "no_violation"}
    vd = parse_spec(spec_with({"response": "panel", "panel": panel})).task
    assert vd.settings().panel["labels"] == panel["labels"] and vd.given_settings() == {}


@pytest.mark.parametrize("task,match", [
    ({"kind": "judgment", "scale": {"points": 7}}, "scale: not a setting of task kind 'judgment'"),
    ({"kind": "violation_detection", "question": "?"}, "question: not a setting of task kind 'violation_detection'"),
    ({"kind": "rating", "scale": {"points": 5, "keys": ["1", "2"]}}, "2 keys for 5 points"),
    ({"kind": "rating", "scale": {"points": 11}}, "needs scale.keys"),
    ({"kind": "judgment", "labels": [{"value": "a", "text": "A"}, {"value": "a", "text": "B"}]}, "value 'a' given "
                                                                                                 "twice"),
    ({"kind": "lexical_decision", "labels": [{"value": "yes", "text": "A"}, {"value": "no", "text": "B"}]},
     "word and nonword"),
    ({"kind": "judgment", "presentation": "moving_window"}, "presentation"),
    ({"kind": "cloze"}, "task.kind"),
])
def test_bad_task_settings_are_refused_naming_the_field(task, match):
    with pytest.raises(SpecError, match=match):
        parse_spec(spec_with(task), where="s.yaml")


def test_lakretz_hashes_unchanged():
    from experiments.spec import load_spec

    # golden hashes from before the task settings existed
    assert load_spec("lakretz2021_nested").spec_hash == "91d1347b4fcbc6bb"
    assert load_spec("lakretz2021_demo").spec_hash == "7c1ead8a14ac9b7b"
    assert parse_spec(spec_with({"kind": "forced_choice"})).spec_hash != load_spec("lakretz2021_demo").spec_hash


# ---------------------------------------------------------------------------------- registries
def test_model_runner_registry_agrees_with_task_kinds():
    from model_subjects.tasks.registry import model_kinds, protocol_names

    tables = {name for name, mk in model_kinds().items() if mk.resolve is None}  # kinds named by short tables
    for name, kind in registry().items():
        model_here = name in tables or name in ("violation_detection", "forced_choice")
        assert ("model" in kind.runners) == model_here, name
        if name in tables:
            assert list(kind.model_protocols) and set(kind.model_protocols) <= set(protocol_names(name)), name
            assert set(protocol_names(name)) <= set(kind.model_protocols), name


def test_runner_problems_name_the_runner():
    assert runner_problems("violation_detection") == []
    msgs = runner_problems("forced_choice")
    assert any("PsychoPy runner" in m for m in msgs) and any("browser runner" in m for m in msgs)


def test_a_model_only_task_validates_and_the_human_runners_refuse_it(tmp_path: Path):
    """`task.kind: forced_choice` (model subjects only) validates, saying which runners can run it;
    run-human and web refuse it before anything is written, naming the runners that can."""
    from tests.cli_refusal import refused, twinlab

    p = tmp_path / "fc.yaml"
    p.write_text(yaml.safe_dump(spec_with({"kind": "forced_choice"})))
    r = twinlab("validate", str(p))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "runners: model subjects (run-model) only" in r.stdout + r.stderr
    msg = refused("run-human", str(p), "--participant", "p01", "--out", str(tmp_path / "h"), match="forced_choice")
    assert "run-model" in msg and not (tmp_path / "h").exists()
    msg = refused("web", "build", str(p), "--out", str(tmp_path / "w"), match="forced_choice")
    assert "run-model" in msg


def test_violation_detection_answers_on_screen_and_its_outcome():
    """The kind's own answers (the panel's, its `left` answer first, or the one violation key) through the
    runners' settings, and the rows' correctness rule (a panel left unanswered is neither right nor wrong)."""
    from experiments.tasks.record import Answer
    from kinds.violation_detection.task import outcome
    from participants.tasks.settings import task_settings

    class Exp:
        language = "en"

        def __init__(self, task):
            self.task = task

    panel = {"labels": {"violation": "BAD", "no_violation": "OK"}, "keys": {"violation": "d", "no_violation": "k"},
             "left": "no_violation"}
    task = parse_spec(spec_with({"response": "panel", "panel": panel})).task
    s = task_settings(Exp(task), "violation_detection")
    kind = get_task("violation_detection")
    assert kind.answers(None, s) == [Answer("no_violation", "OK", "k"), Answer("violation", "BAD", "d")]
    s = task_settings(Exp(parse_spec(spec_with({"response_key": "v"})).task), "violation_detection")
    assert kind.answers(None, s) == [Answer("violation", "?", "v")]

    class T:
        class study_record:  # noqa: N801 (the record adapter's view, as Trial.study_record gives it)
            correct_response = "violation"
            violation_position = "other"  # a filler: the analysis leaves it unscored, the row says right or wrong

    assert outcome(T, "violation") is True and outcome(T, "no_violation") is False
    assert outcome(T, "none", answered=False) is None and kind.score(T, "violation") is None
