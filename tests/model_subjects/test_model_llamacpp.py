"""The llama.cpp backend on the bundled Q4_1 GGUF, against independent computations: llama.cpp's own
completion path (generated-token log-probabilities, greedy text), the transformers tokenizer, BOS
written as text, and the transformers backend on the same weights (agreement figures of the docs)."""
from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.model, pytest.mark.slow]

llama_cpp = pytest.importorskip("llama_cpp")

from experiments.design_compiler import compile_sequence  # noqa: E402
from experiments.session import read_rows  # noqa: E402
from experiments.spec import load_spec  # noqa: E402
from model_subjects.backends.base import ModelLoadError  # noqa: E402
from model_subjects.backends.registry import load_backend  # noqa: E402
from model_subjects.context import parse_context, static_context  # noqa: E402
from model_subjects.loading import bundled_gguf  # noqa: E402
from model_subjects.protocols import get_protocol  # noqa: E402
from model_subjects.requests import GenerationRequest  # noqa: E402
from model_subjects.requests import LoglikelihoodRequest as R  # noqa: E402
from model_subjects.runner import RunConfig, Runner  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SPEC = "lakretz2021_nested"


@pytest.fixture(scope="module")
def backend():
    return load_backend(None, backend="llamacpp", threads=1)


@pytest.fixture(scope="module")
def plain_llama():
    """A second, independent llama.cpp context: the library's own completion code path (loaded without
    extra buffer types: with them, AMX CPUs crash on the first decode)."""
    from model_subjects.backends.llamacpp import new_llama

    return new_llama(bundled_gguf(), n_ctx=512, logits_all=True, n_threads=1, n_threads_batch=1, verbose=False)


def held_in_requests(context: str = "none", n_trials: int | None = None) -> list[R]:
    exp = load_spec(SPEC)
    seq = compile_sequence(exp, "m01")
    mode = parse_context(context, 0)
    reqs = []
    for name in ("forced_choice", "violation_judgment"):
        p = get_protocol(name)
        for t in seq.trials[:n_trials]:
            for q in p.queries(t):
                reqs += [R(static_context(mode, q.prompt, None), o.continuation) for o in q.options]
    return reqs


def test_token_logprobs_equal_llamacpps_own_generated_token_logprobs(backend, plain_llama):
    """The completion API's log-probability of the token it generates (right, unlike its echo of the
    prompt) equals our log-softmax of the same logits; a one-position shift would miss by nats."""
    prompts = ["The keys to the cabinet", "The boy that the girls like", "Paris is the capital of",
               "Read the sentence.\nThe dogs near the car"]
    for p in prompts:
        plain_llama.reset()
        out = plain_llama.create_completion(p, max_tokens=1, temperature=0.0, logprobs=1)
        lp = out["choices"][0]["logprobs"]
        tok, ref = lp["tokens"][0], lp["token_logprobs"][0]
        res = backend.loglikelihood([R(p, tok)])[0]
        assert res.n_tokens == 1 and res.is_greedy
        assert res.logprob == pytest.approx(ref, abs=1e-4), (p, tok)
    # the figure: -1.773 for " are" after "The keys to the cabinet" (the server's generated token)
    assert backend.loglikelihood([R("The keys to the cabinet", " are")])[0].logprob == pytest.approx(-1.773, abs=2e-3)
    # a trailing space of the context moves into the continuation: " are" is one token either way
    moved = backend.loglikelihood([R("The keys to the cabinet ", "are")])[0]
    assert moved.n_tokens == 1 and moved.logprob == backend.loglikelihood([R("The keys to the "
                                                                             "cabinet", " are")])[0].logprob


LOAD_LOG = """
import sys
from model_subjects.loading import bundled_gguf
if sys.argv[1] == "twinlab":
    from model_subjects.backends.llamacpp import new_llama
    llm = new_llama(bundled_gguf(), n_ctx=64, n_threads=1, verbose=True)
else:
    import llama_cpp
    llm = llama_cpp.Llama(str(bundled_gguf()), n_ctx=64, n_threads=1, verbose=True)
print("use_extra_bufts", llm.model_params.use_extra_bufts, flush=True)
"""


