"""How long does `twinlab analyze` (mixed models on) take on a release-sized imported set?

Builds a synthetic release in the real format (tests/support/lakretz_synthetic.py): 55 table
subjects x 2 sessions of 270 trials (one outlier), 6 subjects with logs only, 4 pilot training
logs; imports it with `twinlab import lakretz2021`; then times `analyze` on the imported folder as
the CLI runs it: load, error rates with 2,000 bootstrap resamples, first encounters, the 18 Figure C2
glmer fits, the Table C2/C3 models and the likelihood-ratio test, Figures C1-C4, the report.
R's start-up is inside the timed run (a fresh process per run), as a user sees it. Target: under 60 s
on 2 cores.

    python -m benchmarks.bench_analyze_lakretz               # release-sized, 2 timed runs
    python -m benchmarks.bench_analyze_lakretz --subjects 20 --runs 1
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.support.lakretz_synthetic import release_plans, write_release

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--subjects", type=int, default=55, help="subjects in the results table (2 sessions each)")
    ap.add_argument("--runs", type=int, default=2, help="timed analyze runs (each a fresh process, R included)")
    ap.add_argument("--keep", type=Path, default=None, help="copy the last report folder here")
    args = ap.parse_args(argv)

    from studies.lakretz2021.importers.release import import_lakretz2021

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        rel = write_release(tmp / "release", release_plans(args.subjects))
        summary = import_lakretz2021(rel.table, rel.logs, tmp / "imported")
        times, cpu = [], []
        for k in range(args.runs):
            out = tmp / f"report{k}"
            cmd = [sys.executable, "-m", "experiments.cli", "analyze", str(tmp / "imported"), "--out", str(out)]
            t0 = time.perf_counter()
            before = os.times()
            r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(REPO)))
            after = os.times()
            times.append(time.perf_counter() - t0)
            cpu.append((after.children_user - before.children_user) + (after.children_system - before.children_system))
            if r.returncode != 0:
                raise SystemExit(f"analyze failed:\n{r.stdout}\n{r.stderr}")
        res_json = json.loads((out / "results.json").read_text())
        n_fits = sum(1 for s in res_json["sections"] for i in s["items"] if i.get("kind") == "mixed") * 2
        slopes = (out / "tables" / "exposure_slopes_long.csv").read_text().count("\n") - 1
        if args.keep:
            import shutil

            shutil.copytree(out, args.keep, dirs_exist_ok=True)
        res = {
            "subjects_in_table": args.subjects, "rows_imported": summary.rows_written,
            "sessions": summary.sessions_written, "glmer_fits": n_fits + slopes,
            "tables": len(res_json["tables"]), "figures": len(res_json["figures"]),
            "analyze_s_runs": [round(t, 1) for t in times], "analyze_s_median": round(statistics.median(times), 1),
            "analyze_cpu_s_median": round(statistics.median(cpu), 1),
            "load_average_1min": round(os.getloadavg()[0], 2), "cpus": os.cpu_count(),
        }
    print(f"imported synthetic release: {res['sessions']} sessions, {res['rows_imported']} rows "
          f"({args.subjects} table subjects)")
    print(f"analyze with mixed models: {res['glmer_fits']} glmer fits, {res['tables']} tables, {res['figures']} "
          "figures; "
          f"time per run {res['analyze_s_runs']} s, median {res['analyze_s_median']} s wall, "
          f"{res['analyze_cpu_s_median']} s CPU (target < 60 s); load average {res['load_average_1min']} on "
          f"{res['cpus']} CPUs")
    print(json.dumps(res))
    return res


if __name__ == "__main__":
    main()
