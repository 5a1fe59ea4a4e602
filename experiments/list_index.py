"""The counter behind least-filled list assignment (`web serve`): which list each participant reads, kept
in memory beside the data folder and rebuilt from the sidecars only when a server starts.

Why: counting by re-reading every sidecar at every start made each start cost O(sessions) under one
lock (30 starts over 20,000 sessions: 35 s). Now a start costs O(1) reads: the index knows
every participant's list; a participant whose session is complete stays counted without being looked at
again; only participants still running (not completed) are looked at, by `stat` (their sidecar re-read
only when it changed), because the abandoned rule depends on their last activity.

Servers sharing one data folder: every assignment is also appended to a journal beside the data
(`<out>/.twinlab-lists.jsonl`, one JSON line per new session, written under the same flock), and each
index reads only the journal lines added since it last looked. Sessions written by other commands
(run-human, import) while a server runs are counted when the server restarts.

The lock and journal are opened with O_NOFOLLOW: a symbolic link at their names (which would make
twinlab create or write a file outside the data folder) or a folder there is a named `ListLockError`.
"""
from __future__ import annotations

import errno
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from experiments.options import OptionError
from experiments.session import keyword_value, session_paths

LOCK_NAME = ".twinlab-lists.lock"
JOURNAL_NAME = ".twinlab-lists.jsonl"
MAX_JOURNAL_LINE = 4096


class ListLockError(OptionError):
    """The list lock or journal cannot be used (a symbolic link, a folder, unreadable); names the path."""


