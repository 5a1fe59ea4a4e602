"""How long does compiling take as a block grows, and how long do refusals take?

Times `compile_sequence` on the bundled spec with its test block set to N trials (the plain greedy
order, then the feasibility-guided one once the greedy's bounded search is spent), and the time
until `check_sizes` refuses sizes the spec cannot supply. Prints one line per case.

    python -m benchmarks.bench_compile_blocks
    python -m benchmarks.bench_compile_blocks --trials 144 500 2000
"""
from __future__ import annotations

import argparse
import time

import yaml


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, nargs="+", default=[144, 288, 1000, 5000])
    args = ap.parse_args(argv)


    from experiments.design_compiler import check_sizes, compile_sequence
    from experiments.spec import SpecError, bundled_spec_path, parse_spec

    base = yaml.safe_load(bundled_spec_path("lakretz2021_nested").read_text(encoding="utf-8"))
    out = []
    for n in args.trials:
        d = yaml.safe_load(yaml.safe_dump(base))
        d["blocks"][1]["trials"] = n
        t0 = time.perf_counter()
        seq = compile_sequence(parse_spec(d), "S1")
        dt = time.perf_counter() - t0
        out.append({"case": f"test block {n} trials", "trials": len(seq), "seconds": round(dt, 2)})
    for label, change in [("repetitions 1000 (design 72,000)", {"repetitions": 1000}),
                          ("trials 5000 over a 512-item pool", None)]:
        d = yaml.safe_load(yaml.safe_dump(base))
        if change:
            d["blocks"][1].update(change)
        else:
            d["stimuli"] = {"items_per_condition": 64}
            d["blocks"][1]["trials"] = 5000
        t0 = time.perf_counter()
        try:
            check_sizes(parse_spec(d))
            msg = "accepted"
        except SpecError as exc:
            msg = "refused: " + str(exc)[:90]
        out.append({"case": label, "result": msg, "seconds": round(time.perf_counter() - t0, 3)})
    for r in out:
        print("  ".join(f"{k}={v}" for k, v in r.items()))
    return out


if __name__ == "__main__":
    main()
