"""What every task protocol shares: the item's texts, margins, and the hooks the runner calls.

A task protocol is a `Protocol` (queries -> scores -> Decision, model_subjects/protocol_base.py: one `decide`
signature, with the backend's results and, for a protocol that `measures`, its `measure` columns).
"""
from __future__ import annotations

import math
from typing import Any, Sequence

from experiments.tasks import get_task
from experiments.trials import Trial
from model_subjects.protocol_base import Decision, Protocol, ProtocolError


def sentence_of(trial: Trial) -> str:
    """The item's sentence (the generic `sentence`, else the presented words)."""
    return str(trial.mat.get("sentence") or trial.sentence)


def need(trial: Trial, key: str, protocol: str) -> Any:
    value = trial.mat.get(key)
    if value in (None, "", ()):
        raise ProtocolError(f"trial {trial.item_id!r}: protocol {protocol!r} needs `{key}` in the item's materials")
    return value


def signed_margin(logprobs: Sequence[float], correct: int | None) -> float | None:
    """log P(correct option) - the best other option's (None when there is no correct option)."""
    if correct is None or len(logprobs) < 2:
        return None
    others = [x for i, x in enumerate(logprobs) if i != correct]
    return float(logprobs[correct] - max(others))


def argmax(xs: Sequence[float]) -> int:
    """Index of the largest value (the first on a tie; NaN never wins)."""
    best = 0
    for i, x in enumerate(xs):
        if not math.isnan(x) and (math.isnan(xs[best]) or x > xs[best]):
            best = i
    return best


def softmax(xs: Sequence[float]) -> list[float]:
    m = max(xs)
    e = [math.exp(x - m) for x in xs]
    z = sum(e)
    return [v / z for v in e]


class TaskProtocol(Protocol):
    """A protocol of one task kind; `name` is `<kind>:<protocol>` in the table's `protocol` column."""

    kind: str = ""
    short: str = ""

    def __init__(self, settings: Any = None, max_new_tokens: int = 8):
        self.settings = settings
        self.max_new_tokens = max_new_tokens
        self.name = f"{self.kind}:{self.short}"

    def check(self, trial: Trial) -> None:
        """Refuse (ProtocolError) a trial this protocol cannot ask; default: building its queries."""
        self.queries(trial)

    def score(self, trial: Trial, response: Any) -> bool | None:
        return get_task(self.kind).score(trial, response)

    def first_scored_correct(self, trial: Trial, values: Sequence[str]) -> int | None:
        """The first of `values` the kind scores correct (`score`, the rule a decision's `correct` follows): the
        right answer among a protocol's options. None: the kind scores none of them correct."""
        return next((k for k, value in enumerate(values) if self.score(trial, value)), None)

    def describe(self) -> dict[str, Any]:
        d = {**super().describe(), "kind": self.kind}
        if self.settings is not None and hasattr(self.settings, "describe"):
            d["task_settings"] = self.settings.describe()
        if self.generates:
            d.update({"decoding": "greedy", "max_new_tokens": self.max_new_tokens, "until": list(self.until),
                      "skip_leading_whitespace": True})
        return d


def decision(response: str, correct: bool | None, labels: list[str], logprobs: list[float], margin: float | None,
             answer_text: str, extra: dict[str, Any] | None = None, columns: dict[str, Any] | None = None) -> Decision:
    return Decision(response=response, correct=correct, option_labels=labels,  # type: ignore[arg-type]
                    option_logprobs=logprobs, margin=margin, answer_text=answer_text,
                    extra=dict(extra or {}), columns=dict(columns or {}))


def mean_logprobs(logprobs: Sequence[float], results: Sequence[Any] | None) -> list[float | None]:
    """Per-token means (Hu & Frank's multiple-choice score); None without token counts."""
    if not results:
        return [None] * len(logprobs)
    return [lp / r.n_tokens if r.n_tokens else None for lp, r in zip(logprobs, results, strict=False)]
