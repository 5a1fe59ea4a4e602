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
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from analysis.importers import ImportDataError
from analysis.importers.lakretz_logs import LogFile, LogNotes, read_logs
from analysis.importers.lakretz_match import MatchCounts, match_rows
from analysis.importers.lakretz_rows import EXPERIMENT, log_rows, subject_id, table_rows
from analysis.importers.lakretz_table import read_table
from experiments.schema import COLUMN_NAMES
from experiments.session import SessionError, SessionWriter, session_paths, write_dataset_description

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
    rows_written: int = 0
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
                                 "table: imported, extra.match = subject_not_in_table")
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


def _order(rows: pd.DataFrame) -> pd.DataFrame:
    """trial_index and block_trial_index: 0-based, in the order the rows already stand (chronological)."""
    by_session = rows["_session"].astype("string").fillna("unknown")
    rows["trial_index"] = rows.groupby([rows["subject_id"], by_session], sort=False).cumcount()
    rows["block_trial_index"] = rows.groupby([rows["subject_id"], by_session, rows["block"]], sort=False).cumcount()
    return rows


def _records(frame: pd.DataFrame) -> list[dict]:
    cols = [c for c in COLUMN_NAMES if c in frame.columns]
    sub = frame[cols].astype(object).where(frame[cols].notna(), None)
    return sub.to_dict("records")


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
    rows = []
    if logs is not None:
        n_total = [0]

        def _progress():
            n_total[0] += 1
            tick("session logs", n_total[0], -1)

        log_files, trials = read_logs(logs, notes, progress=_progress)
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
        rows.append(log_rows(trials, log_files, table))
        labels = trials["match"].value_counts().to_dict()
        summary.unmatched = {
            "log trials without a table row (subject in table)": int(labels.get("log_only", 0)),
            "log trials of subjects not in the table": int(labels.get("subject_not_in_table", 0)),
        }
        if table is None:
            summary.unmatched = {"log trials (no results table given)": int(labels.get("no_table", 0))}
        if notes.truncated_lines:
            summary.unmatched["truncated last lines set aside"] = notes.truncated_lines
        if notes.unknown_events:
            summary.unmatched["lines with an unknown event set aside"] = sum(notes.unknown_events.values())
    if table is not None:
        leftover = table[table["trial_idx"].isna()] if "trial_idx" in table.columns else table
        summary.unmatched["table rows without a log trial (order unknown)"] = len(leftover)
        if len(leftover):
            rows.append(table_rows(leftover))
            if logs is None:
                summary.notes.append("no --logs: the table holds no session or trial order; every row is written to "
                                     "a session-unknown file with extra.order = unknown")
    all_rows = pd.concat([r for r in rows if len(r)], ignore_index=True) if rows else pd.DataFrame()
    if all_rows.empty:
        raise ImportDataError("nothing to import: the inputs hold no trials")
    all_rows = _order(all_rows)
    _count_not_scored(all_rows, summary)
    _write_sessions(all_rows, log_files, results, out, summary, skip_existing, tick)
    _write_summary(out, summary)
    return summary


def _count_not_scored(rows: pd.DataFrame, summary: ImportSummary) -> None:
    extra = rows["extra"].map(json.loads)
    outlier = extra.map(lambda e: e.get("is_outlier") is True)
    summary.not_scored = {
        "filler trials (violation elsewhere; violation_position other)": int((rows["violation_position"] == "other").sum()),
        "no valid answer (panel timeout, REJECTED / _DDC)": int((rows["correct"].isna() & (rows["response"] == "none")).sum()),
        "unfinished trials (log ends inside them)": int((extra.map(lambda e: e.get("unfinished", False))).sum()),
        "training trials": int((rows["block"] == "training").sum()),
        "rows of outlier subjects (is_outlier; kept, flagged)": int(outlier.sum()),
    }


