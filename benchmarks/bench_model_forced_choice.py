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
"""
from __future__ import annotations

import argparse
import json
import platform
import time


def items_and_requests(n: int | None, prompt_set: str = "eightshot_a"):
    from stimuli.generate import generate_items
    from stimuli.prompts import get_prompt_set

    items = generate_items("long_nested", "test", 512)
    if n:
        items = items[:: max(1, len(items) // n)][:n]
    prompt = get_prompt_set(prompt_set).text + "\n"
    rows = []
    for it in items:
        idx, correct, flipped = it.verbs["inner"]
        rows.append((prompt + " ".join(it.words[:idx]), correct, flipped))
    return items, rows


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=None, help="use a subset of N items (default: all 4096)")
    ap.add_argument("--batch-size", type=int, default=32, help="twinlab sequences per forward pass")
    ap.add_argument("--minicons-batch", type=int, default=32, help="minicons sequences per call")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--model", default=None)
    ap.add_argument("--skip-minicons", action="store_true")
    ap.add_argument("--no-prefix-cache", action="store_true", help="ablation: twinlab without prompt KV reuse")
    ap.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = ap.parse_args(argv)

    import torch

    from model_subjects.backend import load_backend
    from model_subjects.requests import LoglikelihoodRequest

    t = time.perf_counter()
    backend = load_backend(args.model, batch_size=args.batch_size, threads=args.threads)
    if args.no_prefix_cache:
        backend.min_prefix = 10**9
    load_s = time.perf_counter() - t
    items, rows = items_and_requests(args.n)
    n = len(rows)
    print(f"model {backend.name}  items {n}  threads {torch.get_num_threads()}  cpu {platform.processor() or platform.machine()}"
          f"  load {load_s:.1f}s", flush=True)

    reqs = [LoglikelihoodRequest(ctx, " " + w) for ctx, c, f in rows for w in (c, f)]
    t = time.perf_counter()
    res = backend.loglikelihood(reqs)
    tw_s = time.perf_counter() - t
    ours = [(res[2 * i].logprob, res[2 * i + 1].logprob) for i in range(n)]
    ours_choice = [a > b for a, b in ours]
    out = {"items": n, "model": backend.name, "threads": torch.get_num_threads(),
           "twinlab_seconds": tw_s, "twinlab_items_per_s": n / tw_s,
           "twinlab_accuracy": sum(ours_choice) / n, "prefix_cache": not args.no_prefix_cache}
    print(f"twinlab : {tw_s:8.1f}s  {n / tw_s:8.2f} items/s  accuracy {out['twinlab_accuracy']:.3f}", flush=True)

    if not args.skip_minicons:
        from minicons import scorer

        mc = scorer.IncrementalLMScorer(backend.model, device="cpu", tokenizer=backend.tokenizer)
        pre = [ctx for ctx, c, f in rows for _ in (0, 1)]
        stim = [w for ctx, c, f in rows for w in (c, f)]
        t = time.perf_counter()
        scores: list[float] = []
        for s in range(0, len(pre), args.minicons_batch):
            scores += mc.conditional_score(pre[s:s + args.minicons_batch], stim[s:s + args.minicons_batch],
                                           reduction=lambda x: x.sum(0).item())
        mc_s = time.perf_counter() - t
        theirs = [(scores[2 * i], scores[2 * i + 1]) for i in range(n)]
        same = sum((a > b) == (c > d) for (a, b), (c, d) in zip(ours, theirs))
        maxdiff = max(max(abs(a - c), abs(b - d)) for (a, b), (c, d) in zip(ours, theirs))
        out.update({"minicons_seconds": mc_s, "minicons_items_per_s": n / mc_s, "speedup": mc_s / tw_s,
                    "identical_choices": same, "max_abs_logprob_diff": maxdiff})
        print(f"minicons: {mc_s:8.1f}s  {n / mc_s:8.2f} items/s", flush=True)
        print(f"speed-up {mc_s / tw_s:.2f}x   identical choices {same}/{n}   max |dlogP| {maxdiff:.2e}", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=2)
    return out


if __name__ == "__main__":
    main()