def open_private_file(path: Path, flags: int) -> int:
    """A file descriptor for a regular file at `path` inside its folder, never through a symbolic link."""
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ListLockError(f"{path}: is a symbolic link; twinlab's list files are plain files inside the "
                                "data folder (remove the link)") from None
        if exc.errno == errno.EISDIR:
            raise ListLockError(f"{path}: is a folder, not twinlab's list file (move it out of the way)") from None
        raise ListLockError(f"{path}: cannot be opened ({exc.strerror or exc})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ListLockError(f"{path}: is not a regular file (twinlab's list file; move it out of the way)")
    return fd


def recorded_list(meta: dict[str, Any]) -> int | None:
    """The list a session's sidecar says it reads (its `design.list`)."""
    ln = (meta.get("design") or {}).get("list")
    return int(ln) if isinstance(ln, int) and not isinstance(ln, bool) else None


def read_sidecar(path: Path) -> dict[str, Any] | None:
    """A sidecar's JSON object, or None (unreadable, not JSON, not an object)."""
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


@dataclass
class _Person:
    """One participant: the list read, its sessions' sidecars, and whether one of them is complete."""

    list: int
    sidecars: set[Path] = field(default_factory=set)
    completed: bool = False
    seen: dict[Path, int] = field(default_factory=dict)  # sidecar -> mtime_ns when last read


class ListIndex:
    """Participants -> lists for one experiment under one data folder (see the module docstring)."""

    def __init__(self, out: Path, experiment: str, n: int):
        self.out, self.experiment, self.n = Path(out), experiment, n
        self.prefix = f"study-{keyword_value(experiment)}_subject-"
        self.people: dict[str, _Person] = {}
        self.journal_offset = 0
        self.sidecar_reads = 0  # how many sidecars were read (tests: O(1) reads per start)

    # ---- start-up ----------------------------------------------------------------------------------
    def rebuild(self) -> "ListIndex":
        """Read every sidecar once (server start-up); the journal so far is already in the sidecars."""
        self.people.clear()
        for p in (self.out / "data").glob(f"{self.prefix}*_data.json"):
            self._read_sidecar(p.name[len(self.prefix):].rsplit("_session-", 1)[0], p)
        journal = self.out / JOURNAL_NAME
        self.journal_offset = journal.stat().st_size if journal.is_file() and not journal.is_symlink() else 0
        return self

    def _read_sidecar(self, pid: str, path: Path) -> None:
        self.sidecar_reads += 1
        try:
            mtime = path.stat().st_mtime_ns
        except OSError:
            return
        meta = read_sidecar(path)
        ln = recorded_list(meta) if meta is not None else None
        if meta is None or ln is None or not 1 <= ln <= self.n:
            return
        person = self.people.setdefault(pid, _Person(ln))
        person.sidecars.add(path)
        person.seen[path] = mtime
        person.completed = person.completed or meta.get("status") == "completed"

    # ---- each start --------------------------------------------------------------------------------
    def sync_journal(self) -> None:
        """Take in the assignments other servers appended since this index last looked."""
        path = self.out / JOURNAL_NAME
        if not path.exists() and not path.is_symlink():
            return
        fd = open_private_file(path, os.O_RDONLY)
        with os.fdopen(fd, "rb") as fh:
            fh.seek(self.journal_offset)
            chunk = fh.read()
        end = chunk.rfind(b"\n") + 1  # a line still being written is read next time
        self.journal_offset += end
        for line in chunk[:end].splitlines():
            self._journal_entry(line)

    def _journal_entry(self, line: bytes) -> None:
        try:
            rec = json.loads(line) if len(line) <= MAX_JOURNAL_LINE else None
        except ValueError:
            return
        if not isinstance(rec, dict) or rec.get("experiment") != self.experiment:
            return
        pid, session, ln = rec.get("participant"), rec.get("session"), rec.get("list")
        if not (isinstance(pid, str) and isinstance(session, int) and isinstance(ln, int) and 1 <= ln <= self.n):
            return
        try:
            sidecar = session_paths(self.out, self.experiment, pid, session)[1]
        except Exception:  # an id the session writer would refuse: not a session of this folder
            return
        self.people.setdefault(pid, _Person(ln)).sidecars.add(sidecar)

    def earlier_list(self, pid: str) -> int | None:
        person = self.people.get(pid)
        return person.list if person is not None else None

    def counts(self, abandon_after_min: float, now: float) -> tuple[dict[int, int], dict[int, int]]:
        """(counted, abandoned) per list: a participant counts when a session of theirs is complete or was
        active (table or sidecar written) within `abandon_after_min` minutes. Completed participants cost
        nothing; running ones a `stat` per file (their sidecar re-read only when it changed)."""
        counted = {k: 0 for k in range(1, self.n + 1)}
        abandoned = {k: 0 for k in range(1, self.n + 1)}
        limit = abandon_after_min * 60.0
        for pid, person in self.people.items():
            live = person.completed or self._active(pid, person, now, limit)
            (counted if live else abandoned)[person.list] += 1
        return counted, abandoned

    def _active(self, pid: str, person: _Person, now: float, limit: float) -> bool:
        latest = None
        for side in sorted(person.sidecars):
            for f in (side, side.with_name(side.name[:-len(".json")] + ".csv")):
                try:
                    st = f.stat()
                except OSError:
                    continue
                latest = st.st_mtime if latest is None else max(latest, st.st_mtime)
                if f == side and person.seen.get(side) != st.st_mtime_ns:
                    self._read_sidecar(pid, side)  # it changed: completed since?
        return person.completed or (latest is not None and now - latest <= limit)

    def record(self, pid: str, session: int, ln: int) -> None:
        """A session just created on list `ln`: into this index and the journal other servers read."""

        self.people.setdefault(pid, _Person(ln)).sidecars.add(session_paths(self.out, self.experiment, pid, session)[1])
        line = json.dumps({"experiment": self.experiment, "participant": pid, "session": session, "list": ln}) + "\n"
        fd = open_private_file(self.out / JOURNAL_NAME, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)
        self.journal_offset += len(line.encode("utf-8"))  # our own line: already in the index


_INDEXES: dict[tuple[str, str], ListIndex] = {}


def index_for(out: Path, experiment: str, n: int, rebuild: bool = False) -> ListIndex:
    """The index of `experiment` under `out` (built from the sidecars the first time, or when `rebuild`);
    call it under the assignment lock."""
    key = (str(Path(out).resolve()), experiment)
    idx = _INDEXES.get(key)
    if idx is None or rebuild or idx.n != n:
        idx = _INDEXES[key] = ListIndex(out, experiment, n).rebuild()
    return idx


def peek(out: Path, experiment: str) -> Any:
    """The index if one is built (tests), else None."""
    return _INDEXES.get((str(Path(out).resolve()), experiment))