def _write_sessions(rows: pd.DataFrame, log_files: list[LogFile], results, out: Path, summary: ImportSummary,
                    skip_existing: bool, tick: Tick) -> None:
    groups = list(rows.groupby([rows["subject_id"], rows["_session"].astype("string").fillna("unknown")], sort=False))
    planned = []
    for (sid, sess), g in groups:
        session = None if sess == "unknown" else int(sess)
        csv_path, json_path = session_paths(out, EXPERIMENT, sid, session)
        exists = csv_path.exists() or json_path.exists()
        if exists and not skip_existing:
            n = sum(session_paths(out, EXPERIMENT, s, None if x == "unknown" else int(x))[0].exists()
                    for (s, x), _ in groups)
            raise ImportDataError(f"{csv_path} already exists ({n} of the {len(groups)} sessions are in {out}); "
                                  "nothing was written. Import into a new --out, or pass --skip-existing")
        planned.append((sid, session, g, exists))
    table_meta = None
    if results is not None:
        rp = Path(results)
        table_meta = {"path": str(rp), "kind": "results_table", "sha256": _sha256(rp)}
    sha_of: dict[int, str] = {}
    write_dataset_description(out, name="Lakretz et al. (2021) public release, imported by twinlab")
    for k, (sid, session, g, exists) in enumerate(planned):
        if exists:
            summary.sessions_skipped += 1
            continue
        files = sorted({int(f) for f in g["_file"].dropna()})
        for f in files:
            if f not in sha_of:
                sha_of[f] = _sha256(log_files[f].path)
        sources = [{"path": str(log_files[f].path), "kind": log_files[f].kind, "sha256": sha_of[f],
                    "started_local": log_files[f].started.isoformat()} for f in files]
        if table_meta is not None:
            sources.append(table_meta)
        extra = g["extra"].map(json.loads)
        matches = extra.map(lambda e: e["match"]).value_counts().to_dict()
        outlier = next((e.get("is_outlier") for e in extra), None)
        unfinished = int(matches.get("unfinished", 0))
        order_known = session is not None
        meta = {
            "runner": RUNNER,
            "data_kind": "human participant (imported from the Lakretz et al. 2021 public release)",
            "source": "Lakretz, Hupkes, Vergallito, Marelli, Baroni & Dehaene (2021), Cognition: public data",
            "subject_number": int(g["_subject"].iloc[0]),
            "in_results_table": bool(table_meta is not None and matches.get("subject_not_in_table", 0) == 0),
            "is_outlier": outlier,
            "order_known": order_known,
            "order": ("chronological, from the session log" if order_known else
                      "unknown: results-table rows without a log trial, in the table's order"),
            "response_mode": "panel",
            "blocks": sorted(set(g["block"])),
            "matches": {str(a): int(b) for a, b in matches.items()},
            "source_files": sources,
        }
        seq_hash = hashlib.sha256("".join(s["sha256"] for s in sources).encode()).hexdigest()[:16]
        try:
            w = SessionWriter.create(out, experiment=EXPERIMENT, subject_id=sid, session=session, subject_kind="human",
                                     spec_hash="", sequence_hash=seq_hash, n_trials=len(g), metadata=meta)
            w.append_rows(_records(g))
            w.close("incomplete" if unfinished else "completed",
                    **({"incomplete_reason": f"the log ends inside trial {len(g)} (unfinished trial kept, flagged)"}
                       if unfinished else {}))
        except SessionError as exc:
            raise ImportDataError(f"{exc} ({summary.sessions_written} session(s) written before it are complete)") from None
        summary.sessions_written += 1
        summary.rows_written += len(g)
        summary.sessions.append({"file": w.csv_path.name, "subject": sid, "session": session, "rows": len(g),
                                 "status": w.meta["status"]})
        tick("writing sessions", k + 1, len(planned))


def _write_summary(out: Path, summary: ImportSummary) -> None:
    path = out / "import_lakretz2021.json"
    n = 2
    while path.exists():
        path = out / f"import_lakretz2021_{n}.json"
        n += 1
    path.write_text(json.dumps(summary.to_dict(), indent=2) + "\n", encoding="utf-8")
