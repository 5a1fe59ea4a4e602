"""Lexical decision for models.

  meta      the string and the task's question with its labels as a prompt (judgment's LabelMeta,
            kinds/judgment/model.py): the labels are scored by log-probability
  direct    log P(string) as a word (after the start token), stored in `sentence_logprob` with its
            per-character mean; the decision needs a criterion and is left to the analysis (response empty,
            not scored; kinds/lexical_decision/analysis.py)
"""
from __future__ import annotations

from typing import Any

from kinds.api import Trial
from kinds.judgment.model import LabelMeta
from model_subjects.protocol_base import Decision, Option, Query
from model_subjects.tasks.base import TaskProtocol, decision, sentence_of
from model_subjects.tasks.registry import ModelKind


class LexicalDirect(TaskProtocol):
    kind, short = "lexical_decision", "direct"
    chat_ok = False

    def queries(self, trial: Trial) -> list[Query]:
        s = sentence_of(trial)
        return [Query("", (Option(s, s),))]

    def decide(self, trial: Trial, scores: list[list[float]], generation: str = "", results: Any = None,
               measured: dict[str, Any] | None = None) -> Decision:
        lp = scores[0][0]
        s = sentence_of(trial)
        extra = {"logprob_per_char": lp / max(1, len(s))}
        if results:
            extra["logprob_per_token"] = lp / max(1, results[0][0].n_tokens)
        return decision("", None, [s], [lp], None, s, extra=extra, columns={"sentence_logprob": lp})

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "scored": "log P(string) after the start token; no decision (criterion-free)"}


MODEL = ModelKind("lexical_decision", surprisal=True, protocols={
    "direct": lambda s, q, n: LexicalDirect(s, n), "meta": lambda s, q, n: LabelMeta("lexical_decision", s, q, n)})
