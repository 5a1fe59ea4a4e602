"""What the runner and its variants (replays, weight learners) share below `runner.py`: the error a run stops
with, and the decision step: a protocol's decision from what the backend gave for one trial (`Scored`), with
unscorable options never guessed. Its own module so that model_subjects/trial_step.py, weight_runs.py and
replay.py use them without importing the runner back."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from experiments.trials import Trial
from model_subjects.protocol_base import Decision
from model_subjects.protocols import Protocol


class RunError(RuntimeError):
    """A run that cannot start or continue; the message says why and what to do."""


@dataclass
class Scored:
    """What the backend gave for one trial, in the protocol's query order.

    `scores[q][o]`: the log-probabilities the decision reads (a near tie's re-scored alone, `rescored_alone`);
    `results[q][o]`: the backend's LoglikelihoodResults of the batch or stream (token counts, unscorable
    reasons); `generation`: a generating protocol's text; `measured`: a measuring protocol's columns."""

    scores: list[list[float]]
    results: list[list[Any]] = field(default_factory=list)
    generation: str = ""
    measured: dict[str, Any] | None = None
    rescored_alone: bool = False


def decide(proto: Protocol, trial: Trial, scored: Scored) -> Decision:
    """The decision step: the protocol's decision (one signature for every protocol), unscorable options
    never guessed (`unscorable`), a re-scored near tie marked (`extra.rescored_alone`)."""
    d = proto.decide(trial, scored.scores, scored.generation, results=scored.results, measured=scored.measured)
    d = unscorable(d, proto, [r for query in scored.results for r in query])
    if scored.rescored_alone:
        d.extra["rescored_alone"] = True
    return d


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
