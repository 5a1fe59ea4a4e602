"""How long does `twinlab import lakretz2021` take on a release-sized input?

Builds a synthetic release in the real format (tests/support/lakretz_synthetic.py) in a temp
folder: 55 table subjects x 2 sessions of 270 trials (one outlier), 6 subjects with logs only and
4 pilot training logs of 40 trials -- 120 logs and ~29,700 table rows, like the public release
(about 120 logs, 29,000 rows). Then times the import (read + check + match + write) as the CLI
runs it, and prints the figures. Target: under 10 s.

    python -m benchmarks.bench_lakretz_import            # the release-sized set, 3 timed runs
    python -m benchmarks.bench_lakretz_import --subjects 10 --runs 1
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from tests.support.lakretz_synthetic import release_plans, write_release


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--subjects", type=int, default=55, help="subjects in the results table (2 sessions each)")
    ap.add_argument("--runs", type=int, default=3, help="timed imports (each into a fresh folder)")
    args = ap.parse_args(argv)

    from studies.lakretz2021.importers.release import import_lakretz2021

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        rel = write_release(tmp / "release", release_plans(args.subjects))
        t_gen = time.perf_counter() - t0
        n_rows = sum(1 for _ in open(rel.table, encoding="utf-8")) - 1
        size_mb = sum(p.stat().st_size for p in rel.log_files) / 1e6
        times, cpu = [], []
        summary = None
        for k in range(args.runs):
            t0, c0 = time.perf_counter(), time.process_time()
            summary = import_lakretz2021(rel.table, rel.logs, tmp / f"out{k}")
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        res = {
            "logs": len(rel.log_files), "log_megabytes": round(size_mb, 1), "table_rows": n_rows,
            "rows_written": summary.rows_written, "sessions_written": summary.sessions_written,
            "matched_exact": summary.matched.get("exact"), "generate_s": round(t_gen, 2),
            "import_s_runs": [round(t, 2) for t in times], "import_s_median": round(statistics.median(times), 2),
            "import_cpu_s_median": round(statistics.median(cpu), 2),
            "load_average_1min": round(os.getloadavg()[0], 2), "cpus": os.cpu_count(),
        }
    print(f"synthetic release: {res['logs']} logs ({res['log_megabytes']} MB), {res['table_rows']} table rows "
          f"(generated in {res['generate_s']} s)")
    print(f"import: {res['sessions_written']} sessions, {res['rows_written']} rows written, "
          f"{res['matched_exact']} table rows matched; time per run {res['import_s_runs']} s, "
          f"median {res['import_s_median']} s wall, {res['import_cpu_s_median']} s CPU (target < 10 s); "
          f"load average {res['load_average_1min']} on {res['cpus']} CPUs")
    print(json.dumps(res))
    return res


if __name__ == "__main__":
    main()
