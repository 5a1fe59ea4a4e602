"""The template kind's `model` part: how a model subject is asked (one protocol, `meta`: the question as a
prompt, the two answers scored by their log-probabilities)."""
from __future__ import annotations

from typing import Any

from kinds.api import Trial
from model_subjects.protocol_base import Decision, Option, Query
from model_subjects.tasks.base import TaskProtocol, argmax, decision, sentence_of
from model_subjects.tasks.registry import ModelKind

NAME = __name__.rsplit(".", 2)[-2]  # the kind is named after its folder
ANSWERS = ("yes", "no")


class Meta(TaskProtocol):
    """The sentence, the kind's question, then each answer scored as the prompt's continuation."""

    kind, short = NAME, "meta"

    def queries(self, trial: Trial) -> list[Query]:
        prompt = f"{sentence_of(trial)}\n{self.settings.question}\nAnswer:"
        return [Query(prompt, tuple(Option(a, " " + a) for a in ANSWERS))]

    def decide(self, trial: Trial, scores: list[list[float]], generation: str = "", results: Any = None) -> Decision:
        lps = list(scores[0])
        value = ANSWERS[argmax(lps)]
        return decision(value, self.score(trial, value), list(ANSWERS), lps, None, " " + value,
                        columns={"yes_margin": lps[0] - lps[1]})  # the column the kind declares


MODEL = ModelKind(NAME, protocols={"meta": lambda settings, question, n: Meta(settings, n)})
