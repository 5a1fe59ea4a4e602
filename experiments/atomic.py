"""Derived files are written whole or not at all: a temporary file beside the target, fsync, rename.

A reader (or a crash) never sees half a report, half a provenance record or half a stimulus file:
until the rename the old file (or none) is there; after it, the new one complete.

The target is checked before the write and again just before the rename (`outputs.unsafe_target`): a
rename over a symbolic link replaces the link, over a device node the device, so either is refused
(`UnsafeTargetError`, an OSError naming the path), never replaced.
"""
from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path
from typing import Callable

from experiments.outputs import unsafe_target


class UnsafeTargetError(OSError):
    """A derived file's target that is a link, a device or anything but a regular file (never replaced)."""


def check_rename_target(path: Path) -> None:
    """Refuse `path` as a rename target unless it is absent or a regular file (outputs.unsafe_target)."""
    problem = unsafe_target(path)
    if problem:
        raise UnsafeTargetError(errno.EPERM, f"{path} {problem}", str(path))


def _plain_mode(tmp: str | Path) -> None:
    """The mode a plain open() would give (0666 less the umask), not mkstemp's private 0600:
    a lab's report or stimulus file is read by colleagues."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(tmp, 0o666 & ~mask)


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write `data` to `path` through a temporary file in the same folder and a rename."""
    path = Path(path)
    check_rename_target(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        _plain_mode(tmp)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        check_rename_target(path)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def atomic_write_text(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    return atomic_write_bytes(path, text.encode(encoding))


def write_atomically(path: Path, write: Callable[[Path], None]) -> Path:
    """Call `write(tmp)` on a temporary file beside `path`, fsync it and rename it over `path`, so
    a reader (or a crash) sees the old file or the whole new one, never a part."""
    check_rename_target(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # hidden, marked as a part, and ending in the target's suffix (writers pick the format by it)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=f".part{path.suffix}", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        _plain_mode(tmp)
        write(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        check_rename_target(path)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path
