"""The one way an import reads a text file (a results file of any tool, a --map): checked before it is
opened, bounded while it is read, decoded line by line.

Why each rule: a FIFO blocks the reader until a writer comes and a device (/dev/zero, or a link to it)
never ends, so the file's kind is checked with stat before it is opened and checked again on the open
handle; the size limit holds while reading (a file that grows is cut at the limit and refused); a
byte-order mark is dropped (UTF-8's, or UTF-16's, as Excel's "Unicode text" writes); lab files mix
encodings line by line (a German Ibex study with some Latin-1 lines among UTF-8 ones), so each line that
is not UTF-8 is read as cp1252 (Latin-1 where cp1252 has no character) and counted in a note naming the
lines, where converting the whole file would break the UTF-8 lines; `--encoding NAME` reads the whole file
in one named encoding instead. A NUL character is refused naming its line (no text format holds one; a
binary file or a torn write does).

The encoding and the notes reach the readers through `reading(...)` (a context the pipeline sets around a
reader's call), so every reader keeps its signature `read_<tool>(paths, mapping)`.
"""
from __future__ import annotations

import codecs
import contextlib
import contextvars
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

from participants.imports.records import MAX_FILE_BYTES, ImportInputError
from stimuli.textfile import regular_file_problem

FALLBACK = "cp1252"
LINES_NAMED = 10   # lines a fallback note names (then "..." and the count)

__all__ = ["read_text", "check_encoding", "reading", "ReadingOptions", "input_problem", "parse_json",
           "deepest_json_file"]


@dataclass
class ReadingOptions:
    """What the import command says about reading its files, and what the reading states back."""
    encoding: Optional[str] = None              # --encoding (validated); None: UTF-8 with the counted fallback
    notes: list[str] = field(default_factory=list)


_OPTIONS: contextvars.ContextVar[Optional[ReadingOptions]] = contextvars.ContextVar("twinlab_import_reading",
                                                                                     default=None)


@contextlib.contextmanager
def reading(options: ReadingOptions) -> Iterator[ReadingOptions]:
    """Every `read_text` inside reads with `options` (its encoding) and adds its notes to `options.notes`."""
    token = _OPTIONS.set(options)
    try:
        yield options
    finally:
        _OPTIONS.reset(token)


def check_encoding(name: Optional[str]) -> Optional[str]:
    """`--encoding NAME`: a text encoding Python knows (its canonical name), else ImportInputError."""
    if name is None:
        return None
    if not isinstance(name, str) or not name.strip() or len(name) > 40:
        raise ImportInputError(f"--encoding {str(name)[:40]!r}: give a text encoding's name (utf-8, cp1252, latin-1, "
                               "utf-16, ...)")
    try:
        info = codecs.lookup(name.strip())
    except LookupError:
        raise ImportInputError(f"--encoding {name!r}: not an encoding Python knows (e.g. utf-8, cp1252, latin-1, "
                               "utf-16)") from None
    if not getattr(info, "_is_text_encoding", True):
        raise ImportInputError(f"--encoding {name!r}: not a text encoding (e.g. utf-8, cp1252, latin-1, utf-16)")
    return info.name


def input_problem(path: Path) -> Optional[str]:
    """Why `path` cannot be read as an input file (a folder, FIFO, device, socket, missing), or None. `stat`
    follows a link, so a link to a device is a device."""
    return regular_file_problem(Path(path))


def _read_bounded(path: Path, max_bytes: int, what: str) -> bytes:
    problem = input_problem(path)
    if problem:
        raise ImportInputError(f"{path}: {problem}; give the {what} file itself")
    try:   # O_NONBLOCK: a FIFO swapped in after the check opens at once instead of waiting for a writer
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ImportInputError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise ImportInputError(f"{path}: not a regular file (it changed while it was opened)")
        size = os.fstat(fh.fileno()).st_size
        if size > max_bytes:
            raise ImportInputError(_too_large(path, size, max_bytes))
        try:
            data = fh.read(max_bytes + 1)   # bounded even if the file grows while it is read
        except OSError as exc:
            raise ImportInputError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        raise ImportInputError(_too_large(path, len(data), max_bytes))
    return data


def _too_large(path: Path, size: int, max_bytes: int) -> str:
    return (f"{path}: {size:,}{'+' if size > max_bytes else ''} bytes, larger than the {max_bytes // 2**20} MiB "
            f"limit ({max_bytes:,} bytes) on one input file; split it (one file per participant or per export)")


