"""A reading trial in a replay's history (the surprisal protocol, the only model protocol of self-paced reading):
the sentence the person read, then the comprehension question as the item gives it and the person's answer; the
model's own row (answered with the sentence) as before; a session run under the rule before (v3) keeps its history.
Expectations are written from the bundled spec's items (materials read directly)."""
from __future__ import annotations

from experiments.design_compiler import compile_sequence
from experiments.spec import load_spec
from model_subjects.context import RULE, history_entry, protocol_for


def test_a_reading_trial_shows_the_sentence_the_question_and_the_persons_answer():
    exp = load_spec("self_paced_reading")
    proto = protocol_for(exp, "surprisal")
    trials = list(compile_sequence(exp, "P01"))
    asked = next(t for t in trials if t.mat.get("question"))
    sentence, question = asked.mat["sentence"], asked.mat["question"]
    answer = str(asked.mat["question_answer"])
    e = history_entry(proto, asked, answer, None, rule=RULE)
    assert (e.question, e.answer) == (f"{sentence}\n{question}", f" {answer}")
    plain = history_entry(proto, asked, " ".join(sentence.split()), None, rule=RULE)   # the model's own row
    assert (plain.question, plain.answer) == ("", " ".join(sentence.split()))
    old = history_entry(proto, asked, answer, None, rule="twinlab-context-v3")   # a session run before keeps it
    assert (old.question, old.answer) == ("", f" {answer}")
    unasked = next(t for t in trials if not t.mat.get("question"))   # 4 of the 8 trials ask nothing
    e = history_entry(proto, unasked, "", None, rule=RULE)   # read, nothing asked: the sentence and no answer
    assert (e.question, e.answer) == (unasked.mat["sentence"], "")
