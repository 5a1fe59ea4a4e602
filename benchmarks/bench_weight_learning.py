"""A 40-trial session of the bundled model whose weights learn (one step per trial) vs the frozen run.

One model subject runs the demo spec's 40-trial training block (feedback on every trial) twice in the
same process on the same loaded model: frozen (`--learning context --context none`: all 40 trials scored
in batches) and learning (`--learning weights --update-on feedback --steps 1`, full fine-tuning, SGD:
each trial scored, one optimizer step on its right answer, the weights hashed). Printed: wall seconds
and CPU seconds of each, seconds per learning trial split into scoring, update and hashing (timed around the learner's
calls), the ratio, and the machine's load average (the CPUs may be shared: the ratio is the figure to
compare; the goal is under a minute for the 40 trials on 2 cores).

    python -m benchmarks.bench_weight_learning                   # 40 trials, SGD, lr 1e-4
    python -m benchmarks.bench_weight_learning --trials 20 --optimizer adamw --json out.json
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--spec", default="lakretz2021_demo")
    ap.add_argument("--optimizer", default="sgd", choices=("sgd", "adamw"))
    ap.add_argument("--update-on", default="feedback", choices=("feedback", "read"))
    ap.add_argument("--adapter", default="full", choices=("full", "lora"))
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", default=None)
    return ap


class _Timer:
    """Seconds spent in the learner's steps and hashes (wrapped methods), to split a learning trial's time."""

    def __init__(self) -> None:
        self.train = 0.0
        self.digest = 0.0

    def wrap(self, cls) -> None:
        for name in ("train", "digest"):
            original = getattr(cls, name)

            def timed(*a, _orig=original, _name=name, **kw):
                t = time.perf_counter()
                try:
                    return _orig(*a, **kw)
                finally:
                    setattr(self, _name, getattr(self, _name) + time.perf_counter() - t)

            setattr(cls, name, timed)


def _session(backend, args, **learning) -> tuple[float, float]:
    from model_subjects.runner import RunConfig, Runner

    out = tempfile.mkdtemp(prefix="twinlab-bench-weights-")
    cfg = RunConfig(spec=args.spec, out=out, trials=args.trials, subjects=1, threads=args.threads, **learning)
    t, c = time.perf_counter(), time.process_time()
    Runner(cfg, backend).run()
    return time.perf_counter() - t, time.process_time() - c  # wall, and this process's CPU seconds


def main(argv: list[str] | None = None) -> dict:
    args = _parser().parse_args(argv)
    from model_subjects.backends.registry import load_backend
    from model_subjects.weight_learner import WeightLearner

    load0 = os.getloadavg()
    backend = load_backend(None, threads=args.threads)
    frozen_s, frozen_cpu = _session(backend, args)
    timer = _Timer()
    timer.wrap(WeightLearner)
    learn_s, learn_cpu = _session(backend, args, learning="weights", lr=args.lr, steps=1, optimizer=args.optimizer,
                          update_on=args.update_on, adapter=args.adapter)
    n = args.trials
    res = {"trials": n, "spec": args.spec, "optimizer": args.optimizer, "update_on": args.update_on,
           "adapter": args.adapter, "threads": args.threads, "cpus": os.cpu_count(),
           "frozen_s": round(frozen_s, 2), "learning_s": round(learn_s, 2), "ratio": round(learn_s / frozen_s, 1),
           "frozen_cpu_s": round(frozen_cpu, 2), "learning_cpu_s": round(learn_cpu, 2),
           "per_trial_s": round(learn_s / n, 3), "update_s_per_trial": round(timer.train / n, 3),
           "hash_s_per_trial": round(timer.digest / n, 3),
           "other_s_per_trial": round((learn_s - timer.train - timer.digest) / n, 3),
           "loadavg_before": [round(x, 2) for x in load0], "loadavg_after": [round(x, 2) for x in os.getloadavg()]}
    print(f"{n} trials, bundled model, {args.threads} thread(s), {args.adapter} {args.optimizer} on {args.update_on}: "
          f"frozen {frozen_s:.1f}s, learning {learn_s:.1f}s (x{res['ratio']}) wall; CPU {frozen_cpu:.1f}s and "
          f"{learn_cpu:.1f}s; per learning trial "
          f"{res['per_trial_s']}s = update {res['update_s_per_trial']}s + hash {res['hash_s_per_trial']}s + scoring "
          f"and writing {res['other_s_per_trial']}s; load average {res['loadavg_before']} -> {res['loadavg_after']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(res, fh, indent=2)
    return res


if __name__ == "__main__":
    main()
