"""A model behind an OpenAI-compatible server (vLLM, llama.cpp's server, llama-cpp-python's server).

Only `/v1/completions` is used (plus `/v1/models`, and a tokenize endpoint when there is one):

  * generation: `{"prompt": context, "max_tokens": K, "temperature": 0, "stop": [...]}` (greedy);
  * next-token scoring (every server): `{"prompt": context, "max_tokens": 1, "temperature": 0,
    "logprobs": N}`; an option that is one token is read from the first position's top-N
    log-probabilities. When it is not among them its score is unknown: the trial is written as
    unscorable (response `none`, `extra.unscorable` names the reason) and counted, never guessed;
  * prompt scoring (only after the probe, `model_subjects.served.probe`, has shown the server's echo
    is right): `{"prompt": context + continuation, "max_tokens": 1, "temperature": 0, "logprobs": 1,
    "echo": true}`; the continuation's tokens are those whose `text_offset` is at or after the
    context's end, summed as lm-evaluation-harness does.

Requests run concurrently (at most `max_in_flight` at once, one pooled HTTP client), so a server
batches across items and subjects and reuses cached prefixes; each answer is cached on disk
(`ResponseCache`) and every request is sent at most once per model. A running context is sent
whole with every query (the server's prefix cache is what makes that cheap).
"""
from __future__ import annotations

import math
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Sequence

from model_subjects.backend import Backend, Progress, Stream, TextStream
from model_subjects.requests import GenerationRequest, LoglikelihoodRequest, LoglikelihoodResult
from model_subjects.served.cache import ResponseCache, canonical
from model_subjects.served.client import RetryPolicy, ServerClient, ServerError
from model_subjects.served.probe import PROBE_TOLERANCE, ProbeReport, run_probe

SCORING_MODES = ("auto", "echo", "next-token")
COMPLETIONS = "/v1/completions"


def default_cache_dir() -> Path:
    from model_subjects.loading import cache_root

    return cache_root() / "served"


def split_pair(context: str, continuation: str) -> tuple[str, str]:
    """lm-evaluation-harness: trailing spaces of the context belong to the continuation."""
    stripped = context.rstrip(" ")
    return stripped, context[len(stripped):] + continuation


def cut_generation(text: str, until: Sequence[str], skip_leading_whitespace: bool) -> str:
    """As the local backends: cut before the first stop string (after leading whitespace if asked)."""
    b0 = len(text) - len(text.lstrip()) if skip_leading_whitespace else 0
    cut = min([text.index(s, b0) for s in until if s and s in text[b0:]] or [len(text)])
    return text[:cut]


