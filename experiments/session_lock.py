"""One writer per session: an OS-level lock beside the session table, released by the kernel on death.

    lock = acquire_session_lock(csv_path)   # SessionLockedError at once if another writer holds it
    ...                                     # read the sidecar, append rows
    lock.release()                          # SessionWriter.close() does this for the writer's lock

Why flock and not a pid file: the kernel drops an flock when the holding process dies (kill -9,
power loss of the process), so there is never a stale lock to clean up by hand, and no pid-liveness
guessing. The lock file (`<stem>.lock` in the session's data folder) also holds who took it (pid,
host, command, start time) so that a refused writer can name the holder. The holder removes the file
when it lets go; a file left by a killed process holds no lock and is simply taken over.

flock locks belong to an open file description, so a second writer in the same process is refused
as well (the runners take one lock per session and hand it to the writer).
"""
from __future__ import annotations

import fcntl
import json
import os
import shlex
import socket
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from experiments.session_errors import SessionError


class SessionLockedError(SessionError):
    """Another process (or another writer in this one) is writing this session now."""


def lock_path_for(csv_path: str | Path) -> Path:
    """`.../study-x_subject-y_session-1_data.csv` -> `.../study-x_subject-y_session-1.lock`."""
    p = Path(csv_path)
    stem = p.name[: -len("_data.csv")] if p.name.endswith("_data.csv") else p.stem
    return p.with_name(stem + ".lock")


def _command_line() -> str:
    argv = [Path(sys.argv[0]).name if sys.argv else "python", *sys.argv[1:]]
    text = shlex.join(argv)
    return text if len(text) <= 300 else text[:297] + "..."


@dataclass
class SessionLock:
    """A held lock; `release()` is idempotent."""

    path: Path
    fd: int | None
    holder: dict = field(default_factory=dict)
    made_dirs: list[Path] = field(default_factory=list)  # folders created for the lock (removed if left empty)

    @property
    def held(self) -> bool:
        return self.fd is not None

    def release(self) -> None:
        if self.fd is None:
            return
        fd, self.fd = self.fd, None
        try:  # unlink while still holding it: a waiter that opened this inode sees it is gone and retries
            os.unlink(self.path)
        except OSError:
            pass
        os.close(fd)  # closing the last descriptor releases the flock
        for d in reversed(self.made_dirs):  # a refused or empty run leaves no folder behind
            try:
                d.rmdir()
            except OSError:
                break  # not empty (a session was written) or already gone

    def __enter__(self) -> "SessionLock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def describe_holder(info: dict) -> str:
    if not info:
        return "a process that is just starting (no holder recorded yet)"
    return (f"pid {info.get('pid')} on host {info.get('host')}, command {info.get('command')!r}, "
            f"since {info.get('started_at')}")


def _read_holder(fd: int) -> dict:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        data = os.read(fd, 65536)
        return json.loads(data.decode("utf-8")) if data.strip() else {}
    except (OSError, ValueError):
        return {}


def _make_folders(folder: Path) -> list[Path]:
    """Create `folder` and its missing parents; return the ones created here (outermost first)."""
    missing = []
    p = folder
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SessionError(f"cannot create the folder {folder}: {exc.strerror or exc}") from exc
    return list(reversed(missing))


def acquire_session_lock(csv_path: str | Path, command: str | None = None) -> SessionLock:
    """Take the session's lock now or raise SessionLockedError naming the holder (never waits)."""
    path = lock_path_for(csv_path)
    made: list[Path] = []
    for _ in range(100):  # only a holder releasing at this very moment makes us go round again
        made += _make_folders(path.parent)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except FileNotFoundError:  # a releasing holder removed the empty folder just now
            continue
        except OSError as exc:
            raise SessionError(f"cannot open the session lock {path}: {exc.strerror or exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            session = Path(csv_path).name
            raise SessionLockedError(
                f"session {session} is being written by another process ({describe_holder(holder)}); "
                f"one writer per session: wait for it to finish, or stop it (its lock {path} is released "
                "when it ends, also if killed)") from None
        except OSError as exc:
            os.close(fd)
            raise SessionError(f"cannot lock {path}: {exc.strerror or exc}") from exc
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        if not same:  # we locked a file its holder had just removed: start again with the new one
            os.close(fd)
            continue
        holder = {"pid": os.getpid(), "host": socket.gethostname(), "command": command or _command_line(),
                  "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, (json.dumps(holder) + "\n").encode("utf-8"), 0)
        except OSError:
            pass  # the lock holds without the note; a refused writer then says "no holder recorded"
        return SessionLock(path, fd, holder, made_dirs=made)
    raise SessionError(f"could not take the session lock {path} (it kept being replaced)")
