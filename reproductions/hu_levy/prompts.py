"""The four methods' prompts for the four experiments, and the scoring requests they make.

Two texts of the same prompts:

* `authors` (the reproduction's default, `conventions.DEFAULT_PROMPT_TEXT`): as the authors' released
  code assembles them (utils/llm.py `make_prompt`): the same
  words with a blank line ("\\n\\n") before the sentence or the answer, "..." for the ellipsis,
  and two wordings that differ from the printed Table 3: MetaQuestionSimple has "(arrow, or
  interview?)?" and MetaInstruct "what word is more likely" (the table prints "(arrow, or
  interview)?" and "most likely"). The paper's numbers came from this text;
* `paper`: exactly as the paper's Tables 2, 3, 4a and 4b print them, one line each.

Chinese (Appendix D, `language="zh"`): the authors' `utils/llm_zh.py` texts (`prompts_zh.py`), one variant only.

Both are tested character for character (tests/reproductions/test_hu_levy_prompts.py): `paper` against the printed
examples, `authors` against the released code's `make_prompt` output, transcribed.

Every prompt is a template whose last field is `{answer}`: the text before it is the context, the
answer the continuation whose log-probability is read (`LoglikelihoodRequest`; trailing spaces of the
context move into the continuation, as every twinlab backend tokenises a pair).

Answer orders (the paper's `goodFirst`/`badFirst`): Experiments 2 and 3b present the two options in
both orders for the Meta* methods; Direct presents no options (order `none`). Experiment 3's Direct
measurement (full-sentence log-probabilities) is the same for 3a and 3b, as in the paper.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from reproductions.hu_levy.data import Dataset, Item
from reproductions.hu_levy.prompts_zh import TEMPLATES_ZH, YES_NO_ZH

METHODS = ("Direct", "MetaQuestionSimple", "MetaInstruct", "MetaQuestionComplex")
META = METHODS[1:]
ORDERS = ("goodFirst", "badFirst")
VARIANTS = ("paper", "authors")

_YN = "Respond with either Yes or No as your answer."
_12 = "Respond with either 1 or 2 as your answer."

# (variant, task, method) -> template; task: word_pred, word_comparison, sentence_judge, sentence_comparison
TEMPLATES: dict[tuple[str, str, str], str] = {
    # ---- as printed (Tables 2, 3, 4a, 4b)
    ("paper", "word_pred", "Direct"): "{prefix} {answer}",
    ("paper", "word_pred", "MetaQuestionSimple"):
        "What word is most likely to come next in the following sentence? {prefix} {answer}",
    ("paper", "word_pred", "MetaInstruct"):
        "You are a helpful writing assistant. Tell me what word is most likely to come next in the following "
        "sentence: {prefix} {answer}",
    ("paper", "word_pred", "MetaQuestionComplex"):
        "Here is the beginning of an English sentence: {prefix}\u2026 What is the best next word? Answer: {answer}",
    ("paper", "word_comparison", "Direct"): "{prefix} {answer}",
    ("paper", "word_comparison", "MetaQuestionSimple"):
        "What word is most likely to come next in the following sentence ({options})? {prefix} {answer}",
    ("paper", "word_comparison", "MetaInstruct"):
        "You are a helpful writing assistant. Tell me what word is most likely to come next in the following "
        "sentence ({options}?): {prefix} {answer}",
    ("paper", "word_comparison", "MetaQuestionComplex"):
        "Here is the beginning of an English sentence: {prefix}\u2026 What word is more likely to come next: "
        "{options}? Answer: {answer}",
    ("paper", "sentence_judge", "Direct"): "{answer}",
    ("paper", "sentence_judge", "MetaQuestionSimple"):
        "Is the following sentence a good sentence of English? {sentence} " + _YN + " {answer}",
    ("paper", "sentence_judge", "MetaInstruct"):
        "You are a helpful writing assistant. Tell me if the following sentence is a good sentence of English. "
        "{sentence} " + _YN + " {answer}",
    ("paper", "sentence_judge", "MetaQuestionComplex"):
        "Here is a sentence: {sentence} Is the sentence a good sentence of English? " + _YN + " Answer: {answer}",
    ("paper", "sentence_comparison", "Direct"): "{answer}",
    ("paper", "sentence_comparison", "MetaQuestionSimple"):
        "Which sentence is a better English sentence? 1) {s1} 2) {s2} " + _12 + " {answer}",
    ("paper", "sentence_comparison", "MetaInstruct"):
        "You are a helpful writing assistant. Tell me which sentence is a better English sentence. 1) {s1} 2) {s2} "
        + _12 + " {answer}",
    ("paper", "sentence_comparison", "MetaQuestionComplex"):
        "Here are two English sentences: 1) {s1} 2) {s2} Which sentence is a better English sentence? " + _12
        + " Answer: {answer}",
    # ---- as the released code assembles them (utils/llm.py)
    ("authors", "word_pred", "Direct"): "{prefix} {answer}",
    ("authors", "word_pred", "MetaQuestionSimple"):
        "What word is most likely to come next in the following sentence?\n\n{prefix} {answer}",
    ("authors", "word_pred", "MetaInstruct"):
        "You are a helpful writing assistant. Tell me what word is most likely to come next in the following "
        "sentence:\n\n{prefix} {answer}",
    ("authors", "word_pred", "MetaQuestionComplex"):
        "Here is the beginning of an English sentence: {prefix}... What is the best next word?\n\nAnswer: {answer}",
    ("authors", "word_comparison", "Direct"): "{prefix} {answer}",
    ("authors", "word_comparison", "MetaQuestionSimple"):
        "What word is most likely to come next in the following sentence ({options}?)?\n\n{prefix} {answer}",
    ("authors", "word_comparison", "MetaInstruct"):
        "You are a helpful writing assistant. Tell me what word is more likely to come next in the following "
        "sentence ({options}?):\n\n{prefix} {answer}",
    ("authors", "word_comparison", "MetaQuestionComplex"):
        "Here is the beginning of an English sentence: {prefix}... What word is more likely to come next: "
        "{options}?\n\nAnswer: {answer}",
    ("authors", "sentence_judge", "Direct"): "{answer}",
    ("authors", "sentence_judge", "MetaQuestionSimple"):
        "Is the following sentence a good sentence of English? {sentence} " + _YN + "\n\n{answer}",
    ("authors", "sentence_judge", "MetaInstruct"):
        "You are a helpful writing assistant. Tell me if the following sentence is a good sentence of English."
        "\n\n{sentence} " + _YN + "\n\n{answer}",
    ("authors", "sentence_judge", "MetaQuestionComplex"):
        "Here is a sentence:\n\n{sentence} Is the sentence a good sentence of English? " + _YN + "\n\nAnswer: {answer}",
    ("authors", "sentence_comparison", "Direct"): "{answer}",
    ("authors", "sentence_comparison", "MetaQuestionSimple"):
        "Which sentence is a better English sentence? 1) {s1} 2) {s2} " + _12 + "\n\n{answer}",
    ("authors", "sentence_comparison", "MetaInstruct"):
        "You are a helpful writing assistant. Tell me which sentence is a better English sentence.\n\n1) {s1} "
        "2) {s2} " + _12 + "\n\n{answer}",
    ("authors", "sentence_comparison", "MetaQuestionComplex"):
        "Here are two English sentences:\n\n1) {s1} 2) {s2} Which sentence is a better English sentence? " + _12
        + "\n\nAnswer: {answer}",
}
TASKS = {"1": "word_pred", "2": "word_comparison", "3a": "sentence_judge", "3b": "sentence_comparison"}
TASK_LABELS = {"1": "Word prediction (Exp 1)", "2": "Word comparison (Exp 2)", "3a": "Sentence judgment (Exp 3a)",
               "3b": "Sentence comparison (Exp 3b)"}


LANGUAGES = ("en", "zh")


def template(variant: str, experiment: str, method: str, language: str = "en") -> str:
    """The template of one experiment and method: English by variant, Chinese (`prompts_zh`) the authors' only."""
    if language == "zh":
        return TEMPLATES_ZH[(TASKS[experiment], method)]
    return TEMPLATES[(variant, TASKS[experiment], method)]


