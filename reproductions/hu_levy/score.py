"""Scoring the queries of one model on the backend contract, with a request-level cache.

Requests go to `Backend.loglikelihood` in chunks sorted by context (a chunk then shares the
template's prefix, which the transformers backend encodes once). Each score is appended to the
cache (`reproductions.pairs.ScoreCache`, keyed by the request's hash, one file per model identity),
so an interrupted or repeated run scores only what is missing. A continuation a served model
could not score (outside its returned top log-probabilities) stays NaN with the backend's reason in
the `unscorable` column, is counted, never guessed, and is not cached (a re-run asks again; the
served backend's own response cache answers without the server);
a whole sentence (empty context) on a sequence-to-sequence backend gets the paper's pseudo-log-
likelihood (`pseudo_loglikelihood`: each word masked in turn), as Hu & Levy score Flan-T5; a request the
backend refuses (a whole-sentence score from a server whose probe failed) stays NaN
with the refusal's reason, and is not cached (a later run asks again).

The scoring convention (`conventions.SCORING`) decides two things here: whether a seq2seq model's
whole sentences get the pseudo-log-likelihood (`authors`, `openai-last-token`) or the backend's
plain score (`exact`), and whether an answer counts all its tokens or only its last sub-token
(`openai-last-token`, the authors' OpenAI code; cached under its own key). A served model's
whole-sentence rule is a backend setting (`conventions.backend_options`).
"""
from __future__ import annotations

import math
import time
from typing import Any, Callable

import pandas as pd

from model_subjects.backends.base import ModelLoadError
from model_subjects.requests import LoglikelihoodRequest
from reproductions.hu_levy.conventions import LAST, uses_pseudo_loglikelihood
from reproductions.hu_levy.prompts import Query


def score_queries(backend: Any, cache: Any, queries: list[Query], chunk: int = 512,
                  progress: Callable[[int, int | None], None] | None = None,
                  scoring: str = "authors") -> tuple[pd.DataFrame, int, float]:
    """(one row per query with its log-probability, requests computed now, seconds spent scoring)."""

    pll = getattr(backend, "pseudo_loglikelihood", None)  # seq2seq: the paper's whole-sentence score
    if not uses_pseudo_loglikelihood(scoring):
        pll = None
    last = scoring == "openai-last-token"
    reqs, whole = {}, {}
    keys = []
    for q in queries:
        r = LoglikelihoodRequest(q.context, q.continuation)
        k = r.key()
        if pll is not None and not q.context:
            k = PLL + k
            if k not in cache.scores:
                whole[k] = q.continuation
        else:
            if last and q.context:  # an answer after a prompt: its last sub-token only
                k = LAST + k
            if k not in cache.scores:
                reqs[k] = r
        keys.append(k)
    if whole:
        for k, v in zip(whole, pll(list(whole.values())), strict=False):
            cache.add(k, v)
        cache.flush()
    todo = sorted(reqs.items(), key=lambda kv: (kv[1].context, kv[1].continuation))
    if progress:
        progress(0, len(todo))
    t0 = time.perf_counter()
    refused: dict[str, str] = {}
    for start in range(0, len(todo), chunk):
        part = todo[start:start + chunk]
        for (k, _), res in zip(part, _score_chunk(backend, part, refused), strict=False):
            if res is None:
                continue
            if math.isnan(res.logprob):  # unscorable: its reason kept, not cached (a re-run asks again)
                refused[k] = res.unscorable or "the backend returned no score"
            elif k.startswith(LAST):
                cache.add(k, float(res.token_logprobs[-1]))
            else:
                cache.add(k, res.logprob)
        cache.flush()
        if progress:
            progress(len(part), None)
    secs = time.perf_counter() - t0
    rows = [{"experiment": q.experiment, "dataset": q.dataset, "item": q.item, "method": q.method, "order": q.order,
             "shown": q.shown, "option": q.option, "context": q.context, "continuation": q.continuation,
             "prompt": q.prompt, "logprob": cache.scores.get(k, math.nan), "request": k,
             "unscorable": refused.get(k, "")} for q, k in zip(queries, keys, strict=False)]
    df = pd.DataFrame(rows)
    df["logprob"] = df["logprob"].astype(float)
    return df, len(todo) + len(whole), secs


PLL = "pll:"  # cache key prefix of a whole sentence's pseudo-log-likelihood (sequence-to-sequence models)


def _score_chunk(backend: Any, part: list, refused: dict[str, str]) -> list:
    """Scores of a chunk; a request the backend refuses (a served model whose probe failed cannot give a
    whole-sentence score) is retried alone, and if refused again left unscored with the reason."""

    try:
        return backend.loglikelihood([r for _, r in part])
    except ModelLoadError:
        out = []
        for k, r in part:
            try:
                out += backend.loglikelihood([r])
            except ModelLoadError as exc:
                refused[k] = str(exc)
                out.append(None)
        return out


def unscorable(scores: pd.DataFrame) -> int:
    return int(scores["logprob"].isna().sum())
