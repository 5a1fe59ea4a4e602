"""Archives read as data (zip, gzip): every member checked by what the archive DECLARES before any member is
read, then read streaming under a hard cap, so a small archive can never take much memory.

Why: a zip's central directory says each member's name, its size once inflated and its size compressed; deflate
can inflate about 1,000 times, so a 0.47 MB zip may declare (and inflate to) 485 MB, and parsing that took
2.1 GB before the archive was refused by a member name it could have been refused by at once. Here, in this
order and before any member is opened: the member count; every name (a plain relative path: no absolute path,
no `..`, no backslash, no drive, no control character, not a symbolic link, not twice, not twice once case and
Unicode form are folded); no encryption, only stored or deflate; each member's declared size, all members'
total, and each member's inflation ratio (declared size / compressed size, for members over `ratio_from`
bytes). Reading then stops at the declared size (a size that lies is refused) and at the limit. The limits of
each archive a command reads are stated in docs/guarantees.md ("Archives"). `ArchiveLimitError` names the
archive and the member; each reader turns it into its own error (one line, exit 2).
"""
from __future__ import annotations

import io
import stat
import unicodedata
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Callable

CHUNK = 1 << 20
METHODS_OK = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)


class ArchiveLimitError(ValueError):
    """An archive or member over a stated limit, or with a name or kind that is refused; the message names it."""


@dataclass(frozen=True)
class ZipLimits:
    """The bounds one reader states (docs/guarantees.md): members, bytes per member and in all (as declared,
    uncompressed), and the highest inflation ratio of a member over `ratio_from` bytes."""

    members: int
    member_bytes: int
    total_bytes: int
    ratio: float = 200.0  # the releases read: at most 21 (JSON, BLiMP .jsonl.gz); deflate's ceiling is ~1,032
    ratio_from: int = 1_000_000  # a small member may inflate more without costing anything


def name_problem(name: str) -> str | None:
    """Why a member name is not a plain relative path, or None."""
    p = PurePosixPath(name)
    if not name or name.startswith("/") or "\\" in name or ".." in p.parts or (p.parts and p.parts[0].endswith(":")):
        return "not a plain relative path (absolute, '..', a backslash or a drive)"
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in name):
        return "holds a control or invisible character"
    return None


def _fold(name: str) -> str:
    return unicodedata.normalize("NFKC", name).casefold().rstrip("/")


def _is_link(info: zipfile.ZipInfo) -> bool:
    """A member stored as a symbolic link (a Unix mode in the high bits of its external attributes)."""
    return stat.S_ISLNK(info.external_attr >> 16)


def check_zip(zf: zipfile.ZipFile, limits: ZipLimits, where: str,
              wanted: Callable[[zipfile.ZipInfo], bool] = lambda i: True) -> list[zipfile.ZipInfo]:
    """The members to read (`wanted`, folders left out), after every check of the module docstring on every
    member; ArchiveLimitError naming the archive (`where`) and the member. Reads no member."""
    infos = zf.infolist()
    if len(infos) > limits.members:
        raise ArchiveLimitError(f"{where}: {len(infos)} members; at most {limits.members} are read")
    seen: dict[str, str] = {}
    total = 0
    for info in infos:
        name = info.filename
        problem = name_problem(name)
        if problem:
            raise ArchiveLimitError(f"{where}: member {name!r}: {problem} (refused)")
        if _is_link(info):
            raise ArchiveLimitError(f"{where}: member {name!r}: a symbolic link (refused)")
        key = _fold(name)
        if key in seen:
            raise ArchiveLimitError(f"{where}: member {name!r} appears more than once (as {seen[key]!r}; refused)")
        seen[key] = name
        if info.is_dir():
            continue
        _check_declared(info, limits, where)
        total += info.file_size
        if total > limits.total_bytes:
            raise ArchiveLimitError(f"{where}: its members declare more than {limits.total_bytes} bytes uncompressed "
                                    f"together (at {name}); at most {limits.total_bytes} are read")
    return [i for i in infos if not i.is_dir() and wanted(i)]


