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

    def correct_option_index(self, trial: Trial) -> int | None:
        """The answer the kind scores correct (the item's `answer`): a weight learner's step teaches that option
        (its label as the response, its continuation as the answer text; `Protocol.correct_answer`). A protocol
        whose response or answer text is not an option's overrides `correct_answer` instead; one without a right
        answer (a rating, a measure) leaves both out."""
        return self.first_scored_correct(trial, ANSWERS)

    def decide(self, trial: Trial, scores: list[list[float]], generation: str = "", results: Any = None,
               measured: dict[str, Any] | None = None) -> Decision:
        """The more probable answer is the response. The signature is every protocol's (the runner passes each
        argument by name); this protocol reads the scores alone (`scores[0][k]`: option k's log-probability)."""
        lps = list(scores[0])
        value = ANSWERS[argmax(lps)]
        return decision(value, self.score(trial, value), list(ANSWERS), lps, None, " " + value,
                        columns={"yes_margin": lps[0] - lps[1]})  # the column the kind declares


MODEL = ModelKind(NAME, protocols={"meta": lambda settings, question, n: Meta(settings, n)})
