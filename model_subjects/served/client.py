"""HTTP to an OpenAI-compatible server: bounded retries with backoff, one clear error naming the server.

Timeouts, refused or dropped connections, 429 and 5xx answers are retried with exponential backoff
(`RetryPolicy`); when the attempts are spent, `ServerError` says which server, which request and
what happened last. Any other 4xx is not retried (the request itself is wrong): its message is
passed on. After a failure that may have been a restart, the server's model list is checked again
before the next answer is trusted (`on_reconnect`), so a server that comes back with another model
is refused instead of being scored.
"""
from __future__ import annotations

import json
import random
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

import httpx

from model_subjects.backends.base import ModelLoadError
from stimuli.input_rules import finite_number

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class ServerError(ModelLoadError):
    """A server that cannot be used (unreachable after the retries, refused, or serving another model)."""


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 6  # tries per request, the first included
    backoff_s: float = 0.5  # first wait; doubles each time
    max_backoff_s: float = 8.0
    timeout_s: float = 120.0  # per request (connect, read, write)

    def wait(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds before try `attempt + 1` (jittered; a server's Retry-After is honoured up to the cap)."""
        base = min(self.max_backoff_s, self.backoff_s * (2 ** (attempt - 1)))
        if retry_after is not None:
            base = min(self.max_backoff_s, max(base, retry_after))
        return base * (0.75 + 0.5 * random.random())


class ServerClient:
    """One server (base URL): JSON POST/GET with retries; thread-safe (one pooled httpx.Client)."""

    def __init__(self, base_url: str, *, api_key: str | None = None, retry: RetryPolicy = RetryPolicy(),
                 max_connections: int = 16, sleep: Callable[[float], None] = time.sleep):
        url = base_url.rstrip("/")
        if url.endswith("/v1"):
            url = url[:-3]
        if not url.startswith(("http://", "https://")):
            raise ServerError(f"server address {base_url!r} must start with http:// or https://")
        self.base_url = url
        self.retry = retry
        self.sleep = sleep
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.http = httpx.Client(base_url=url, headers=headers, timeout=httpx.Timeout(retry.timeout_s),
                                 limits=httpx.Limits(max_connections=max_connections,
                                                     max_keepalive_connections=max_connections))
        self.on_reconnect: Callable[[], None] | None = None  # called once the server answers after a failure
        self._lock = threading.Lock()
        self._suspect = False  # a failure happened: re-check the model before trusting the next answer
        self.n_requests = 0
        self.n_retries = 0

    def close(self) -> None:
        self.http.close()

    def get(self, path: str, *, allow_missing: bool = False) -> Any:
        return self._call("GET", path, None, allow_missing)

    def optional(self, path: str) -> Any:
        """An endpoint only some servers have (a version, a tokenizer): one try, None on any failure."""
        try:
            resp = self.http.get(path)
            return resp.json() if resp.status_code == 200 else None
        except (httpx.HTTPError, json.JSONDecodeError, ValueError):
            return None

    def post(self, path: str, body: dict[str, Any], *, allow_missing: bool = False) -> Any:
        return self._call("POST", path, body, allow_missing)

    def _call(self, method: str, path: str, body: dict[str, Any] | None, allow_missing: bool) -> Any:
        last = ""
        for attempt in range(1, self.retry.attempts + 1):
            retry_after = None
            try:
                resp = self.http.request(method, path, json=body)
            except httpx.TimeoutException:
                last = f"no answer within {self.retry.timeout_s:g} s"
            except httpx.TransportError as exc:  # refused, reset, dropped mid-answer
                last = f"{type(exc).__name__}: {exc or 'connection failed'}"
            else:
                if resp.status_code in RETRY_STATUS:
                    last = f"HTTP {resp.status_code}: {_detail(resp)}"
                    ra = resp.headers.get("retry-after")
                    retry_after = retry_after_seconds(ra)
                elif resp.status_code == 404 and allow_missing:
                    return None
                elif resp.status_code >= 400:
                    raise ServerError(f"server {self.base_url} refused {method} {path}: HTTP {resp.status_code}: "
                                      f"{_detail(resp)}")
                else:
                    try:
                        data = resp.json()
                    except json.JSONDecodeError:
                        if allow_missing:
                            return None
                        raise ServerError(f"server {self.base_url} answered {method} {path} with something "
                                          f"that is not JSON: {resp.text[:200]!r}") from None
                    self.n_requests += 1
                    self._after_success()
                    return data
            with self._lock:
                self._suspect = True
            if attempt == self.retry.attempts:
                break
            self.n_retries += 1
            self.sleep(self.retry.wait(attempt, retry_after))
        raise ServerError(f"server {self.base_url} failed {method} {path} {self.retry.attempts} times "
                          f"(last: {last}); finished trials are saved, run the same command again to continue")

    def _after_success(self) -> None:
        with self._lock:
            suspect, self._suspect = self._suspect, False
        if suspect and self.on_reconnect is not None:
            self.on_reconnect()


def retry_after_seconds(header: str | None) -> float | None:
    """A Retry-After header's seconds (a finite number >= 0), else None (an HTTP date, '²', nan, inf)."""
    try:
        v = finite_number(float(header)) if header else None
    except ValueError:
        return None
    return v if v is not None and v >= 0 else None


def _detail(resp: httpx.Response) -> str:
    try:
        data = resp.json()
    except (json.JSONDecodeError, ValueError):
        return resp.text[:300].strip() or resp.reason_phrase
    if isinstance(data, dict):
        err = data.get("error", data.get("detail", data))
        if isinstance(err, dict):
            err = err.get("message", err)
        return str(err)[:300]
    return str(data)[:300]
