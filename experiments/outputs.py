"""Output files a command writes: never over an existing file without `--force`, never over an
input of the same command or a recorded session, and always whole (a temporary name, renamed).

The session tables themselves are append-only and written by `experiments/session.py`; this is
for everything a command derives (a compiled plan, a generated or imported stimulus file).
"""
from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Callable, Iterable

from experiments.options import OptionError

# Psych-DS data files of a session (experiments/session.py names them so)
_SESSION_FILE = re.compile(r"^study-.+_subject-.+_data\.(csv|json)$")


def same_file(a: Path, b: Path) -> bool:
    """`a` and `b` are one file (resolved paths, or one inode through a link)."""
    try:
        if a.resolve() == b.resolve():
            return True
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def is_session_file(path: Path) -> bool:
    """A recorded session's table or sidecar: its Psych-DS name, or a `.json` sidecar beside it."""
    if _SESSION_FILE.match(path.name):
        return True
    side = path.with_suffix(".json") if path.suffix.lower() != ".json" else path.with_suffix(".csv")
    return path.suffix.lower() in (".csv", ".json") and path.exists() and side.exists() and \
        _SESSION_FILE.match(side.name) is not None


def check_output_file(name: str, path: Path, force: bool, inputs: Iterable[tuple[str, Path]] = ()) -> Path:
    """A file this command may write: not a folder, not an input of the command (even with
    --force), not a recorded session's data, and not an existing file unless `force`."""
    from experiments.options import output_file

    output_file(name, path)
    for what, src in inputs:
        if same_file(path, Path(src)):
            raise OptionError(f"{name} {path} is the command's own input ({what}); it is never written over, "
                              "even with --force: choose another output file")
    if path.exists():
        if is_session_file(path):
            raise OptionError(f"{name} {path} is a recorded session's data file; it is never written over, "
                              "even with --force")
        if not force:
            raise OptionError(f"{name} {path} exists; choose another file or pass --force to replace it")
    return path


def write_atomically(path: Path, write: Callable[[Path], None]) -> Path:
    """Call `write(tmp)` on a temporary file beside `path`, fsync it and rename it over `path`, so
    a reader (or a crash) sees the old file or the whole new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # hidden, marked as a part, and ending in the target's suffix (writers pick the format by it)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=f".part{path.suffix}", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # the mode a plain open() would give, not mkstemp's 0600
        write(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path
