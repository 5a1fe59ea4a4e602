"""Model subjects end to end: sessions, contexts (recoverable, own feedback), resume, CLI."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.model, pytest.mark.slow]

torch = pytest.importorskip("torch")

from experiments.session import read_rows, session_paths  # noqa: E402
from experiments.spec import load_spec  # noqa: E402
from model_subjects.backends.registry import load_backend  # noqa: E402
from model_subjects.context import parse_context, rebuild_contexts, sha256  # noqa: E402
from model_subjects.protocols import get_protocol  # noqa: E402
from model_subjects.runner import RunConfig, RunError, Runner  # noqa: E402

SPEC = "lakretz2021_nested"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def backend():
    return load_backend(None, threads=1)


@pytest.fixture(scope="module")
def exp():
    return load_spec(SPEC)


def run(backend, out, **kw):
    cfg = RunConfig(spec=SPEC, out=out, **kw)
    return Runner(cfg, backend).run()


def rows_of(out, sid, exp):
    return read_rows(session_paths(out, exp.name, sid, 1)[0])


def sidecar(out, sid, exp):
    return json.loads(session_paths(out, exp.name, sid, 1)[1].read_text())


def plain_logprob(backend, context: str, continuation: str) -> float:
    """Independent reference: one unpadded forward pass over context + continuation."""
    tok = backend.tokenizer
    ctx = tok(context, add_special_tokens=False)["input_ids"]
    whole = tok(context + continuation, add_special_tokens=False)["input_ids"]
    start = [] if ctx else [tok.bos_token_id]
    ids = torch.tensor([start + whole])
    with torch.no_grad():
        lp = torch.log_softmax(backend.model(input_ids=ids).logits[0].double(), -1)
    n = len(start) + len(ctx)
    return sum(lp[n - 1 + j, t].item() for j, t in enumerate(whole[len(ctx):]))


def check_recoverable(out, sid, exp, context, protocol, chat=None):
    rows = rows_of(out, sid, exp)
    texts = rebuild_contexts(exp, rows, parse_context(context), get_protocol(protocol), chat=chat)
    assert [sha256(t) for t in texts] == [json.loads(r["extra"])["context_sha256"] for r in rows]
    return rows, texts


def test_forced_choice_sessions_batched_across_subjects(backend, exp, tmp_path):
    s = run(backend, tmp_path, subjects=2, protocol="forced_choice", trials=10)
    assert s.trials_run == 20
    for sid in ("m01", "m02"):
        rows, texts = check_recoverable(tmp_path, sid, exp, "none", "forced_choice")
        assert [int(r["trial_index"]) for r in rows] == list(range(10))
        assert rows[0]["block"] == "training"  # training block first, as for humans
        for r, text in zip(rows, texts, strict=False):
            labels, lps = json.loads(r["option_labels"]), json.loads(r["option_logprobs"])
            assert r["subject_kind"] == "model" and r["protocol"] == "forced_choice" and r["context_mode"] == "none"
            assert labels[0] == r["correct_form"] and len(lps) == 2
            assert float(r["margin"]) == pytest.approx(lps[0] - lps[1], abs=2e-6)
            assert (r["correct"] == "True") == (lps[0] > lps[1]) == (r["response"] == r["correct_form"])
            assert r["feedback_shown"] == "False" and r["feedback_text"] == ""
            assert text == " ".join(r["words"].split()[: int(r["critical_index"])])
        r = rows[3]
        assert abs(json.loads(r["option_logprobs"])[1]
                   - plain_logprob(backend, texts[3], " " + json.loads(r["option_labels"])[1])) < 1e-4
    meta = sidecar(tmp_path, "m01", exp)
    assert meta["status"] == "completed" and meta["subject_kind"] == "model"
    assert meta["model"]["name"] == "SmolLM2-135M-Instruct" and len(meta["model"]["weights_sha256"]) == 64
    assert meta["model"]["dtype"] == "float32" and meta["model"]["device"] == "cpu"
    assert meta["protocol"] == "forced_choice" and meta["context_mode"] == "none" and meta["add_bos"] is False
    assert meta["software"]["torch"] and meta["software"]["transformers"]


def test_fewshot_group_assigns_prompt_sets_and_scores_like_unbatched(backend, exp, tmp_path):
    run(backend, tmp_path, subjects=3, context="fewshot:twoshot", protocol="direct", trials=4)
    for sid, ps in zip(("m01", "m02", "m03"), ("twoshot_a", "twoshot_b", "twoshot_c"), strict=False):
        rows, texts = check_recoverable(tmp_path, sid, exp, f"fewshot:{ps}", "direct")
        assert {r["context_mode"] for r in rows} == {f"fewshot:{ps}"}
        r, text = rows[1], texts[1]
        labels, lps = json.loads(r["option_labels"]), json.loads(r["option_logprobs"])
        assert labels == [r["critical_word"], r["alternative_word"]]
        assert abs(lps[0] - plain_logprob(backend, text, " " + labels[0])) < 1e-4


def test_running_context_holds_own_answers_and_their_feedback_and_matches_reencoding(backend, exp, tmp_path):
    run(backend, tmp_path / "kv", subjects=2, context="running", trials=12)
    run(backend, tmp_path / "naive", subjects=1, context="running", trials=12, kv_cache=False)
    for sid in ("m01", "m02"):
        rows, texts = check_recoverable(tmp_path / "kv", sid, exp, "running", "violation_judgment")
        assert texts[0].startswith(exp.texts.instructions[0].strip())
        for k in range(1, len(rows)):
            prev = rows[k - 1]
            extra = json.loads(prev["extra"])
            # the answer in the context is the model's own response of trial k-1 ...
            assert extra["answer_text"] == (" Yes" if prev["response"] == "violation" else " No")
            # ... and the feedback is the one that response earned
            fb = exp.feedback.correct_text if prev["correct"] == "True" else exp.feedback.incorrect_text
            assert prev["feedback_text"] == fb and prev["feedback_shown"] == "True"
            # context(k) = context(k-1) + answer(k-1) + feedback(k-1) + prompt(k)
            assert texts[k] == (texts[k - 1] + extra["answer_text"] + "\n" + fb + "\n"
                                + json.loads(rows[k]["extra"])["prompt"])
    kv, naive = rows_of(tmp_path / "kv", "m01", exp), rows_of(tmp_path / "naive", "m01", exp)
    for a, b in zip(kv, naive, strict=False):
        assert a["response"] == b["response"]
        for x, y in zip(json.loads(a["option_logprobs"]), json.loads(b["option_logprobs"]), strict=False):
            assert abs(x - y) < 1e-4
    # and an independent full forward pass over the last context agrees
    last = kv[-1]
    texts = rebuild_contexts(exp, kv, parse_context("running"), get_protocol("violation_judgment"))
    assert abs(json.loads(last["option_logprobs"])[0] - plain_logprob(backend, texts[-1], " Yes")) < 1e-4


def test_resume_continues_without_recomputing_finished_trials(backend, exp, tmp_path):
    run(backend, tmp_path / "a", subjects=1, context="running", trials=4)
    before = session_paths(tmp_path / "a", exp.name, "m01", 1)[0].read_bytes()
    calls = []
    orig = backend.stream

    def counting_stream(**kw):
        s = orig(**kw)
        real = s.loglikelihood
        s.loglikelihood = lambda ctx, conts: calls.append(ctx) or real(ctx, conts)
        return s

    backend.stream = counting_stream
    try:
        run(backend, tmp_path / "a", subjects=1, context="running", trials=7)
    finally:
        backend.stream = orig
    assert len(calls) == 3  # only trials 5-7 were scored
    after = session_paths(tmp_path / "a", exp.name, "m01", 1)[0].read_bytes()
    assert after.startswith(before)
    run(backend, tmp_path / "b", subjects=1, context="running", trials=7)
    resumed, straight = rows_of(tmp_path / "a", "m01", exp), rows_of(tmp_path / "b", "m01", exp)
    for a, b in zip(resumed, straight, strict=False):
        assert json.loads(a["extra"])["context_sha256"] == json.loads(b["extra"])["context_sha256"]
        assert a["response"] == b["response"]
    meta = sidecar(tmp_path / "a", "m01", exp)
    assert meta["status"] == "completed" and meta["resumes"][0]["from_trial"] == 4
    # a completed session is skipped, not reopened
    assert run(backend, tmp_path / "a", subjects=1, context="running", trials=7).trials_run == 0
    # other settings on an existing session are refused
    with pytest.raises(RunError, match="protocol"):
        run(backend, tmp_path / "a", subjects=1, context="running", trials=8, protocol="direct")


def test_killed_cli_run_resumes(backend, exp, tmp_path):
    args = [sys.executable, "-c", "from experiments.cli import app; app()", "run-model", SPEC, "--context",
            "running", "--trials", "40", "--out", str(tmp_path), "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    csv_path = session_paths(tmp_path, exp.name, "m01", 1)[0]
    deadline = time.time() + 300  # a loaded CI machine can take long to import torch
    while time.time() < deadline and proc.poll() is None:
        if csv_path.exists() and len(csv_path.read_text().splitlines()) >= 4:  # header + 3 trials
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate()
    assert csv_path.exists(), f"the CLI wrote no session (exit {proc.returncode}): {err.decode()[-2000:]}"
    done = len(read_rows(csv_path))
    assert 3 <= done < 40, done
    kept = csv_path.read_bytes()
    run(backend, tmp_path, subjects=1, context="running", trials=40)
    rows = read_rows(csv_path)
    assert [int(r["trial_index"]) for r in rows] == list(range(40))
    assert csv_path.read_bytes().startswith(kept[: kept.rfind(b"\n") + 1])
    meta = sidecar(tmp_path, "m01", exp)
    assert meta["status"] == "completed" and meta["resumes"][0]["previous_status"] == "running"
    check_recoverable(tmp_path, "m01", exp, "running", "violation_judgment")


def test_production_and_comparison_protocols(backend, exp, tmp_path):
    run(backend, tmp_path / "p", subjects=1, protocol="production", trials=3)
    for r in rows_of(tmp_path / "p", "m01", exp):
        extra = json.loads(r["extra"])
        assert {"generation", "response_strict", "response_lenient"} <= set(extra)
        assert r["response"] == extra["response_strict"] and r["protocol"] == "production"
    run(backend, tmp_path / "c", subjects=1, protocol="sentence_comparison:MetaQuestionSimple", trials=3)
    for r in rows_of(tmp_path / "c", "m01", exp):
        lps = json.loads(r["option_logprobs"])
        assert len(lps) == 4
        assert float(r["margin"]) == pytest.approx(((lps[0] - lps[1]) + (lps[3] - lps[2])) / 2, abs=1e-5)


def test_chat_template_running_and_window(backend, exp, tmp_path):
    run(backend, tmp_path / "chat", subjects=1, context="running", trials=4, chat=True)
    rows, texts = check_recoverable(tmp_path / "chat", "m01", exp, "running", "violation_judgment",
                                    chat=backend.chat_template)
    assert texts[-1].endswith("<|im_start|>assistant\n") and texts[-1].count("<|im_start|>assistant") == 4
    with pytest.raises(RunError, match="chat"):
        run(backend, tmp_path / "chat2", subjects=1, protocol="forced_choice", trials=2, chat=True)
    # production in the assistant turn: the instruct model answers in words; lenient parsing finds it
    run(backend, tmp_path / "prod", subjects=1, protocol="production", trials=2, chat=True)
    for r in rows_of(tmp_path / "prod", "m01", exp):
        extra = json.loads(r["extra"])
        assert extra["generation"].strip() and "\n" not in extra["generation"].strip()
        assert extra["response_lenient"] in ("violation", "no_violation")
    run(backend, tmp_path / "w", subjects=1, context="running:2", trials=6)
    rows, texts = check_recoverable(tmp_path / "w", "m01", exp, "running:2", "violation_judgment")
    last = texts[-1]
    assert rows[3]["words"] in last and rows[4]["words"] in last
    assert rows[0]["words"] not in last and rows[2]["words"] not in last
    assert last.startswith(exp.texts.instructions[0].strip())
    assert {r["context_mode"] for r in rows} == {"running:2"}


def test_cli_runs_and_reports_bad_model(tmp_path):
    from typer.testing import CliRunner

    from experiments.cli import app

    r = CliRunner().invoke(app, ["run-model", SPEC, "--subjects", "2", "--trials", "3", "--protocol", "forced_choice",
                                 "--out", str(tmp_path), "--quiet"])
    assert r.exit_code == 0, r.output
    assert "ran 6 trial(s) for 2 subject(s)" in r.output
    r = CliRunner().invoke(app, ["run-model", SPEC, "--model", "nobody/missing-model", "--out", str(tmp_path)])
    assert r.exit_code == 2 and "nobody/missing-model" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(app, ["run-model", SPEC, "--context", "fewshot:nope", "--out", str(tmp_path)])
    assert r.exit_code == 2 and "unknown prompt set" in r.output
