"""A 200-trial running session: does the time per trial stay flat as the history grows?

One model subject runs the bundled spec (training block, then test trials; the test block is
repeated so the session has at least `--trials` trials) in `running` context: instructions, then
every earlier trial with the model's own answer and its feedback. twinlab extends one KV cache
trial by trial, so each trial encodes only its own tokens. Printed: mean time of trials 1-20 and
181-200 and their ratio; then the naive figure, where every sampled trial re-encodes its whole
context from scratch (what a stateless scorer does), on the same contexts, with the
log-probabilities of both methods compared.

    python -m benchmarks.bench_model_running                 # 200 trials, 5 naive samples per window
    python -m benchmarks.bench_model_running --trials 60 --window 10
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time

from experiments.session import read_rows


def long_spec(min_trials: int):
    """The bundled spec with its test block repeated until the session has `min_trials` trials."""
    from experiments.spec import load_spec
    from studies.lakretz2021.cells import block_cells

    exp = load_spec("lakretz2021_nested")
    test = exp.block("test")
    per_rep = len(block_cells(test)) // test.repetitions
    train = exp.blocks[0].trials or len(block_cells(exp.blocks[0]))
    reps = max(test.repetitions, -(-(min_trials - train) // per_rep))
    blocks = [b if b.name != "test" else b.model_copy(update={"repetitions": reps}) for b in exp.blocks]
    return exp.model_copy(update={"blocks": blocks})


def _parser() -> argparse.ArgumentParser:
    """The benchmark's options (the module docstring is its --help)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--window", type=int, default=20, help="trials per measured window (first and last)")
    ap.add_argument("--naive-samples", type=int, default=5, help="naive re-encodings timed in each window (0: skip)")
    ap.add_argument("--protocol", default="violation_judgment")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--model", default=None)
    ap.add_argument("--json", default=None)
    return ap


def _timed_session(args: argparse.Namespace, backend, exp) -> tuple[list[float], object, str]:
    """Run one running-context session, stamping each trial; returns the seconds per trial, the runner, its folder."""
    from model_subjects.runner import RunConfig, Runner

    out_dir = tempfile.mkdtemp(prefix="twinlab-bench-running-")
    cfg = RunConfig(spec="lakretz2021_nested", subjects=1, context="running", protocol=args.protocol,
                    out=out_dir, trials=args.trials)
    stamps: list[float] = []
    start: list[float] = []

    def tick(n: int, total: int | None) -> None:
        if total is not None:  # sessions are open; the first trial starts now
            start.append(time.perf_counter())
        if n:
            stamps.append(time.perf_counter())

    runner = Runner(cfg, backend, exp=exp, progress=tick)
    runner.run()
    per = [b - a for a, b in zip(start[:1] + stamps[:-1], stamps, strict=False)]
    return per, runner, out_dir


def _naive(idx: list[int], runner, protocol, contexts: list[str], rows: list[dict], backend) -> tuple[float, float]:
    """Mean seconds to score the trials `idx` from scratch, and the largest |dlogP| against the stored scores."""
    from model_subjects.requests import LoglikelihoodRequest

    times, diff = [], 0.0
    for i in idx:
        trial = runner.prepare_subjects()[0].seq.trials[i]
        q = protocol.queries(trial)[0]
        reqs = [LoglikelihoodRequest(contexts[i], o.continuation) for o in q.options]
        t = time.perf_counter()
        out = backend.loglikelihood(reqs)  # one request pair: no shared-prefix reuse, whole context encoded
        times.append(time.perf_counter() - t)
        stored = json.loads(rows[i]["option_logprobs"])
        diff = max(diff, max(abs(r.logprob - s) for r, s in zip(out, stored, strict=False)))
    return statistics.mean(times), diff


def _naive_section(args: argparse.Namespace, exp, rows: list[dict], runner, backend, per: list[float],
                   res: dict) -> None:
    """The naive figure: sampled trials of both windows re-encoded whole; adds its numbers to `res` and prints them."""
    from model_subjects.context import parse_context, rebuild_contexts

    w = args.window
    last = per[-w:]
    protocol = runner.protocol
    contexts = rebuild_contexts(exp, rows, parse_context("running"), protocol)
    ctx_tokens = [len(backend.encode(c)) for c in contexts]
    res["context_tokens_first_trial"], res["context_tokens_last_trial"] = ctx_tokens[0], ctx_tokens[-1]

    k = min(args.naive_samples, w)
    pick_first = [round(j * (w - 1) / max(1, k - 1)) for j in range(k)]
    pick_last = [len(per) - w + p for p in pick_first]
    nf, d1 = _naive(pick_first, runner, protocol, contexts, rows, backend)
    nl, d2 = _naive(pick_last, runner, protocol, contexts, rows, backend)
    res.update({"naive_first_window_mean_s": nf, "naive_last_window_mean_s": nl, "naive_ratio": nl / nf,
                "naive_samples_per_window": k, "max_abs_logprob_diff_kv_vs_naive": max(d1, d2),
                "kv_speedup_last_window": nl / statistics.mean(last)})
    print(f"naive re-encoding  : trials 1-{w}: {nf * 1000:7.1f} ms/trial   trials {len(per) - w + 1}-{len(per)}: "
          f"{nl * 1000:7.1f} ms/trial   ratio {nl / nf:.2f}   ({k} sampled trials per window; "
          f"context {ctx_tokens[0]}..{ctx_tokens[-1]} tokens)")
    print(f"KV cache vs naive in the last window: {nl / statistics.mean(last):.1f}x faster;  "
          f"max |dlogP| kv vs naive {max(d1, d2):.1e}")


def main(argv: list[str] | None = None) -> dict:
    """Time a running session (and, unless --naive-samples 0, the naive re-encoding); returns the figures."""
    args = _parser().parse_args(argv)

    import torch

    from model_subjects.backends.registry import load_backend

    backend = load_backend(args.model, threads=args.threads)
    exp = long_spec(args.trials)
    per, runner, out_dir = _timed_session(args, backend, exp)
    w = args.window
    first, last = per[:w], per[-w:]
    ratio = statistics.mean(last) / statistics.mean(first)
    rows = read_rows(next((__import__("pathlib").Path(out_dir) / "data").glob("*_data.csv")))
    n_tokens = len(backend.encode(json.loads(rows[-1]["extra"])["prompt"]))
    res = {"trials": len(per), "threads": torch.get_num_threads(), "total_seconds": sum(per),
           "first_window_mean_s": statistics.mean(first), "last_window_mean_s": statistics.mean(last),
           "ratio_last_over_first": ratio}
    print(f"model {backend.name}  trials {len(per)}  protocol {args.protocol}  threads {torch.get_num_threads()}")
    print(f"KV-cache extension : trials 1-{w}: {statistics.mean(first) * 1000:7.1f} ms/trial   "
          f"trials {len(per) - w + 1}-{len(per)}: {statistics.mean(last) * 1000:7.1f} ms/trial   "
          f"ratio {ratio:.2f}   (session {sum(per):.1f}s)", flush=True)

    if args.naive_samples:
        _naive_section(args, exp, rows, runner, backend, per, res)
    print(f"(prompt of the last trial: {n_tokens} tokens)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(res, fh, indent=2)
    return res


if __name__ == "__main__":
    main()
