"""Output files a command writes: never over an existing file without `--force`, never over an
input of the same command or a recorded session, and always whole (a temporary name, renamed).

The session tables themselves are append-only and written by `experiments/session.py`; this is
for everything a command derives (a compiled plan, a generated or imported stimulus file); they are
written whole by `experiments/atomic.py`.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterable

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
