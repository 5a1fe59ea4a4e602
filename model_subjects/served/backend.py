"""A model behind an OpenAI-compatible server (vLLM, llama.cpp's server, llama-cpp-python's server).

Only `/v1/completions` is used (plus `/v1/models`, and a tokenize endpoint when there is one):

  * generation: `{"prompt": context, "max_tokens": K, "temperature": 0, "stop": [...]}` (greedy);
  * next-token scoring (every server): `{"prompt": context, "max_tokens": 1, "temperature": 0,
    "logprobs": N}`; an option that is one token is read from the first position's top-N
    log-probabilities, a longer one token by token (`_chain`: with the server's tokenizer, each
    prompt checked to encode to context + the tokens before). When a token is not among them (or
    its text names several tokens) its score is unknown: the trial is written as unscorable
    (response `none`, `extra.unscorable` names the reason) and counted, never guessed;
  * prompt scoring (only after the probe, `model_subjects.served.probe`, has shown the server's echo
    is right): `{"prompt": context + continuation, "max_tokens": 1, "temperature": 0, "logprobs": 1,
    "echo": true}`; the continuation's tokens are those whose `text_offset` is at or after the
    context's end, summed as lm-evaluation-harness does.

A whole sentence (an empty context) needs its first token's log-probability, which a server gives
only when it puts a BOS token before the text. `whole_sentence="exact"` (default) refuses the score
otherwise; `whole_sentence="after-first"` sums the tokens after the first there (with a BOS, every
token), the rule of Hu & Levy's OpenAI code (`get_full_sentence_logprob`: `token_logprobs[1:]`).
From next-token log-probabilities (no echo) the first token is never scored under "after-first"
(a prompt cannot be empty): the sentence is split at its first token by the server's tokenizer.

Requests run concurrently (at most `max_in_flight` at once, one pooled HTTP client), so a server
batches across items and subjects and reuses cached prefixes; each answer is cached on disk
(`ResponseCache`) and every request is sent at most once per model. A running context is sent
whole with every query (the server's prefix cache is what makes that cheap).
"""
from __future__ import annotations

import hashlib
import math
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from model_subjects.backends.base import Backend, Progress, Stream, TextStream
from model_subjects.loading import cache_root
from model_subjects.requests import GenerationRequest, LoglikelihoodRequest, LoglikelihoodResult, split_pair
from model_subjects.served.cache import ResponseCache, canonical
from model_subjects.served.client import RetryPolicy, ServerClient, ServerError
from model_subjects.served.probe import PROBE_TOLERANCE, ProbeReport, run_probe

SCORING_MODES = ("auto", "echo", "next-token")
WHOLE_SENTENCE_RULES = ("exact", "after-first")
COMPLETIONS = "/v1/completions"


def default_cache_dir() -> Path:
    return cache_root() / "served"


def cut_generation(text: str, until: Sequence[str], skip_leading_whitespace: bool) -> str:
    """As the local backends: cut before the first stop string (after leading whitespace if asked)."""
    b0 = len(text) - len(text.lstrip()) if skip_leading_whitespace else 0
    cut = min([text.index(s, b0) for s in until if s and s in text[b0:]] or [len(text)])
    return text[:cut]


