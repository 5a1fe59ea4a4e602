"""Backends side by side on the same CPU and model: items/s, running-subject trials/s, peak memory.

Each row runs in its own child process (so its peak resident memory is its own), one after another
in the same run, with the same work:

  * items: `forced_choice` on the bundled spec, no context, `--subjects` subjects x all their trials
    (the held-in items), scored through the runner as `twinlab run-model` does;
  * running: `violation_judgment` in running context with feedback, `--running-subjects` subjects x
    `--running-trials` trials (one growing context each).

Rows (`ROWS`): transformers (in process, float32 de-quantised weights) and llamacpp (in process, the
Q4_1 GGUF run quantised). A row is a backend name, its load settings and a label; more rows (e.g. a
served backend with 1, 4 and 16 subjects in flight) are added with `add_row(...)` before `main()`,
or by a module that extends `ROWS` (`--rows` picks rows by label).

    python -m benchmarks.bench_backends                              # both rows, the docs table
    python -m benchmarks.bench_backends --subjects 1 --running-trials 20 --rows transformers,llamacpp
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

SPEC = "lakretz2021_nested"


@dataclass
class Row:
    label: str
    backend: str  # a registered backend name
    settings: dict[str, Any] = field(default_factory=dict)  # load_backend settings
    model: str | None = None
    running_subjects: int | None = None  # overrides --running-subjects (subjects in flight)


ROWS: list[Row] = [
    Row("transformers", "transformers", {"threads": 1}),
    Row("llamacpp", "llamacpp", {"threads": 1}),
]


def add_row(row: Row) -> None:
    """A further row for the same table (the served backend's rows use this hook)."""
    ROWS.append(row)


def _timed_run(backend: Any, **cfg: Any) -> tuple[int, float]:
    from model_subjects.runner import RunConfig, Runner

    with tempfile.TemporaryDirectory(prefix="twinlab-bench-backends-") as out:
        t0 = time.perf_counter()
        summary = Runner(RunConfig(spec=SPEC, out=out, **cfg), backend).run()
        return summary.trials_run, time.perf_counter() - t0


def run_row(row: Row, subjects: int, running_subjects: int, running_trials: int) -> dict[str, Any]:
    """One row, in this process: load, items, running; the process's peak memory."""
    from model_subjects.backends.registry import load_backend

    t0 = time.perf_counter()
    backend = load_backend(row.model, backend=row.backend, **row.settings)
    load_s = time.perf_counter() - t0
    n_items, items_s = _timed_run(backend, subjects=subjects, protocol="forced_choice", context="none")
    rs = row.running_subjects or running_subjects
    n_run, run_s = _timed_run(backend, subjects=rs, protocol="violation_judgment", context="running",
                              trials=running_trials)
    d = backend.describe()
    return {"label": row.label, "backend": row.backend, "model": d.get("name"), "dtype": d.get("dtype"),
            "quantization": d.get("quantization"), "threads": d.get("threads"), "load_s": load_s,
            "items": n_items, "items_s": items_s, "items_per_s": n_items / items_s,
            "running_subjects": rs, "running_trials": n_run, "running_s": run_s, "trials_per_s": n_run / run_s,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def table(results: list[dict[str, Any]]) -> str:
    base = results[0]
    lines = ["| backend | load | items/s (forced choice, no context) | running trials/s (subjects) | peak memory |",
             "|---|---|---|---|---|"]
    for r in results:
        rel_i = r["items_per_s"] / base["items_per_s"]
        rel_r = r["trials_per_s"] / base["trials_per_s"]
        lines.append(f"| {r['label']} | {r['load_s']:.1f} s | {r['items_per_s']:.1f} ({rel_i:.2f}x) | "
                     f"{r['trials_per_s']:.2f} ({r['running_subjects']}; {rel_r:.2f}x) | {r['peak_rss_mb']:.0f} MB |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--subjects", type=int, default=2, help="forced-choice subjects (184 held-in trials each)")
    ap.add_argument("--running-subjects", type=int, default=1)
    ap.add_argument("--running-trials", type=int, default=40)
    ap.add_argument("--rows", default=None, help="comma-separated row labels (default: all)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)  # a row as JSON: run it here
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(run_row(Row(**json.loads(args.child)), args.subjects, args.running_subjects,
                                 args.running_trials)))
        return []
    wanted = set(args.rows.split(",")) if args.rows else None
    results = []
    for row in ROWS:
        if wanted and row.label not in wanted:
            continue
        cmd = [sys.executable, "-m", "benchmarks.bench_backends", "--child", json.dumps(asdict(row)),
               "--subjects", str(args.subjects), "--running-subjects", str(args.running_subjects),
               "--running-trials", str(args.running_trials)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            sys.exit(f"row {row.label} failed:\n{r.stderr[-3000:]}")
        results.append(json.loads(r.stdout.strip().splitlines()[-1]))
        print(json.dumps(results[-1]), file=sys.stderr)
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return results


if __name__ == "__main__":
    main()
