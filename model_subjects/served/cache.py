"""Every request to a server and its answer, on disk: a session resumes without asking again.

The key is the SHA-256 of the canonical JSON (sorted keys, no spaces) of the served model's id,
the endpoint and the request body. One file per answer (`<root>/<model slug>/<2 hex>/<key>.json`),
written to a temporary name, fsync'ed and renamed, so a kill leaves either the whole answer or
none. An interrupted session asks only for what it has not been answered yet; a finished one can
be rebuilt exactly from the cache, with the server gone.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from experiments.atomic import atomic_write_text


def canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_key(model: str, endpoint: str, body: dict[str, Any]) -> str:
    return hashlib.sha256(canonical({"model": model, "endpoint": endpoint, "body": body}).encode()).hexdigest()


class ResponseCache:
    """Answers by request key under one folder per served model (`None` root: memory only)."""

    def __init__(self, root: str | Path | None, model: str):
        self.model = model
        self.folder = None if root is None else Path(root).expanduser() / _slug(model)
        self._memory: dict[str, Any] = {}
        self.hits = 0
        self.misses = 0

    def _path(self, key: str) -> Path:
        assert self.folder is not None
        return self.folder / key[:2] / f"{key}.json"

    def get(self, endpoint: str, body: dict[str, Any]) -> Any | None:
        key = request_key(self.model, endpoint, body)
        if key in self._memory:
            self.hits += 1
            return self._memory[key]
        if self.folder is not None:
            p = self._path(key)
            try:
                rec = json.loads(p.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                rec = None
            if isinstance(rec, dict) and rec.get("request") == body and "response" in rec:
                self._memory[key] = rec["response"]
                self.hits += 1
                return rec["response"]
        self.misses += 1
        return None

    def put(self, endpoint: str, body: dict[str, Any], response: Any) -> None:
        key = request_key(self.model, endpoint, body)
        self._memory[key] = response
        if self.folder is None:
            return
        p = self._path(key)
        p.parent.mkdir(parents=True, exist_ok=True)
        rec = {"model": self.model, "endpoint": endpoint, "request": body, "response": response}
        # keys in the server's order (top log-probabilities: rank)
        atomic_write_text(p, json.dumps(rec, ensure_ascii=False))

    def describe(self) -> dict[str, Any]:
        return {"folder": None if self.folder is None else str(self.folder),
                "key": "sha256 of canonical JSON {model, endpoint, body}"}


def _slug(text: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:80] or "model"
    return f"{s}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"
