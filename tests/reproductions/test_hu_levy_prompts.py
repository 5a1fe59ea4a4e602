"""Hu & Levy prompts: the paper's printed examples (Tables 2, 3, 4a, 4b) character for character, and
the authors' released code's text (utils/llm.py make_prompt), transcribed here as literal strings."""
from __future__ import annotations

import pytest

from reproductions.hu_levy.data import Item
from reproductions.hu_levy.prompts import METHODS, item_queries, render

# ---- the paper's tables, as printed ({a, b} stands for the two scored continuations)
TABLE2 = {  # Experiment 1, "A butterfly is a flying insect with four large wings"
    "Direct": "A butterfly is a flying insect with four large wings",
    "MetaQuestionSimple": "What word is most likely to come next in the following sentence? A butterfly is a flying "
                          "insect with four large wings",
    "MetaInstruct": "You are a helpful writing assistant. Tell me what word is most likely to come next in the "
                    "following sentence: A butterfly is a flying insect with four large wings",
    "MetaQuestionComplex": "Here is the beginning of an English sentence: A butterfly is a flying insect with four "
                           "large\u2026 What is the best next word? Answer: wings",
}
TABLE3 = {  # Experiment 2
    "Direct": "The archer released the {arrow, interview}",
    "MetaQuestionSimple": "What word is most likely to come next in the following sentence (arrow, or interview)? "
                          "The archer released the {arrow, interview}",
    "MetaInstruct": "You are a helpful writing assistant. Tell me what word is most likely to come next in the "
                    "following sentence (arrow, or interview?): The archer released the {arrow, interview}",
    "MetaQuestionComplex": "Here is the beginning of an English sentence: The archer released the\u2026 What word is "
                           "more likely to come next: arrow, or interview? Answer: {arrow, interview}",
}
TABLE4A = {  # Experiment 3a (Direct: the two sentences)
    "MetaQuestionSimple": "Is the following sentence a good sentence of English? Every child has studied. Respond "
                          "with either Yes or No as your answer. {Yes, No}",
    "MetaInstruct": "You are a helpful writing assistant. Tell me if the following sentence is a good sentence of "
                    "English. Every child has studied. Respond with either Yes or No as your answer. {Yes, No}",
    "MetaQuestionComplex": "Here is a sentence: Every child has studied. Is the sentence a good sentence of English? "
                           "Respond with either Yes or No as your answer. Answer: {Yes, No}",
}
TABLE4B = {  # Experiment 3b (the table's MetaQuestionComplex example shows the bad sentence first)
    "MetaQuestionSimple": "Which sentence is a better English sentence? 1) Every child has studied. 2) Every child "
                          "have studied. Respond with either 1 or 2 as your answer. {1, 2}",
    "MetaInstruct": "You are a helpful writing assistant. Tell me which sentence is a better English sentence. 1) "
                    "Every child has studied. 2) Every child have studied. Respond with either 1 or 2 as your answer. "
                    "{1, 2}",
    "MetaQuestionComplex": "Here are two English sentences: 1) Every child have studied. 2) Every child has studied. "
                           "Which sentence is a better English sentence? Respond with either 1 or 2 as your answer. "
                           "Answer: {1, 2}",
}


def expand(printed: str) -> list[str]:
    """'... {a, b}' -> ['... a', '... b'] (the table's notation for the two scored continuations)."""
    head, _, opts = printed.rpartition("{")
    return [head + o.strip() for o in opts.rstrip("}").split(",")]


BUTTERFLY = Item("p18", "1", 2, prefix="A butterfly is a flying insect with four large", continuation="wings")
ARCHER = Item("dtfit", "1", 2, prefix="The archer released the", continuation="arrow", bad_continuation="interview")
CHILD = Item("blimp", "1", 2, good_sentence="Every child has studied.", bad_sentence="Every child have studied.")


@pytest.mark.parametrize("method", METHODS)
def test_experiment1_prompts_are_table2(method):
    (q,) = item_queries("1", BUTTERFLY, method, "paper")
    assert q.prompt == TABLE2[method]
    assert q.continuation == "wings" and q.context.endswith(" ")  # the space moves into the continuation


@pytest.mark.parametrize("method", METHODS)
def test_experiment2_prompts_are_table3_in_the_good_first_order(method):
    qs = item_queries("2", ARCHER, method, "paper")
    first = [q for q in qs if q.order in ("goodFirst", "none")]
    assert [q.prompt for q in first] == expand(TABLE3[method])
    assert [q.option for q in first] == ["good", "bad"]
    if method == "Direct":
        assert {q.order for q in qs} == {"none"} and len(qs) == 2
    else:  # the other order swaps the options in the question, nothing else
        second = [q.prompt for q in qs if q.order == "badFirst"]
        assert second == [p.replace("arrow, or interview", "interview, or arrow") for p in expand(TABLE3[method])]


@pytest.mark.parametrize("method", METHODS[1:])
def test_experiment3a_prompts_are_table4a(method):
    qs = item_queries("3a", CHILD, method, "paper")
    good = [q.prompt for q in qs if q.shown == "good"]
    assert good == expand(TABLE4A[method])
    bad = [q.prompt for q in qs if q.shown == "bad"]
    assert bad == [p.replace("Every child has studied.", "Every child have studied.") for p in good]


