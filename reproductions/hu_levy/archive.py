"""The authors' released outputs (results_zh.zip) read as data: a zip of JSON files, bounded and checked.

Why so strict: the archive comes from outside and every number in Figure 11 is read from it. It is
opened with `zipfile` only (nothing in it is executed or unpickled); before any member is read, the
archive's size, its member count, each member's declared size and their total are bounded, every
name must be a plain relative path (no absolute path, no "..", no backslash, no drive), no member may
be encrypted or use a compression other than stored/deflate, and every file must be `.json`. Members
are read in bounded chunks (a declared size can lie), decoded as UTF-8 and parsed by `json` with
non-finite numbers (NaN, Infinity) refused. Any failure is an `ArchiveError` naming the archive and
the member; the CLI turns it into one line and exit 2.
"""
from __future__ import annotations

import json
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import Any

from reproductions.common import ReproError

MAX_ARCHIVE_BYTES = 100_000_000  # the release: 0.78 MB
MAX_MEMBERS = 2_000  # the release: 34 entries
MAX_MEMBER_BYTES = 50_000_000  # one member uncompressed (the release's largest: 0.44 MB)
MAX_TOTAL_BYTES = 500_000_000  # all members uncompressed (the release: 8.9 MB)
METHODS_OK = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)


class ArchiveError(ReproError):
    """An archive that is not the authors' outputs as released, or not safe to read; names the member."""


def _check_name(archive: Path, name: str) -> None:
    p = PurePosixPath(name)
    if (not name or name.startswith("/") or "\\" in name or "\x00" in name or ".." in p.parts
            or (p.parts and p.parts[0].endswith(":"))):
        raise ArchiveError(f"{archive}: member {name!r}: not a plain relative path (refused)")


def _refuse_constant(value: str) -> float:
    raise ValueError(f"the number {value} is not finite")


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, archive: Path) -> Any:
    chunks, size = [], 0
    with zf.open(info) as fh:
        while True:
            block = fh.read(1 << 20)
            if not block:
                break
            size += len(block)
            if size > MAX_MEMBER_BYTES or size > info.file_size:
                raise ArchiveError(f"{archive}: member {info.filename}: more bytes than its declared "
                                   f"{info.file_size} (or over {MAX_MEMBER_BYTES}) (refused)")
            chunks.append(block)
    raw = b"".join(chunks)
    try:
        text = raw.decode("utf-8")
        return json.loads(text, parse_constant=_refuse_constant)
    except UnicodeDecodeError as exc:
        raise ArchiveError(f"{archive}: member {info.filename}: byte {exc.start} is not UTF-8 text") from None
    except (ValueError, RecursionError) as exc:
        raise ArchiveError(f"{archive}: member {info.filename}: not JSON ({' '.join(str(exc).split())[:200]})") from None


def read_json_archive(path: str | Path, skip_dirs: tuple[str, ...] = (".ipynb_checkpoints",)
                      ) -> tuple[dict[str, Any], dict[str, Any]]:
    """({member name: parsed JSON}, {set-aside member name: parsed JSON}) of a zip of JSON files.

    Members under a folder named in `skip_dirs` (Jupyter's checkpoint copies) are read and checked
    like the rest but set aside: the authors' notebook reads only each results folder's own `*.json`.
    """
    archive = Path(path)
    if not archive.is_file():
        raise ArchiveError(f"--authors-outputs {archive}: {'no such file' if not archive.exists() else 'not a file'} "
                           "(give the authors' results_zh.zip)")
    if archive.stat().st_size > MAX_ARCHIVE_BYTES:
        raise ArchiveError(f"{archive}: {archive.stat().st_size} bytes; at most {MAX_ARCHIVE_BYTES} are read")
    try:
        with zipfile.ZipFile(archive) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_MEMBERS:
                raise ArchiveError(f"{archive}: {len(infos)} members; at most {MAX_MEMBERS} are read")
            total = 0
            for info in infos:
                _check_name(archive, info.filename)
                total += info.file_size
                if info.flag_bits & 0x1:
                    raise ArchiveError(f"{archive}: member {info.filename}: encrypted (refused)")
                if info.compress_type not in METHODS_OK:
                    raise ArchiveError(f"{archive}: member {info.filename}: compression method {info.compress_type} "
                                       "(only stored or deflate are read)")
                if info.file_size > MAX_MEMBER_BYTES:
                    raise ArchiveError(f"{archive}: member {info.filename}: {info.file_size} bytes uncompressed; "
                                       f"at most {MAX_MEMBER_BYTES} are read")
                if not info.is_dir() and not info.filename.endswith(".json"):
                    raise ArchiveError(f"{archive}: member {info.filename}: not a .json file (the authors' outputs "
                                       "are JSON only; refused)")
            if total > MAX_TOTAL_BYTES:
                raise ArchiveError(f"{archive}: {total} bytes uncompressed in all; at most {MAX_TOTAL_BYTES} are read")
            names = [i.filename for i in infos if not i.is_dir()]
            if len(set(names)) != len(names):
                dup = sorted({n for n in names if names.count(n) > 1})
                raise ArchiveError(f"{archive}: member {dup[0]} appears more than once (refused)")
            out: dict[str, Any] = {}
            aside: dict[str, Any] = {}
            for info in infos:
                if info.is_dir():
                    continue
                where = aside if set(PurePosixPath(info.filename).parts[:-1]) & set(skip_dirs) else out
                where[info.filename] = _read_member(zf, info, archive)
            return out, aside
    except ArchiveError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError) as exc:
        raise ArchiveError(f"{archive}: not a readable zip archive ({type(exc).__name__}: "
                           f"{' '.join(str(exc).split())[:200]})") from None
