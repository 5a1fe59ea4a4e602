"""What the runner and its variants (replays, weight learners) share below `runner.py`: the error a run stops
with, and how a protocol's decision is taken from the backend's scores (`decide`, `unscorable`). Its own
module so that model_subjects/weight_runs.py and replay.py use them without importing the runner back."""
from __future__ import annotations

import math
from typing import Any

from experiments.trials import Trial
from model_subjects.protocols import Decision, Protocol


class RunError(RuntimeError):
    """A run that cannot start or continue; the message says why and what to do."""


def decide(proto: Protocol, trial: Trial, scores: list[list[float]], results: list[list] | None = None,
           generation: str = "", measured: dict[str, Any] | None = None) -> Decision:
    """The protocol's decision, given what it asks for: the generation (production protocols), the
    backend's results (task protocols: token counts) and the model-side measures (surprisal, rank)."""
    kw: dict[str, Any] = {}
    if getattr(proto, "uses_results", False):
        kw["results"] = results
    if getattr(proto, "measures", False):
        kw["measured"] = measured
    if proto.generates or kw:
        return proto.decide(trial, scores, generation, **kw)  # type: ignore[call-arg]
    return proto.decide(trial, scores)


def unscorable(d: Decision, proto: Protocol, results: list) -> Decision:
    """A trial with an option the backend could not score (NaN, a named reason) is never guessed.

    A scoring protocol's trial becomes unscorable: response `none`, not correct, no margin, the
    model's answer empty in a running history, `extra.unscorable` naming the reason. A generating
    protocol keeps its generated response; only the options' margin is dropped.
    """
    reasons = list(dict.fromkeys(r.unscorable for r in results if getattr(r, "unscorable", None)))
    if not reasons and not any(math.isnan(float(x)) for x in d.option_logprobs):
        return d
    why = "; ".join(reasons) or "an option has no score"
    if proto.generates:
        d.margin = None
        d.extra["unscorable_options"] = why
        return d
    return Decision(response="none", correct=False, option_labels=d.option_labels,
                    option_logprobs=d.option_logprobs, margin=None, answer_text="",
                    extra={**d.extra, "unscorable": why})
