"""Time of `twinlab reproduce lampinen2024`, measured per arm and extrapolated to the full grid.

Either runs the reproduction with a few items per condition in a fresh folder, or reads the
provenance.json of a finished run (`--provenance OUT/provenance.json`), and prints per-arm
throughput and the time the full grid (512 items per condition, every arm) would take at the
measured rates. Arms reused from finished sessions (computed now = 0) are left out.

    python benchmarks/bench_reproduce_lampinen.py --items-per-condition 8
    python benchmarks/bench_reproduce_lampinen.py --provenance /tmp/r32/provenance.json
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

FULL_PER_CONDITION = 512


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--provenance", type=Path)
    ap.add_argument("--items-per-condition", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args()
    if a.provenance is None:
        out = Path(tempfile.mkdtemp(prefix="bench_lampinen_"))
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "experiments.cli", "reproduce", "lampinen2024", "--out", str(out), "-q",
                        "--items-per-condition", str(a.items_per_condition), "--threads", str(a.threads),
                        "--device", a.device], check=True)
        print(f"wall time of the whole command: {time.perf_counter() - t0:.1f} s")
        a.provenance = out / "provenance.json"
    prov = json.loads(a.provenance.read_text())
    arms = [x for x in prov["arms"] if x["trials_run_now"] > 0]
    if not arms:
        sys.exit("no arm was computed in that run (all reused); time a fresh folder")
    by_kind: dict[str, list] = defaultdict(list)
    for x in arms:
        kind = re.sub(r"_([a-f]|\d)$", "", x["arm"].split("/")[-1])  # twoshot_b -> twoshot, interp_3 -> interp
        by_kind[f"{x['subtask']} · {kind}"].append(x)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPU(s); "
          f"load average at the end {os.getloadavg()[0]:.1f}; device {prov['models'][0].get('device')}, "
          f"threads {prov['models'][0].get('threads')}")
    total_now = sum(x["seconds"] for x in arms)
    trials_now = sum(x["trials_run_now"] for x in arms)
    per_cond = prov["options"].get("items_per_condition")
    print(f"measured: {trials_now} trials in {total_now:.1f} s of arm time ({trials_now / total_now:.1f} trials/s), "
          f"{per_cond} items per condition, whole command {prov['seconds']} s")
    cpu_known = all("cpu_seconds" in x for x in arms)
    print(f"{'arm kind':70s} {'trials':>7s} {'wall s':>7s} {'trials/s':>9s}" + (f" {'CPU s':>7s}" if cpu_known else ""))
    full = full_cpu = 0.0
    for kind, xs in by_kind.items():
        n, s = sum(x["trials_run_now"] for x in xs), sum(x["seconds"] for x in xs)
        c = sum(x.get("cpu_seconds", 0.0) for x in xs)
        print(f"{kind:70s} {n:7d} {s:7.1f} {n / s:9.1f}" + (f" {c:7.1f}" if cpu_known else ""))
        full += s / n * (FULL_PER_CONDITION * 8 * len(xs))
        full_cpu += c / n * (FULL_PER_CONDITION * 8 * len(xs))
    grid = (f"full grid ({FULL_PER_CONDITION} items per condition, {len(arms)} arms, "
            f"{FULL_PER_CONDITION * 8 * len(arms)} trials)")
    print(f"{grid} at these wall-clock rates: {full / 60:.0f} min ({full / 3600:.1f} h)")
    if cpu_known:
        print(f"{grid} in CPU time at these rates: {full_cpu / 60:.0f} CPU-min (the wall time on an otherwise idle "
              f"machine with these threads)")


if __name__ == "__main__":
    main()
