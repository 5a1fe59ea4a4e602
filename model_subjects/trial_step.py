"""One trial of a model subject, the same step in every loop (batched, running, running together, weights that
learn, replay): the protocol's queries after the loop's contexts become requests, the backend's scores
(`Scored`) become the protocol's decision (`decisions.decide`, the one decision step), the decision a row.

The loops differ only in how the contexts are built and the requests scored (a batch across trials, a growing
KV cache, one cache row per subject, re-encoded contexts with weights that change): `requests` and `on_stream`
are the two ways of asking, `score_trial` is what follows the scores everywhere."""
from __future__ import annotations

from typing import Any, Callable

from experiments.trials import Trial
from model_subjects.context import option_text
from model_subjects.decisions import Scored, decide
from model_subjects.protocol_base import Decision, Query
from model_subjects.requests import LoglikelihoodRequest


def option_texts(query: Query, chat: Any) -> list[str]:
    """The continuations scored after a query's prompt (chat strips their leading space)."""
    return [option_text(o.continuation, chat) for o in query.options]


def requests(queries: list[Query], contexts: list[str], chat: Any) -> tuple[list[LoglikelihoodRequest], list]:
    """Every query's options after its context, as one flat list of requests, and each query's (start, count)."""
    reqs: list[LoglikelihoodRequest] = []
    spans = []
    for q, ctx in zip(queries, contexts, strict=False):
        spans.append((len(reqs), len(q.options)))
        reqs += [LoglikelihoodRequest(ctx, text) for text in option_texts(q, chat)]
    return reqs, spans


def per_query(results: list, spans: list) -> list[list]:
    """The flat results of `requests` back per query."""
    return [[results[a + i] for i in range(n)] for a, n in spans]


def on_stream(score: Callable[[str, list[str]], list], queries: list[Query], contexts: list[str],
              chat: Any) -> Scored:
    """A trial scored on a growing context (`score(context, options)`: a stream's), last query first: the first
    query's prompt is what the history shows, so its tokens stay in the cache for the commit after it."""
    results: list[list] = [[] for _ in queries]
    for qi in reversed(range(len(queries))):
        results[qi] = list(score(contexts[qi], option_texts(queries[qi], chat)))
    return Scored([[r.logprob for r in res] for res in results], results)


def score_trial(runner: Any, st: Any, trial: Trial, queries: list[Query], scored: Scored, *, context_text: str,
                started: str, after: Callable[[Decision], str | None] = lambda d: None) -> tuple[Decision, str | None]:
    """The protocol's decision on the scores, then the row: `after(decision)` is the loop's own part between
    them (the feedback text the row records, returned; a replay's person, a learner's update, added to the
    decision); the row is written to the subject's session (`Runner.make_row`, `Runner._write`). Returns the
    decision and the feedback text (what a running history shows after the answer)."""
    d = decide(runner.protocol, trial, scored)
    feedback = after(d)
    runner._write(st, runner.make_row(st, trial, d, context_text, feedback, started, queries[0].prompt))
    return d, feedback
