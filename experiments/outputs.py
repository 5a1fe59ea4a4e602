"""Output files a command writes: never over an existing file without `--force`, never over an
input of the same command or a recorded session, and always whole (a temporary name, renamed).

Everything written goes only where it was asked (docs/guarantees.md, "Where things are written"): a
regular file under the output, never through a symbolic link (the file itself, or a link among the
sub-folders a command writes: `tables`, `figures`, `data`), never over a device, FIFO or socket (not even
with --force: `--out /dev/null --force` leaves /dev/null alone), never inside a folder the same command
reads. `check_output_file` (one file) and `check_output_folder` (a results or dataset folder) are the one
check every writing command calls before any work; `experiments/atomic.py` checks the rename target
again (`unsafe_target`), so a link or device put there during the run is refused, not replaced.

The session tables themselves are append-only and written by `experiments/session.py`; this is
for everything a command derives (a compiled plan, a generated or imported stimulus file); they are
written whole by `experiments/atomic.py`.
"""
from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Iterable

from experiments.options import OptionError, output_file, output_folder

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


_KINDS = ((stat.S_ISCHR, "a character "
                         "device"), (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


def unsafe_target(path: str | Path, folder: bool = False) -> str | None:
    """Why `path` may not be written or replaced, or None: it is absent, or a regular file (`folder`: a
    real folder). Links are not followed: a symbolic link is refused (writing through it would write
    where it points; renaming over it would replace the link), so is a device, FIFO or socket."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be examined ({exc.strerror or exc})"
    if stat.S_ISLNK(st.st_mode):
        return (f"is a symbolic link (to {os.readlink(path)}); twinlab never writes through a link: "
                "give the real path, or remove the link")
    if (stat.S_ISDIR if folder else stat.S_ISREG)(st.st_mode):
        return None
    kind = next((k for test, k in _KINDS if test(st.st_mode)), "not a regular file")
    return f"is {kind}, not a {'folder' if folder else 'regular file'}; it is never written over, even with --force"


def shared_file(path: str | Path) -> str | None:
    """Why a file that is changed in place (a session table appended to on resume, its torn row cut) may not
    be, or None: it has other names (hard links, e.g. a snapshot made with `cp -l` or rsnapshot), and every
    one of them would change with it. A file replaced by a rename never needs this (the other names keep the
    old content)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        return (f"has {st.st_nlink} names (hard links); appending to it would change every one of them: resume "
                "a plain copy (cp without -l), or remove the other names first")
    return None


def check_target(name: str, path: Path, folder: bool = False) -> Path:
    """`unsafe_target` as an OptionError naming the option and the path."""
    problem = unsafe_target(path, folder)
    if problem:
        raise OptionError(f"{name} {path} {problem}")
    return path


def inside_or_same(a: Path, b: Path) -> bool:
    """`a` is the folder `b` or lies under it (both resolved, so a link or `..` cannot hide it)."""
    try:
        ra, rb = Path(a).resolve(), Path(b).resolve()
    except (OSError, RuntimeError):
        return False
    return ra == rb or rb in ra.parents


def check_not_in_inputs(name: str, path: Path, input_folders: Iterable[tuple[str, Path]]) -> None:
    """A written file or folder never lies in (or is) a folder the same command reads, even with --force."""
    for what, folder in input_folders:
        if inside_or_same(path, Path(folder)):
            raise OptionError(f"{name} {path} is inside {what} {folder}, which this command reads; nothing is "
                              "written among a command's inputs, even with --force: choose another output")


def check_output_folder(name: str, out: Path, subfolders: Iterable[str] = (), files: Iterable[str] = (),
                        input_folders: Iterable[tuple[str, Path]] = ()) -> Path:
    """A folder this command writes into (it may not exist yet): a folder (`--out` itself may be a link the
    user made), each of the `subfolders` it writes (`tables`, `figures`, `data`) a real folder, not a link,
    holding no link, device or other non-regular file, each of the `files` it writes at its top (`power.json`,
    `report.html`) absent or a regular file, and nothing of it inside `input_folders` (nor an input inside
    a sub-folder it writes). Called before any work, with the command's option name."""

    out = Path(out)
    output_folder(name, out)
    check_not_in_inputs(name, out, input_folders)
    for sub in subfolders:
        folder = out / sub
        check_target(name, folder, folder=True)
        for what, src in input_folders:
            if inside_or_same(Path(src), folder):
                raise OptionError(f"{name} {out}: its {sub}/ folder holds {what} {src}, which this command "
                                  "reads; nothing is written among a command's inputs: choose another output")
        _check_tree(name, folder)
    for f in files:
        check_target(name, out / f)
    return out


def check_dataset_folder(name: str, out: Path, input_folders: Iterable[tuple[str, Path]] = ()) -> Path:
    """A Psych-DS dataset folder sessions are written into (`run-model`, `run-human`, `web serve`, the imports):
    `check_output_folder` with its `data/` and `dataset_description.json`."""
    return check_output_folder(name, out, subfolders=("data",), files=("dataset_description.json",),
                               input_folders=input_folders)


def _check_tree(name: str, folder: Path) -> None:
    """Every entry under `folder` (tables, figures, sessions, their locks and temporaries) a real folder or
    a regular file: a link anywhere below would take a write (or a clean-up) outside the output."""
    if not os.path.isdir(folder) or os.path.islink(folder):
        return
    for here, dirs, files in os.walk(folder, followlinks=False):
        for entry in sorted(dirs) + sorted(files):
            path = Path(here) / entry
            check_target(name, path, folder=entry in dirs and not os.path.islink(path))


def check_output_file(name: str, path: Path, force: bool, inputs: Iterable[tuple[str, Path]] = (),
                      input_folders: Iterable[tuple[str, Path]] = ()) -> Path:
    """A file this command may write: not a folder, a link, a device or anything but a regular file
    (even with --force), not an input of the command nor inside a folder it reads (even with --force),
    not a recorded session's data, and not an existing file unless `force`."""

    output_file(name, path)
    for what, src in inputs:
        if same_file(path, Path(src)):
            raise OptionError(f"{name} {path} is the command's own input ({what}); it is never written over, "
                              "even with --force: choose another output file")
    check_not_in_inputs(name, path, input_folders)
    check_target(name, path)
    if path.exists():
        if is_session_file(path):
            raise OptionError(f"{name} {path} is a recorded session's data file; it is never written over, "
                              "even with --force")
        if not force:
            raise OptionError(f"{name} {path} exists; choose another file or pass --force to replace it")
    return path
