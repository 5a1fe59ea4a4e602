"""Equal scoring across runners: the same raw answers through the PsychoPy path (logic.derive on the raw
record the PsychoPy window writes), the browser path (the server's check of a posted trial,
participants.web.results.web_task_row) and the model path (the kind's protocol deciding from scores or
a generation) give the same `response`, `correct` and kind columns (property-based, hypothesis).

The reference is the rule written out by hand here (NFC, lower case, surrounding punctuation and white
space trimmed), not the code under test. The page's own normaliser (participants/web/js/twinlab-task.js,
driven by the rule the server ships) is run in Node on the same strings.
"""
from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import unicodedata
from datetime import datetime, timezone

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from experiments.design_compiler import compile_sequence
from experiments.spec import load_spec
from experiments.tasks import detection_values, get_task
from experiments.tasks.record import derive
from experiments.tasks.scoring import RULE, normalize_answer
from experiments.trials import freeze_pairs
from participants.tasks import settings_for
from participants.tasks.logic import screen_order
from participants.web.results import web_task_row

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NOW = datetime.now(timezone.utc).isoformat()


def by_hand(text: str) -> str:
    """The rule, written out independently: NFC, lower, strip P*/Z*/controls at both ends, collapse spaces."""
    space = lambda c: unicodedata.category(c)[0] == "Z" or c in "\t\n\v\f\r\ufeff"  # noqa: E731
    t = unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).lower())
    while t and (unicodedata.category(t[0])[0] == "P" or space(t[0])):
        t = t[1:]
    while t and (unicodedata.category(t[-1])[0] == "P" or space(t[-1])):
        t = t[:-1]
    return re.sub(" +", " ", "".join(" " if space(c) else c for c in t))


def first_trial(spec: str, kind: str):
    exp = load_spec(spec)
    seq = compile_sequence(exp, "p01", exp.seed)
    t = next(t for t in seq if t.task == kind)
    return exp, seq, t


def with_materials(t, **mat):
    m = {**t.mat, **mat}
    return dataclasses.replace(t, feedback=False, materials=freeze_pairs(dict(sorted(m.items()))))


def post(t, raw):
    return {"trial_index": t.trial_index, "item_id": t.item_id, "task": t.task, "frame_ms": 16.7, "raw": raw,
            "word_onsets": [], "feedback_onset": None, "iti_onset": 5000.0, "end": 5300.0, "feedback_text": None,
            "started_at": NOW, "ended_at": NOW}


def three_paths_keyed(exp, seq, t, pos_original: int, model_decision):
    """(psychopy, browser, model) rows' (response, correct) when the participant chooses the answer that is
    option/label `pos_original` of the item (original order) and the model's scores favour it too."""
    s = settings_for(exp, t)
    from experiments.tasks.record import answers

    order = screen_order(t, seq, s) if t.task == "choice" else None
    ans = answers(t, s, order)
    screen = order.index(pos_original) if order is not None else pos_original
    key = ans[screen].key
    raw = {"response_onset": 100.0, "presses": [{"key": key, "t": 612.5}], "pointers": [],
           "answered_by": f"key:{key}", "answer_time": 612.5}
    ps = derive(t, s, order, json.loads(json.dumps(raw)))
    web = web_task_row(post(t, raw), t, seq, exp, subject_id="p01", session=1)
    d = model_decision(t, pos_original)
    return (ps["response"], ps["correct"]), (web["response"], web["correct"]), (d.response, d.correct)


# ---- judgment ---------------------------------------------------------------------------------------
SURROUND = st.text(alphabet=" .!?«»\"'\u00a0\t", max_size=3)


@SETTINGS
@given(pick=st.integers(0, 1), which=st.integers(0, 1), case=st.sampled_from([str.lower, str.upper, str.title]),
       left=SURROUND, right=SURROUND)