def _decode_named(data: bytes, path: Path, encoding: str) -> str:
    try:
        return codecs.decode(data, encoding)
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise ImportInputError(f"{path}: line {line}: not {encoding} text (byte {exc.start}: 0x{data[exc.start]:02x}); "
                               "give the file's encoding with --encoding NAME") from None


def _decode_lines(data: bytes, path: Path) -> tuple[str, list[int], bool]:
    """UTF-8 line by line; a line that is not UTF-8 is read as cp1252 (Latin-1 where cp1252 has no character).
    Returns the text, the lines read so, and whether Latin-1 was needed."""
    try:
        return data.decode("utf-8"), [], False
    except UnicodeDecodeError:
        pass
    parts: list[str] = []
    fallback: list[int] = []
    latin1 = False
    for n, raw in enumerate(data.splitlines(keepends=True), start=1):
        try:
            parts.append(raw.decode("utf-8"))
            continue
        except UnicodeDecodeError:
            fallback.append(n)
        try:
            parts.append(raw.decode(FALLBACK))
        except UnicodeDecodeError:
            parts.append(raw.decode("latin-1"))
            latin1 = True
    return "".join(parts), fallback, latin1


def _fallback_note(path: Path, lines: list[int], latin1: bool) -> str:
    shown = ", ".join(map(str, lines[:LINES_NAMED])) + (f", ... ({len(lines)} in all)" if len(lines) > LINES_NAMED
                                                         else "")
    enc = "cp1252/Latin-1" if latin1 else FALLBACK
    return (f"{path.name}: {len(lines)} line{'s' if len(lines) != 1 else ''} read as {enc} (not UTF-8): "
            f"line{'s' if len(lines) != 1 else ''} {shown}; give --encoding NAME if the file is in one other encoding")


def read_text(path: Path, *, what: str = "results", max_bytes: int = MAX_FILE_BYTES, fallback: bool = True,
              encoding: Optional[str] = None) -> str:
    """The text of an input file: refused (ImportInputError naming the file, and the line where it can) when it
    is not a regular file, over `max_bytes`, holds a NUL, or (with `--encoding`) is not in that encoding. Without
    an encoding: UTF-8, a BOM dropped, each other line read as cp1252 and counted in a note (`fallback`)."""
    path = Path(path)
    options = _OPTIONS.get()
    encoding = encoding or (options.encoding if options is not None else None)
    data = _read_bounded(path, max_bytes, what)
    if encoding is None and data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"    # a BOM says so (Excel's "Unicode text")
    if encoding is not None:
        text = _decode_named(data, path, encoding)
    else:
        if data.startswith(codecs.BOM_UTF8):
            data = data[len(codecs.BOM_UTF8):]
        if fallback:
            text, lines, latin1 = _decode_lines(data, path)
            if lines and options is not None:
                options.notes.append(_fallback_note(path, lines, latin1))
        else:
            text = _decode_named(data, path, "utf-8")
    text = text[1:] if text.startswith("\ufeff") else text
    nul = text.find("\x00")
    if nul >= 0:
        line = text.count("\n", 0, nul) + 1
        hint = " (UTF-16 without its byte-order mark? give --encoding utf-16)" if text.count("\x00") * 3 > len(
            text) else " (a binary file or a torn write?)"
        raise ImportInputError(f"{path}: line {line}: a NUL character; no text file holds one{hint}: give the {what} "
                               "file as text")
    return text


def deepest_json_file(paths: list[Path]) -> str:
    """The file whose JSON (whole, or one record a line) nests too deeply to read (else every file given)."""

    for f in paths:
        try:
            text = read_text(Path(f))
        except ImportInputError:
            continue
        for part in [text] + text.splitlines():
            if part.lstrip().startswith(("[", "{")):
                try:
                    json.loads(part)
                except RecursionError:
                    return str(f)
                except ValueError:
                    continue
    return ", ".join(map(str, paths))


def parse_json(text: str, where: str) -> object:
    """JSON text as Python values; nesting deeper than the parser can follow (a hostile file: arrays within
    arrays thousands deep) is refused naming `where` (the file), never a RecursionError."""

    try:
        return json.loads(text)
    except RecursionError:
        raise ImportInputError(f"{where}: JSON nested too deeply to read (arrays or objects within each other "
                               "thousands deep); no tool writes its results so") from None
