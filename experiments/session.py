"""The one session writer both runners use: crash-safe rows, a JSON sidecar, never an overwrite.

Layout (a Psych-DS dataset)::

    <root>/dataset_description.json
    <root>/data/study-<exp>_subject-<id>_session-<n>_data.csv   one row per finished trial
    <root>/data/study-<exp>_subject-<id>_session-<n>_data.json  sidecar: metadata and status

Each row is written, flushed and fsync'ed as its trial ends; the sidecar is replaced atomically.
One writer per session: the writer holds the session's OS lock (`session_lock.py`,
`<stem>.lock` beside the table) from creation to close. Imports write staged sessions, renamed into
place only once their rows and SHA-256 check out (docs/guarantees.md).
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import platform
import re
import sys
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib.metadata import version
from pathlib import Path
from typing import Any

from experiments.atomic import check_rename_target
from experiments.outputs import shared_file, unsafe_target
from experiments.schema import (
    COLUMN_NAMES,
    SchemaError,
    check_row,
    described_columns,
    is_earlier_header,
    is_table_header,
    unknown_columns,
)
from experiments.session_errors import SessionError, SessionExistsError
from experiments.session_lock import SessionLock, acquire_session_lock, lock_path_for

SCHEMA_VERSION = 1
_COLUMN_SET = frozenset(COLUMN_NAMES)
_PLAIN = (int, bool)  # cells whose str() is their CSV text
_KEYWORD_VALUE = re.compile(r"^[A-Za-z0-9]+$")


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def keyword_value(text: str) -> str:
    """Psych-DS keyword values are alphanumeric: drop everything else (lakretz2021_nested -> lakretz2021nested)."""
    value = re.sub(r"[^A-Za-z0-9]", "", text)
    if not value:
        raise SessionError(f"{text!r} has no letters or digits to use in a Psych-DS file name")
    return value


def check_subject_id(subject_id: str) -> str:
    if not isinstance(subject_id, str) or not _KEYWORD_VALUE.fullmatch(subject_id):  # `$` matches before a final "\n"
        raise SessionError(
            f"subject id {subject_id!r} must be letters and digits only (it becomes part of a Psych-DS file name)"
        )
    return subject_id


def session_label(session: int | None) -> str:
    """The session keyword value: its number, or `unknown` for imported trials whose session is not known."""
    return "unknown" if session is None else str(int(session))


def session_stem(experiment: str, subject_id: str, session: int | None) -> str:
    return f"study-{keyword_value(experiment)}_subject-{check_subject_id(subject_id)}_session-{session_label(session)}"


def session_paths(root: str | Path, experiment: str, subject_id: str, session: int | None) -> tuple[Path, Path]:
    stem = session_stem(experiment, subject_id, session)
    data = Path(root) / "data"
    return data / f"{stem}_data.csv", data / f"{stem}_data.json"


def software_versions() -> dict[str, str]:
    """Versions of what is already imported (never imports torch/psychopy/R just to ask)."""
    versions = {"python": sys.version.split()[0], "platform": platform.platform()}
    for mod in ("twinlab", "numpy", "pandas", "torch", "transformers", "psychopy", "pydantic"):
        m = sys.modules.get(mod)
        if m is not None and getattr(m, "__version__", None):
            versions[mod] = str(m.__version__)
    try:
        versions["twinlab"] = version("twinlab")
    except Exception:
        pass
    return versions


def write_dataset_description(root: str | Path, name: str = "twinlab sessions") -> Path:
    """Create the Psych-DS `dataset_description.json` once; an existing one is left untouched."""
    root = Path(root)
    path = root / "dataset_description.json"
    if path.exists():
        return path
    root.mkdir(parents=True, exist_ok=True)
    desc = {
        "@context": "https://schema.org/",
        "@type": "Dataset",
        "name": name,
        "description": "Trial tables written by twinlab (human PsychoPy sessions and language-model subjects "
        "running the same compiled trial sequences).",
        "schemaVersion": "Psych-DS 1.0.0",
        "variableMeasured": [
            {"@type": "PropertyValue", "name": c, "description": d} for c, _, d in described_columns()
        ],
    }
    _atomic_write_json(path, desc)
    return path


def _atomic_write_json(path: Path, obj: Any, durable: bool = True) -> None:
    # a name of this writer's own: sessions of one dataset created at once (a web server, a sweep) each
    # write dataset_description.json, and a shared temporary name let one rename another's half file
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(obj, fh, indent=2, sort_keys=False, default=str)
            fh.write("\n")
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        check_rename_target(path)
        os.replace(tmp, path)
    except OSError as exc:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise SessionError(f"could not write {path}: {exc.strerror or exc}") from exc


_OWN_TEMPORARY = re.compile(r"^\..+\.(\d+)-[0-9a-f]{8}\.tmp$")  # `_atomic_write_json`'s names: .<name>.<pid>-<hex>.tmp


def remove_stale_temporaries(folder: str | Path) -> list[Path]:
    """Delete the sidecar temporaries (`.<name>.<pid>-<hex>.tmp`) that a killed writer left in `folder`:
    those whose process is gone. A live process's file (it may be writing it now) is left alone. They are
    never data: the rename that would have published one did not happen, and the file it was to replace is whole."""
    removed = []
    try:
        names = [e.name for e in os.scandir(folder) if e.is_file(follow_symlinks=False)]
    except OSError:
        return removed
    for name in names:
        m = _OWN_TEMPORARY.match(name)
        if m is None or _pid_alive(int(m.group(1))):
            continue
        try:
            os.unlink(Path(folder) / name)
            removed.append(Path(folder) / name)
        except OSError:
            pass
    return removed


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # another user's live process (or not a pid this system has: keep the file)
    return True


def staging_path(path: Path) -> Path:
    """Where a staged session file is written before it is verified and renamed (no loader reads it)."""
    return path.with_name(f".{path.name}.tmp")


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def verified_session_problem(csv_path: Path, json_path: Path) -> str | None:
    """None when a published session is whole (its sidecar's `verified` record matches the table);
    otherwise why not, in a few words (for `--skip-existing`)."""
    if not json_path.exists():
        return "its sidecar is missing (an interrupted write)"
    if not csv_path.exists():
        return "its table is missing"
    try:
        meta = json.loads(json_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return "its sidecar is not readable JSON"
    rec = meta.get("verified")
    if not isinstance(rec, dict):
        return "its sidecar has no verification record (written by an older twinlab or interrupted)"
    try:
        data = csv_path.read_bytes()
    except OSError as exc:
        return f"its table cannot be read ({exc.strerror or exc})"
    if hashlib.sha256(data).hexdigest() != rec.get("sha256"):
        rows = scan_table(csv_path).n_rows
        return f"its table changed since it was written ({rows} rows now, {rec.get('rows')} recorded; SHA-256 differs)"
    return None


def format_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value != value:  # NaN
        return ""
    if isinstance(value, (list, dict, tuple)):
        return json.dumps(value)
    return str(value)


def columns_into_extra(row: dict[str, Any], names: Any) -> dict[str, Any]:
    """The row without the columns `names` that a table's header lacks; their values (None left out) kept in
    the row's `extra.columns`, beside what is there, so nothing computed is lost. The one rule for every
    writer: a session resumed with an older header (the kinds' declared columns it lacks), a model row's
    general-model columns in a table that has only the Lakretz columns."""
    moving = [c for c in names if c in row]
    if not moving:
        return row
    kept = {k: v for k, v in row.items() if k not in moving}
    moved = {c: row[c] for c in moving if row[c] is not None}
    if moved:
        extra = json.loads(row.get("extra") or "{}")
        extra["columns"] = {**(extra.get("columns") or {}), **moved}
        kept["extra"] = json.dumps(extra, sort_keys=True)
    return kept


@dataclass
class SessionWriter:
    """Appends trial rows to one session's CSV and keeps its sidecar up to date."""

    csv_path: Path
    json_path: Path
    meta: dict[str, Any]
    n_rows: int = 0
    _fh: io.TextIOWrapper | None = None
    durable: bool = True  # fsync every write; importers of finished data (re-runnable) may turn it off
    lock: SessionLock | None = None  # this session's one-writer lock, released by close()
    staged: bool = False  # written under temporary names, published by close() once verified (imports)
    _sha: Any = None  # sha256 of every byte this writer meant to write (staged sessions)
    # the header: COLUMN_NAMES for a Lakretz session; a general design adds the generic and factor columns
    columns: list[str] = field(default_factory=lambda: list(COLUMN_NAMES))
    # kinds' declared columns a resumed session's older header lacks: kept in each row's `extra.columns`
    in_extra: tuple[str, ...] = ()
    # a resumed session that keeps an earlier general layout: the compiled sequence whose trials give the
    # study's columns that layout holds (the values its earlier rows hold; `Trial.to_row(columns=...)`)
    fill_from: Any = None

    # ---- opening -----------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        root: str | Path,
        *,
        experiment: str,
        subject_id: str,
        session: int | None,
        subject_kind: str,
        spec_hash: str,
        sequence_hash: str,
        n_trials: int,
        metadata: dict[str, Any] | None = None,
        resume: bool = False,
        durable: bool = True,
        lock: SessionLock | None = None,
        sequence: Any = None,
        staged: bool = False,
        columns: list[str] | None = None,
    ) -> "SessionWriter":
        """Start a new session, or with `resume=True` continue an existing one of the same sequence.

        Takes the session's lock first (or the `lock` the caller already holds for this session; the
        writer owns it from here and releases it on close or on a refusal), so a second writer is
        refused at once with SessionLockedError naming the holder. Refuses to touch an existing
        session unless resuming, and refuses to resume a session whose spec or sequence hash differs
        (that would splice two different experiments); with `sequence` (the compiled TrialSequence)
        the rows kept on resume must be its first trials, in order (see `check_rows_follow`).

        `staged=True` (imports of finished data) writes the table and sidecar under temporary names
        (`.<name>.tmp`, which no loader reads) and `close()` publishes them by renaming, after checking
        the row count and the SHA-256 of the bytes on disk against what was written; the sidecar's
        `verified` record lets a later `--skip-existing` trust the session. An interrupted staged
        session (kill, full disk, an exception) leaves no session file behind.

        The header is `columns`, else the `sequence`'s (`TrialSequence.table_columns`: a Lakretz
        session keeps today's columns; a general design adds the generic and factor columns, and its
        `design` record goes into the sidecar), else the Lakretz columns.
        """
        if columns is None:
            columns = sequence.table_columns() if sequence is not None else list(COLUMN_NAMES)
        design = getattr(sequence, "design", None)
        if design and "design" not in (metadata or {}):
            metadata = {**(metadata or {}), "design": design}
        csv_path, json_path = session_paths(root, experiment, subject_id, session)
        if lock is None:
            lock = acquire_session_lock(csv_path)
        elif not lock.held or lock.path.resolve() != lock_path_for(csv_path).resolve():
            raise SessionError(f"internal error: the lock {lock.path} given for {csv_path.name} is not held for it")
        try:
            writer = cls._open(root, csv_path, json_path, experiment=experiment, subject_id=subject_id,
                               session=session, subject_kind=subject_kind, spec_hash=spec_hash,
                               sequence_hash=sequence_hash, n_trials=n_trials, metadata=metadata, resume=resume,
                               durable=durable, sequence=sequence, staged=staged, columns=columns)
        except BaseException:
            lock.release()
            raise
        writer.lock = lock
        return writer

    @classmethod
    def _open(cls, root: str | Path, csv_path: Path, json_path: Path, *, experiment: str, subject_id: str,
              session: int | None, subject_kind: str, spec_hash: str, sequence_hash: str, n_trials: int,
              metadata: dict[str, Any] | None, resume: bool, durable: bool, sequence: Any,
              staged: bool = False, columns: list[str] | None = None) -> "SessionWriter":
        remove_stale_temporaries(csv_path.parent)  # left by a writer killed mid-rename (kill -9)
        for p in (csv_path, json_path):  # appended to or replaced: never through a link, never a device
            problem = unsafe_target(p)
            if problem:
                raise SessionError(f"session file {p} {problem}")
        columns = list(COLUMN_NAMES) if columns is None else columns
        exists = csv_path.exists() or json_path.exists()
        if exists and not resume:
            raise SessionExistsError(
                f"session file {csv_path if csv_path.exists() else json_path} already exists; "
                "use --resume to continue it or choose another session number"
            )
        if resume and exists:
            if problem := shared_file(csv_path):  # appended to and its torn row cut in place
                raise SessionError(f"cannot resume: session file {csv_path} {problem}")
            return cls._reopen(csv_path, json_path, spec_hash, sequence_hash, sequence, columns)
        write_dataset_description(root)
        csv_path.parent.mkdir(parents=True, exist_ok=True)
        meta = {
            "schema_version": SCHEMA_VERSION,
            "experiment": experiment,
            "subject_id": subject_id,
            "subject_kind": subject_kind,
            "session": None if session is None else int(session),
            "spec_hash": spec_hash,
            "sequence_hash": sequence_hash,
            "n_trials_planned": int(n_trials),
            "n_trials_written": 0,
            "status": "running",
            "started_at": now_iso(),
            "ended_at": None,
            "resumes": [],
            "software": software_versions(),
            **(metadata or {}),
        }
        writer = cls(csv_path=csv_path, json_path=json_path, meta=meta, durable=durable and not staged,
                     staged=staged, _sha=hashlib.sha256() if staged else None, columns=columns)
        try:  # a staging file left by a killed import is ours to replace (we hold the session's lock)
            fh = (open(staging_path(csv_path), "w", encoding="utf-8", newline="") if staged
                  else open(csv_path, "x", encoding="utf-8", newline=""))
        except FileExistsError as exc:  # lost a race with another process
            raise SessionExistsError(f"session file {csv_path} already exists") from exc
        except OSError as exc:
            raise SessionError(f"could not create {csv_path}: {exc.strerror or exc}") from exc
        writer._fh = fh
        writer._write_line(columns)
        writer.save_sidecar()
        return writer

    @classmethod
    def _reopen(cls, csv_path: Path, json_path: Path, spec_hash: str, sequence_hash: str,
                sequence: Any = None, columns: list[str] | None = None) -> "SessionWriter":
        if not json_path.exists():
            raise SessionError(f"cannot resume: sidecar {json_path} is missing")
        try:
            meta = json.loads(json_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise SessionError(f"cannot resume: sidecar {json_path} is not valid JSON ({exc})") from exc
        for key, new in (("spec_hash", spec_hash), ("sequence_hash", sequence_hash)):
            if meta.get(key) != new:
                raise SessionError(
                    f"cannot resume {csv_path.name}: its {key} is {meta.get(key)} but the compiled sequence "
                    f"has {new} (the spec, subject or seed changed)"
                )
        # check, truncate, record, then count: one scan decides which rows are complete
        scan = scan_table(csv_path) if csv_path.exists() else None
        columns = list(COLUMN_NAMES) if columns is None else columns
        if scan is not None and scan.header and sequence is None and columns == COLUMN_NAMES \
                and is_table_header(scan.header):
            columns = scan.header  # no sequence to say which: a header this version writes is kept
        in_extra: tuple[str, ...] = ()
        fill_from = None
        earlier = sequence.table_columns(earlier=True) if sequence is not None else None
        if scan is not None and scan.header and earlier and scan.header != columns:
            if scan.header == earlier or is_earlier_header(scan.header, earlier):
                # written under the earlier general layout (a study's columns in it): kept, its rows filled
                fill_from, columns = sequence, earlier
        if scan is not None and scan.header and is_earlier_header(scan.header, columns):
            # written before its kinds declared their columns: the header is kept, their values go to extra
            in_extra, columns = tuple(c for c in columns if c not in scan.header), scan.header
        if scan is not None and scan.header and scan.header != columns:
            raise SessionError(f"cannot resume {csv_path}: its header is not this version's trial-table schema "
                               "(written by another twinlab version); start a new session number")
        if scan is not None and sequence is not None:
            check_rows_follow(scan, sequence)
        if scan is not None:
            truncate_torn(scan)
        n_rows = scan.n_rows if scan is not None else 0
        resume = {"at": now_iso(), "from_trial": n_rows, "previous_status": meta.get("status"),
                  "dropped_partial_line": bool(scan and scan.torn)}
        if scan is not None and scan.torn:
            resume["dropped_bytes"] = len(scan.dropped)
            resume["dropped_text"] = scan.dropped[:4000].decode("utf-8", errors="replace")
        meta.setdefault("resumes", []).append(resume)
        meta["status"] = "running"
        meta["ended_at"] = None
        writer = cls(csv_path=csv_path, json_path=json_path, meta=meta, n_rows=n_rows, columns=columns,
                     in_extra=in_extra, fill_from=fill_from)
        try:
            writer._fh = open(csv_path, "a", encoding="utf-8", newline="")
        except OSError as exc:
            raise SessionError(f"cannot resume: {csv_path} cannot be opened ({exc.strerror or exc})") from exc
        if scan is None or not scan.header:  # the kill came before the header was complete
            writer._write_line(columns)
        writer.save_sidecar()
        return writer

    # ---- writing -----------------------------------------------------------------------------
    def _write_line(self, cells: list[Any]) -> None:
        assert self._fh is not None, "session is closed"
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow([format_cell(c) for c in cells])
        if self._sha is not None:
            self._sha.update(buf.getvalue().encode("utf-8"))
        try:
            self._fh.write(buf.getvalue())
            self._fh.flush()
            if self.durable:
                os.fsync(self._fh.fileno())
        except OSError as exc:
            raise SessionError(
                f"could not write to {self.csv_path}: {exc.strerror or exc}; "
                f"the {self.n_rows} trial(s) already written are safe"
            ) from exc

    @property
    def header(self) -> list[str]:
        return self.columns or COLUMN_NAMES

    def _fit(self, row: dict[str, Any]) -> dict[str, Any]:
        """The row as this session's header holds it: the kinds' columns its older header lacks (`in_extra`)
        move into `extra.columns`, as the model runner keeps columns a table lacks (nothing measured is lost)."""
        if self.fill_from is not None:
            row = {**self._earlier_values(row), **row}
        return columns_into_extra(row, self.in_extra) if self.in_extra else row

    def _earlier_values(self, row: dict[str, Any]) -> dict[str, Any]:
        """The columns of an earlier general layout that a general design's row leaves out (the study's), as its
        trial in the compiled sequence gives them (the values the session's earlier rows hold)."""
        i = row.get("trial_index")
        if not isinstance(i, int) or not 0 <= i < len(self.fill_from):
            return {}
        values = self.fill_from[i].to_row(columns=self.columns)
        return {c: values[c] for c in self.columns if c in values and c not in row}

    def append(self, row: dict[str, Any]) -> None:
        """Write one finished trial (flushed and fsync'ed before returning)."""
        checked = check_row(self._fit(row), self.columns)
        self._write_line([checked[c] for c in self.columns])
        self.n_rows += 1

    def append_rows(self, rows: list[dict[str, Any]]) -> None:
        """Write many finished trials at once, flushed (and fsync'ed if durable) once: for importers.

        Every row is checked against the schema before anything is written, so a bad row leaves the
        file as it was.
        """
        known = _COLUMN_SET if self.columns == COLUMN_NAMES else frozenset(self.columns)
        rows = [self._fit(r) for r in rows] if self.in_extra or self.fill_from is not None else rows
        for r in rows:
            if not known.issuperset(r) and unknown_columns(r, known):
                raise SchemaError(f"unknown trial-table column(s): {', '.join(unknown_columns(r, known))}")
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        # strings and None are most cells: skip the general formatter for them
        w.writerows([[v if type(v) is str else "" if v is None else str(v) if type(v) in _PLAIN else format_cell(v)
                      for v in map(r.get, self.columns)] for r in rows])
        assert self._fh is not None, "session is closed"
        text = buf.getvalue()
        if self._sha is not None:
            self._sha.update(text.encode("utf-8"))
        try:
            self._fh.write(text)
            self._fh.flush()
            if self.durable:
                os.fsync(self._fh.fileno())
        except OSError as exc:
            raise SessionError(f"could not write to {self.csv_path}: {exc.strerror or exc}") from exc
        self.n_rows += len(rows)

    @property
    def next_trial_index(self) -> int:
        return self.n_rows

    def save_sidecar(self) -> None:
        self.meta["n_trials_written"] = self.n_rows
        _atomic_write_json(staging_path(self.json_path) if self.staged else self.json_path, self.meta, self.durable)

    def update(self, **fields: Any) -> None:
        self.meta.update(fields)
        self.save_sidecar()

    def close(self, status: str = "completed", **fields: Any) -> None:
        """Mark the session completed/aborted/crashed and close the file."""
        self.meta.update(fields)
        self.meta["status"] = status
        self.meta["ended_at"] = now_iso()
        try:
            if self._fh is not None:
                self._fh.close()
                self._fh = None
            if self.staged:
                self._publish(status)
            else:
                self.save_sidecar()
        finally:
            if self.lock is not None:  # only after the last word is on disk
                self.lock.release()

    def _publish(self, status: str) -> None:
        """Staged sessions: verify the bytes on disk, then rename table and sidecar into place.

        Only a completed or incomplete (finished reading its source) session is published; an
        aborted or crashed one is removed, so no partial session ever carries the final name.
        """
        tmp_csv, tmp_json = staging_path(self.csv_path), staging_path(self.json_path)
        if status not in ("completed", "incomplete"):
            for p in (tmp_csv, tmp_json):
                p.unlink(missing_ok=True)
            return
        try:
            data = tmp_csv.read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            scan = scan_table(tmp_csv)
            if digest != self._sha.hexdigest() or scan.n_rows != self.n_rows or scan.torn:
                raise SessionError(f"{tmp_csv} does not hold what was written ({scan.n_rows} complete rows of "
                                   f"{self.n_rows}, sha256 {digest[:12]} vs {self._sha.hexdigest()[:12]}); "
                                   "not published")
            self.meta["verified"] = {"rows": self.n_rows, "bytes": len(data), "sha256": digest}
            with open(tmp_csv, "rb") as fh:
                os.fsync(fh.fileno())
            self.meta["n_trials_written"] = self.n_rows
            _atomic_write_json(tmp_json, self.meta, durable=True)
            os.replace(tmp_csv, self.csv_path)  # the table first: without its sidecar it is not trusted
            os.replace(tmp_json, self.json_path)
            _fsync_dir(self.csv_path.parent)
        except OSError as exc:
            raise SessionError(f"could not publish {self.csv_path}: {exc.strerror or exc}") from exc

    def __enter__(self) -> "SessionWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self._fh is None:
            return
        if exc_type is None:
            self.close("completed" if self.n_rows >= self.meta.get("n_trials_planned", 0) else "incomplete")
        elif exc_type in (KeyboardInterrupt, SystemExit):
            self.close("aborted", abort_reason=exc_type.__name__)
        else:
            self.close("crashed", error=f"{exc_type.__name__}: {exc}")


@dataclass(frozen=True)
class TableScan:
    """What a session CSV holds: its complete rows, and the torn tail a kill or power cut left.

    `keep_bytes` is the length of the file up to the end of the last complete row; `dropped` is
    everything after it (a row cut mid-write: no line end, fewer cells than the header, or an open
    quote). Counting rows and cutting the file both come from this one scan, so a resume can never
    count a torn row that the writer then removes.
    """

    path: Path
    header: list[str]
    rows: list[dict[str, str]]
    keep_bytes: int
    dropped: bytes
    header_complete: bool = True
    lines: tuple[int, ...] = ()  # the 1-based line of the file where each row starts

    @property
    def n_rows(self) -> int:
        return len(self.rows)

    @property
    def torn(self) -> bool:
        return bool(self.dropped)

    def note(self) -> str:
        """One line for logs and reports saying what was dropped and why."""
        if not self.dropped:
            return ""
        what = "a partly written header" if not self.header_complete else f"a partly written row {self.n_rows + 1}"
        return (f"{self.path.name}: dropped {what} ({len(self.dropped)} bytes after the last complete row; "
                f"a trial cut off while being written had not finished); {self.n_rows} complete row(s) kept")


def scan_table(path: str | Path) -> TableScan:
    """Read a session CSV without changing it; a torn last row is set aside, not counted.

    A row is complete when it ends with a line end outside quotes and has as many cells as the
    header. Only the tail can be torn (rows are appended and fsync'ed one at a time): the final record
    without a line end, or one cut inside a quoted cell at the end of the file. Anything else that is
    not a row (a stray quote, a cell over the field limit, a row with the wrong number of cells before
    the last) is a SessionError naming the file and line: a bad row never silently ends a session.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SessionError(f"cannot read {path}: {exc.strerror or exc}") from exc
    records, torn_at = _records(path, data)
    if not records:
        return TableScan(path, [], [], 0, data, header_complete=not data)
    (_, hdr_end, header), body = records[0], records[1:]
    if torn_at is not None:
        _check_torn_tail(path, data, torn_at, len(header))
    keep = hdr_end
    rows: list[dict[str, str]] = []
    lines: list[int] = []
    for k, (line, end, cells) in enumerate(body):
        if len(cells) != len(header):
            if k == len(body) - 1 and len(cells) < len(header) and torn_at is None:
                break  # the last line is short: a torn row that happened to end at a line end inside a cell
            raise SessionError(f"{path} line {line}: {len(cells)} cells where the header has {len(header)}; "
                               "a row in the middle of a session is never partly written (the file was edited or "
                               "damaged): repair or remove that line")
        rows.append(dict(zip(header, cells, strict=False)))
        lines.append(line)
        keep = end
    return TableScan(path, header, rows, keep, data[keep:], lines=tuple(lines))


def _records(path: Path, data: bytes) -> tuple[list[tuple[int, int, list[str]]], int | None]:
    """([(first line, end offset, cells)] of the records that end in a line end, the offset where a torn
    final record starts or None). A CSV error before the end of the data is a SessionError naming its line."""
    offsets: list[int] = []  # where each physical line ends

    def physical_lines():
        start = 0
        while start < len(data):
            end = data.find(b"\n", start)
            end = len(data) if end < 0 else end + 1
            offsets.append(end)
            yield data[start:end].decode("utf-8", errors="replace")
            start = end

    records: list[tuple[int, int, list[str]]] = []
    reader = csv.reader(physical_lines(), strict=True)
    while True:
        first = reader.line_num + 1  # the line this record starts on
        begin = offsets[-1] if offsets else 0
        try:
            cells = next(reader)
        except StopIteration:
            return records, None
        except csv.Error as exc:
            if offsets and offsets[-1] == len(data) and "unexpected end of data" in str(exc):
                return records, begin  # an open quote at the end of the data: the last record is torn
            raise SessionError(f"{path} line {reader.line_num}: not a CSV row ({exc}); the row starting on line "
                               f"{first} is damaged (a stray quote, a cell over the field limit, a NUL byte), not "
                               "partly written: repair or remove it") from None
        if data[offsets[-1] - 1:offsets[-1]] != b"\n":
            return records, begin  # the last record has no line end: torn
        records.append((first, offsets[-1], cells))


def _check_torn_tail(path: Path, data: bytes, begin: int, n_cells: int) -> None:
    """A torn tail is part of one row: a complete line after its first that is a whole row by itself means
    a quote opened on the tail's first line was never closed, and the rows after it are not torn."""
    tail = data[begin:].split(b"\n")
    line = data.count(b"\n", 0, begin) + 1
    for k, piece in enumerate(tail[1:-1], start=1):
        try:
            cells = next(csv.reader([piece.decode("utf-8", errors="replace")]), [])
        except csv.Error:
            continue
        if len(cells) == n_cells:
            raise SessionError(f"{path} line {line}: a quote opened on this line is never closed, so line "
                               f"{line + k} and every row after it would be read as one cell; the row is damaged, "
                               "not partly written: repair or remove it")


# the columns a kept row must share with its trial of the compiled sequence (its identity)
_IDENTITY = ("trial_index", "block", "item_id", "words", "critical_word", "correct_response")


def check_rows_follow(scan: TableScan, sequence: Any) -> None:
    """The complete rows of a table being resumed must be trials 0..k-1 of `sequence`, in order.

    Checked per row: the hash columns (spec_hash, sequence_hash), the subject, and the trial's identity
    columns (index, block, item, words, critical word, correct response). The first row that differs is
    named by file and line, so a table edited, spliced or written by another sequence is refused
    before a single new trial is appended to it.
    """
    want_hash = {"spec_hash": sequence.spec_hash, "sequence_hash": sequence.sequence_hash,
                 "subject_id": sequence.subject_id}
    for i, row in enumerate(scan.rows):
        where = f"{scan.path} line {scan.lines[i] if i < len(scan.lines) else '?'} (row {i + 1})"
        if i >= len(sequence):
            raise SessionError(f"cannot resume: {where} is beyond the {len(sequence)} trials of the compiled sequence")
        expected = {**want_hash, **{k: v for k, v in sequence[i].to_row(columns=scan.header).items() if k in _IDENTITY}}
        for col, want in expected.items():
            got = row.get(col)
            if got != ("" if want is None else str(want)):
                raise SessionError(
                    f"cannot resume: {where}: {col} is {got!r} but trial {i} of the compiled sequence has "
                    f"{want!r}; the table does not belong to this sequence (edited, or another spec/seed)")


def truncate_torn(scan: TableScan) -> None:
    """Cut a torn last row off the file (it belongs to a trial that never finished)."""
    if scan.torn:
        with open(scan.path, "rb+") as fh:
            fh.truncate(scan.keep_bytes)
            fh.flush()
            os.fsync(fh.fileno())


def recover_table(path: str | Path) -> TableScan:
    """Truncate a torn last row (it belongs to a trial that never finished) and return the scan.

    Used by both runners when they resume. The dropped bytes are returned in the scan so the caller
    records them in the sidecar before counting.
    """
    scan = scan_table(path)
    truncate_torn(scan)
    return scan


def read_rows(csv_path: str | Path) -> list[dict[str, str]]:
    """The complete rows of a session CSV (a torn last row is not a row; see `scan_table`)."""
    return scan_table(csv_path).rows
