"""Judgment for models (lexical decision's `meta` is this LabelMeta: kinds/lexical_decision/model.py).

  meta      the sentence, the task's question and its labels as a prompt; the labels are scored by
            log-probability (Hu & Levy's meta prompts are this); the response is the best label's value
  direct    judgment: log P(sentence) vs log P(pair_sentence) (the item's minimal-pair partner); the
            accepting answer (given when the sentence is the more probable one) is the label whose value
            accepts (experiments.tasks.detection_values: by the values, never by the labels' order)
"""
from __future__ import annotations

from typing import Any

from kinds.api import Trial, detection_values, normalize_answer
from model_subjects.protocol_base import Answer, Decision, Option, ProtocolError, Query
from model_subjects.tasks.base import TaskProtocol, argmax, decision, need, sentence_of, signed_margin
from model_subjects.tasks.registry import ModelKind


class LabelMeta(TaskProtocol):
    short = "meta"

    def __init__(self, kind: str, settings: Any, question: str | None = None, max_new_tokens: int = 8):
        self.kind = kind
        super().__init__(settings, max_new_tokens)
        self.question = question or settings.question

    def prompt(self, trial: Trial) -> str:
        labels = " / ".join(lab.text for lab in self.settings.labels)
        question = trial.mat.get("question") or self.question
        return f"{sentence_of(trial)}\n{question} ({labels})\nAnswer:"

    def queries(self, trial: Trial) -> list[Query]:
        return [Query(self.prompt(trial), tuple(Option(lab.value, " " + lab.text) for lab in self.settings.labels))]

    def correct_option_index(self, trial: Trial) -> int | None:
        """The label whose value the kind scores correct (the item's answer): its value is the response."""
        return self.first_scored_correct(trial, [lab.value for lab in self.settings.labels])

    def decide(self, trial: Trial, scores: list[list[float]], generation: str = "", results: Any = None,
               measured: dict[str, Any] | None = None) -> Decision:
        lps = list(scores[0])
        values = [lab.value for lab in self.settings.labels]
        k = argmax(lps)
        answer = trial.mat.get("answer")
        correct_idx = values.index(str(answer)) if answer is not None and str(answer) in values else None
        return decision(values[k], self.score(trial, values[k]), values, lps, signed_margin(lps, correct_idx),
                        " " + self.settings.labels[k].text)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "question": self.question, "template": "{sentence}\\n{question} "
                                                                             "({labels})\\nAnswer:"}


class JudgmentDirect(TaskProtocol):
    kind, short = "judgment", "direct"
    chat_ok = False

    def _values(self) -> tuple[str, str]:
        """(accepting, rejecting) label values: the one rule acceptance, d' and the page read too."""
        vals = detection_values("judgment", self.settings)
        if vals is None:
            raise ProtocolError(f"protocol {self.name!r} answers accept or reject: it needs a judgment with two "
                                f"labels, not {len(self.settings.labels)}; use --protocol meta")
        return vals

    def check(self, trial: Trial) -> None:
        self._values()
        if trial.mat.get("pair_sentence") in (None, ""):
            raise ProtocolError(f"trial {trial.item_id!r} ({trial.role or 'test'}): protocol {self.name!r} compares "
                                "the "
                                "sentence with its minimal-pair partner and needs `pair_sentence` in every item the "
                                "run asks (practice and fillers too); use --protocol meta, or give the pairs")
        if normalize_answer(trial.mat["pair_sentence"]) == normalize_answer(sentence_of(trial)):
            raise ProtocolError(f"trial {trial.item_id!r} ({trial.role or 'test'}): protocol {self.name!r}: the item's "
                                "pair_sentence is the sentence itself; a comparison of a sentence with itself "
                                "means nothing (give its minimal-pair partner)")

    def queries(self, trial: Trial) -> list[Query]:
        s, p = sentence_of(trial), str(need(trial, "pair_sentence", self.name))
        return [Query("", (Option(s, s), Option(p, p)))]

    def correct_answer(self, trial: Trial) -> Answer | None:
        """The accepting or rejecting value the kind scores correct; the answer text is the sentence, as the
        decision's is whichever it chose (the history words it as `meta` would: `history_entry`)."""
        values = self._values()
        k = self.first_scored_correct(trial, values)
        return None if k is None else Answer(values[k], sentence_of(trial))

    def decide(self, trial: Trial, scores: list[list[float]], generation: str = "", results: Any = None,
               measured: dict[str, Any] | None = None) -> Decision:
        ls, lp = scores[0]
        accept, reject = self._values()
        chosen = accept if ls > lp else reject
        answer = trial.mat.get("answer")
        margin = None
        if answer is not None:
            margin = (ls - lp) if str(answer).strip() == accept else (lp - ls)
        return decision(chosen, self.score(trial, chosen), [sentence_of(trial), str(trial.mat["pair_sentence"])],
                        [ls, lp], margin, sentence_of(trial), columns={"sentence_logprob": ls})

    def history_entry(self, trial: Trial, response: str) -> tuple[str, str]:
        """A running history shows the task's question (as `meta` asks it) and the label the
        log-probabilities chose, so the feedback after it reads as a verdict on that answer."""
        meta = LabelMeta("judgment", self.settings)
        words = {lab.value: " " + lab.text for lab in self.settings.labels}
        return meta.prompt(trial), words.get(str(response), "")

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "rule": "the accepting label (by its value) if log P(sentence) > log "
                                              "P(pair_sentence), "
                "else the rejecting one"}


MODEL = ModelKind("judgment", surprisal=True, protocols={
    "meta": lambda s, q, n: LabelMeta("judgment", s, q, n), "direct": lambda s, q, n: JudgmentDirect(s, n)})
