"""Compare two folders written by scripts/reference_runs.sh: a change that moves code moves no number.

Plans byte for byte; session tables with the same header line and the same cells except wall-clock columns
(started_at, ended_at); sidecars and other JSON equal but for wall-clock and path keys; every report folder
(report_*) by scripts/compare_reports.py (tables and results.json, floats to --rtol). Exit 0 when equal,
1 with one line per difference.
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_reports import compare_json, compare_report  # noqa: E402

CLOCK_COLUMNS = {"started_at", "ended_at"}
CLOCK_KEYS = {"created", "runtime_s", "out", "files", "started_at", "ended_at", "finished_at", "updated_at",
              "imported_at", "written_at", "seconds", "elapsed_s", "wall_s", "time", "path", "spec_file",
              "source", "host", "hostname", "pid", "out_dir"}


def strip_clock(value):
    """A JSON value without wall-clock and path keys (anywhere in it)."""
    if isinstance(value, dict):
        return {k: strip_clock(v) for k, v in value.items() if k not in CLOCK_KEYS}
    if isinstance(value, list):
        return [strip_clock(v) for v in value]
    return value


def compare_table(a: Path, b: Path, rel: str) -> list[str]:
    """A session table: the header line byte for byte, then every cell but the clock columns."""
    ta, tb = a.read_text(encoding="utf-8"), b.read_text(encoding="utf-8")
    if ta.splitlines()[:1] != tb.splitlines()[:1]:
        return [f"{rel}: header differs"]
    ra, rb = list(csv.DictReader(ta.splitlines())), list(csv.DictReader(tb.splitlines()))
    if len(ra) != len(rb):
        return [f"{rel}: {len(ra)} rows != {len(rb)}"]
    out = []
    for i, (x, y) in enumerate(zip(ra, rb, strict=False)):
        cols = [c for c in x if c not in CLOCK_COLUMNS and x[c] != y.get(c)]
        if cols:
            out.append(f"{rel} row {i + 2}: {', '.join(cols[:6])} differ")
    return out


def load_json(path: Path, root: Path):
    """A JSON file with its run folder's path written as <ROOT> (paths are keys and values in results.json)."""
    return json.loads(path.read_text(encoding="utf-8").replace(str(root.resolve()), "<ROOT>")
                      .replace(str(root), "<ROOT>"))


def compare_file(a: Path, b: Path, rel: str, roots: tuple[Path, Path]) -> list[str]:
    if rel.startswith("plans/"):
        return [] if a.read_bytes() == b.read_bytes() else [f"{rel}: bytes differ"]
    if a.suffix == ".csv":
        return compare_table(a, b, rel)
    if a.suffix == ".json":
        x, y = strip_clock(load_json(a, roots[0])), strip_clock(load_json(b, roots[1]))
        return [d.replace("results.json", rel, 1) for d in compare_json(x, y, "", 1e-9)]
    return []


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ref", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("--rtol", type=float, default=1e-9)
    a = ap.parse_args(argv)

    def rooted(path: Path):
        return load_json(path, a.ref if path.is_relative_to(a.ref) else a.new)

    diffs: list[str] = []
    reports = sorted(p.name for p in a.ref.glob("report_*"))
    for name in reports:
        if not (a.new / name).is_dir():
            diffs.append(f"{name}: missing in new")
            continue
        diffs += [f"{name}: {d}" for d in compare_report(a.ref / name, a.new / name, a.rtol, load=rooted)]
    files = sorted(p.relative_to(a.ref).as_posix() for p in a.ref.rglob("*")
                   if p.is_file() and not p.relative_to(a.ref).as_posix().startswith("report_"))
    for rel in files:
        if not (a.new / rel).is_file():
            diffs.append(f"{rel}: missing in new")
        else:
            diffs += compare_file(a.ref / rel, a.new / rel, rel, (a.ref, a.new))
    for d in diffs:
        print(d)
    print(f"{len(files)} files and {len(reports)} reports: {'equal' if not diffs else f'{len(diffs)} difference(s)'}")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