class ServedBackend(Backend):
    """The twinlab contract over HTTP; see the module docstring for the exact requests."""

    def __init__(self, url: str, model: str | None = None, *, api_key: str | None = None,
                 cache_dir: str | Path | None = "default", max_in_flight: int = 8, top_logprobs: int = 20,
                 scoring: str = "auto", retry: RetryPolicy | None = None, probe_tolerance: float = PROBE_TOLERANCE,
                 whole_sentence: str = "exact"):
        if scoring not in SCORING_MODES:
            raise ServerError(f"unknown scoring mode {scoring!r}; use one of {', '.join(SCORING_MODES)}")
        if whole_sentence not in WHOLE_SENTENCE_RULES:
            raise ServerError(f"unknown whole_sentence rule {whole_sentence!r}; use one of "
                              f"{', '.join(WHOLE_SENTENCE_RULES)}")
        self.whole_sentence = whole_sentence
        self.n_first_token_skipped = 0  # whole sentences scored after their first token (after-first)
        if max_in_flight < 1 or top_logprobs < 1:
            raise ServerError("max_in_flight and top_logprobs must be at least 1")
        self.client = ServerClient(url, api_key=api_key, retry=retry or RetryPolicy(),
                                   max_connections=max_in_flight)
        self.url = self.client.base_url
        self.max_in_flight = int(max_in_flight)
        self.top_logprobs = int(top_logprobs)
        self.scoring_setting = scoring
        self.probe_tolerance = probe_tolerance
        self.default_tie_margin = 0.0  # nothing to re-score: each request is already sent on its own
        self.dtype_name = "server"
        models = self._models()
        if model is None:
            if len(models) != 1:
                raise ServerError(f"server {self.url} serves {len(models)} models ({', '.join(models) or 'none'}); "
                                  "name one with --server-model")
            model = next(iter(models))
        elif model not in models:
            raise ServerError(f"server {self.url} does not serve model {model!r}; it serves: {', '.join(models)}")
        self.model_id = model
        self.name = model
        self.model_entry = {k: v for k, v in models[model].items() if k not in ("created", "permission", "permissions")}
        self.versions = self._versions()
        cache_root = default_cache_dir() if cache_dir == "default" else cache_dir
        self.cache = ResponseCache(cache_root, model)
        self.client.on_reconnect = self.check_model
        self._pool = ThreadPoolExecutor(max_workers=self.max_in_flight, thread_name_prefix="served")
        self._tok_lock = threading.Lock()
        self._n_tokens: dict[str, int | None] = {}
        self._tokenize_path: str | None | bool = False  # False: not looked for yet; None: the server has none
        self._auto_prefix: list[int] = []
        self.probe: ProbeReport | None = None
        self.n_sent = 0  # completions actually sent (not answered from the cache)
        self.echo_ok = False
        self._discover_tokenizer()  # so the sidecar says whether options can be read token by token
        if scoring != "next-token":
            self.probe = run_probe(self._complete, self.url, tolerance=probe_tolerance)
            self.echo_ok = self.probe.passed
            if scoring == "echo" and not self.echo_ok:
                raise ServerError(f"--scoring echo refused: {self.probe.reason}")

    # ------------------------------------------------------------------ server facts
    def _models(self) -> dict[str, dict[str, Any]]:
        data = self.client.get("/v1/models")
        entries = data.get("data") if isinstance(data, dict) else None
        if not isinstance(entries, list):
            raise ServerError(f"server {self.url} answered /v1/models without a model list: {str(data)[:200]}")
        return {str(e.get("id")): e for e in entries if isinstance(e, dict) and e.get("id")}

    def _versions(self) -> dict[str, Any]:
        """What the server says about its software: vLLM `/version`, llama.cpp `/props`, FastAPI's openapi."""
        out: dict[str, Any] = {}
        v = self.client.optional("/version")
        if isinstance(v, dict):
            out["version"] = v.get("version", v)
        props = self.client.optional("/props")
        if isinstance(props, dict):
            out["props"] = {k: props[k] for k in ("build_info", "model_path", "total_slots", "n_ctx") if k in props}
        api = self.client.optional("/openapi.json")
        if isinstance(api, dict) and isinstance(api.get("info"), dict):
            out["openapi"] = {k: api["info"].get(k) for k in ("title", "version")}
        return out

    def check_model(self) -> None:
        """The server (perhaps restarted) still serves this session's model, unchanged; else refuse."""
        models = self._models()
        entry = models.get(self.model_id)
        if entry is None:
            raise ServerError(f"server {self.url} now serves {', '.join(models) or 'no model'}, not this session's "
                              f"model {self.model_id!r}; refusing to mix two models in one session")
        now = {k: v for k, v in entry.items() if k not in ("created", "permission", "permissions")}
        if canonical(now) != canonical(self.model_entry):
            raise ServerError(f"server {self.url} changed model {self.model_id!r} during the session "
                              f"(was {canonical(self.model_entry)}, now {canonical(now)}); refusing")

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.model_id,
            "kind": "server",
            "server": self.url,
            "revision": hashlib.sha256(canonical(self.model_entry).encode()).hexdigest()[:16],
            "model_entry": self.model_entry,
            "versions": self.versions,
            "dtype": "server",
            "add_bos": False,
            "bos": "the server's own rule for text prompts",
            "scoring": "prompt log-probabilities (echo)" if self.echo_ok else "next-token top log-probabilities",
            "scoring_setting": self.scoring_setting,
            "whole_sentence": self.whole_sentence,
            "probe": None if self.probe is None else self.probe.to_dict(),
            "top_logprobs": self.top_logprobs,
            "max_in_flight": self.max_in_flight,
            "retry": {"attempts": self.client.retry.attempts, "backoff_s": self.client.retry.backoff_s,
                      "max_backoff_s": self.client.retry.max_backoff_s, "timeout_s": self.client.retry.timeout_s},
            "cache": self.cache.describe(),
            "tokenize_endpoint": self._tokenize_path or None,
            "tokenisation": "text prompts; trailing context spaces move into the continuation",
        }

    # ------------------------------------------------------------------ requests
    def _complete(self, body: dict[str, Any]) -> dict[str, Any]:
        body = {"model": self.model_id, **body}
        hit = self.cache.get(COMPLETIONS, body)
        if hit is not None:
            return hit
        resp = self.client.post(COMPLETIONS, body)
        self.n_sent += 1
        if not isinstance(resp, dict) or not resp.get("choices"):
            raise ServerError(f"server {self.url} answered {COMPLETIONS} without choices: {str(resp)[:200]}")
        got = resp.get("model")
        if got and got != self.model_id and not str(got).endswith(self.model_id):
            raise ServerError(f"server {self.url} answered with model {got!r}, not this session's model "
                              f"{self.model_id!r}; refusing to mix two models in one session")
        self.cache.put(COMPLETIONS, body, resp)
        return resp

    def _parallel(self, fn: Any, items: list[Any]) -> list[Any]:
        """fn over items, at most max_in_flight at a time, in order; on a failure the queued rest is cancelled."""
        futures = [self._pool.submit(fn, x) for x in items]
        try:
            return [f.result() for f in futures]
        except BaseException:
            for f in futures:  # a failed server: do not send what is still queued
                f.cancel()
            raise

    def _all(self, bodies: list[dict[str, Any]], ask: Any = None) -> list[dict[str, Any]]:
        """Answers for `bodies` in order; each distinct body asked once, at most max_in_flight at a time."""
        ask = ask or self._complete
        keys = [canonical(b) for b in bodies]
        by_key = dict(zip(keys, bodies, strict=False))
        unique = list(by_key)
        answers = dict(zip(unique, self._parallel(lambda k: ask(by_key[k]), unique), strict=False))
        return [answers[k] for k in keys]

    def _next_token(self, body: dict[str, Any]) -> dict[str, Any]:
        """A next-token answer with its top log-probabilities.

        When the greedy next token ends the sequence, llama-cpp-python's server returns no token and
        no log-probabilities; asked again with `min_tokens: 1` (end-of-sequence masked in the
        sampler only: the log-probabilities are the model's raw ones), it returns them.
        """
        answer = self._complete(body)
        if _top(answer) is None:
            answer = self._complete({**body, "min_tokens": 1})
        return answer

    # ------------------------------------------------------------------ tokenisation (optional)
    def _discover_tokenizer(self) -> str | None:
        with self._tok_lock:
            if self._tokenize_path is False:
                self._tokenize_path = None
                for path in ("/tokenize", "/extras/tokenize"):
                    if self._tokens_at(path, "Hello") is not None:
                        self._auto_prefix = self._tokens_at(path, "") or []  # a BOS the endpoint adds by itself
                        self._tokenize_path = path
                        break
        return self._tokenize_path or None

    def _tokenize(self, text: str) -> list[int] | None:
        """Token ids from the server's tokenize endpoint (auto-added BOS removed); None if it has none."""
        path = self._discover_tokenizer()
        if path is None:
            return None
        ids = self._tokens_at(path, text) or []
        n = len(self._auto_prefix)
        return ids[n:] if n and ids[:n] == self._auto_prefix else ids

    def _tokens_at(self, path: str, text: str) -> list[int] | None:
        body = ({"model": self.model_id, "input": text} if path == "/extras/tokenize" else
                {"model": self.model_id, "prompt": text, "content": text, "add_special_tokens": False,
                 "add_special": False})
        hit = self._cached_post(path, body, optional=True)
        if not isinstance(hit, dict) or not isinstance(hit.get("tokens"), list):
            return None
        return [int(t if not isinstance(t, dict) else t.get("id")) for t in hit["tokens"]]

    def _detokenize(self, ids: list[int]) -> str | None:
        path = "/extras/detokenize" if self._discover_tokenizer() == "/extras/tokenize" else "/detokenize"
        hit = self._cached_post(path, {"model": self.model_id, "tokens": list(ids)}, optional=True)
        if not isinstance(hit, dict):
            return None
        text = hit.get("text", hit.get("prompt", hit.get("content")))
        return text if isinstance(text, str) else None

    def _cached_post(self, path: str, body: dict[str, Any], optional: bool = False) -> Any:
        hit = self.cache.get(path, body)
        if hit is None:
            try:
                hit = self.client.post(path, body, allow_missing=optional)
            except ServerError:
                if not optional:
                    raise
                return None
            if hit is not None:
                self.cache.put(path, body, hit)
        return hit

    def n_tokens(self, text: str) -> int | None:
        """How many tokens `text` is on its own (None when the server cannot tell)."""
        if text not in self._n_tokens:
            ids = self._tokenize(text)
            self._n_tokens[text] = None if ids is None else len(ids)
        return self._n_tokens[text]

    # ------------------------------------------------------------------ the contract
    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest],
                      progress: Progress | None = None) -> list[LoglikelihoodResult]:
        pairs = [split_pair(r.context, r.continuation) for r in requests]
        if self.echo_ok:
            bodies = [{"prompt": c + x, "max_tokens": 1, "temperature": 0, "logprobs": 1, "echo": True}
                      for c, x in pairs]
            answers = self._all(bodies)
            out = [self._from_echo(a, len(c), len(c + x), c, x) for a, (c, x) in zip(answers, pairs, strict=False)]
        else:
            chains = self._parallel(lambda p: self._chain(*p), pairs)
            bodies = [{"prompt": prompt, "max_tokens": 1, "temperature": 0, "logprobs": self.top_logprobs}
                      for ch in chains for prompt, _ in ch.steps]
            answers = iter(self._all(bodies, self._next_token))
            out = [self._from_chain(ch, [next(answers) for _ in ch.steps]) for ch in chains]
        if progress is not None:
            progress(len(requests))
        return out

    def loglikelihood_alone(self, requests: Sequence[LoglikelihoodRequest]) -> list[LoglikelihoodResult]:
        return self.loglikelihood(requests)

    def _refusal(self, what: str) -> ServerError:
        why = (self.probe.reason if self.probe is not None else
               "prompt log-probabilities are off (--scoring next-token)")
        return ServerError(f"{what}: that needs the server's prompt log-probabilities, and {why}. "
                           "Protocols that score options after a prompt (violation_judgment, forced_choice, "
                           "sentence_judgment/comparison with Meta prompts) still work from next-token "
                           "log-probabilities")

    def _chain(self, context: str, continuation: str) -> "_Chain":
        """The next-token requests that score `continuation` after `context`, one per token.

        One token: the context's next-token log-probabilities. More: with the server's tokenizer,
        the pair is split as lm-evaluation-harness does (context + continuation encoded whole), and
        token k is read after context + the text of tokens < k, each such prompt checked to encode
        to exactly those tokens (a text prompt is tokenised again by the server).
        """
        if not context:
            if self.whole_sentence != "after-first":
                raise self._refusal("a whole-sentence score (empty context) cannot come from next-token "
                                    "log-probabilities")
            return self._chain_after_first(continuation)
        n = self.n_tokens(continuation)
        if n is None or n == 1:
            return _Chain(continuation, [(context, continuation)])
        base, full = self._tokenize(context) or [], self._tokenize(context + continuation) or []
        if full[:len(base)] != base:
            return _Chain(continuation, [], f"option {continuation!r} merges with the end of the context into "
                                            "one token; it has no next-token score")
        cont = full[len(base):]
        texts = [self._detokenize(cont[:k]) if k else "" for k in range(len(cont) + 1)]
        if any(t is None for t in texts):
            raise self._refusal(f"option {continuation!r} is {len(cont)} tokens and server {self.url} has no "
                                "detokenize endpoint to read them one by one")
        pieces = [texts[k + 1][len(texts[k]):] for k in range(len(cont))]  # type: ignore[index]
        if "".join(pieces) != continuation:
            return _Chain(continuation, [], f"the tokens of option {continuation!r} do not spell it "
                                            f"({''.join(pieces)!r})")
        steps = []
        for k, piece in enumerate(pieces):
            prompt = context + "".join(pieces[:k])
            if k and self._tokenize(prompt) != base + cont[:k]:
                return _Chain(continuation, [], f"the server tokenises {prompt[-40:]!r} otherwise than "
                                                f"context + the first {k} token(s) of {continuation!r}")
            steps.append((prompt, piece))
        return _Chain(continuation, steps)

    def _chain_after_first(self, sentence: str) -> "_Chain":
        """A whole sentence under "after-first" from next-token log-probabilities: its first token (by the
        server's tokenizer) becomes the context, the rest is scored after it."""
        ids = self._tokenize(sentence)
        first = self._detokenize(ids[:1]) if ids else None
        if first is None:
            raise ServerError(f"a whole-sentence score after its first token needs server {self.url}'s tokenize and "
                              f"detokenize endpoints to find that token in {sentence[:40]!r}, and it has none")
        if len(ids) == 1 or not sentence.startswith(first) or first == sentence:
            return _Chain(sentence, [], f"sentence {sentence[:40]!r} is one token (or its first token does not "
                                        "spell its start): nothing after the first token to score")
        with self._tok_lock:
            self.n_first_token_skipped += 1
        return self._chain(first, sentence[len(first):])

    def _from_chain(self, chain: "_Chain", answers: list[dict[str, Any]]) -> LoglikelihoodResult:
        if chain.problem:
            return LoglikelihoodResult(float("nan"), False, 0, (), unscorable=chain.problem)
        values: list[float] = []
        greedy = True
        for (_, piece), answer in zip(chain.steps, answers, strict=False):
            top = _top(answer) or {}
            if piece not in top:
                low = min((float(x) for x in top.values()), default=float("nan"))
                what = f"token {piece!r} of option {chain.continuation!r}" if len(chain.steps) > 1 else \
                    f"option {chain.continuation!r}"
                return LoglikelihoodResult(float("nan"), False, len(chain.steps), (), unscorable=(
                    f"{what} is not among the server's top {len(top)} next-token log-probabilities "
                    f"(lowest returned {low:.3f})"))
            v = float(top[piece])
            if _shadowed(top, piece):
                return LoglikelihoodResult(float("nan"), False, len(chain.steps), (), unscorable=(
                    f"the text {piece!r} of option {chain.continuation!r} names several tokens in the server's top "
                    "log-probabilities (they are keyed by text), so its value is ambiguous"))
            values.append(v)
            greedy = greedy and v >= max(float(x) for x in top.values())
        return LoglikelihoodResult(math.fsum(values), greedy, len(values), tuple(values))

    def _from_echo(self, answer: dict[str, Any], start: int, end: int, context: str,
                   continuation: str) -> LoglikelihoodResult:
        lps = answer["choices"][0].get("logprobs") or {}
        offs, vals = lps.get("text_offset") or [], lps.get("token_logprobs") or []
        tops = lps.get("top_logprobs") or []
        picked: list[float] = []
        greedy = True
        for i, (off, v) in enumerate(zip(offs, vals, strict=False)):
            if off >= end:
                break  # the generated token
            if off < start:
                if i + 1 < len(offs) and offs[i + 1] > start and offs[i + 1] <= end:
                    raise ServerError(f"server {self.url}: a token spans the end of the context {context[-30:]!r}; "
                                      "cannot split it from the continuation")
                continue
            if v is None and i == 0 and start == 0 and self.whole_sentence == "after-first":
                with self._tok_lock:  # the authors' rule: no BOS, so the sum starts after the first token
                    self.n_first_token_skipped += 1
                continue
            if v is None and i == 0:  # vLLM: nothing precedes a prompt's first token (no BOS for this model)
                raise ServerError(f"server {self.url} gives no log-probability for the first token of a prompt "
                                  f"(no BOS token precedes it), so {continuation!r} after an empty context has no "
                                  "score there; whole-sentence scores (sentence_judgment:Direct) need a server that "
                                  "prepends a BOS token, or an in-process backend")
            if v is None:
                raise ServerError(f"server {self.url} gave no log-probability for token {i} of the prompt, "
                                  f"inside {continuation!r}")
            picked.append(float(v))
            top = tops[i] if i < len(tops) and tops[i] else {}
            if top and float(v) < max(float(x) for x in top.values()) - 1e-9:
                greedy = False
        if not picked:
            raise ServerError(f"server {self.url} echoed no tokens for the continuation {continuation!r}")
        return LoglikelihoodResult(math.fsum(picked), greedy, len(picked), tuple(picked))

    def generate_until(self, requests: Sequence[GenerationRequest],
                       progress: Progress | None = None) -> list[str]:
        bodies = []
        for r in requests:
            body: dict[str, Any] = {"prompt": r.context.rstrip(" "), "max_tokens": r.max_new_tokens, "temperature": 0}
            if not r.skip_leading_whitespace and r.until:
                body["stop"] = list(r.until)  # otherwise cut here, once the answer has begun
            bodies.append(body)
        answers = self._all(bodies)
        out = [cut_generation(a["choices"][0].get("text") or "", r.until, r.skip_leading_whitespace)
               for a, r in zip(answers, requests, strict=False)]
        if progress is not None:
            progress(len(requests))
        return out

    def stream(self, **kwargs: Any) -> Stream:
        """The whole history is sent with every query; the server's prefix cache avoids re-encoding it."""
        return TextStream(self)

    def stream_group(self, n: int) -> "ServedStreamGroup":
        return ServedStreamGroup(self, n)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.client.close()


