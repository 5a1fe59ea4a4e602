"""The writing half of an import: the spec files and the sessions, after everything was checked.

The spec is loaded from a temporary folder, every session planned (compiled, compared, scored) and what lies
in --out compared before the first byte is written; then the spec and items file go to OUT/spec/ (and
--spec-out) atomically, and each session is written staged and renamed (sessions.py).
"""
from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any, Optional

import yaml

from experiments.atomic import atomic_write_bytes, atomic_write_text
from experiments.session import session_paths, write_dataset_description
from experiments.spec import SpecError, load_spec
from participants.imports.csv_out import items_csv
from participants.imports.earlier import VERSIONS
from participants.imports.records import ImportInputError, ReadResult
from participants.imports.sessions import plan_sessions, write_session
from participants.imports.study import spec_dict

STAGING = ".twinlab-import-staging"   # where a --force replacement is written before it is renamed over


def staged_spec(study: Any, tool: str, folder: Path) -> tuple[Path, Path, str, str]:
    """Write the spec and items file into `folder` and load them with the project's loader (SpecError -> an
    ImportInputError naming what the data could not give). Returns (spec, items, spec text, items text)."""


    items_name = f"{study.name}_items.csv"
    spec = _spec_dict(study, tool, items_name)
    spec_text = yaml.safe_dump(spec, sort_keys=False, allow_unicode=True, width=100)
    items_text = items_csv(study)
    (folder / items_name).write_text(items_text, encoding="utf-8")
    (folder / f"{study.name}.yaml").write_text(spec_text, encoding="utf-8")
    try:
        load_spec(folder / f"{study.name}.yaml")
    except SpecError as exc:
        raise ImportInputError(f"the design read from the data is not a valid twinlab spec: {exc}") from None
    return folder / f"{study.name}.yaml", folder / items_name, spec_text, items_text


def _spec_dict(study: Any, tool: str, items_name: str) -> dict[str, Any]:
    d = spec_dict(study, items_name, f"Read from {tool} data by `twinlab import {tool}`: {len(study.people)} "
                                     "people, each a list of the design (the items in the order the person got them).")
    d["texts"] = {"instructions": [f"(Imported from {tool}: the study's own instructions are not in its data files.)"]}
    return d


def _target_state(path: Path, text: str, force: bool) -> str:
    """new, unchanged, or replace (--force); another file there is refused, naming it."""
    if not path.exists():
        return "new"
    if path.is_file() and path.read_text(encoding="utf-8", errors="replace") == text:
        return "unchanged"
    if force and path.is_file():
        return "replace"
    raise ImportInputError(f"{path} already exists and differs from the spec read from these files; nothing was "
                           "written (--add replaces it with the extended spec, keeping the earlier one in "
                           "OUT/spec/versions/; --force replaces it; or give another path)")


def keep_version(spec_path: Path) -> None:
    """Before OUT/spec/<name>.yaml is replaced, its spec and items file are kept in OUT/spec/versions/<hash>/ (the
    spec earlier sessions name stays loadable: `run-model --replay` replays a person with the spec they ran)."""

    try:
        old = load_spec(spec_path)
    except SpecError:
        return
    folder = spec_path.parent / VERSIONS / old.spec_hash
    old_items = spec_path.parent / Path(str(old.design.file)).name if old.design else None
    for src in ([old_items] if old_items is not None and old_items.is_file() else []) + [spec_path]:
        if not (folder / src.name).exists():
            atomic_write_bytes(folder / src.name, src.read_bytes())  # the spec and items as written, byte for byte


def write_all(report: Any, study: Any, tool: str, result: ReadResult, out: Path, spec_out: Optional[Path],
              force: bool, add: bool = False, earlier: Any = None) -> None:

    if out.exists() and not out.is_dir():
        raise ImportInputError(f"--out {out} is a file; give a folder")
    with tempfile.TemporaryDirectory(prefix="twinlab-import-") as tmp:
        spec_path, items_path, spec_text, items_text = staged_spec(study, tool, Path(tmp))
        exp = load_spec(spec_path)
        planned = plan_sessions(exp, study, out, tool, result.tool_version, force, add, earlier)
        spec_hash = exp.spec_hash  # while its items file is there (the hash reads the file's bytes)
    for plan in planned:
        plan.meta["imported"].update(excluded_provenance(result, plan.person.files, report.bad_trials_policy))
    targets = [(out / "spec" / spec_path.name, spec_text), (out / "spec" / items_path.name, items_text)]
    if spec_out is not None:
        targets += [(spec_out, spec_text), (spec_out.parent / items_path.name, items_text)]
    states = [(p, t, _target_state(p, t, force or add)) for p, t in targets]
    created: list[Path] = []
    folders = [f for f in (out / "spec", out / "data", out) if not f.exists()]
    try:
        _write(report, out, spec_out, spec_path, spec_hash, states, planned, created)
    except BaseException:
        for path in reversed(created):   # a refused import leaves nothing it began behind
            path.unlink(missing_ok=True)
        shutil.rmtree(out / STAGING, ignore_errors=True)
        for folder in folders:           # the folders it made, where they stayed empty
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def excluded_provenance(result: ReadResult, files: list[str], policy: str) -> dict[str, Any]:
    """What the import left out of a person's files, for the session's sidecar: the rows excluded by reason and
    the trials excluded for a broken value (each with its line), under which --bad-trials."""
    mine = [e for e in result.excluded if e.source_file in files]
    bad = [f"{Path(e.source_file).name}: line {e.line}: {e.reason}" for e in mine if e.bad]
    return {"excluded_rows": dict(Counter(e.reason for e in mine)),
            "bad_trials": {"policy": policy, "excluded": len(bad), "rows": bad[:200]}}


def _write(report: Any, out: Path, spec_out: Optional[Path], spec_path: Path, spec_hash: str,
           states: list[tuple[Path, str, str]], planned: list[Any], created: list[Path]) -> None:

    created += [p for p, _, state in states if state == "new"]
    if states[0][2] == "replace":
        keep_version(states[0][0])
    for p, t, state in states:  # the items file first: the spec names it
        if state != "unchanged" and p.suffix == ".csv":
            atomic_write_text(p, t)
    for p, t, state in states:
        if state != "unchanged" and p.suffix != ".csv":
            atomic_write_text(p, t)
    final = load_spec(out / "spec" / spec_path.name)
    if final.spec_hash != spec_hash:
        raise ImportInputError(f"internal error: the written spec hashes {final.spec_hash}, not {spec_hash}")
    if not (out / "dataset_description.json").exists():
        created.append(out / "dataset_description.json")
    write_dataset_description(out)
    counts = {"new": 0, "unchanged": 0, "replaced": 0, "kept": 0}
    for plan in planned:
        if plan.state in ("unchanged", "kept"):
            counts[plan.state] += 1
            continue
        if plan.state == "new":
            created += list(session_paths(out, final.name, plan.person.subject_id, 1))
        write_session(out, final, plan)
        counts["replaced" if plan.state == "replace" else "new"] += 1
        report.rows_written += len(plan.rows)
    report.sessions = counts
    report.spec = str(out / "spec" / spec_path.name)
    report.spec_out = str(spec_out) if spec_out else ""
    report.spec_hash = spec_hash
