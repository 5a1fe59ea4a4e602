"""Reading a small text file people write by hand (a spec, a sweep, a stimulus file) as UTF-8.

One reader so every such file gets the same clear refusal: a folder, a binary file, a file too
large to be what it claims, or a byte that is not UTF-8 (named by line and column).
"""
from __future__ import annotations

from pathlib import Path


def read_text_file(path: Path, error: type[Exception], what: str, max_bytes: int = 10_000_000) -> str:
    """The UTF-8 text of a file, or `error` naming the file and why (folder, binary, bad byte, size)."""
    if path.is_dir():
        raise error(f"{path}: is a folder, not a {what} file")
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise error(f"{path}: {size} bytes is too large for a {what} file (at most {max_bytes})")
        data = path.read_bytes()
    except OSError as exc:
        raise error(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if b"\x00" in data:
        raise error(f"{path}: is a binary file (it holds NUL bytes), not a {what} file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise error(f"{path}: line {line}, column {col}: byte 0x{data[exc.start]:02x} is not UTF-8 text "
                    f"(save the file as UTF-8)") from None