def test_judgment_three_runners_agree(pick, which, case, left, right):
    from kinds.judgment.model import LabelMeta

    exp, seq, t = first_trial("acceptability_yesno", "judgment")
    values = [lab.value for lab in exp.task.settings().labels]
    answer = left + case(values[which]) + right  # the item's answer as a file may write it
    t = with_materials(t, answer=answer)
    if answer.strip() == values[which]:
        get_task("judgment").check_item(t.mat, exp.task.settings(), "x")  # validate accepts the exact value
    else:  # validate refuses any other spelling of a label's value; the runners still score it alike
        with pytest.raises(ValueError, match="not a label's value"):
            get_task("judgment").check_item(t.mat, exp.task.settings(), "x")
    proto = LabelMeta("judgment", exp.task.settings())

    def model(tr, k):
        return proto.decide(tr, [[0.0 if i == k else -5.0 for i in range(len(values))]])

    a, b, c = three_paths_keyed(exp, seq, t, pick, model)
    assert a == b == c == (values[pick], pick == which)


# ---- choice -----------------------------------------------------------------------------------------
WORDS = st.sampled_from(["café", "Café", "naïve", "résumé", "cat", "dog", "cats", "über"])


@SETTINGS
@given(opts=st.lists(WORDS, min_size=2, max_size=2, unique=True), which=st.integers(0, 3), pick=st.integers(0, 3),
       form=st.sampled_from(["NFC", "NFD"]), case=st.sampled_from([str.lower, str.upper, str.title]), right=SURROUND)
def test_choice_three_runners_agree(opts, which, pick, form, case, right):
    from kinds.choice.model import ChoiceDirect

    assume(len({by_hand(o) for o in opts}) == len(opts))  # validate refuses options that tie
    which, pick = which % len(opts), pick % len(opts)
    exp, seq, t = first_trial("minimal_pairs_2afc", "choice")
    answer = unicodedata.normalize(form, case(opts[which])) + right
    t = with_materials(t, options=list(opts), answer=answer)
    get_task("choice").check_item(t.mat, exp.task.settings(), "x")
    proto = ChoiceDirect(exp.task.settings())

    def model(tr, k):
        return proto.decide(tr, [[0.0 if i == k else -5.0 for i in range(len(opts))]])

    a, b, c = three_paths_keyed(exp, seq, t, pick, model)
    assert a == b == c == (opts[pick], pick == which)


def test_choice_identical_options_never_correct():
    exp, seq, t = first_trial("minimal_pairs_2afc", "choice")
    tie = with_materials(t, options=["The cat.", "the cat"], answer="The cat.")
    assert get_task("choice").score(tie, "The cat.") is False
    with pytest.raises(ValueError, match="same text"):
        get_task("choice").check_item(tie.mat, exp.task.settings(), "items.csv: line 2")


# ---- completion ---------------------------------------------------------------------------------------
LETTERS = st.text(alphabet="abcdefghijklmnopqrstuvwxyzéü", min_size=1, max_size=8)
MARKS = st.text(alphabet="'-.,", max_size=2)
KEY_OF = {" ": "space", "'": "apostrophe", "-": "minus", ".": "period", ",": "comma"}


@SETTINGS
@given(target=LETTERS, typed_word=st.one_of(st.none(), LETTERS), pre=MARKS, post_=MARKS,
       sp=st.sampled_from(["", " ", "  "]), form=st.sampled_from(["NFC", "NFD"]),
       case=st.sampled_from([str.lower, str.upper, str.title]))
