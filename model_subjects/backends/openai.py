"""`--backend openai`: a model on an OpenAI-compatible server, registered with the model-type registry.

    twinlab run-model SPEC --backend openai -B url=http://127.0.0.1:8000 [--model SERVED_ID]
                           [-B max_in_flight=8] [-B top_logprobs=20] [-B scoring=auto|echo|next-token]
                           [-B whole_sentence=exact|after-first]
                           [-B cache_dir=PATH|none] [-B retries=6] [-B timeout_s=120] [-B api_key=...]

The implementation lives in `model_subjects.served` (client, cache, probe, backend); this module
maps the registry's settings onto it and refuses the ones a server cannot honour.
"""
from __future__ import annotations

import os
from typing import Any

from model_subjects.backends.registry import register_backend
from model_subjects.served.backend import ServedBackend
from model_subjects.served.client import RetryPolicy, ServerError


@register_backend("openai")
class OpenAIBackend(ServedBackend):
    """ServedBackend with the registry's `load(model, **settings)`."""

    @classmethod
    def load(cls, model: str | None = None, *, url: str | None = None, dtype: str = "float32", device: str = "cpu",
             add_bos: bool = False, batch_size: int | str = "auto", threads: int | None = None,
             api_key: str | None = None, cache_dir: str | None = "default", max_in_flight: int = 8,
             top_logprobs: int = 20, scoring: str = "auto", retries: int = 6, timeout_s: float = 120.0,
             backoff_s: float = 0.5, max_backoff_s: float = 8.0, whole_sentence: str = "exact") -> "OpenAIBackend":
        url = url or os.environ.get("TWINLAB_SERVER_URL")
        if not url:
            raise ServerError("--backend openai needs the server's address: -B url=http://HOST:PORT "
                              "(or TWINLAB_SERVER_URL)")
        if add_bos:
            raise ServerError("--add-bos: a server applies its own BOS rule to text prompts; run without it")
        if str(dtype).lower() not in ("float32", "auto"):
            raise ServerError(f"--dtype {dtype}: the server decides its precision (vllm serve --dtype ...)")
        if str(device).lower() not in ("cpu", "auto"):
            raise ServerError(f"--device {device}: the server decides its devices "
                              "(vllm serve --tensor-parallel-size N)")
        if str(batch_size).lower() != "auto":
            raise ServerError("--batch-size: a server batches for itself; bound the requests in flight with "
                              "-B max_in_flight=N")
        cache = None if cache_dir in (None, "", "none", "off") else cache_dir
        retry = RetryPolicy(attempts=int(retries), backoff_s=float(backoff_s), max_backoff_s=float(max_backoff_s),
                            timeout_s=float(timeout_s))
        return cls(url, model, api_key=api_key or os.environ.get("TWINLAB_SERVER_API_KEY"), cache_dir=cache,
                   max_in_flight=int(max_in_flight), top_logprobs=int(top_logprobs), scoring=str(scoring),
                   retry=retry, whole_sentence=str(whole_sentence))

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "backend": "openai"}
