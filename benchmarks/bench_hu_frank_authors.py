"""Time of the full `twinlab reproduce hu-frank2024 --authors-outputs` on the real release, with the paper's fits
in 5 row orders (the documented command; 33-34 min on 2 cores), and the row-order ranges it measures.

The test suite fits each model once (`--row-orders 1`, tests/reproductions/test_hu_frank_authors.py); the refits in
several row orders, which show how far a singular fit's Wald z moves, are measured here, not in CI.

    python -m benchmarks.bench_hu_frank_authors                      # ../shared/data/hu_frank2024, 5 orders
    python -m benchmarks.bench_hu_frank_authors --row-orders 2 --no-sensitivity --out /tmp/hf
"""
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT.parent / "shared" / "data" / "hu_frank2024"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--authors-outputs", type=Path, default=RELEASE)
    ap.add_argument("--out", type=Path, default=None, help="a new folder (default: a fresh temporary one)")
    ap.add_argument("--row-orders", type=int, default=5)
    ap.add_argument("--no-sensitivity", action="store_true")
    a = ap.parse_args()
    if not (a.authors_outputs / "output").is_dir():
        sys.exit(f"{a.authors_outputs}: no output/ folder (the authors' release, jennhu/lm-task-demands)")
    out = a.out or Path(tempfile.mkdtemp(prefix="bench_hufrank_")) / "out"
    cmd = [sys.executable, "-m", "experiments.cli", "reproduce", "hu-frank2024", "--authors-outputs",
           str(a.authors_outputs), "--out", str(out), "--row-orders", str(a.row_orders), "-q"]
    if a.no_sensitivity:
        cmd.append("--no-sensitivity")
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.perf_counter() - t0
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPU(s); load average at the end "
          f"{os.getloadavg()[0]:.1f}")
    print(f"wall time: {wall / 60:.1f} min ({a.row_orders} row orders, sensitivity "
          f"{'off' if a.no_sensitivity else 'on'}); report: {out / 'report.html'}")
    t = pd.read_csv(out / "tables" / "paper_vs_twinlab.csv")
    cols = [c for c in ("domain", "analysis", "twinlab", "row_orders", "row_order_z", "row_order_loglik",
                        "fit_status") if c in t.columns]
    with pd.option_context("display.width", 200, "display.max_colwidth", 60):
        print(t[cols].to_string(index=False))


if __name__ == "__main__":
    main()
