"""Per-word surprisal: twinlab's SurprisalScorer vs minicons' word_score_tokenized, same sentences and model.

Sentences: `--n` generated nested-agreement sentences of mixed structures (studies.lakretz2021.stimuli.generate), scored
with BOS, in bits, with and without the beginning-of-word correction. Both sides get the same batch
size (`--batch`, sentences per forward pass) and one thread; each is timed over `--repeat` runs
(interleaved; the best wall and CPU time of each is kept: the CPU time of this one-thread process is
the steadier figure on a shared machine). twinlab is called as the runner calls it (all sentences at once: it sorts
them by length into batches of the same token budget); minicons in batches of `--batch` in the given order, as
its documentation does. Prints sentences/s for both, the speed ratio (twinlab / minicons) and the largest
difference (bits). Example:
    python -m benchmarks.bench_surprisal --n 256
"""
from __future__ import annotations

import argparse
import copy
import json
import platform
import time

from minicons import scorer

from studies.lakretz2021.stimuli.generate import generate_items


def sentences(n: int) -> list[str]:

    out: list[str] = []
    for structure in ("long_nested", "short_nested", "single", "long_successive"):
        out += [" ".join(i.words) if hasattr(i, "words") else str(i) for i in generate_items(structure, "test", 64)]
    return out[:: max(1, len(out) // n)][:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    import torch

    from model_subjects.backends.registry import load_backend
    from model_subjects.surprisal import SurprisalScorer, SurprisalSettings

    torch.set_num_threads(1)
    b = load_backend(None, threads=1)
    sents = sentences(args.n)
    mc = scorer.IncrementalLMScorer(b.model, device="cpu", tokenizer=copy.deepcopy(b.tokenizer))
    report = {"n_sentences": len(sents), "batch": args.batch, "model": b.name, "threads": 1,
              "machine": platform.processor() or platform.machine(), "results": {}}
    for bow in (False, True):
        # the same memory per forward pass: a token budget of `batch` sentences of the mean length
        budget = args.batch * max(1, round(sum(len(b.tokenizer(s)["input_ids"]) + 1 for s in sents) / len(sents)))
        ours_scorer = SurprisalScorer(b.model, b.tokenizer, SurprisalSettings(bow_correction=bow),
                                      max_batch_tokens=budget)

        # as the runner calls it: every trial of a chunk at once (length-sorted batches)
        def run_ours(ours_scorer=ours_scorer):
            return ours_scorer.score([s.split() for s in sents])

        def run_mc(bow=bow):
            out = []
            for k in range(0, len(sents), args.batch):
                out += mc.word_score_tokenized(sents[k:k + args.batch], tokenize_function=lambda text: text.split(),
                                               bow_correction=bow, bos_token=True, surprisal=True, base_two=True)
            return out

        wall = {"twinlab": float("inf"), "minicons": float("inf")}
        cpu = dict(wall)
        out = {}
        for _ in range(args.repeat):  # interleaved, best of each: the machine's load changes by the minute
            for name, fn in (("twinlab", run_ours), ("minicons", run_mc)):
                t0, c0 = time.perf_counter(), time.process_time()
                out[name] = fn()
                wall[name] = min(wall[name], time.perf_counter() - t0)
                cpu[name] = min(cpu[name], time.process_time() - c0)
        diff = max(abs(a - v) for o, t in zip(out["twinlab"], out["minicons"], strict=False)
                   for a, (_, v) in zip(o, t, strict=False))
        r = {"twinlab_sentences_per_s": len(sents) / wall["twinlab"],
             "minicons_sentences_per_s": len(sents) / wall["minicons"],
             "speed_ratio_wall": wall["minicons"] / wall["twinlab"],
             "speed_ratio_cpu_time": cpu["minicons"] / cpu["twinlab"],
             "cpu_s": cpu, "max_abs_diff_bits": diff}
        report["results"]["bow_correction" if bow else "plain"] = r
        print(f"bow_correction={bow}: twinlab {r['twinlab_sentences_per_s']:.1f} sent/s, minicons "
              f"{r['minicons_sentences_per_s']:.1f} sent/s, ratio (wall) {r['speed_ratio_wall']:.2f}x, "
              f"ratio (CPU time) {r['speed_ratio_cpu_time']:.2f}x, max |diff| {diff:.2e} bits", flush=True)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
