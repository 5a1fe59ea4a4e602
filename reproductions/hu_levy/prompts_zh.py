"""Hu & Levy (2023), Appendix D: the Chinese prompt texts, as data.

Source: the `chinese` branch of jennhu/metalinguistic-prompting (commit a8e6096), `utils/llm_zh.py`
(`make_prompt_zh`, `_make_prompt_yesno`, `_make_prompt_forcedchoice`), translated from the English
prompts by a native speaker (the paper's acknowledgements: Peng Qian). The texts below are that
code's output for each (task, method), transcribed character for character: full-width punctuation,
the "……" ellipsis, the space after "开头：" in word prediction's MetaQuestionComplex (and not in word
comparison's), the blank lines. The paper prints no Chinese prompt, so there is no `paper` variant.

What differs from English (the released code's `zh` branches, `utils/models.py`, the run scripts):
* the answer follows the sentence with no space (`prefix + continuation`): Chinese has no spaces
  between words, so Experiment 1's Direct prompt is the prefix and the gold characters joined;
* Experiment 3a's answers are 是 (yes) and 否 (no), 3b's are 1 and 2 as in English;
* the Mandarin minimal pairs are scored as the corpus holds them, words separated by spaces.

tests/reproductions/test_hu_levy_zh.py checks these texts against the prompts the authors stored in their outputs.
"""
from __future__ import annotations

SOURCE = "jennhu/metalinguistic-prompting, branch chinese (a8e6096), utils/llm_zh.py"

_YN = "请用“是”或者“否”来回答。"
_12 = "请用1或者2来回答。"

# (task, method) -> template; `{answer}` last: the text before it is the context.
TEMPLATES_ZH: dict[tuple[str, str], str] = {
    ("word_pred", "Direct"): "{prefix}{answer}",
    ("word_pred", "MetaQuestionSimple"): "哪一个词最有可能接在下面这句话之后？\n\n{prefix}{answer}",
    ("word_pred", "MetaInstruct"):
        "你是一个善于帮助的写作助理。请告诉我哪一个词最有可能接在下面这句话之后：\n\n{prefix}{answer}",
    ("word_pred", "MetaQuestionComplex"): "以下是一句话的开头： {prefix}…… 哪一个词最适合接在其后？\n\n答案：{answer}",
    ("sentence_judge", "Direct"): "{answer}",
    ("sentence_judge", "MetaQuestionSimple"): "下面这句话在中文里是否通顺？ {sentence} " + _YN + "\n\n{answer}",
    ("sentence_judge", "MetaInstruct"):
        "你是一个善于帮助的写作助理。请告诉我以下这句话在中文里是否通顺。\n\n{sentence} " + _YN + "\n\n{answer}",
    ("sentence_judge", "MetaQuestionComplex"):
        "以下是一句话：\n\n{sentence} 这句话在中文里是否通顺？" + _YN + "\n\n答案：{answer}",
    ("sentence_comparison", "Direct"): "{answer}",
    ("sentence_comparison", "MetaQuestionSimple"):
        "以下哪一句话在中文里更为通顺？1) {s1} 2) {s2} " + _12 + "\n\n{answer}",
    ("sentence_comparison", "MetaInstruct"):
        "你是一个善于帮助的写作助理。请告诉我以下哪一句话在中文里更为通顺？\n\n1) {s1} 2) {s2} " + _12 + "\n\n{answer}",
    ("sentence_comparison", "MetaQuestionComplex"):
        "以下是两句话：\n\n1) {s1} 2) {s2} 哪一句话在中文里更为通顺？" + _12 + "\n\n答案：{answer}",
}
YES_NO_ZH = {"Yes": "是", "No": "否"}  # Experiment 3a's answers (the measures keep the names Yes/No)
EXPERIMENTS_ZH = ("1", "3a", "3b")  # the Chinese branch has no Experiment 2 materials
