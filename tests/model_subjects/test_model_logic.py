"""Model_subjects without a model: protocols, parsing, contexts, the light CLI import."""
from __future__ import annotations

import subprocess
import sys

import pytest

from experiments.design_compiler import compile_sequence
from experiments.spec import load_spec
from experiments.tasks.form_pair import other_form
from kinds.violation_detection.model import (
    PROTOCOL_NAMES,
    SentenceComparison,
    grammatical_sentence,
    ungrammatical_sentence,
)
from model_subjects.backends.hf import TransformersBackend
from model_subjects.context import ContextError, History, feedback_for, parse_context, static_context
from model_subjects.parsing import parse_lenient, parse_strict
from model_subjects.protocols import ProtocolError, get_protocol


@pytest.fixture(scope="module")
def exp():
    return load_spec("lakretz2021_nested")


@pytest.fixture(scope="module")
def seq(exp):
    return compile_sequence(exp, "m01")


def _first(seq, **want):
    return next(t for t in seq if all(getattr(t.study_record, k) == v for k, v in want.items()))


def test_parsing_strict_and_lenient():
    labels = ["Yes", "No"]
    assert parse_strict(" Yes", labels) == "Yes"
    assert parse_strict(" Yes.", labels) == "Yes"
    assert parse_strict(" yes", labels) is None  # case matters for strict
    assert parse_strict(" Yes, it does", labels) is None
    assert parse_lenient(" yes, it does", labels) == "Yes"
    assert parse_lenient(" I think no. Yes.", labels) == "No"  # earliest mention wins
    assert parse_lenient(" Nothing to say", labels) is None  # 'No' inside a word does not count
    assert parse_strict("", labels) is None and parse_lenient("", labels) is None


def test_every_protocol_name_resolves_and_unknown_names_are_clear():
    for name in PROTOCOL_NAMES:
        assert get_protocol(name).name == name
    with pytest.raises(ProtocolError, match="unknown protocol 'forced'"):
        get_protocol("forced")
    with pytest.raises(ProtocolError, match="MetaQuestionSimple"):
        get_protocol("sentence_judgment:Meta")


def test_forced_choice_and_direct_decisions(seq):
    gram = _first(seq, violation_position="none")
    viol = next(t for t in seq if t.study_record.violation_position != "none")
    fc, direct = get_protocol("forced_choice"), get_protocol("direct")
    for t in (gram, viol):
        q = fc.queries(t)[0]
        assert q.prompt == " ".join(t.words[: t.study_record.critical_index])
        assert [o.continuation for o in q.options] == [" " + t.study_record.correct_form, " " + other_form(t)]
        d = fc.decide(t, [[-1.0, -3.0]])
        assert d.response == t.study_record.correct_form and d.correct and d.margin == pytest.approx(2.0)
        d = fc.decide(t, [[-3.0, -1.0]])
        assert d.response == other_form(t) and not d.correct and d.margin == pytest.approx(-2.0)
    # direct: options are [presented, alternative]; violation iff the presented word is less probable
    d = direct.decide(gram, [[-1.0, -2.0]])
    assert d.response == "no_violation" and d.correct and d.margin == pytest.approx(1.0)
    d = direct.decide(viol, [[-2.0, -1.0]])  # presented (wrong) word less probable -> violation reported
    assert d.response == "violation" and d.correct and d.margin == pytest.approx(1.0)
    d = direct.decide(viol, [[-1.0, -2.0]])
    assert d.response == "no_violation" and not d.correct and d.margin == pytest.approx(-1.0)


def test_violation_judgment_and_hu_levy_prompts(seq):
    viol = next(t for t in seq if t.study_record.violation_position != "none")
    vj = get_protocol("violation_judgment")
    q = vj.queries(viol)[0]
    assert q.prompt.startswith(viol.sentence) and q.prompt.endswith("Answer:")
    d = vj.decide(viol, [[-0.5, -2.0]])
    assert d.response == "violation" and d.correct and d.answer_text == " Yes"
    # Hu & Levy sentence judgment: Yes means a good sentence
    sj = get_protocol("sentence_judgment:MetaQuestionComplex")
    q = sj.queries(viol)[0]
    assert q.prompt == (f"Here is a sentence: {viol.sentence} Is the sentence a good sentence of English? "
                        "Respond with either Yes or No as your answer. Answer:")
    assert sj.decide(viol, [[-2.0, -0.5]]).response == "violation"
    # sentence comparison: both answer orders, margin averages them
    sc = get_protocol("sentence_comparison:MetaQuestionSimple")
    assert isinstance(sc, SentenceComparison)
    q1, q2 = sc.queries(viol)
    g, u = grammatical_sentence(viol), ungrammatical_sentence(viol)
    assert g != u and viol.study_record.correct_form in g.split() and other_form(viol) in u.split()
    assert q1.prompt.index(g) < q1.prompt.index(u) and q2.prompt.index(u) < q2.prompt.index(g)
    d = sc.decide(viol, [[-1.0, -2.0], [-1.5, -1.0]])  # order 1 picks 1 (gram), order 2 picks 2 (gram)
    assert d.correct and d.margin == pytest.approx((1.0 + 0.5) / 2) and len(d.option_logprobs) == 4
    d = sc.decide(viol, [[-1.0, -2.0], [-1.0, -3.0]])  # position bias: always "1"
    assert d.margin == pytest.approx((1.0 - 2.0) / 2) and not d.correct
    # direct sentence judgment scores whole sentences from an empty prompt
    q = get_protocol("sentence_judgment:Direct").queries(viol)[0]
    assert q.prompt == "" and q.options[0].continuation == viol.sentence


