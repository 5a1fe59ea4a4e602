"""Helpers for the served-backend tests: a real llama-cpp-python server process, and a small fake.

The real server (llama-cpp-python's, through `python -m model_subjects.served.llama_server`, which
loads the model without extra buffer types: AMX-safe) serves the bundled GGUF on 127.0.0.1; the fake
(starlette, in a thread) exists only beside it, for the faults a real server will not produce on
demand (429, 503, a model swapped under a session).
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url: str, proc: subprocess.Popen | None = None, timeout: float = 120.0) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before answering")
        try:
            if httpx.get(url + "/v1/models", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"server {url} not ready after {timeout} s")


class LlamaServer:
    """llama-cpp-python's server on a free port of 127.0.0.1, serving a GGUF file, loaded as twinlab
    loads llama.cpp models (`--use_extra_bufts false`: no weight repacking, which crashes on AMX CPUs)."""

    def __init__(self, gguf: Path, port: int | None = None, n_ctx: int = 4096, log: Path | None = None,
                 extra: list[str] | None = None):
        self.gguf, self.port, self.n_ctx = gguf, port or free_port(), n_ctx
        self.log = log
        self.extra = extra or []
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def command(self) -> list[str]:
        return [sys.executable, "-m", "model_subjects.served.llama_server", "--use_extra_bufts", "false",
                "--model", str(self.gguf), "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx),
                "--n_threads", "1", "--n_threads_batch", "1", *self.extra]

    def start(self) -> "LlamaServer":
        out = open(self.log, "ab") if self.log else subprocess.DEVNULL
        root = str(Path(__file__).resolve().parents[1])
        env = {**os.environ, "PYTHONUNBUFFERED": "1",
               "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
        self.proc = subprocess.Popen(self.command, stdout=out, stderr=subprocess.STDOUT, env=env)
        wait_ready(self.url, self.proc)
        return self

    def kill(self) -> None:
        """SIGKILL, as a crash would (no clean shutdown)."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


def vllm_python() -> Path | None:
    """The Python of the vLLM environment the set-up makes (`.venv-vllm` beside `.venv`), or the one
    named by TWINLAB_VLLM_PYTHON; None when there is none."""
    root = Path(__file__).resolve().parents[1]
    named = os.environ.get("TWINLAB_VLLM_PYTHON")
    for p in ([Path(named)] if named else []) + [root / ".venv-vllm" / "bin" / "python"]:
        if p.is_file() and os.access(p, os.X_OK):
            return p
    return None


class VllmServer:
    """vLLM's OpenAI-compatible server (CPU build, its own environment) on a free port of 127.0.0.1,
    serving a transformers folder (twinlab's converted SmolLM2) as `smollm2`: the command of docs/commands.md.

    vLLM runs its engine in a child process: the server is started in a process group of its own, and
    `kill` sends SIGKILL to the whole group, as a crash of the machine's server would end it.
    """

    NAME = "smollm2"

    def __init__(self, model_dir: Path, python: Path, port: int | None = None, log: Path | None = None,
                 ready_timeout: float = 900.0):
        self.model_dir, self.python, self.port, self.log = model_dir, python, port or free_port(), log
        self.ready_timeout = ready_timeout
        self.proc: subprocess.Popen | None = None
        self.ready_seconds: list[float] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def command(self) -> list[str]:
        return [str(self.python), "-m", "vllm.entrypoints.openai.api_server", "--model", str(self.model_dir),
                "--served-model-name", self.NAME, "--host", "127.0.0.1", "--port", str(self.port),
                "--dtype", "float32", "--max-model-len", "2048", "--max-logprobs", "20"]

    @property
    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        return {**env, "VLLM_CPU_KVCACHE_SPACE": "2", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "PYTHONUNBUFFERED": "1", "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"}

    def start(self) -> "VllmServer":
        out = open(self.log, "ab") if self.log else subprocess.DEVNULL
        t0 = time.monotonic()
        self.proc = subprocess.Popen(self.command, stdout=out, stderr=subprocess.STDOUT, env=self.env,
                                     start_new_session=True, cwd=str(self.model_dir.parent))
        try:
            wait_ready(self.url, self.proc, timeout=self.ready_timeout)
        except BaseException:
            self.kill()
            raise
        self.ready_seconds.append(time.monotonic() - t0)
        return self

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL to the server and its engine process (no clean shutdown)."""
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(30)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        self.kill()


class FakeServer:
    """A starlette app in a uvicorn thread; `handler(path, body) -> (status, json)` decides each answer."""

    def __init__(self, handler: Callable[[str, Any], tuple[int, Any]]):
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse
        from starlette.routing import Route

        self.handler = handler
        self.calls: list[tuple[str, Any]] = []

        async def endpoint(request: Request) -> JSONResponse:
            body = await request.json() if request.method == "POST" else None
            self.calls.append((request.url.path, body))
            status, data = self.handler(request.url.path, body)
            return JSONResponse(data, status_code=status)

        app = Starlette(routes=[Route("/{path:path}", endpoint, methods=["GET", "POST"])])
        import uvicorn

        self.port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="error"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> "FakeServer":
        self.thread.start()
        wait_ready(self.url, timeout=20)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def models_list(*ids: str) -> dict[str, Any]:
    return {"object": "list", "data": [{"id": i, "object": "model", "owned_by": "me"} for i in ids]}


def completion(model: str, text: str, top: dict[str, float] | None = None) -> dict[str, Any]:
    lp = None
    if top is not None:
        best = max(top, key=top.get)
        lp = {"tokens": [best], "text_offset": [0], "token_logprobs": [top[best]], "top_logprobs": [top]}
    return {"id": "x", "object": "text_completion", "model": model,
            "choices": [{"index": 0, "text": text, "logprobs": lp, "finish_reason": "length"}]}