def _top(answer: dict[str, Any]) -> dict[str, float] | None:
    """The first generated position's top log-probabilities (None when the server returned none)."""
    tops = (answer["choices"][0].get("logprobs") or {}).get("top_logprobs") or [None]
    return tops[0] or None


def _shadowed(top: dict[str, float], piece: str) -> bool:
    """The top log-probabilities come in rank order; a key whose value is below a later key's was
    overwritten by a lower-ranked token with the same text (llama-cpp-python decodes a token's
    partial UTF-8 bytes to nothing, so e.g. 38 SmolLM2 tokens read ' ')."""
    keys = list(top)
    v = float(top[piece])
    return any(float(top[k]) > v + 1e-9 for k in keys[keys.index(piece) + 1:])


@dataclass
class _Chain:
    """Next-token requests for one option: (prompt text, the token's text to read from its top log-probabilities)."""

    continuation: str
    steps: list[tuple[str, str]]
    problem: str | None = None  # why it has no score (the trial is written as unscorable)


class ServedStreamGroup:
    """Running subjects advanced together: every subject's query of a step is in flight at once."""

    def __init__(self, backend: ServedBackend, n: int):
        self.backend = backend
        self._segments: list[list[str]] = [[] for _ in range(n)]

    def extend(self, k: int, text: str) -> None:
        self._segments[k].append(text)

    def text(self, k: int) -> str:
        return "".join(self._segments[k])

    def loglikelihood(self, ask: dict[int, tuple[str, Sequence[str]]]) -> dict[int, list[LoglikelihoodResult]]:
        reqs: list[LoglikelihoodRequest] = []
        spans: dict[int, tuple[int, int]] = {}
        for k, (ctx, conts) in ask.items():
            full = self.text(k) + ctx
            spans[k] = (len(reqs), len(conts))
            reqs += [LoglikelihoodRequest(full, c) for c in conts]
        res = self.backend.loglikelihood(reqs)
        return {k: res[a:a + n] for k, (a, n) in spans.items()}
