"""Rating for models.

  meta    the sentence and the question with the scale (`1 = low label, k = high label`) as a prompt; the
          k point labels " 1".." k" are scored; their softmax is the model's distribution over the scale:
          `rating_expected` (its mean) and `rating` (its argmax) are both stored
  direct  the sentence's log-probability after the start token: total (`sentence_logprob`), per token,
          and SLOR ((log P - log P_unigram) / tokens, Lau et al. 2017) when the item gives
          `unigram_logprob` (the sentence's unigram log-probability, natural log)
"""
from __future__ import annotations

from typing import Any

from kinds.api import Trial
from model_subjects.protocol_base import Decision, Option, Query
from model_subjects.tasks.base import TaskProtocol, argmax, decision, sentence_of, softmax


class RatingMeta(TaskProtocol):
    kind, short = "rating", "meta"

    def __init__(self, settings: Any = None, max_new_tokens: int = 8, question: str | None = None):
        super().__init__(settings, max_new_tokens)
        self.question = question or settings.question

    def prompt(self, trial: Trial) -> str:
        sc = self.settings.scale
        ends = []
        if sc.low_label:
            ends.append(f"1 = {sc.low_label}")
        if sc.high_label:
            ends.append(f"{sc.points} = {sc.high_label}")
        scale = f"a scale from 1 to {sc.points}" + (f" ({', '.join(ends)})" if ends else "")
        question = trial.mat.get("question") or self.question
        return f"{sentence_of(trial)}\n{question} Answer on {scale}.\nAnswer:"

    def queries(self, trial: Trial) -> list[Query]:
        return [Query(self.prompt(trial), tuple(Option(str(v), f" {v}") for v in self.settings.scale.values))]

    def decide(self, trial: Trial, scores: list[list[float]], generation: str = "", results: Any = None,
               measured: dict[str, Any] | None = None) -> Decision:
        lps = list(scores[0])
        values = self.settings.scale.values
        p = softmax(lps)
        k = argmax(lps)
        expected = sum(v * q for v, q in zip(values, p, strict=False))
        return decision(str(values[k]), None, [str(v) for v in values], lps, None, f" {values[k]}",
                        extra={"rating_distribution": p},
                        columns={"rating": float(values[k]), "rating_expected": expected})

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "question": self.question,
                "distribution": "softmax of the point labels' log-probabilities"}


class RatingDirect(TaskProtocol):
    kind, short = "rating", "direct"
    chat_ok = False

    def queries(self, trial: Trial) -> list[Query]:
        s = sentence_of(trial)
        return [Query("", (Option(s, s),))]

    def decide(self, trial: Trial, scores: list[list[float]], generation: str = "", results: Any = None,
               measured: dict[str, Any] | None = None) -> Decision:
        lp = scores[0][0]
        s = sentence_of(trial)
        extra: dict[str, Any] = {}
        if results:
            n = max(1, results[0][0].n_tokens)
            extra["n_tokens"] = n
            extra["logprob_per_token"] = lp / n
            uni = trial.mat.get("unigram_logprob")
            if uni not in (None, ""):
                extra["slor"] = (lp - float(uni)) / n
        return decision("", None, [s], [lp], None, s, extra=extra, columns={"sentence_logprob": lp})


from model_subjects.tasks.registry import ModelKind  # noqa: E402 (beside the kind's MODEL it builds)

MODEL = ModelKind("rating", surprisal=True, protocols={
    "meta": lambda s, q, n: RatingMeta(s, n, q), "direct": lambda s, q, n: RatingDirect(s, n)})