def _load_log(how: str) -> str:
    r = subprocess.run([sys.executable, "-c", LOAD_LOG, how], capture_output=True, text=True, timeout=300,
                       cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout + r.stderr


def test_models_load_without_extra_buffer_types_on_any_cpu(backend):
    """AMX CPUs crash on the first decode when llama.cpp repacks Q4 weights into its AMX buffer (an
    extra buffer type). Every Llama twinlab makes has `use_extra_bufts` off: in the model parameters
    llama.cpp received, and in what its loader does. A default load (the contrast) offers weights to
    the extra buffer types on this CPU too (CPU_REPACK on x86; AMX on Sapphire Rapids+), so losing the
    setting fails here on a machine without AMX as well."""
    assert backend.llm.model_params.use_extra_bufts is False
    d = backend.describe()
    assert d["use_extra_bufts"] is False
    assert d["amx_cpu"] == ("amx_tile" in Path("/proc/cpuinfo").read_text())
    ours, default = _load_log("twinlab"), _load_log("default")
    assert "use_extra_bufts False" in ours and "use_extra_bufts True" in default
    assert "load_tensors:" in ours  # the verbose load log is there to be read
    assert not any(w in ours for w in ("CPU_REPACK", "AMX model buffer", "repack tensor"))
    assert "CPU_REPACK" in default or "AMX model buffer" in default  # an extra buffer type was offered


def test_greedy_generation_equals_llamacpps_own_greedy_completion(backend, plain_llama):
    for p in ("The capital of France is", "Once upon a time"):
        plain_llama.reset()
        ref = plain_llama.create_completion(p, max_tokens=8, temperature=0.0)["choices"][0]["text"]
        got = backend.generate_until([GenerationRequest(p, ("\n",), 8)])[0]
        assert got == ref.split("\n")[0], (p, got, ref)


def test_tokenisation_equals_the_transformers_tokenizer_on_held_in_items(backend):
    """The lm-eval pair split with llama.cpp's tokenizer gives the transformers backend's tokens
    (written out independently here with the transformers tokenizer), few-shot prompt included."""
    from transformers import AutoTokenizer

    from model_subjects.loading import resolve_model

    tok = AutoTokenizer.from_pretrained(resolve_model(None).path, local_files_only=True)
    reqs = held_in_requests("none") + held_in_requests("fewshot:eightshot_a", 10)
    reqs.append(R(backend.chat_template([{"role": "user", "content": "Is it good?"}], True), "Yes"))
    for r in reqs:
        n = len(r.context) - len(r.context.rstrip(" "))
        ctx, cont = (r.context[:-n], r.context[-n:] + r.continuation) if n else (r.context, r.continuation)
        c_ids = tok(ctx, add_special_tokens=False)["input_ids"]
        whole = tok(ctx + cont, add_special_tokens=False)["input_ids"]
        assert backend.encode_pair(r.context, r.continuation) == (tuple(c_ids), tuple(whole[len(c_ids):])), r
    assert backend.chat_template([{"role": "user", "content": "Hi"}], True) == tok.apply_chat_template(
        [{"role": "user", "content": "Hi"}], tokenize=False, add_generation_prompt=True)


def test_scores_do_not_depend_on_order_company_or_history(backend):
    """Canonical eval blocks: batched, shuffled, alone, and on a fresh context: bit-identical."""
    reqs = held_in_requests("fewshot:eightshot_a", 6) + [R("", "The keys to the cabinet are here."),
                                                         R("The keys", " to the cabinet are here")]
    a = backend.loglikelihood(reqs)
    random.seed(3)
    idx = list(range(len(reqs)))
    random.shuffle(idx)
    b = backend.loglikelihood([reqs[i] for i in idx])
    assert [b[k].token_logprobs for k in range(len(idx))] == [a[i].token_logprobs for i in idx]
    alone = backend.loglikelihood_alone(reqs[::5])
    assert [x.token_logprobs for x in alone] == [x.token_logprobs for x in a[::5]]
    fresh = load_backend(None, backend="llamacpp", threads=1)
    assert [x.token_logprobs for x in fresh.loglikelihood(reqs[::-3])] == [x.token_logprobs for x in a[::-3]]


def test_running_stream_reuses_the_cache_and_equals_whole_text_scoring(backend):
    s = backend.stream()
    segments = ["Read each sentence and answer.\n", "The keys to the cabinet is on the table.\n"
                "Does this sentence contain a grammatical error?\nAnswer: Yes\nCorrect!\n"]
    for seg in segments:
        s.extend(seg)
    before = backend.state.tokens_evaluated
    q = "The boy near the cars runs.\nDoes this sentence contain a grammatical error?\nAnswer:"
    got = s.loglikelihood(q, [" Yes", " No"])
    new_tokens = backend.state.tokens_evaluated - before
    whole = backend.loglikelihood([R("".join(segments) + q, " Yes"), R("".join(segments) + q, " No")])
    assert [x.token_logprobs for x in got] == [x.token_logprobs for x in whole]
    # the next trial evaluates only its own tokens (plus at most one partial block of 31)
    s.extend(q + " No\nCorrect!\n")
    before = backend.state.tokens_evaluated
    q2 = "The girls smile.\nDoes this sentence contain a grammatical error?\nAnswer:"
    s.loglikelihood(q2, [" Yes", " No"])
    n_new = len(backend.encode(" No\nCorrect!\n")) + len(backend.encode(q2))
    assert n_new <= backend.state.tokens_evaluated - before <= n_new + 32, new_tokens


def test_bos_is_an_explicit_setting(backend):
    """With add_bos, every sequence starts with <|im_start|>: the same as writing it in the text."""
    with_bos = load_backend(None, backend="llamacpp", threads=1, add_bos=True)
    assert with_bos.describe()["add_bos"] is True and with_bos.describe()["bos_token"] == "<|im_start|>"
    got = with_bos.loglikelihood([R("The keys to the cabinet", " are")])[0].logprob
    ref = backend.loglikelihood([R("<|im_start|>The keys to the cabinet", " are")])[0].logprob
    plain = backend.loglikelihood([R("The keys to the cabinet", " are")])[0].logprob
    assert got == ref and abs(got - plain) > 1e-3
    # an empty context is conditioned on the BOS token either way
    assert (backend.loglikelihood([R("", "The keys")])[0].logprob
            == backend.loglikelihood([R("<|im_start|>", "The keys")])[0].logprob)


def test_settings_it_cannot_honour_are_refused():
    with pytest.raises(ModelLoadError, match="--dtype bfloat16"):
        load_backend(None, backend="llamacpp", dtype="bfloat16")
    with pytest.raises(ModelLoadError, match="GGUF files only"):
        load_backend("org/some-hub-model", backend="llamacpp")


def test_run_model_cli_end_to_end_and_sidecar(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "experiments.cli", "run-model", SPEC, "--backend", "llamacpp", "--context",
           "running", "--trials", "8", "--out", str(tmp_path / "s"), "-q"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "backend llamacpp" in r.stdout
    side = json.loads(next((tmp_path / "s" / "data").glob("*.json")).read_text())
    m = side["model"]
    sha = hashlib.sha256(bundled_gguf().read_bytes()).hexdigest()
    assert (m["backend"], m["gguf"]["sha256"], m["revision"], m["quantization"]) == ("llamacpp", sha, sha, "Q4_1")
    assert (m["n_ctx"], m["threads"], m["add_bos"], m["versions"]["llama_cpp_python"]) == (8192, 1, False, "0.3.36")
    # loaded without extra buffer types (AMX-safe), and whether this CPU has AMX, from /proc/cpuinfo
    amx = sorted({f for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags")
                  for f in line.split(":", 1)[1].split() if f.startswith("amx")})
    assert (m["use_extra_bufts"], m["amx_cpu"], m["cpu_amx_flags"]) == (False, bool(amx), amx)
    assert side["identity"]["backend"] == "llamacpp" and side["status"] == "completed"
    rows = read_rows(next((tmp_path / "s" / "data").glob("*_data.csv")))
    assert len(rows) == 8 and all(json.loads(x["extra"])["answer_text"] for x in rows)
    # the same session through the transformers backend is refused (another backend, other weights)
    cmd2 = [c for c in cmd if c not in ("--backend", "llamacpp")]
    r2 = subprocess.run(cmd2, capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)
    assert (r2.returncode == 2 and "other settings" in r2.stderr and "backend" in r2.stderr
            and "Traceback" not in r2.stderr)


def test_resumed_running_session_is_bit_identical(backend, tmp_path):
    def run(out: Path, trials: int) -> None:
        Runner(RunConfig(spec=SPEC, context="running", out=out, trials=trials, protocol="violation_judgment"),
               backend).run()

    run(tmp_path / "whole", 14)
    run(tmp_path / "resumed", 6)
    run(tmp_path / "resumed", 14)  # continues from trial 7: the history is replayed, not re-scored
    a = read_rows(next((tmp_path / "whole" / "data").glob("*_data.csv")))
    b = read_rows(next((tmp_path / "resumed" / "data").glob("*_data.csv")))
    assert len(a) == len(b) == 14
    assert [x["option_logprobs"] for x in a] == [x["option_logprobs"] for x in b]
    assert ([json.loads(x["extra"])["context_sha256"] for x in a]
            == [json.loads(x["extra"])["context_sha256"] for x in b])


@pytest.mark.long
def test_agreement_with_transformers_on_held_in_items_and_a_running_session():
    """Same weights (Q4_1), two engines: llama.cpp quantises activations to 8 bits for its Q4_1 dot
    products, transformers computes in float32 on the de-quantised weights. Choices agree except
    near ties; log-probabilities differ by a few tenths of a nat at most (figures: docs)."""
    from benchmarks.compare_backends import compare

    hf = load_backend(None, threads=1)
    llama = load_backend(None, backend="llamacpp", threads=1)
    results = compare(hf, llama, trials=None, running_trials=30)
    by = {r["protocol"] + "/" + r["context"]: r for r in results}
    assert set(by) == {"forced_choice/none", "violation_judgment/none", "violation_judgment/running"}
    for r in results:
        assert r["agreement"] >= 0.97, r
        assert r["max_abs_dlogp"] < 1.0, r
        assert r["compared_logprobs"] >= min(r["trials"], (r["first_divergence"] or r["trials"])), r
        for f in r["flips"]:  # a different choice only where the choice was a near tie
            assert min(abs(f["margin_a"]), abs(f["margin_b"])) < 0.5, f
    assert by["forced_choice/none"]["trials"] == 184


CRASH = """
import os, signal, sys
from pathlib import Path
from model_subjects.backends.registry import load_backend
from model_subjects.runner import RunConfig, Runner

out, n = Path(sys.argv[1]), int(sys.argv[2])
runner = Runner(RunConfig(spec="lakretz2021_nested", backend="llamacpp", context="running", out=out, trials=12),
                load_backend(None, backend="llamacpp", threads=1))
done = []


def progress(k, total):
    done.append(k)
    if sum(done) >= n:  # a native crash mid-session, as llama.cpp's first decode on AMX CPUs
        os.kill(os.getpid(), signal.SIGSEGV)


runner.progress = progress
runner.run()
"""


def test_a_run_that_died_is_reported_by_the_next_run_which_resumes(backend, tmp_path):
    """A process killed by a signal cannot close its session (the sidecar keeps status "running"):
    the next `run-model` on that session says so, names what was saved, resumes, and the finished
    session equals an uninterrupted one. A session closed cleanly gets no such message."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    out = tmp_path / "s"
    r = subprocess.run([sys.executable, "-c", CRASH, str(out), "4"], capture_output=True, text=True, timeout=600,
                       cwd=ROOT, env=env)
    assert r.returncode == -11, r.stderr[-2000:]  # SIGSEGV, nothing closed
    csv_path = next((out / "data").glob("*_data.csv"))
    json_path = csv_path.with_name(csv_path.name.replace("_data.csv", "_data.json"))
    assert len(read_rows(csv_path)) == 4 and json.loads(json_path.read_text())["status"] == "running"
    cmd = [sys.executable, "-m", "experiments.cli", "run-model", SPEC, "--backend", "llamacpp", "--context",
           "running", "--trials", "12", "--out", str(out), "-q"]
    r2 = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)
    assert r2.returncode == 0, r2.stdout + r2.stderr
    said = " ".join(r2.stderr.split())
    assert "m01: the last run on " + csv_path.name in said and "ended without closing the session" in said
    assert "4 trial(s) were saved" in said and "resuming from trial 5" in said and "Traceback" not in r2.stderr
    side = json.loads(json_path.read_text())
    assert side["status"] == "completed" and side["n_trials_written"] == 12
    assert side["resumes"][-1]["previous_status"] == "running" and side["resumes"][-1]["previous_run_unclosed"]
    rows = read_rows(csv_path)
    assert [int(x["trial_index"]) for x in rows] == list(range(12))  # nothing lost, nothing twice
    Runner(RunConfig(spec=SPEC, backend="llamacpp", context="running", out=tmp_path / "whole", trials=12),
           backend).run()
    whole = read_rows(next((tmp_path / "whole" / "data").glob("*_data.csv")))
    assert [x["option_logprobs"] for x in rows] == [x["option_logprobs"] for x in whole]
    # the contrast: a session closed cleanly (completed at 6 trials, then extended) gets no message
    cmd6 = [c if c != "12" else "6" for c in cmd]
    clean = tmp_path / "clean"
    for c in (cmd6, cmd):
        r3 = subprocess.run([x if x != str(out) else str(clean) for x in c], capture_output=True, text=True,
                            timeout=600, env=env, cwd=ROOT)
        assert r3.returncode == 0 and "without closing" not in r3.stderr, r3.stderr
