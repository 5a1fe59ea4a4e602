"""The authors' released outputs (results_zh.zip) read as data: a zip of JSON files, bounded and checked.

Why so strict: the archive comes from outside and every number in Figure 11 is read from it. It is
opened with `zipfile` only (nothing in it is executed or unpickled); before any member is read, the
archive's size, its member count, each member's declared size, inflation ratio and their total are
bounded, every name must be a plain relative path (no absolute path, no "..", no backslash, no drive, no
link, none twice), no member may be encrypted or use a compression other than stored/deflate, every file
must be `.json` and (the caller's rule) lie in a results folder (stimuli/archives.py). Members
are read in bounded chunks (a declared size can lie), decoded as UTF-8 and parsed by `json` with
non-finite numbers (NaN, Infinity) refused. Any failure is an `ArchiveError` naming the archive and
the member; the CLI turns it into one line and exit 2.
"""
from __future__ import annotations

import json
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import Any, Callable

from reproductions.common import ReproError
from stimuli.archives import ArchiveLimitError, ZipLimits, check_zip, read_member

MAX_ARCHIVE_BYTES = 20_000_000  # the release: 0.78 MB
MAX_MEMBERS = 2_000  # the release: 31 entries
MAX_MEMBER_BYTES = 10_000_000  # one member uncompressed (the release's largest: 0.44 MB)
MAX_TOTAL_BYTES = 50_000_000  # all members uncompressed (the release: 6.6 MB)
MAX_RATIO = 100  # a member's declared size over its compressed size (the release: at most 15)
LIMITS = ZipLimits(members=MAX_MEMBERS, member_bytes=MAX_MEMBER_BYTES, total_bytes=MAX_TOTAL_BYTES, ratio=MAX_RATIO)


class ArchiveError(ReproError):
    """An archive that is not the authors' outputs as released, or not safe to read; names the member."""


def _refuse_constant(value: str) -> float:
    raise ValueError(f"the number {value} is not finite")


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, archive: Path) -> Any:
    raw = read_member(zf, info, MAX_MEMBER_BYTES, str(archive))
    try:
        text = raw.decode("utf-8")
        return json.loads(text, parse_constant=_refuse_constant)
    except UnicodeDecodeError as exc:
        raise ArchiveError(f"{archive}: member {info.filename}: byte {exc.start} is not UTF-8 text") from None
    except (ValueError, RecursionError) as exc:
        raise ArchiveError(f"{archive}: member {info.filename}: not JSON "
                           f"({' '.join(str(exc).split())[:200]})") from None


def _json_only(info: zipfile.ZipInfo) -> bool:
    return info.filename.endswith(".json")


def read_json_archive(path: str | Path, skip_dirs: tuple[str, ...] = (".ipynb_checkpoints",),
                      name_problem: Callable[[str], str | None] | None = None,
                      ) -> tuple[dict[str, Any], dict[str, Any]]:
    """({member name: parsed JSON}, {set-aside member name: parsed JSON}) of a zip of JSON files.

    Members under a folder named in `skip_dirs` (Jupyter's checkpoint copies) are read and checked
    like the rest but set aside: the authors' notebook reads only each results folder's own `*.json`.
    `name_problem(name)` (the caller's rule for the names it can use) is applied to every other member
    before any member is read, so an archive is refused by a name before it costs any memory.
    """
    archive = Path(path)
    if not archive.is_file():
        raise ArchiveError(f"--authors-outputs {archive}: {'no such file' if not archive.exists() else 'not a file'} "
                           "(give the authors' results_zh.zip)")
    if archive.stat().st_size > MAX_ARCHIVE_BYTES:
        raise ArchiveError(f"{archive}: {archive.stat().st_size} bytes; at most {MAX_ARCHIVE_BYTES} are read")
    aside_of = lambda name: bool(set(PurePosixPath(name).parts[:-1]) & set(skip_dirs))  # noqa: E731
    try:
        with zipfile.ZipFile(archive) as zf:
            infos = check_zip(zf, LIMITS, str(archive))  # names, links, duplicates, counts, declared sizes
            for info in infos:
                if not _json_only(info):
                    raise ArchiveError(f"{archive}: member {info.filename}: not a .json file (the authors' outputs "
                                       "are JSON only; refused)")
                problem = None if name_problem is None or aside_of(info.filename) else name_problem(info.filename)
                if problem:
                    raise ArchiveError(f"{archive}: member {info.filename}: {problem} (refused before any member "
                                       "is read)")
            out: dict[str, Any] = {}
            aside: dict[str, Any] = {}
            for info in infos:
                where = aside if aside_of(info.filename) else out
                where[info.filename] = _read_member(zf, info, archive)
            return out, aside
    except ArchiveError:
        raise
    except ArchiveLimitError as exc:
        raise ArchiveError(str(exc)) from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError, MemoryError) as exc:
        raise ArchiveError(f"{archive}: not a readable zip archive ({type(exc).__name__}: "
                           f"{' '.join(str(exc).split())[:200]})") from None
