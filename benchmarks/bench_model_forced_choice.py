"""Forced choice on the nested-agreement items: twinlab's backend vs minicons, same items and model.

Task (Lakretz/Lampinen): for each long_nested test item (inner dependency), after the eight-shot
prompt (eightshot_a) and the sentence prefix, compare log P(correct verb form) with log P(its
number-flipped form). twinlab scores both single-token alternatives from one forward pass and
encodes the shared prompt once (KV cache); minicons' IncrementalLMScorer scores every
(prefix, form) pair as a full sequence, in batches of `--minicons-batch` sequences.

Prints items/s for both, the speed ratio, how many choices agree and the largest difference of
the log-probabilities. Example:
    python -m benchmarks.bench_model_forced_choice --n 256      # quick
    python -m benchmarks.bench_model_forced_choice               # all 4096 items
    python -m benchmarks.bench_model_forced_choice --n 256 --prompt none --compare-sharing
"""
from __future__ import annotations

import argparse
import json
import platform
import time

from minicons import scorer

from stimuli.prompts import get_prompt_set
from studies.lakretz2021.stimuli.generate import generate_items


def items_and_requests(n: int | None, prompt_set: str | None = "eightshot_a"):

    items = generate_items("long_nested", "test", 512)
    if n:
        items = items[:: max(1, len(items) // n)][:n]
    prompt = get_prompt_set(prompt_set).text + "\n" if prompt_set else ""
    rows = []
    for it in items:
        idx, correct, flipped = it.verbs["inner"]
        rows.append((prompt + " ".join(it.words[:idx]), correct, flipped))
    return items, rows


def _parser() -> argparse.ArgumentParser:
    """The benchmark's options (the module docstring is its --help)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=None, help="use a subset of N items (default: all 4096)")
    ap.add_argument("--batch-size", default="auto", help="twinlab rows per forward pass (or auto)")
    ap.add_argument("--prompt", default="eightshot_a", help="few-shot prompt set, or 'none' for the bare prefix")
    ap.add_argument("--sharing", default="tree", choices=["tree", "prompt"],
                    help="twinlab prefix sharing: prefix tree (default) or only a long common prompt")
    ap.add_argument("--compare-sharing", action="store_true",
                    help="also time the other prefix-sharing scheme in the same run")
    ap.add_argument("--minicons-batch", type=int, default=32, help="minicons sequences per call")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--model", default=None)
    ap.add_argument("--skip-minicons", action="store_true")
    ap.add_argument("--no-prefix-cache", action="store_true", help="ablation: twinlab without prompt KV reuse")
    ap.add_argument("--warmup", type=int, default=8, help="items scored once, untimed, by each scorer first")
    ap.add_argument("--json", default=None, help="also write the figures to this JSON file")
    return ap


def _compare_sharing(backend, reqs: list, res: list, n: int) -> dict:
    """Time the other prefix-sharing scheme on the same requests; the log-probabilities must not move."""
    other = "prompt" if backend.prefix_sharing == "tree" else "tree"
    mine, backend.prefix_sharing = backend.prefix_sharing, other
    t = time.perf_counter()
    res2 = backend.loglikelihood(reqs)
    o_s = time.perf_counter() - t
    backend.prefix_sharing = mine
    diff = max(abs(a.logprob - b.logprob) for a, b in zip(res, res2, strict=False))
    print(f"twinlab ({other} sharing): {o_s:8.1f}s  {n / o_s:8.2f} items/s  max |dlogP| vs {mine} {diff:.1e}",
          flush=True)
    return {f"{other}_seconds": o_s, f"{other}_items_per_s": n / o_s, "sharing_max_abs_diff": diff}


def _minicons(backend, rows: list[tuple[str, str, str]], ours: list[tuple[float, float]], tw_s: float,
              tw_cpu: float, args: argparse.Namespace) -> dict:
    """minicons on the same model and pairs (same warm-up), with the choices and log-probabilities compared."""

    n = len(rows)
    mc = scorer.IncrementalLMScorer(backend.model, device="cpu", tokenizer=backend.tokenizer)
    pre = [ctx for ctx, c, f in rows for _ in (0, 1)]
    stim = [w for ctx, c, f in rows for w in (c, f)]
    if args.warmup:
        mc.conditional_score(pre[: 2 * args.warmup], stim[: 2 * args.warmup], reduction=lambda x: x.sum(0).item())
    t, c = time.perf_counter(), time.process_time()
    scores: list[float] = []
    for s in range(0, len(pre), args.minicons_batch):
        scores += mc.conditional_score(pre[s:s + args.minicons_batch], stim[s:s + args.minicons_batch],
                                       reduction=lambda x: x.sum(0).item())
    mc_s, mc_cpu = time.perf_counter() - t, time.process_time() - c
    theirs = [(scores[2 * i], scores[2 * i + 1]) for i in range(n)]
    same = sum((a > b) == (c > d) for (a, b), (c, d) in zip(ours, theirs, strict=False))
    maxdiff = max(max(abs(a - c), abs(b - d)) for (a, b), (c, d) in zip(ours, theirs, strict=False))
    print(f"minicons: {mc_s:8.1f}s  {n / mc_s:8.2f} items/s", flush=True)
    print(f"speed-up {mc_s / tw_s:.2f}x wall, {mc_cpu / tw_cpu:.2f}x CPU time   identical choices {same}/{n}   max "
          f"|dlogP| {maxdiff:.2e}", flush=True)
    return {"minicons_seconds": mc_s, "minicons_items_per_s": n / mc_s, "speedup": mc_s / tw_s,
            "minicons_cpu_seconds": mc_cpu, "speedup_cpu_time": mc_cpu / tw_cpu,
            "identical_choices": same, "max_abs_logprob_diff": maxdiff}


def main(argv: list[str] | None = None) -> dict:
    """Time twinlab (and, unless skipped, minicons) on the same pairs; returns (and optionally writes) the figures."""
    args = _parser().parse_args(argv)

    import torch

    from model_subjects.backends.registry import load_backend
    from model_subjects.requests import LoglikelihoodRequest

    t = time.perf_counter()
    backend = load_backend(args.model, batch_size=args.batch_size, threads=args.threads, prefix_sharing=args.sharing)
    if args.no_prefix_cache:
        backend.prefix_sharing = "prompt"
        backend.min_prefix = 10**9
    load_s = time.perf_counter() - t
    items, rows = items_and_requests(args.n, None if args.prompt == "none" else args.prompt)
    n = len(rows)
    print(f"model {backend.name}  items {n}  threads {torch.get_num_threads()}  cpu "
          f"{platform.processor() or platform.machine()}"
          f"  load {load_s:.1f}s", flush=True)

    reqs = [LoglikelihoodRequest(ctx, " " + w) for ctx, c, f in rows for w in (c, f)]
    if args.warmup:  # both scorers get the same warm-up call (first-call allocations are not timed)
        backend.loglikelihood(reqs[: 2 * args.warmup])
    t, c = time.perf_counter(), time.process_time()
    res = backend.loglikelihood(reqs)
    tw_s, tw_cpu = time.perf_counter() - t, time.process_time() - c
    ours = [(res[2 * i].logprob, res[2 * i + 1].logprob) for i in range(n)]
    ours_choice = [a > b for a, b in ours]
    out = {"items": n, "model": backend.name, "prompt": args.prompt, "sharing": backend.prefix_sharing,
           "threads": torch.get_num_threads(),
           "twinlab_seconds": tw_s, "twinlab_cpu_seconds": tw_cpu, "twinlab_items_per_s": n / tw_s,
           "twinlab_accuracy": sum(ours_choice) / n, "prefix_cache": not args.no_prefix_cache}
    print(f"twinlab : {tw_s:8.1f}s  {n / tw_s:8.2f} items/s  accuracy {out['twinlab_accuracy']:.3f}"
          f"  ({backend.prefix_sharing}, tokens run {backend.last_tree_tokens or '-'})", flush=True)
    if args.compare_sharing:
        out.update(_compare_sharing(backend, reqs, res, n))

    if not args.skip_minicons:
        out.update(_minicons(backend, rows, ours, tw_s, tw_cpu, args))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=2)
    return out


if __name__ == "__main__":
    main()
