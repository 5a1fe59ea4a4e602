"""The served backend against a real llama-cpp-python server on 127.0.0.1 serving the bundled GGUF.

What would break: the probe not catching the server's shifted echo; next-token scores or greedy
generations differing from the same GGUF run in process; a running session with feedback not
going end to end through `twinlab run-model`; a server killed mid-session losing or duplicating
trials on resume; a finished session not rebuilt from the cache without asking the server again.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.server, pytest.mark.slow]

llama_cpp = pytest.importorskip("llama_cpp")
pytest.importorskip("llama_cpp.server.app")

from served_support import LlamaServer  # noqa: E402

from experiments.design_compiler import compile_sequence  # noqa: E402
from experiments.session import read_rows, session_paths  # noqa: E402
from experiments.spec import load_spec  # noqa: E402
from model_subjects.context import parse_context, rebuild_contexts, sha256, static_context  # noqa: E402
from model_subjects.loading import bundled_gguf  # noqa: E402
from model_subjects.protocols import get_protocol  # noqa: E402
from model_subjects.requests import GenerationRequest, LoglikelihoodRequest  # noqa: E402
from model_subjects.served import ServedBackend, ServerError  # noqa: E402
from model_subjects.served.backend import cut_generation, split_pair  # noqa: E402

SPEC = "lakretz2021_nested"
ROOT = Path(__file__).resolve().parents[2]
# Same GGUF, same library, but llama.cpp's numbers on a quantised model depend on how a sequence is
# split into evaluation chunks, and the server evaluates only what its last prompt did not share
# (measured in process: 0.0137 nats for ' hires' when the prompt runs as prefix + rest; up to 0.086
# for a ' 1' read after a one-token chunk); 0.15 is about twice the largest seen.
TOL = 0.15


@pytest.fixture(scope="module")
def gguf() -> Path:
    return bundled_gguf()


@pytest.fixture(scope="module")
def server(gguf, tmp_path_factory):
    srv = LlamaServer(gguf, log=tmp_path_factory.mktemp("srv") / "server.log").start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def reference(gguf):
    """The same GGUF in process (llama_cpp.Llama with every position's logits): the independent reference
    (loaded without extra buffer types, as everything twinlab runs: AMX CPUs crash otherwise)."""
    from model_subjects.backends.llamacpp import new_llama

    return new_llama(gguf, n_ctx=4096, logits_all=True, n_threads=1, n_threads_batch=1, verbose=False)


def ref_logprobs(llm, text: str) -> tuple[list[int], list[list[float]]]:
    """Tokens of `text` as the server tokenises a prompt, and log-softmax at every position."""
    import numpy as np

    toks = llm.tokenize(text.encode("utf-8"), special=True)
    llm.reset()
    llm.eval(toks)
    scores = np.asarray(llm.scores[: len(toks)], dtype=np.float64)
    m = scores.max(axis=1, keepdims=True)
    lp = scores - m - np.log(np.exp(scores - m).sum(axis=1, keepdims=True))
    return toks, lp


def ref_next(llm, context: str, continuation: str) -> float:
    """log P(continuation | context) from the in-process model's own logits, the pair split as
    lm-evaluation-harness does (context + continuation encoded whole, split at the context's length)."""
    ctx, cont = split_pair(context, continuation)
    base = llm.tokenize(ctx.encode("utf-8"), special=True)
    toks, lp = ref_logprobs(llm, ctx + cont)
    assert toks[: len(base)] == base
    return float(sum(lp[i - 1][toks[i]] for i in range(len(base), len(toks))))


def ref_generate(llm, req: GenerationRequest) -> str:
    out = llm.create_completion(req.context.rstrip(" "), max_tokens=req.max_new_tokens, temperature=0.0)
    return cut_generation(out["choices"][0]["text"], req.until, req.skip_leading_whitespace)


def backend_for(server, tmp_path, **kw) -> ServedBackend:
    return ServedBackend(server.url, cache_dir=kw.pop("cache_dir", tmp_path / "cache"), **kw)


# ----------------------------------------------------------------------------------------------- loading
def test_server_loads_the_model_without_extra_buffer_types(server):
    """The server that tests (and users, docs/model_subjects.md) start runs llama-cpp-python's server
    with `use_extra_bufts` off: said on its command line and in its log, and its verbose llama.cpp
    log never offers a weight to an extra buffer type (CPU_REPACK, or AMX on Sapphire Rapids+),
    which a default load does on this CPU too (test_model_llamacpp)."""
    assert server.command[2:5] == ["model_subjects.served.llama_server", "--use_extra_bufts", "false"]
    log = server.log.read_text(errors="replace")
    assert "twinlab llama_server: use_extra_bufts=False" in log
    assert "load_tensors:" in log  # the verbose llama.cpp load log is there to be read
    assert "CPU_REPACK" not in log and "AMX model buffer" not in log


# ----------------------------------------------------------------------------------------------- probe
def test_probe_catches_the_shifted_echo(server, reference, tmp_path):
    b = backend_for(server, tmp_path)
    assert b.probe is not None and not b.probe.passed
    assert not b.echo_ok and "shift" in b.probe.reason and server.url in b.probe.reason
    check = b.probe.checks[0]
    assert check["difference"] > 1.0  # nats, not float noise
    # independent confirmation that the refusal is right: the server scores prompt token i with the
    # distribution of the next position (after token i), not the one that predicts it
    text = "The keys to the cabinet are"
    import httpx

    echo = httpx.post(server.url + "/v1/completions", json={"prompt": text, "max_tokens": 1, "temperature": 0,
                                                             "logprobs": 1, "echo": True}, timeout=60).json()
    got = echo["choices"][0]["logprobs"]["token_logprobs"]
    toks, lp = ref_logprobs(reference, text)
    right = [float(lp[i - 1][toks[i]]) for i in range(1, len(toks))]  # log P(token i | tokens < i)
    shifted = [float(lp[i][toks[i]]) for i in range(1, len(toks))]  # log P(token i | tokens <= i)
    assert len(got) == len(toks)
    assert max(abs(a - b_) for a, b_ in zip(got[1:], shifted, strict=False)) < TOL
    assert max(abs(a - b_) for a, b_ in zip(got[1:], right, strict=False)) > 1.0
    # the generated-token log-probability is right, and the probe used exactly that
    assert abs(check["generated_logprob"] - ref_next(reference, check["text"], check["token"])) < TOL
    with pytest.raises(ServerError, match="shift"):
        backend_for(server, tmp_path, scoring="echo")


def test_whole_sentence_scores_are_refused_with_the_probe_reason(server, tmp_path):
    b = backend_for(server, tmp_path)
    with pytest.raises(ServerError, match="empty context.*prompt log-probabilities.*shift"):
        b.loglikelihood([LoglikelihoodRequest("", "The keys to the cabinet are on the table.")])
    r = subprocess.run([sys.executable, "-m", "experiments.cli", "run-model", *served_args(
        server, tmp_path / "c", "--protocol", "sentence_judgment:Direct", "--trials", "2", "--out",
        str(tmp_path / "s"))], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
        text=True, timeout=300)
    assert r.returncode == 2 and "shift" in r.stdout + r.stderr and "Traceback" not in r.stderr


# ----------------------------------------------------------------------------------------------- agreement
def held_in_requests(n: int = 40):
    exp = load_spec(SPEC)
    seq = compile_sequence(exp, "m01", None)
    mode = parse_context("none", 0)
    out = []
    for name in ("violation_judgment", "forced_choice", "sentence_comparison:MetaQuestionSimple"):
        proto = get_protocol(name)
        for trial in seq.trials[:n]:
            for q in proto.queries(trial):
                ctx = static_context(mode, q.prompt, None)
                out.append((name, [LoglikelihoodRequest(ctx, o.continuation) for o in q.options]))
    return out


@pytest.mark.parametrize("protocol,top,max_unscorable", [
    ("violation_judgment", 20, 0),  # ' Yes'/' No': one token each
    ("sentence_comparison:MetaQuestionSimple", 20, 0),  # ' 1' = ' ' + '1': read token by token
    ("forced_choice", 1000, 15),  # the verb is often outside even the top 1000: unscorable, never guessed
])
def test_next_token_scores_and_choices_agree_with_in_process_model(server, reference, tmp_path, protocol, top,
                                                                   max_unscorable):
    b = backend_for(server, tmp_path, max_in_flight=4, top_logprobs=top)
    groups = [rs for name, rs in held_in_requests(16) if name == protocol]
    flat = [r for rs in groups for r in rs]
    got = b.loglikelihood(flat)
    ref = [ref_next(reference, r.context, r.continuation) for r in flat]
    diffs = [abs(g.logprob - x) for g, x in zip(got, ref, strict=False) if g.unscorable is None]
    k = same = scored = 0
    for rs in groups:
        part = got[k:k + len(rs)]
        a, e = [g.logprob for g in part], ref[k:k + len(rs)]
        if not any(g.unscorable for g in part):
            scored += 1
            same += int(max(range(len(a)), key=a.__getitem__) == max(range(len(e)), key=e.__getitem__))
        k += len(rs)
    print(f"\n{protocol} (top {top}): server vs in-process llama.cpp: {same}/{scored} scorable choices identical, "
          f"max |dlogP| {max(diffs):.2e} over {len(diffs)} options; {len(groups) - scored} unscorable")
    assert scored and same == scored and max(diffs) < TOL
    assert len(groups) - scored <= max_unscorable
    if protocol.startswith("sentence_comparison"):
        assert all(g.n_tokens == 2 for g in got)


def test_generation_agrees_with_in_process_model(server, reference, tmp_path):
    b = backend_for(server, tmp_path)
    exp = load_spec(SPEC)
    seq = compile_sequence(exp, "m01", None)
    proto = get_protocol("production")
    reqs = [GenerationRequest(proto.queries(t)[0].prompt, ("\n",), 8, skip_leading_whitespace=True)
            for t in seq.trials[:6]]
    reqs += [GenerationRequest("The capital of France is", ("\n", "."), 12)]
    got = b.generate_until(reqs)
    assert got == [ref_generate(reference, r) for r in reqs]
    assert any(g.strip() for g in got)


# ----------------------------------------------------------------------------------------------- sessions
def twinlab(*args: str, env_extra: dict | None = None, timeout: float = 900) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "experiments.cli", "run-model", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def served_args(server, cache, *more: str) -> list[str]:
    return [SPEC, "--backend", "openai", "-B", f"url={server.url}", "-B", f"cache_dir={cache}", "--quiet", *more]


def test_running_session_with_feedback_end_to_end(server, reference, tmp_path):
    out = tmp_path / "sessions"
    r = twinlab(*served_args(server, tmp_path / "cache", "--subjects", "2", "--context", "running",
                             "--trials", "14", "--out", str(out)))
    assert r.returncode == 0, r.stdout + r.stderr
    exp = load_spec(SPEC)
    for sid in ("m01", "m02"):
        csv_path, json_path = session_paths(out, exp.name, sid, 1)
        rows = read_rows(csv_path)
        assert [int(x["trial_index"]) for x in rows] == list(range(14))
        meta = json.loads(json_path.read_text())
        assert meta["status"] == "completed"
        assert meta["model"]["kind"] == "server" and meta["model"]["server"] == server.url
        assert meta["model"]["versions"]["openapi"]["version"] == llama_cpp.__version__
        assert meta["model"]["probe"]["passed"] is False
        assert any(x["feedback_text"] for x in rows)  # the training block gives feedback
        # every context is the history the rule rebuilds from the table (own answers + feedback)
        proto = get_protocol("violation_judgment")
        ctxs = rebuild_contexts(exp, rows, parse_context("running", 0), proto)
        assert [sha256(c) for c in ctxs] == [json.loads(x["extra"])["context_sha256"] for x in rows]
        # and each score is the in-process model's on that whole context
        for row, ctx in list(zip(rows, ctxs, strict=False))[::5]:
            lp = json.loads(row["option_logprobs"])
            assert abs(lp[0] - ref_next(reference, ctx, " Yes")) < TOL
            assert abs(lp[1] - ref_next(reference, ctx, " No")) < TOL


def test_server_killed_mid_session_then_restarted_resumes(gguf, reference, tmp_path):
    """SIGKILL the server while the CLI runs; the CLI stops with exit 2 naming the server; rows kept;
    after a restart the same command finishes: every trial index once, each row's scores those of the
    in-process model on the context rebuilt from the table."""
    srv = LlamaServer(gguf, log=tmp_path / "server.log").start()
    out, cache = tmp_path / "sessions", tmp_path / "cache"
    exp = load_spec(SPEC)
    n = 20
    args = served_args(srv, cache, "--subjects", "2", "--context", "running", "--trials", str(n), "--out", str(out),
                       "-B", "retries=2", "-B", "backoff_s=0.2", "-B", "timeout_s=20")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "experiments.cli", "run-model", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    csv1 = session_paths(out, exp.name, "m01", 1)[0]
    t0 = time.monotonic()
    try:
        while time.monotonic() - t0 < 300:
            if csv1.exists() and len(read_rows(csv1)) >= 5:
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.1)
    finally:
        srv.kill()
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 2, stdout + stderr
    assert srv.url in stderr + stdout and "Traceback" not in stderr
    kept = {sid: read_rows(session_paths(out, exp.name, sid, 1)[0]) for sid in ("m01", "m02")}
    assert all(5 <= len(v) < n for v in kept.values()), {k: len(v) for k, v in kept.items()}
    srv.start()  # same port, same model
    try:
        r = twinlab(*args)
    finally:
        srv.stop()
    assert r.returncode == 0, r.stdout + r.stderr
    proto = get_protocol("violation_judgment")
    for sid in ("m01", "m02"):
        rows = read_rows(session_paths(out, exp.name, sid, 1)[0])
        assert [int(x["trial_index"]) for x in rows] == list(range(n))  # nothing lost, nothing twice
        assert rows[: len(kept[sid])] == kept[sid]  # the rows written before the kill are untouched
        ctxs = rebuild_contexts(exp, rows, parse_context("running", 0), proto)
        assert [sha256(c) for c in ctxs] == [json.loads(x["extra"])["context_sha256"] for x in rows]
        boundary = len(kept[sid])  # the first trial run after the restart, and every third one
        for i, (row, ctx) in enumerate(zip(rows, ctxs, strict=False)):
            if i % 3 and abs(i - boundary) > 1:
                continue
            lp = json.loads(row["option_logprobs"])
            assert abs(lp[0] - ref_next(reference, ctx, " Yes")) < TOL
            assert abs(lp[1] - ref_next(reference, ctx, " No")) < TOL
        meta = json.loads(session_paths(out, exp.name, sid, 1)[1].read_text())
        assert meta["status"] == "completed" and meta["n_trials_written"] == n


def test_finished_session_is_rebuilt_from_the_cache_without_asking(server, tmp_path):
    from model_subjects.runner import RunConfig, Runner

    cache = tmp_path / "cache"
    exp = load_spec(SPEC)
    b = backend_for(server, tmp_path, cache_dir=cache)
    Runner(RunConfig(spec=SPEC, out=tmp_path / "a", subjects=2, context="running", trials=8), b).run()
    b2 = backend_for(server, tmp_path, cache_dir=cache)
    assert b.n_sent >= 16 and b2.n_sent == 0  # the probe too was answered from the cache
    Runner(RunConfig(spec=SPEC, out=tmp_path / "b", subjects=2, context="running", trials=8), b2).run()
    assert b2.n_sent == 0  # every answer came from the cache
    keep = ("trial_index", "response", "option_logprobs", "margin", "feedback_text")
    for sid in ("m01", "m02"):
        a = read_rows(session_paths(tmp_path / "a", exp.name, sid, 1)[0])
        c = read_rows(session_paths(tmp_path / "b", exp.name, sid, 1)[0])
        assert [{k: x[k] for k in keep} for x in a] == [{k: x[k] for k in keep} for x in c]


def test_option_outside_top_logprobs_is_unscorable_not_guessed(server, tmp_path):
    from model_subjects.runner import RunConfig, Runner

    exp = load_spec(SPEC)
    b = backend_for(server, tmp_path, top_logprobs=1)  # only the argmax comes back
    out = tmp_path / "s"
    summary = Runner(RunConfig(spec=SPEC, out=out, protocol="forced_choice", trials=20), b).run()
    rows = read_rows(session_paths(out, exp.name, "m01", 1)[0])
    meta = json.loads(session_paths(out, exp.name, "m01", 1)[1].read_text())
    bad = [x for x in rows if "unscorable" in json.loads(x["extra"])]
    assert bad, "with one returned log-probability, some option must fall outside it"
    for x in bad:
        assert x["response"] == "none" and str(x["correct"]).lower() in ("false", "0")
        assert x["margin"] in ("", None) and None in json.loads(x["option_logprobs"])
        assert "not among the server's top 1" in json.loads(x["extra"])["unscorable"]
    assert meta["n_unscorable"] == len(bad) == summary.subjects[0]["unscorable_now"]
    good = [x for x in rows if x not in bad]
    assert all(None not in json.loads(x["option_logprobs"]) for x in good)


def test_agrees_with_the_llamacpp_backend(server, tmp_path):
    """The same items through the in-process llama.cpp backend (model_subjects.backends.llamacpp)."""
    from model_subjects.backends.registry import load_backend

    local = load_backend(None, backend="llamacpp", n_ctx=4096)
    b = backend_for(server, tmp_path)
    groups = [rs for name, rs in held_in_requests(16) if name == "violation_judgment"]
    flat = [r for rs in groups for r in rs]
    got, ref = b.loglikelihood(flat), local.loglikelihood(flat)
    diffs = [abs(g.logprob - x.logprob) for g, x in zip(got, ref, strict=False)]
    same = sum((got[2 * i].logprob > got[2 * i + 1].logprob) == (ref[2 * i].logprob > ref[2 * i + 1].logprob)
               for i in range(len(groups)))
    print(f"\nserver vs llamacpp backend: {same}/{len(groups)} choices identical, max |dlogP| {max(diffs):.2e}")
    assert same == len(groups) and max(diffs) < TOL
    exp = load_spec(SPEC)
    seq = compile_sequence(exp, "m01", None)
    proto = get_protocol("production")
    reqs = [GenerationRequest(proto.queries(t)[0].prompt, ("\n",), 8, skip_leading_whitespace=True)
            for t in seq.trials[:4]] + [GenerationRequest("The capital of France is", ("\n", "."), 12)]
    assert b.generate_until(reqs) == local.generate_until(reqs)
