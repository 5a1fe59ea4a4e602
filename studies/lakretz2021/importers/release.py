"""Import the Lakretz et al. (2021) release (results table and/or raw session logs) as twinlab sessions.

    import_lakretz2021(results=CSV | None, logs=DIR | None, out=DIR) -> ImportSummary

writes one Psych-DS session per subject and session (`study-lakretz2021_subject-L<n>_session-<k>`),
rows in true chronological order (a training log first, where there is one), through the project's
one session writer. Table rows that match no log trial go to `session-unknown` files with the order
marked unknown (see lakretz_rows for the `extra` fields and lakretz_match for the matching). Nothing
is dropped: every table row and every log trial becomes a row, and the summary counts each kind.
An existing session in `out` is never overwritten: the import refuses before writing anything,
or with `skip_existing` leaves those sessions as they are.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from analysis.importers import ImportDataError
from experiments.atomic import atomic_write_text
from experiments.session import (
    SessionError,
    SessionLock,
    SessionWriter,
    acquire_session_lock,
    session_paths,
    verified_session_problem,
    write_dataset_description,
)
from studies.lakretz2021.importers.logs import LogFile, LogNotes, read_logs
from studies.lakretz2021.importers.match import match_rows
from studies.lakretz2021.importers.rows import EXPERIMENT, RowKey, log_rows, table_rows
from studies.lakretz2021.importers.table import read_table

RUNNER = "twinlab import lakretz2021"
Tick = Callable[[str, int, int], None]


@dataclass
class ImportSummary:
    """What the import read, wrote and set aside (printed as a table; saved as import_lakretz2021.json)."""

    out: str = ""
    files_read: dict[str, int] = field(default_factory=dict)
    table_rows: int = 0
    table_subjects: int = 0
    log_trials: int = 0
    training_trials: int = 0
    unfinished_trials: int = 0
    sessions_written: int = 0
    sessions_skipped: int = 0
    sessions_reimported: int = 0
    rows_written: int = 0
    logs_without_trials: dict[str, str] = field(default_factory=dict)  # log file -> why no session came of it
    rows_set_aside: dict[str, int] = field(default_factory=dict)  # log lines not imported, by reason
    matched: dict[str, int] = field(default_factory=dict)
    unmatched: dict[str, int] = field(default_factory=dict)
    not_scored: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    sessions: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _label_trials(trials: pd.DataFrame, logs: list[LogFile], table: pd.DataFrame | None,
                  summary: ImportSummary) -> pd.DataFrame:
    """Attach subject/session/trial_num to the trials, match them to the table and label every trial."""
    trials = trials.copy()
    trials["subject"] = trials["file"].map(lambda i: logs[i].subject)
    trials["training"] = trials["file"].map(lambda i: logs[i].training)
    trials["trial_num"] = trials["trial"].astype("int64")
    trials["eligible"] = ~trials["training"] & trials["finished"]
    trials["table_idx"] = pd.Series(pd.NA, index=trials.index, dtype="Int64")
    label = pd.Series("no_table", index=trials.index, dtype="string")
    if table is not None:
        table_of_trial, trial_of_row, matched, counts = match_rows(table, trials)
        trials["table_idx"] = table_of_trial
        in_table = trials["subject"].isin(set(table["subject"]))
        label = matched.fillna("log_only").where(in_table, "subject_not_in_table")
        table["trial_idx"] = trial_of_row
        summary.matched = {"exact": counts.exact, "of which interchangeable twins": counts.interchangeable,
                           "of which ambiguous": counts.ambiguous, "answer_mismatch": counts.answer_mismatch}
        missing = sorted(set(trials.loc[~in_table, "subject"]))
        if missing:
            summary.notes.append(f"subject(s) {', '.join(map(str, missing))} have logs but no row in the results "
                                 "table: imported, extra.match = subject_not_in_table (training in a train_ log)")
        no_logs = sorted(set(table["subject"]) - set(trials["subject"]))
        if no_logs:
            summary.notes.append(f"subject(s) {', '.join(map(str, no_logs))} of the results table have no log: their "
                                 f"{int(table['subject'].isin(no_logs).sum())} row(s) are written with the order "
                                 "unknown "
                                 "(session-unknown, extra.match = table_only)")
        if counts.ambiguous:
            summary.notes.append(f"{counts.ambiguous} table row(s) matched inside groups of rows that share the key "
                                 "but differ elsewhere; paired in order (extra.match = exact)")
        if counts.answer_mismatch:
            summary.notes.append(f"{counts.answer_mismatch} table row(s) match their log trial's stimulus but not its "
                                 "answer; the log's answer is imported, the table's kept in extra (answer_mismatch)")
    label = label.where(~trials["training"], "training")
    label = label.where(trials["finished"] | trials["training"], "unfinished")
    trials["match"] = label
    return trials


Session = list[tuple[dict, RowKey]]


def _sessions(rows: list[dict], keys: list[RowKey]) -> dict[tuple[str, int | None], Session]:
    """Rows grouped into sessions (subject id, session or None), each numbered in the order it stands.

    The rows arrive chronologically (files in subject/session/training-first order, lines in order),
    so trial_index and block_trial_index are positions in that order, 0-based.
    """
    sessions: dict[tuple[str, int | None], Session] = {}
    for r, k in zip(rows, keys, strict=False):
        sessions.setdefault((r["subject_id"], k.session), []).append((r, k))
    for g in sessions.values():
        per_block: dict[str, int] = {}
        for i, (r, _) in enumerate(g):
            r["trial_index"] = i
            r["block_trial_index"] = per_block.get(r["block"], 0)
            per_block[r["block"]] = r["block_trial_index"] + 1
    return sessions


def import_lakretz2021(results: str | Path | None, logs: str | Path | None, out: str | Path,
                       skip_existing: bool = False, tick: Tick | None = None) -> ImportSummary:
    """Read, match and write; raises ImportDataError (one line, file and line named) on bad input."""
    if results is None and logs is None:
        raise ImportDataError("give --results (the results CSV), --logs (the folder of session logs), or both")
    out = Path(out)
    summary = ImportSummary(out=str(out))
    tick = tick or (lambda stage, done, total: None)
    table = None
    if results is not None:
        table = read_table(results)
        summary.files_read["results_table"] = 1
        summary.table_rows = len(table)
        summary.table_subjects = int(table["subject"].nunique())
        tick("results table", 1, 1)
    log_files: list[LogFile] = []
    notes = LogNotes()
    rows: list[dict] = []
    keys: list[RowKey] = []
    if logs is not None:
        log_files, trials = read_logs(logs, notes, progress=lambda done, total: tick("session logs", done, total))
        summary.files_read["session_logs"] = sum(not f.training for f in log_files)
        summary.files_read["training_logs"] = sum(f.training for f in log_files)
        if notes.ignored_files:
            summary.files_read["ignored (not a session log)"] = len(notes.ignored_files)
        summary.notes += notes.notes
        trials = _label_trials(trials, log_files, table, summary)
        summary.log_trials = int((~trials["training"]).sum())
        summary.training_trials = int(trials["training"].sum())
        summary.unfinished_trials = int((~trials["finished"]).sum())
        tick("matching", 1, 1)
        r, k = log_rows(trials, log_files, table)
        tick("trial rows", 1, 1)
        rows += r
        keys += k
        labels = trials["match"].value_counts().to_dict()
        summary.unmatched = {
            "log trials without a table row (subject in table)": int(labels.get("log_only", 0)),
            "log trials of subjects not in the table": int(labels.get("subject_not_in_table", 0)),
        }
        if table is None:
            summary.unmatched = {"log trials (no results table given)": int(labels.get("no_table", 0))}
        if notes.truncated_lines:
            summary.unmatched["truncated last lines set aside"] = notes.truncated_lines
        if notes.empty_logs:
            summary.unmatched["empty logs (no events)"] = notes.empty_logs
        if notes.unknown_events:
            summary.unmatched["lines with an unknown event set aside"] = sum(notes.unknown_events.values())
        summary.logs_without_trials = dict(notes.no_trials)
        summary.rows_set_aside = {
            "truncated last lines (the file ends inside them)": notes.truncated_lines,
            "lines with an unknown event": sum(notes.unknown_events.values()),
            "blank lines": notes.blank_lines,
        }
    if table is not None:
        leftover = table[table["trial_idx"].isna()] if "trial_idx" in table.columns else table
        if logs is None:
            summary.unmatched["table rows (no --logs given: order unknown)"] = len(leftover)
        else:
            summary.unmatched["table rows without a log trial (order unknown)"] = len(leftover)
        if len(leftover):
            r, k = table_rows(leftover, match="table_only" if logs is not None else "no_logs")
            rows += r
            keys += k
            if logs is None:
                summary.notes.append("no --logs: the table holds no session or trial order; every row is written to "
                                     "a session-unknown file with extra.order = unknown")
    if not rows:
        raise ImportDataError("nothing to import: the inputs hold no trials")
    sessions = _sessions(rows, keys)
    _count_not_scored(rows, keys, summary)
    table_subjects = set(table["subject"]) if table is not None else None
    _write_sessions(sessions, log_files, results, table_subjects, out, summary, skip_existing, tick)
    _write_summary(out, summary)
    return summary


def _count_not_scored(rows: list[dict], keys: list[RowKey], summary: ImportSummary) -> None:
    n = {"other": 0, "no_answer": 0, "unfinished": 0, "training": 0, "outlier": 0}
    for r, k in zip(rows, keys, strict=False):
        n["other"] += r["violation_position"] == "other"
        n["no_answer"] += r["correct"] is None and r["response"] == "none"
        n["unfinished"] += k.unfinished
        n["training"] += r["block"] == "training"
        n["outlier"] += k.outlier is True
    summary.not_scored = {
        "filler trials (violation elsewhere; violation_position other)": n["other"],
        "no valid answer (panel timeout, REJECTED / _DDC)": n["no_answer"],
        "unfinished trials (log ends inside them)": n["unfinished"],
        "training trials": n["training"],
        "rows of outlier subjects (is_outlier; kept, flagged)": n["outlier"],
    }


def _existing(sessions: dict, out: Path, skip_existing: bool, summary: ImportSummary) -> tuple[set, set]:
    """Sessions already in `out`: (whole ones to skip, partial ones of an earlier import to write again).

    Without --skip-existing any existing session refuses the import before anything is written. With
    it, only a session whose sidecar's verification record matches its table is trusted; a partial one
    left by an interrupted import is moved aside (`<name>.unverified-<n>`, never deleted) and imported
    again; a session written by something else than this importer is refused.
    """
    existing = [key for key in sessions if any(p.exists() for p in session_paths(out, EXPERIMENT, *key))]
    if existing and not skip_existing:
        csv_path = session_paths(out, EXPERIMENT, *existing[0])[0]
        raise ImportDataError(f"{csv_path} already exists ({len(existing)} of the {len(sessions)} sessions are in "
                              f"{out}); nothing was written. Import into a new --out, or pass --skip-existing")
    whole, partial = set(), set()
    for key in existing:
        csv_path, json_path = session_paths(out, EXPERIMENT, *key)
        problem = verified_session_problem(csv_path, json_path)
        if problem is None:
            whole.add(key)
            continue
        try:
            runner = json.loads(json_path.read_text(encoding="utf-8")).get("runner") if json_path.exists() else RUNNER
        except (OSError, json.JSONDecodeError):
            runner = RUNNER
        if runner != RUNNER:
            raise ImportDataError(f"{csv_path}: {problem}, and it was not written by this import (runner "
                                  f"{runner!r}); move it out of {out} or import into a new --out")
        partial.add(key)
        summary.notes.append(f"{csv_path.name}: {problem}; moved aside and imported again")
    return whole, partial


def _move_aside(csv_path: Path, json_path: Path) -> None:
    n = 1
    while any(p.with_name(f"{p.name}.unverified-{n}").exists() for p in (csv_path, json_path)):
        n += 1
    for p in (csv_path, json_path):
        if p.exists():
            os.replace(p, p.with_name(f"{p.name}.unverified-{n}"))


def _lock_all(keys: list, out: Path) -> dict:
    """Every session this import writes, locked before the first is written (all or none)."""
    locks: dict[tuple, SessionLock] = {}
    try:
        for key in keys:
            locks[key] = acquire_session_lock(session_paths(out, EXPERIMENT, *key)[0])
    except SessionError as exc:
        for lock in locks.values():
            lock.release()
        raise ImportDataError(f"{exc}; nothing was written") from None
    return locks


def _write_sessions(sessions: dict[tuple[str, int | None], Session], log_files: list[LogFile], results,
                    table_subjects: set[int] | None,
                    out: Path, summary: ImportSummary, skip_existing: bool, tick: Tick) -> None:
    whole, partial = _existing(sessions, out, skip_existing, summary)
    planned = [(sid, session, g, (sid, session) in whole) for (sid, session), g in sessions.items()]
    locks = _lock_all([(sid, session) for sid, session, _, skip in planned if not skip], out)
    try:
        _write_locked(planned, partial, locks, log_files, results, table_subjects, out, summary, tick)
    finally:
        for lock in locks.values():
            lock.release()


def _write_locked(planned: list, partial: set, locks: dict, log_files: list[LogFile], results,
                  table_subjects: set[int] | None, out: Path, summary: ImportSummary, tick: Tick) -> None:
    table_meta = None
    if results is not None:
        rp = Path(results)
        table_meta = {"path": str(rp), "kind": "results_table", "sha256": _sha256(rp)}
    sha_of: dict[int, str] = {}
    write_dataset_description(out, name="Lakretz et al. (2021) public release, imported by twinlab")
    for n_done, (sid, session, g, exists) in enumerate(planned):
        if exists:
            summary.sessions_skipped += 1
            continue
        if (sid, session) in partial:
            _move_aside(*session_paths(out, EXPERIMENT, sid, session))
            summary.sessions_reimported += 1
        files = sorted({int(k.file) for _, k in g if k.file is not None})
        for f in files:
            if f not in sha_of:
                sha_of[f] = _sha256(log_files[f].path)
        sources = [{"path": str(log_files[f].path), "kind": log_files[f].kind, "sha256": sha_of[f],
                    "started_local": log_files[f].started.isoformat()} for f in files]
        if table_meta is not None:
            sources.append(table_meta)
        matches: dict[str, int] = {}
        for _, k in g:
            matches[k.match] = matches.get(k.match, 0) + 1
        outlier = g[0][1].outlier
        unfinished = int(matches.get("unfinished", 0))
        order_known = session is not None
        meta = {
            "runner": RUNNER,
            "data_kind": "human participant (imported from the Lakretz et al. 2021 public release)",
            "source": "Lakretz, Hupkes, Vergallito, Marelli, Baroni & Dehaene (2021), Cognition: public data",
            "subject_number": int(g[0][1].subject),
            # None: no results table given
            "in_results_table": None if table_subjects is None else int(g[0][1].subject) in table_subjects,
            "is_outlier": outlier,
            "order_known": order_known,
            "order": ("chronological, from the session log" if order_known else
                      "unknown: results-table rows without a log trial, in the table's order"),
            "response_mode": "panel",
            "blocks": list(dict.fromkeys(r["block"] for r, _ in g)),
            "matches": {str(a): int(b) for a, b in matches.items()},
            "session_started_local": sources[0].get("started_local") if files else None,
            "source_files": sources,
        }
        seq_hash = hashlib.sha256("".join(s["sha256"] for s in sources).encode()).hexdigest()[:16]
        try:
            # staged: written under a temporary name, renamed once its row count and SHA-256 are checked
            w = SessionWriter.create(out, experiment=EXPERIMENT, subject_id=sid, session=session, subject_kind="human",
                                     spec_hash="", sequence_hash=seq_hash, n_trials=len(g), metadata=meta,
                                     staged=True, lock=locks.pop((sid, session)))
            try:
                w.append_rows([r for r, _ in g])
            except BaseException as exc:  # nothing is published: the staged files are removed
                w.close("crashed", error=f"{type(exc).__name__}: {exc}")
                raise
            w.close("incomplete" if unfinished else "completed",
                    **({"incomplete_reason": "the log ends inside its last trial (kept, with extra.unfinished = true)"}
                       if unfinished else {}))
        except SessionError as exc:
            raise ImportDataError(f"{exc} ({summary.sessions_written} session(s) written before it are "
                                  "complete)") from None
        summary.sessions_written += 1
        summary.rows_written += len(g)
        summary.sessions.append({"file": w.csv_path.name, "subject": sid, "session": session, "rows": len(g),
                                 "status": w.meta["status"]})
        tick("writing sessions", n_done + 1, len(planned))


def _write_summary(out: Path, summary: ImportSummary) -> None:
    path = out / "import_lakretz2021.json"
    n = 2
    while path.exists():
        path = out / f"import_lakretz2021_{n}.json"
        n += 1
    atomic_write_text(path, json.dumps(summary.to_dict(), indent=2) + "\n")