def test_completion_three_runners_agree(target, typed_word, pre, post_, sp, form, case):
    """A person types `word` (None: the target) wrapped in marks and spaces; the item's target is written
    in any case and either Unicode form; the model generates the same text."""
    from kinds.completion.model import CompletionProduction

    exp, seq, t = first_trial("cloze", "completion")
    word = target if typed_word is None else typed_word
    text = sp + pre + unicodedata.normalize("NFC", word) + post_ + sp
    t = with_materials(t, target=unicodedata.normalize(form, case(target)), accepted=[])
    s = settings_for(exp, t)
    keys = [KEY_OF.get(c, c) for c in text] + ["return"]
    raw = {"response_onset": 50.0, "presses": [{"key": k, "t": 100.0 + 10 * i} for i, k in enumerate(keys)],
           "pointers": [], "submit_time": 100.0 + 10 * (len(keys) - 1), "text": text}
    ps = derive(t, s, None, json.loads(json.dumps(raw)))
    web = web_task_row(post(t, raw), t, seq, exp, subject_id="p01", session=1)
    d = CompletionProduction(exp.task.settings()).decide(t, [[-3.0]], generation=text)
    expected = by_hand(text) == by_hand(target)
    assert (ps["response"], ps["correct"], ps["response_text"]) == (text.strip(), expected, text)
    assert (web["response"], web["correct"], web["response_text"]) == (text.strip(), expected, text)
    assert (d.response, d.correct) == (text.strip(), expected)


def test_completion_bread_with_a_period_is_correct_and_empty_is_refused_or_wrong():
    from experiments.tasks.record import TaskResultError
    from kinds.completion.model import CompletionProduction

    exp, seq, t = first_trial("cloze", "completion")
    t = with_materials(t, target="bread", accepted=["toast"])
    s = settings_for(exp, t)
    assert get_task("completion").score(t, "Bread.") is True and get_task("completion").score(t, "breads") is False
    raw = {"response_onset": 0.0, "presses": [{"key": "return", "t": 10.0}], "pointers": [], "submit_time": 10.0,
           "text": ""}
    with pytest.raises(TaskResultError, match="empty"):  # a person cannot submit an empty answer
        derive(t, s, None, raw)
    d = CompletionProduction(exp.task.settings()).decide(t, [[-3.0]], generation="")
    assert (d.response, d.correct) == ("", False)  # a model's empty answer is wrong, not unscored


