"""Reading a small text file people write by hand (a spec, a sweep, a stimulus file) as UTF-8.

One reader so every such file gets the same clear refusal: a folder, a FIFO or device (which would
hang or never end), a binary file, a file too large to be what it claims, or a byte that is not
UTF-8 (named by line and column). Files are read with a size bound, never whole and unchecked.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path


def regular_file_problem(path: Path, what: str = "") -> str | None:
    """Why `path` cannot be read as an input file (missing, folder, FIFO, device...), or None.

    Checked with stat before opening: opening a FIFO blocks until a writer comes, and a device
    such as /dev/zero never ends.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "does not exist"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if stat.S_ISDIR(st.st_mode):
        return f"is a folder, not a {what + ' ' if what else ''}file"
    if stat.S_ISFIFO(st.st_mode):
        return f"is a pipe (FIFO), not a regular {what + ' ' if what else ''}file"
    if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
        return f"is a device, not a regular {what + ' ' if what else ''}file"
    if stat.S_ISSOCK(st.st_mode):
        return f"is a socket, not a regular {what + ' ' if what else ''}file"
    if not stat.S_ISREG(st.st_mode):
        return f"is not a regular {what + ' ' if what else ''}file"
    return None


def read_bytes_bounded(path: Path, error: type[Exception], what: str, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most `max_bytes`, or `error` naming the file and why."""
    problem = regular_file_problem(path, what)
    if problem:
        raise error(f"{path}: {problem}")
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)  # bounded even if the file grows while it is read
    except OSError as exc:
        raise error(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        raise error(f"{path}: too large for a {what} file (more than {max_bytes} bytes)")
    return data


def decode_utf8(data: bytes, path: Path, error: type[Exception], what: str) -> str:
    """UTF-8 text (a BOM is dropped), or `error` naming the file, line, column and byte."""
    if b"\x00" in data:
        raise error(f"{path}: is a binary file (it holds NUL bytes), not a {what} file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise error(f"{path}: line {line}, column {col}: byte 0x{data[exc.start]:02x} is not UTF-8 text "
                    f"(save the file as UTF-8)") from None


def read_text_file(path: Path, error: type[Exception], what: str, max_bytes: int = 10_000_000) -> str:
    """The UTF-8 text of a regular file, or `error` naming the file and why (folder, FIFO, device,
    binary, bad byte, size)."""
    path = Path(path)
    return decode_utf8(read_bytes_bounded(path, error, what, max_bytes), path, error, what)