def _check_declared(info: zipfile.ZipInfo, limits: ZipLimits, where: str) -> None:
    name = info.filename
    if info.flag_bits & 0x1:
        raise ArchiveLimitError(f"{where}: member {name}: encrypted (refused)")
    if info.compress_type not in METHODS_OK:
        raise ArchiveLimitError(f"{where}: member {name}: compression method {info.compress_type} "
                                "(only stored or deflate are read)")
    if info.file_size > limits.member_bytes:
        raise ArchiveLimitError(f"{where}: member {name}: {info.file_size} bytes uncompressed; at most "
                                f"{limits.member_bytes} are read")
    if info.file_size > limits.ratio_from and info.file_size > limits.ratio * max(info.compress_size, 1):
        raise ArchiveLimitError(f"{where}: member {name}: {info.file_size} bytes from {info.compress_size} compressed "
                                f"(inflates {info.file_size / max(info.compress_size, 1):.0f} times; at most "
                                f"{limits.ratio:.0f} are read: a decompression bomb, not data)")


def read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int, where: str) -> bytes:
    """A member's bytes, read in chunks; more than it declares, or than `limit`, is refused at the first
    chunk over (a declared size can lie)."""
    cap = min(info.file_size, limit)
    chunks, size = [], 0
    with zf.open(info) as fh:
        while True:
            block = fh.read(min(CHUNK, cap + 1 - size))
            if not block:
                break
            size += len(block)
            if size > cap:
                raise ArchiveLimitError(f"{where}: member {info.filename}: more bytes than its declared "
                                        f"{info.file_size} (or over {limit}) (refused)")
            chunks.append(block)
    return b"".join(chunks)


def gunzip(raw: bytes, limit: int, where: str, ratio: float = 200.0, ratio_from: int = 1_000_000) -> bytes:
    """A gzip file's bytes inflated (every member of a multi-member file), streaming, refused as soon as the
    output passes `limit` or `ratio` times the input (past `ratio_from` bytes). gzip declares no trustworthy
    size (its trailer is the size modulo 4 GiB), so the cap is applied while inflating."""
    cap = min(limit, max(ratio_from, int(ratio * len(raw))))
    out: list[bytes] = []
    size, data = 0, raw
    while data:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            piece = d.decompress(data, cap + 1 - size)
        except zlib.error as exc:
            raise ArchiveLimitError(f"{where}: not gzip data ({exc})") from None
        while True:
            size += len(piece)
            if size > cap:
                raise ArchiveLimitError(f"{where}: inflates to more than {cap} bytes (at most {limit}, and at most "
                                        f"{ratio:.0f} times its {len(raw)} bytes; refused: a decompression bomb)")
            out.append(piece)
            if d.eof or not d.unconsumed_tail:
                break
            try:
                piece = d.decompress(d.unconsumed_tail, cap + 1 - size)
            except zlib.error as exc:
                raise ArchiveLimitError(f"{where}: damaged gzip data ({exc})") from None
        if not d.eof:
            raise ArchiveLimitError(f"{where}: the gzip data is cut short (refused)")
        data = d.unused_data.lstrip(b"\0")  # another member follows (or the padding some tools add)
    return b"".join(out)

def gunzip_file(path: Path, limit: int, ratio: float = 200.0) -> bytes:
    """`gunzip` of the file at `path` (its compressed size at most `limit` too); OSError as the caller reads."""
    if path.stat().st_size > limit:
        raise ArchiveLimitError(f"{path}: {path.stat().st_size} bytes compressed; at most {limit} are read")
    return gunzip(path.read_bytes(), limit, str(path), ratio)


def csv_source(path: Any, limit: int, ratio: float = 200.0) -> Any:
    """What pandas should read for `path`: a `.gz` file inflated here under the caps (pandas would inflate
    it without bound, by the file name), anything else unchanged."""
    if isinstance(path, (str, Path)) and str(path).endswith(".gz"):
        return io.BytesIO(gunzip_file(Path(path), limit, ratio))
    return path