def test_normaliser_matches_a_hand_reference():
    for text in ["Bread.", " «Bread» ", "DON'T", "two\u00a0 words.", "Cafe\u0301", "...", "Straße"]:
        assert normalize_answer(text) == by_hand(text), text


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_pages_normaliser_from_the_shipped_rule_equals_pythons():
    """The page's normalizeBy (twinlab-task.js), given RULE as the server ships it, on awkward strings."""
    from pathlib import Path

    js = (Path(__file__).resolve().parents[2] / "participants" / "web" / "js" / "twinlab-task.js").read_text()
    start = js.index("function normalizeBy")
    body = js[start:js.index("\n  }\n", start) + 4]
    samples = ["Bread.", " «Bread» ", "DON'T", "two\u00a0 words.", "Cafe\u0301", "...", "ΣΟΦΟΣ", "İstanbul",
               "\ufeffword\u3000", "a\t\tb", "¿Qué?", "—dash—", "x_y", "naïve!", "Ǆemal"]
    prog = body + f"\nconsole.log(JSON.stringify({json.dumps(samples)}.map(s => normalizeBy({json.dumps(RULE)}, s))));"
    out = subprocess.run(["node", "-e", prog], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [normalize_answer(s) for s in samples]


# ---- detection values -----------------------------------------------------------------------------------
def test_detection_values():
    assert detection_values("judgment", {}) == ("yes", "no")
    assert detection_values("judgment", {"labels": [{"value": "ok", "text": "OK"}, {"value": "bad", "text": "B"}]}) \
        == ("ok", "bad")
    assert detection_values("judgment", load_spec("acceptability_yesno").task.settings()) == ("yes", "no")
    assert detection_values("judgment", {"labels": [{"value": v, "text": v} for v in "abc"]}) is None
    assert detection_values("violation_detection", {}) == ("no_violation", "violation")
    assert detection_values("lexical_decision", None) == ("word", "nonword")
    assert detection_values("rating", {}) is None and detection_values("completion", {}) is None


# ---- option order -----------------------------------------------------------------------------------------
def test_positions_fixed_is_honoured_by_both_human_runners_and_counterbalance_still_moves():
    """`task.positions: fixed`: PsychoPy's order (participants.tasks, the same call run_task_trial makes), the
    page's answers (payload.task_view) and the server's check all keep the item's order on every trial."""
    from participants.web.payload import task_view

    exp = load_spec("minimal_pairs_2afc")
    fixed = exp.model_copy(update={"task": exp.task.model_copy(update={"positions": "fixed"})})
    seq = compile_sequence(fixed, "p01", fixed.seed)
    choice = [t for t in seq if t.task == "choice"]
    assert len(choice) >= 6
    for t in choice:
        s = settings_for(fixed, t)
        assert s.positions == "fixed" and screen_order(t, seq, s) == [0, 1]
        assert [a["value"] for a in task_view(t, seq, fixed)["answers"]] == [str(o) for o in t.mat["options"]]
    moved = [screen_order(t, seq, settings_for(exp, t)) for t in choice]
    assert [1, 0] in moved and [0, 1] in moved  # the default counterbalances


def test_ties_of_identical_options_are_never_correct_for_models():
    """Equal log-probabilities of identical options (or forms) can never make a trial correct: the choice
    kind scores it wrong, forced choice and judgment `direct` refuse the item."""
    from kinds.choice.model import ChoiceDirect
    from kinds.judgment.model import JudgmentDirect
    from kinds.violation_detection.model import ForcedChoice
    from model_subjects.protocols import ProtocolError

    exp, seq, t = first_trial("minimal_pairs_2afc", "choice")
    tie = with_materials(t, options=["The cat sleeps.", "the cat sleeps"], answer="The cat sleeps.")
    d = ChoiceDirect(exp.task.settings()).decide(tie, [[-4.0, -4.0]])
    assert d.correct is False
    exp, seq, t = first_trial("acceptability_yesno", "judgment")
    same = with_materials(t, pair_sentence=t.mat["sentence"] + " ")
    with pytest.raises(ProtocolError, match="sentence itself"):
        JudgmentDirect(exp.task.settings()).check(same)
    lak = compile_sequence(load_spec("lakretz2021_demo"), "p01", 1)[0]
    flat = lak.with_materials(alternative_word=lak.study_record.correct_form,
                              critical_word=lak.study_record.correct_form)
    with pytest.raises(ProtocolError, match="identical"):
        ForcedChoice().check(flat)
    assert ForcedChoice().decide(flat, [[-2.0, -2.0]]).correct is False


# ---- lexical decision and rating ------------------------------------------------------------------------
@SETTINGS
@given(pick=st.integers(0, 1), which=st.sampled_from(["word", "nonword", "Word", " nonword.", "", "maybe"]))
def test_lexical_decision_three_runners_agree(pick, which):
    """Any answer an item may carry (exact values; others validate refuses, empty: unscored) is scored alike."""
    from kinds.judgment.model import LabelMeta

    exp, seq, t = first_trial("lexical_decision", "lexical_decision")
    t = with_materials(t, answer=which)
    s = settings_for(exp, t)
    values = [v for v, _ in s.labels]  # screen order (nonword, word)
    proto = LabelMeta("lexical_decision", exp.task.settings())
    model_values = [lab.value for lab in exp.task.settings().labels]

    def model(tr, k):  # the model's scores favour the label the person chose
        return proto.decide(tr, [[0.0 if v == values[k] else -5.0 for v in model_values]])

    a, b, c = three_paths_keyed(exp, seq, t, pick, model)
    want = None if which.strip(" .") == "" else by_hand(values[pick]) == by_hand(which)
    assert a == b == c == (values[pick], want)


@SETTINGS
@given(pick=st.integers(0, 6))
def test_rating_three_runners_agree(pick):
    from kinds.rating.model import RatingMeta

    exp, seq, t = first_trial("acceptability_rating", "rating")
    t = with_materials(t)
    proto = RatingMeta(exp.task.settings())
    n = exp.task.settings().scale.points

    def model(tr, k):
        return proto.decide(tr, [[0.0 if i == k else -5.0 for i in range(n)]])

    a, b, c = three_paths_keyed(exp, seq, t, pick % n, model)
    assert a == b == c == (str(pick % n + 1), None)
