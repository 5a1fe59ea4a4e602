"""Faults a real server will not produce on demand, on a small fake beside the real one.

429 and 5xx are retried with backoff up to the limit, then one error naming the server; a model
swapped under a session (after a restart, or in an answer) is refused; the CLI ends such a run
with exit 2 and no traceback, keeping every trial already written.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from served_support import FakeServer, completion, free_port, models_list  # noqa: E402

from model_subjects.requests import LoglikelihoodRequest  # noqa: E402
from model_subjects.served import RetryPolicy, ServedBackend, ServerError  # noqa: E402
from model_subjects.served.cache import ResponseCache, request_key  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FAST = RetryPolicy(attempts=4, backoff_s=0.01, max_backoff_s=0.05, timeout_s=5)
TOP = {" Yes": -0.4, " No": -1.3, " The": -3.0}


def test_429_and_503_are_retried_then_answered(tmp_path):
    state = {"n": 0}

    def handler(path, body):
        if path == "/v1/models":
            return 200, models_list("m")
        if path == "/v1/completions":
            state["n"] += 1
            if state["n"] <= 2:
                return (429 if state["n"] == 1 else 503), {"error": {"message": "busy"}}
            return 200, completion("m", " Yes", TOP)
        return 404, {}

    with FakeServer(handler) as srv:
        b = ServedBackend(srv.url, scoring="next-token", retry=FAST, cache_dir=None)
        res = b.loglikelihood([LoglikelihoodRequest("Q?\nAnswer:", " Yes"), LoglikelihoodRequest("Q?\nAnswer:", " No")])
    assert [r.logprob for r in res] == [-0.4, -1.3]
    assert state["n"] == 3 and b.client.n_retries == 2  # one request for both options, asked three times


def test_persistent_5xx_ends_with_one_error_naming_the_server(tmp_path):
    def handler(path, body):
        if path == "/v1/models":
            return 200, models_list("m")
        return 500, {"error": {"message": "kaput"}}

    with FakeServer(handler) as srv:
        b = ServedBackend(srv.url, scoring="next-token", retry=FAST, cache_dir=None)
        with pytest.raises(ServerError) as exc:
            b.loglikelihood([LoglikelihoodRequest("Q?", " Yes")])
        n = sum(1 for p, _ in srv.calls if p == "/v1/completions")
    msg = str(exc.value)
    assert srv.url in msg and "4 times" in msg and "HTTP 500" in msg and "kaput" in msg
    assert n == 4


def test_refused_connection_is_retried_then_named():
    url = f"http://127.0.0.1:{free_port()}"  # nobody listens
    with pytest.raises(ServerError, match=f"server {url} failed GET /v1/models 4 times"):
        ServedBackend(url, scoring="next-token", retry=FAST, cache_dir=None)


def test_model_swapped_after_a_restart_is_refused():
    state = {"model": "m", "fail": False}

    def handler(path, body):
        if path == "/v1/models":
            return 200, models_list(state["model"])
        if state["fail"]:
            state["fail"] = False
            state["model"] = "other"  # the server "restarts" with another model
            return 503, {"error": "restarting"}
        return 200, completion(body.get("model"), " Yes", TOP)  # llama-cpp-python echoes the asked name

    with FakeServer(handler) as srv:
        b = ServedBackend(srv.url, scoring="next-token", retry=FAST, cache_dir=None)
        b.loglikelihood([LoglikelihoodRequest("A", " Yes")])
        state["fail"] = True
        with pytest.raises(ServerError, match="now serves other, not this session's model 'm'"):
            b.loglikelihood([LoglikelihoodRequest("B", " Yes")])


def test_answer_from_another_model_is_refused():
    def handler(path, body):
        if path == "/v1/models":
            return 200, models_list("m")
        return 200, completion("someone-else", " Yes", TOP)

    with FakeServer(handler) as srv:
        b = ServedBackend(srv.url, scoring="next-token", retry=FAST, cache_dir=None)
        with pytest.raises(ServerError, match="answered with model 'someone-else'"):
            b.loglikelihood([LoglikelihoodRequest("A", " Yes")])


def test_cache_is_keyed_by_model_and_request_and_written_whole(tmp_path):
    c = ResponseCache(tmp_path, "m")
    body = {"model": "m", "prompt": "A", "max_tokens": 1}
    c.put("/v1/completions", body, {"x": 1})
    assert ResponseCache(tmp_path, "m").get("/v1/completions", body) == {"x": 1}
    assert ResponseCache(tmp_path, "other").get("/v1/completions", body) is None
    assert ResponseCache(tmp_path, "m").get("/v1/completions", {**body, "prompt": "B"}) is None
    files = list(tmp_path.rglob("*"))
    assert not [f for f in files if f.name.endswith(".tmp")]
    key = request_key("m", "/v1/completions", body)
    assert key == request_key("m", "/v1/completions", dict(reversed(list(body.items()))))  # canonical JSON


def test_cli_exit_2_no_traceback_rows_kept(tmp_path):
    """The server starts failing mid-session: exit 2, the message names it, written trials stay."""
    state = {"n": 0}

    def handler(path, body):
        if path == "/v1/models":
            return 200, models_list("m")
        if path != "/v1/completions":
            return 404, {}
        state["n"] += 1
        if state["n"] > 5:
            return 503, {"error": "overloaded"}
        return 200, completion("m", " Yes", TOP)

    with FakeServer(handler) as srv:
        out = tmp_path / "s"
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        r = subprocess.run([sys.executable, "-m", "experiments.cli", "run-model", "lakretz2021_nested",
                            "--backend", "openai", "-B", f"url={srv.url}", "-B", "scoring=next-token",
                            "-B", "cache_dir=none", "-B", "retries=2", "-B", "backoff_s=0.01",
                            "--context", "running", "--trials", "10", "--quiet", "--out", str(out)],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stdout + r.stderr
    text = r.stdout + r.stderr
    assert srv.url in text and "Traceback" not in text and "HTTP 503" in text
    csv_files = list(out.rglob("*.csv"))
    rows = csv_files[0].read_text().strip().splitlines()[1:]
    assert len(rows) == 5
    side = json.loads(next(out.rglob("*subject-m01*.json")).read_text())
    assert side["status"] == "aborted" and side["n_trials_written"] == 5
