"""The browser runner's server for a bundled task example, in a thread of the test process (test support).

Until the design compiler serves `design:` specs, the server is given the example's trials
(task_examples.example_sequence) and task settings through create_app's `compile` and
`task_settings`; everything else (the page, the plugins, the checks of posted rows, the session
writer) is the server `twinlab web serve` runs.
"""
from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import httpx
import uvicorn

from participants.web.server import create_app


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ThreadedServer:
    """A FastAPI app served by uvicorn on a free loopback port in a thread; `with` waits until it answers."""

    def __init__(self, app, start_timeout_s: float = 30.0, stop_timeout_s: float = 20.0):
        self.port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                                    access_log=False))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.url = f"http://127.0.0.1:{self.port}"
        self._start_timeout_s, self._stop_timeout_s = start_timeout_s, stop_timeout_s

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + self._start_timeout_s
        while time.monotonic() < deadline:
            try:
                httpx.get(self.url + "/favicon.ico", timeout=1.0)
                return self
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError("the server did not answer")

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(self._stop_timeout_s)


class TaskServer(ThreadedServer):
    def __init__(self, kind: str, spec: Path, out: Path, seed: int = 25, n: int = 4, feedback_first: int = 1):
        from task_examples import example_sequence, load, task_section

        self.exp = load(spec)
        self.seqs: dict[str, object] = {}

        def compile(pid: str, session: int):
            return example_sequence(kind, self.exp, pid, seed, n, feedback_first=feedback_first)

        super().__init__(create_app(self.exp, out, compile=compile, task_settings=task_section(kind)),
                         start_timeout_s=20.0, stop_timeout_s=10.0)