def render(variant: str, experiment: str, method: str, answer: str, language: str = "en",
           **fields: str) -> tuple[str, str]:
    """(context, continuation) of one prompt: the template's text before `{answer}`, and the answer."""
    template_ = template(variant, experiment, method, language)
    assert template_.endswith("{answer}")
    context = template_[: -len("{answer}")].format(**fields)
    return context, answer


@dataclass(frozen=True)
class Query:
    """One scored continuation: which item, method and order it belongs to, and the text."""

    experiment: str
    dataset: str
    item: str
    method: str
    order: str  # goodFirst | badFirst | none
    shown: str  # 3a: the sentence in the prompt (good|bad); otherwise "pair"/"item"
    option: str  # what the continuation stands for: word | good | bad | Yes | No
    context: str
    continuation: str

    @property
    def prompt(self) -> str:
        return self.context + self.continuation


def item_queries(experiment: str, it: Item, method: str, variant: str, language: str = "en") -> list[Query]:
    """The requests of one item under one method (both answer orders where the paper uses them).

    In Chinese (`language="zh"`) 3a's answers are 是/否 (their options keep the names Yes/No)."""

    def q(order, shown, option, ctx_ans):
        return Query(experiment, it.dataset, it.item_id, method, order, shown, option, *ctx_ans)

    render = functools.partial(_render, language=language)
    if experiment == "1":
        return [q("none", "item", "word", render(variant, "1", method, it.continuation, prefix=it.prefix))]
    if experiment == "2":
        good, bad = it.continuation, it.bad_continuation
        orders = ("none",) if method == "Direct" else ORDERS
        out = []
        for order in orders:
            opts = f"{good}, or {bad}" if order in ("goodFirst", "none") else f"{bad}, or {good}"
            for option, word in (("good", good), ("bad", bad)):
                out.append(q(order, "pair", option, render(variant, "2", method, word, prefix=it.prefix, options=opts)))
        return out
    if method == "Direct":  # 3a and 3b: the full sentences, from the start token
        return [q("none", "pair", option, render(variant, experiment, "Direct", s))
                for option, s in (("good", it.good_sentence), ("bad", it.bad_sentence))]
    if experiment == "3a":
        said = _yes_no(language)
        return [q("none", shown, answer, render(variant, "3a", method, said[answer], sentence=s))
                for shown, s in (("good", it.good_sentence), ("bad", it.bad_sentence)) for answer in ("Yes", "No")]
    out = []
    for order in ORDERS:
        s1, s2 = (it.good_sentence, it.bad_sentence) if order == "goodFirst" else (it.bad_sentence, it.good_sentence)
        labels = {"good": "1", "bad": "2"} if order == "goodFirst" else {"good": "2", "bad": "1"}
        for option in ("good", "bad"):
            out.append(q(order, "pair", option, render(variant, "3b", method, labels[option], s1=s1, s2=s2)))
    return out


_render = render


def _yes_no(language: str) -> dict[str, str]:
    if language == "zh":
        return YES_NO_ZH
    return {"Yes": "Yes", "No": "No"}


def all_queries(datasets: list[Dataset], experiments: tuple[str, ...], variant: str,
                language: str = "en") -> list[Query]:
    out = []
    for ds in datasets:
        for exp in experiments:
            if exp not in ds.spec.experiments:
                continue
            for it in ds.items:
                for method in METHODS:
                    out += item_queries(exp, it, method, variant, language)
    return out


def templates_text(variant: str, language: str = "en") -> dict[str, str]:
    """The templates of a variant, for provenance (name -> text)."""
    if language == "zh":
        return {f"{task}:{method}": t for (task, method), t in TEMPLATES_ZH.items()}
    return {f"{task}:{method}": t for (v, task, method), t in TEMPLATES.items() if v == variant}
