"""Scoring the queries of one model on the backend contract, with a request-level cache.

Requests go to `Backend.loglikelihood` in chunks sorted by context (a chunk then shares the
template's prefix, which the transformers backend encodes once). Each score is appended to the
cache (`reproductions.pairs.ScoreCache`, keyed by the request's hash, one file per model identity),
so an interrupted or repeated run scores only what is missing. A continuation a served model
could not score (outside its returned top log-probabilities) stays NaN and is counted, never guessed.
"""
from __future__ import annotations

import math
import time
from typing import Any, Callable

import pandas as pd

from reproductions.hu_levy.prompts import Query


def score_queries(backend: Any, cache: Any, queries: list[Query], chunk: int = 512,
                  progress: Callable[[int, int | None], None] | None = None) -> tuple[pd.DataFrame, int, float]:
    """(one row per query with its log-probability, requests computed now, seconds spent scoring)."""
    from model_subjects.requests import LoglikelihoodRequest

    reqs = {}
    keys = []
    for q in queries:
        r = LoglikelihoodRequest(q.context, q.continuation)
        k = r.key()
        keys.append(k)
        if k not in cache.scores:
            reqs[k] = r
    todo = sorted(reqs.items(), key=lambda kv: (kv[1].context, kv[1].continuation))
    if progress:
        progress(0, len(todo))
    t0 = time.perf_counter()
    for start in range(0, len(todo), chunk):
        part = todo[start:start + chunk]
        for (k, _), res in zip(part, backend.loglikelihood([r for _, r in part])):
            cache.add(k, res.logprob)
        cache.flush()
        if progress:
            progress(len(part), None)
    secs = time.perf_counter() - t0
    rows = [{"experiment": q.experiment, "dataset": q.dataset, "item": q.item, "method": q.method, "order": q.order,
             "shown": q.shown, "option": q.option, "context": q.context, "continuation": q.continuation,
             "prompt": q.prompt, "logprob": cache.scores[k], "request": k} for q, k in zip(queries, keys)]
    df = pd.DataFrame(rows)
    df["logprob"] = df["logprob"].astype(float)
    return df, len(todo), secs


def unscorable(scores: pd.DataFrame) -> int:
    return int(sum(1 for v in scores["logprob"] if isinstance(v, float) and math.isnan(v)))