def test_production_scoring_keeps_strict_and_lenient(seq):
    viol = next(t for t in seq if t.study_record.violation_position != "none")
    p = get_protocol("production")
    d = p.decide(viol, [[-1.0, -2.0]], " yes, there is")
    assert d.response == "none" and not d.correct  # strict: not exactly an option
    assert d.extra["response_lenient"] == "violation" and d.extra["correct_lenient"]
    d = get_protocol("production:lenient").decide(viol, [[-1.0, -2.0]], " yes, there is")
    assert d.response == "violation" and d.correct
    pc = get_protocol("production:completion")
    d = pc.decide(viol, [[-1.0, -2.0]], f" {viol.study_record.correct_form} the")
    assert d.response == viol.study_record.correct_form and d.correct


def test_context_modes_and_groups():
    assert parse_context("none").label == "none"
    assert parse_context("running").label == "running"
    assert parse_context("running:20").window == 20
    sets = [parse_context("fewshot:eightshot", k).prompt_set for k in range(4)]
    assert sets == ["eightshot_a", "eightshot_b", "eightshot_c", "eightshot_a"]
    assert parse_context("fewshot:twoshot_b").label == "fewshot:twoshot_b"
    for bad in ("fewshot:nope", "running:x", "sometimes"):
        with pytest.raises(ContextError):
            parse_context(bad)
    m = parse_context("fewshot:eightshot_a")
    ctx = static_context(m, "The boy that")
    assert ctx.endswith("are popular.\nThe boy that") and ctx.count("\n") == 8


def test_running_history_is_previous_context_plus_trial_and_its_feedback(exp, seq):
    """context(k) == context(k-1) + exchange(k-1) [+ texts that open a block], for a scripted subject."""
    vj = get_protocol("violation_judgment")
    hist = History(exp)
    contexts, answers = [], []
    for k, trial in enumerate(seq.trials[:45]):  # crosses the training -> test boundary (trial 40)
        hist.begin_trial(trial)
        prompt = vj.queries(trial)[0].prompt
        contexts.append(hist.text + hist.trial_context(prompt))
        answer = " Yes" if k % 3 == 0 else " No"  # the subject's own answers
        d = vj.decide(trial, [[0.0, -1.0] if answer == " Yes" else [-1.0, 0.0]])
        fb = feedback_for(exp, trial, d.correct)
        answers.append((prompt, answer, fb))
        hist.commit(trial, prompt, d.answer_text, fb)
    assert contexts[0].startswith(exp.texts.instructions[0].strip())
    for k in range(1, len(contexts)):
        prompt, answer, fb = answers[k - 1]
        prev = contexts[k - 1]
        exchange = answer + "\n" + fb + "\n"
        assert contexts[k].startswith(prev + exchange), k
        extra = contexts[k][len(prev + exchange):]
        cur_prompt = vj.queries(seq.trials[k])[0].prompt
        opens_block = seq.trials[k].block != seq.trials[k - 1].block
        if opens_block:
            assert exp.block(seq.trials[k].block).intro_text.strip() in extra
        assert extra.endswith(cur_prompt) and (opens_block or extra == cur_prompt)
        # the feedback in the context is the one earned by the subject's own answer
        t_prev = seq.trials[k - 1]
        said_violation = answer == " Yes"
        expected = (exp.feedback.correct_text
                    if said_violation == (t_prev.study_record.correct_response == "violation")
                    else exp.feedback.incorrect_text)
        assert fb == expected


def test_lm_eval_pair_split_moves_trailing_spaces():
    assert TransformersBackend.split_pair("Answer: ", "Yes") == ("Answer:", " Yes")
    assert TransformersBackend.split_pair("a b  ", "c") == ("a b", "  c")
    assert TransformersBackend.split_pair("a b.\n", "The") == ("a b.\n", "The")  # newlines stay
    assert TransformersBackend.split_pair("ab", " c") == ("ab", " c")


def test_cli_module_is_light():
    code = ("import sys, model_subjects.cli, model_subjects.protocols, model_subjects.context, model_subjects.runner;"
            "heavy=[m for m in ('torch','transformers','psychopy','rpy2','pymer4','matplotlib') if m in sys.modules];"
            "print(heavy); sys.exit(1 if heavy else 0)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_near_tie_gap_is_the_decisions_margin_and_grows_with_option_length(seq):
    """A two-order comparison answered "1" both times has wide per-query gaps but a margin near 0:
    that is a near tie. Whole-sentence options get sqrt(tokens) times the single-token margin."""
    from model_subjects.invariance import closest_gap, decision_gap, margin_for_tokens

    trial = seq.trials[0]
    comp = get_protocol("sentence_comparison:MetaQuestionSimple")
    scores = [[-4.17, -5.42], [-4.09, -5.22]]  # measured shape: "1" preferred in both orders
    assert closest_gap(scores) > 1.0
    assert decision_gap(comp, trial, scores) == pytest.approx(abs((1.25 + (-1.13)) / 2))
    fc = get_protocol("forced_choice")
    assert decision_gap(fc, trial, [[-2.0, -2.3]]) == pytest.approx(0.3)
    assert decision_gap(get_protocol("production"), trial, [[-1.0, -1.5]]) == pytest.approx(0.5)
    assert margin_for_tokens(0.5, 1) == 0.5 and margin_for_tokens(0.5, 16) == pytest.approx(2.0)
