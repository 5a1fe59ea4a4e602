"""Compare two `twinlab analyze` output folders: every tables/*.csv and results.json, number by number.

Why: a change that moves code (the Lakretz report onto the general pipeline, imports, a contract) must
move no number. Run the current code into a reference folder first, then the changed code, then
`python scripts/compare_reports.py REF NEW`; exit 0 when every table and result is equal (floats to
`--rtol`), else 1 with one line per difference. Wall-clock fields (created, runtime_s) are ignored.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, Callable

import pandas as pd

IGNORED_KEYS = {"created", "runtime_s", "out", "files"}


def compare_tables(ref: Path, new: Path, rtol: float) -> list[str]:
    """Differences between the CSV tables of two report folders (missing, columns, shape, values)."""
    diffs = []
    a = {p.name for p in (ref / "tables").glob("*.csv")}
    b = {p.name for p in (new / "tables").glob("*.csv")}
    diffs += [f"table missing in new: {n}" for n in sorted(a - b)]
    diffs += [f"table only in new: {n}" for n in sorted(b - a)]
    for name in sorted(a & b):
        x, y = pd.read_csv(ref / "tables" / name), pd.read_csv(new / "tables" / name)
        if list(x.columns) != list(y.columns):
            diffs.append(f"{name}: columns {list(x.columns)} != {list(y.columns)}")
            continue
        if x.shape != y.shape:
            diffs.append(f"{name}: shape {x.shape} != {y.shape}")
            continue
        try:
            pd.testing.assert_frame_equal(x, y, check_exact=False, rtol=rtol, check_dtype=False)
        except AssertionError as e:
            diffs.append(f"{name}: {str(e).splitlines()[0:3]}")
    return diffs


def compare_json(x, y, path: str, rtol: float) -> list[str]:
    """Differences between two JSON values, recursively (floats to rtol; wall-clock keys ignored)."""
    if isinstance(x, dict) and isinstance(y, dict):
        out = []
        for k in sorted(set(x) | set(y)):
            if k in IGNORED_KEYS:
                continue
            if k not in x or k not in y:
                out.append(f"results.json {path}/{k}: only in {'new' if k in y else 'ref'}")
            else:
                out += compare_json(x[k], y[k], f"{path}/{k}", rtol)
        return out
    if isinstance(x, list) and isinstance(y, list):
        if len(x) != len(y):
            return [f"results.json {path}: length {len(x)} != {len(y)}"]
        return [d for i, (u, v) in enumerate(zip(x, y, strict=False)) for d in compare_json(u, v, f"{path}[{i}]", rtol)]
    if isinstance(x, float) and isinstance(y, (int, float)):
        same = (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=rtol, abs_tol=1e-12)
        return [] if same else [f"results.json {path}: {x} != {y}"]
    return [] if x == y else [f"results.json {path}: {x!r} != {y!r}"]


def compare_report(ref: Path, new: Path, rtol: float, load: Callable[[Path], Any] | None = None) -> list[str]:
    """Differences between two report folders: their tables, then their results.json (read by `load`, default
    plain JSON; scripts/compare_runs.py writes the run folder's path as <ROOT> before comparing)."""
    load = load or (lambda path: json.loads(path.read_text(encoding="utf-8")))
    diffs = compare_tables(ref, new, rtol)
    jr, jn = ref / "results.json", new / "results.json"
    if jr.exists() and jn.exists():
        diffs += compare_json(load(jr), load(jn), "", rtol)
    return diffs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ref", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("--rtol", type=float, default=1e-9)
    a = ap.parse_args(argv)
    diffs = compare_report(a.ref, a.new, a.rtol)
    for d in diffs:
        print(d)
    n = len(list((a.ref / "tables").glob("*.csv")))
    print(f"{n} reference tables: {'equal' if not diffs else f'{len(diffs)} difference(s)'}")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