@pytest.mark.parametrize("method", METHODS[1:])
def test_experiment3b_prompts_are_table4b(method):
    qs = item_queries("3b", CHILD, method, "paper")
    order = "badFirst" if method == "MetaQuestionComplex" else "goodFirst"
    shown = [q for q in qs if q.order == order]
    assert sorted(q.prompt for q in shown) == expand(TABLE4B[method])
    labels = {q.option: q.continuation for q in shown}  # the good sentence's label is its position
    assert labels == ({"good": "2", "bad": "1"} if order == "badFirst" else {"good": "1", "bad": "2"})


def test_direct_sentence_scores_are_the_sentences_from_the_start():
    for exp in ("3a", "3b"):
        qs = item_queries(exp, CHILD, "Direct", "paper")
        assert [(q.context, q.continuation, q.option) for q in qs] == [
            ("", "Every child has studied.", "good"), ("", "Every child have studied.", "bad")]


# ---- the authors' released code (utils/llm.py make_prompt), transcribed: its output for every experiment and
# method (Direct: `prefix + " " + continuation`; 3a/3b Direct: the sentence alone, get_full_sentence_logprob)
AUTHORS = {
    ("1", "Direct"): "A butterfly is a flying insect with four large wings",
    ("1", "MetaInstruct"): "You are a helpful writing assistant. Tell me what word is most likely to come next in the "
                           "following sentence:\n\nA butterfly is a flying insect with four large wings",
    ("2", "Direct"): "The archer released the arrow",
    ("2", "MetaQuestionComplex"): "Here is the beginning of an English sentence: The archer released the... What word "
                                  "is more likely to come next: arrow, or interview?\n\nAnswer: arrow",
    ("3a", "Direct"): "Every child has studied.",
    ("3a", "MetaQuestionSimple"): "Is the following sentence a good sentence of English? Every child has studied. "
                                  "Respond with either Yes or No as your answer.\n\nYes",
    ("3a", "MetaQuestionComplex"): "Here is a sentence:\n\nEvery child has studied. Is the sentence a good sentence of "
                                   "English? Respond with either Yes or No as your answer.\n\nAnswer: Yes",
    ("3b", "Direct"): "Every child has studied.",
    ("3b", "MetaQuestionSimple"): "Which sentence is a better English sentence? 1) Every child has studied. 2) Every "
                                  "child have studied. Respond with either 1 or 2 as your answer.\n\n1",
    ("3b", "MetaInstruct"): "You are a helpful writing assistant. Tell me which sentence is a better English "
                            "sentence.\n\n1) Every child has studied. 2) Every child have studied. Respond with either "
                            "1 or 2 as your answer.\n\n1",
    ("1", "MetaQuestionSimple"): "What word is most likely to come next in the following sentence?\n\n"
                                 "A butterfly is a flying insect with four large wings",
    ("1", "MetaQuestionComplex"): "Here is the beginning of an English sentence: A butterfly is a flying insect with "
                                  "four large... What is the best next word?\n\nAnswer: wings",
    ("2", "MetaQuestionSimple"): "What word is most likely to come next in the following sentence (arrow, or "
                                 "interview?)?\n\nThe archer released the arrow",
    ("2", "MetaInstruct"): "You are a helpful writing assistant. Tell me what word is more likely to come next in the "
                           "following sentence (arrow, or interview?):\n\nThe archer released the arrow",
    ("3a", "MetaInstruct"): "You are a helpful writing assistant. Tell me if the following sentence is a good sentence "
                            "of English.\n\nEvery child has studied. Respond with either Yes or No as your answer."
                            "\n\nYes",
    ("3b", "MetaQuestionComplex"): "Here are two English sentences:\n\n1) Every child has studied. 2) Every child "
                                   "have studied. Which sentence is a better English sentence? Respond with either 1 "
                                   "or 2 as your answer.\n\nAnswer: 1",
}


def test_every_experiment_and_method_has_a_transcribed_authors_prompt():
    assert set(AUTHORS) == {(e, m) for e in ("1", "2", "3a", "3b") for m in METHODS}


def test_the_reproduction_defaults_to_the_authors_text():
    from reproductions.hu_levy.conventions import DEFAULT_PROMPT_TEXT
    from reproductions.hu_levy2023 import Options

    assert DEFAULT_PROMPT_TEXT == "authors" and Options(models=[None], out=None).prompt_text == "authors"


@pytest.mark.parametrize("key", list(AUTHORS))
def test_authors_text_is_the_released_codes(key):
    exp, method = key
    item = {"1": BUTTERFLY, "2": ARCHER, "3a": CHILD, "3b": CHILD}[exp]
    q = item_queries(exp, item, method, "authors")[0]
    assert q.prompt == AUTHORS[key]


def test_the_two_texts_differ_only_in_whitespace_ellipsis_and_two_table3_wordings():
    for exp, item in (("1", BUTTERFLY), ("2", ARCHER), ("3a", CHILD), ("3b", CHILD)):
        for method in METHODS:
            for p, a in zip(item_queries(exp, item, method, "paper"), item_queries(exp, item, method, "authors"),
                            strict=False):
                norm = " ".join(a.prompt.split()).replace("...", "\u2026")
                if (exp, method) == ("2", "MetaQuestionSimple"):
                    norm = norm.replace("?)?", ")?")
                if (exp, method) == ("2", "MetaInstruct"):
                    norm = norm.replace("what word is more likely", "what word is most likely")
                assert norm == p.prompt, (exp, method)


def test_render_splits_at_the_answer():
    assert render("paper", "3a", "MetaQuestionComplex", "Yes", sentence="A b.") == (
        "Here is a sentence: A b. Is the sentence a good sentence of English? Respond with either Yes or No as your "
        "answer. Answer: ", "Yes")
