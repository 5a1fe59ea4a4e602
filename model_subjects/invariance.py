"""Choices that do not depend on batch size or composition.

A batched forward pass is not bit-identical to an unbatched one: padding, shared-prefix caches and
different kernel shapes change the low bits, and in half precision that is enough to flip a
near-tie (on an H100 in bfloat16, 30 of 4,096 forced choices differed between two scorers; on this
project's CPU the margin of the same item moved by up to 0.25 nats between batch 1 and batch 256).
So a trial whose margin is within that noise is scored again with every request on its own
(`Backend.loglikelihood_alone`: one sequence per forward pass, no padding, no shared cache), and the
row records it. A choice with a larger margin cannot flip; a re-scored one is computed the same
way whatever the batch: the choice is the same at any batch size.
"""
from __future__ import annotations

from typing import Any, Sequence

# margins (nats) at or below which a choice is re-scored alone, by dtype: about twice the largest
# batch-vs-alone margin difference measured on the bundled model (CPU; float32 3e-5,
# bfloat16 0.25), and a bf16 run on an H100 (|dlogP| up to 0.29)
TIE_MARGIN = {"float32": 1e-3, "bfloat16": 0.5, "float16": 0.0625}


def tie_margin_for(backend: Any, setting: float | None = None) -> float:
    """The re-scoring threshold: `setting` if given (0 turns re-scoring off), else by the backend's dtype."""
    if setting is not None:
        return max(0.0, float(setting))
    own = getattr(backend, "default_tie_margin", None)  # e.g. a server: nothing to re-score alone
    if own is not None:
        return float(own)
    dtype = getattr(backend, "dtype_name", None) or backend.describe().get("dtype") or "float32"
    return TIE_MARGIN.get(str(dtype), TIE_MARGIN["bfloat16"])


def closest_gap(scores: Sequence[Sequence[float]]) -> float:
    """Smallest gap between the best and the second-best option over a trial's queries (inf: no choice)."""
    gap = float("inf")
    for opts in scores:
        if len(opts) >= 2:
            top = sorted(opts, reverse=True)
            gap = min(gap, top[0] - top[1])
    return gap


def margin_for_tokens(margin: float, n_tokens: int) -> float:
    """The tie margin for options of up to `n_tokens` scored tokens: `margin * sqrt(n_tokens)`.

    The margins above were measured on single-token options; a whole-sentence score sums the noise
    of every token (bfloat16, the bundled model: 13-token sentences moved by up to 0.4 nats between
    two batch compositions, flipping a 0.84-nat choice). Independent per-token errors grow with the
    square root of the count; single-token options keep the measured margin.
    """
    return float(margin) * max(1, int(n_tokens)) ** 0.5


def decision_gap(protocol: Any, trial: Any, scores: Sequence[Sequence[float]]) -> float:
    """How far a trial's choice is from flipping: |margin| of the protocol's decision.

    Not the best-vs-second gap of each query alone: a two-order comparison (Hu & Levy's meta
    prompts) averages two differences, so a model that always answers "1" has wide per-query gaps
    and a margin near zero. Generating protocols (the generation decides) use the option gap.
    """
    if protocol.generates:
        return closest_gap(scores)
    d = protocol.decide(trial, [list(x) for x in scores])
    return abs(d.margin) if d.margin is not None else closest_gap(scores)
