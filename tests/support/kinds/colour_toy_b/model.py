"""The model-only toy kind's `model` part: its one protocol, the word and the question, the two answers scored."""
from __future__ import annotations

from typing import Any

from model_subjects.protocol_base import Option, Query
from model_subjects.tasks.base import TaskProtocol, argmax, decision, sentence_of
from model_subjects.tasks.registry import ModelKind

NAME = "colour_toy_b"


class ToyMeta(TaskProtocol):
    kind, short = NAME, "meta"

    def queries(self, trial: Any) -> list[Query]:
        prompt = f"{sentence_of(trial)}\n{self.settings.question}\nAnswer:"
        return [Query(prompt, (Option("colour", " colour"), Option("other", " other")))]

    def decide(self, trial: Any, scores: list[list[float]], generation: str = "", results: Any = None,
               measured: dict[str, Any] | None = None):
        lps = list(scores[0])
        k = argmax(lps)
        value = ("colour", "other")[k]
        return decision(value, self.score(trial, value), ["colour", "other"], lps, None, " " + value,
                        columns={"colour_margin": lps[0] - lps[1]})  # its own declared column


MODEL = ModelKind(NAME, protocols={"meta": lambda s, q, n: ToyMeta(s, n)})