class ServedBackend(Backend):
    """The twinlab contract over HTTP; see the module docstring for the exact requests."""

    def __init__(self, url: str, model: str | None = None, *, api_key: str | None = None,
                 cache_dir: str | Path | None = "default", max_in_flight: int = 8, top_logprobs: int = 20,
                 scoring: str = "auto", retry: RetryPolicy | None = None, probe_tolerance: float = PROBE_TOLERANCE):
        if scoring not in SCORING_MODES:
            raise ServerError(f"unknown scoring mode {scoring!r}; use one of {', '.join(SCORING_MODES)}")
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
        self.echo_ok = False
        if scoring != "next-token":
            self.probe = run_probe(self._complete, self.url, tolerance=probe_tolerance)
            self.echo_ok = self.probe.passed
            if scoring == "echo" and not self.echo_ok:
                raise ServerError(f"--scoring echo refused: {self.probe.reason}")
        self.n_unscorable = 0

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
        v = self.client.get("/version", allow_missing=True)
        if isinstance(v, dict):
            out["version"] = v.get("version", v)
        props = self.client.get("/props", allow_missing=True)
        if isinstance(props, dict):
            out["props"] = {k: props[k] for k in ("build_info", "model_path", "total_slots", "n_ctx") if k in props}
        api = self.client.get("/openapi.json", allow_missing=True)
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
        import hashlib

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
        if not isinstance(resp, dict) or not resp.get("choices"):
            raise ServerError(f"server {self.url} answered {COMPLETIONS} without choices: {str(resp)[:200]}")
        got = resp.get("model")
        if got and got != self.model_id and not str(got).endswith(self.model_id):
            raise ServerError(f"server {self.url} answered with model {got!r}, not this session's model "
                              f"{self.model_id!r}; refusing to mix two models in one session")
        self.cache.put(COMPLETIONS, body, resp)
        return resp

    def _all(self, bodies: list[dict[str, Any]], progress: Progress | None = None) -> list[dict[str, Any]]:
        """Answers for `bodies` in order; each distinct body asked once, at most max_in_flight at a time."""
        keys = [canonical(b) for b in bodies]
        by_key = dict(zip(keys, bodies))
        futures = {k: self._pool.submit(self._complete, by_key[k]) for k in dict.fromkeys(keys)}
        try:
            answers = {k: f.result() for k, f in futures.items()}
        except BaseException:
            for f in futures.values():  # a failed server: do not send what is still queued
                f.cancel()
            raise
        return [answers[k] for k in keys]

    # ------------------------------------------------------------------ tokenisation (optional)
    def _tokenize(self, text: str) -> list[int] | None:
        """Token ids from the server's tokenize endpoint (auto-added BOS removed); None if it has none."""
        if self._tokenize_path is False:
            self._tokenize_path = None
            for path in ("/tokenize", "/extras/tokenize"):
                if self._tokens_at(path, "Hello") is not None:
                    self._tokenize_path = path
                    self._auto_prefix = self._tokens_at(path, "") or []  # a BOS the endpoint adds by itself
                    break
        if not self._tokenize_path:
            return None
        ids = self._tokens_at(self._tokenize_path, text) or []
        n = len(self._auto_prefix)
        return ids[n:] if n and ids[:n] == self._auto_prefix else ids

    def _tokens_at(self, path: str, text: str) -> list[int] | None:
        body = ({"model": self.model_id, "input": text} if path == "/extras/tokenize" else
                {"model": self.model_id, "prompt": text, "content": text, "add_special_tokens": False,
                 "add_special": False})
        hit = self.cache.get(path, body)
        if hit is None:
            try:
                hit = self.client.post(path, body, allow_missing=True)
            except ServerError:
                return None
            if not isinstance(hit, dict) or not isinstance(hit.get("tokens"), list):
                return None
            self.cache.put(path, body, hit)
        toks = hit.get("tokens")
        return [int(t if not isinstance(t, dict) else t.get("id")) for t in toks]

    def n_tokens(self, text: str) -> int | None:
        """How many tokens `text` is on its own (None when the server cannot tell)."""
        with self._tok_lock:
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
            out = [self._from_echo(a, len(c), len(c + x), c, x) for a, (c, x) in zip(answers, pairs)]
        else:
            for c, x in pairs:
                self._check_next_token(c, x)
            bodies = [{"prompt": c, "max_tokens": 1, "temperature": 0, "logprobs": self.top_logprobs}
                      for c, _ in pairs]
            answers = self._all(bodies)
            out = [self._from_top(a, x) for a, (_, x) in zip(answers, pairs)]
        if progress is not None:
            progress(len(requests))
        return out

    def loglikelihood_alone(self, requests: Sequence[LoglikelihoodRequest]) -> list[LoglikelihoodResult]:
        return self.loglikelihood(requests)

    def _refusal(self, what: str) -> ServerError:
        why = (self.probe.reason if self.probe is not None else
               "prompt log-probabilities are off (--scoring next-token)")
        return ServerError(f"{what}: that needs the server's prompt log-probabilities, and {why}. "
                           "Next-token protocols with single-token options (violation_judgment, "
                           "sentence_judgment/comparison with Meta prompts, forced_choice) still work")

    def _check_next_token(self, context: str, continuation: str) -> None:
        if not context:
            raise self._refusal("a whole-sentence score (empty context) cannot come from the next token")
        n = self.n_tokens(continuation)
        if n is not None and n != 1:
            raise self._refusal(f"option {continuation!r} is {n} tokens; only a one-token option can be read from "
                                "the next token's log-probabilities")

    def _from_top(self, answer: dict[str, Any], continuation: str) -> LoglikelihoodResult:
        lps = answer["choices"][0].get("logprobs") or {}
        tops = lps.get("top_logprobs") or [None]
        top = tops[0] or {}
        if continuation in top:
            v = float(top[continuation])
            return LoglikelihoodResult(v, v >= max(float(x) for x in top.values()), 1, (v,))
        low = min((float(x) for x in top.values()), default=float("nan"))
        return LoglikelihoodResult(float("nan"), False, 1, (), unscorable=(
            f"option {continuation!r} is not among the server's top {len(top)} next-token log-probabilities "
            f"(lowest returned {low:.3f})"))

    def _from_echo(self, answer: dict[str, Any], start: int, end: int, context: str,
                   continuation: str) -> LoglikelihoodResult:
        lps = answer["choices"][0].get("logprobs") or {}
        offs, vals = lps.get("text_offset") or [], lps.get("token_logprobs") or []
        toks, tops = lps.get("tokens") or [], lps.get("top_logprobs") or []
        picked: list[float] = []
        greedy = True
        for i, (off, v) in enumerate(zip(offs, vals)):
            if off >= end:
                break  # the generated token
            if off < start:
                if i + 1 < len(offs) and offs[i + 1] > start and offs[i + 1] <= end:
                    raise ServerError(f"server {self.url}: a token spans the end of the context {context[-30:]!r}; "
                                      "cannot split it from the continuation")
                continue
            if v is None:
                raise self._refusal(f"the server gave no log-probability for the first token of {continuation!r}")
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
               for a, r in zip(answers, requests)]
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
