"""Command-line option rules shared by every command, so `run-model` and `run-human` refuse the same things.

Each check returns the value or raises `OptionError` with a message naming the option; the CLI
turns it into one line and exit code 2 before any work starts (no model loaded, no window opened).
"""
from __future__ import annotations

import re
from pathlib import Path

_DEVICE = re.compile(r"^(cpu|auto|mps|cuda(:\d+)?)$")
DTYPES = ("float32", "bfloat16", "float16", "auto")
MAX_SESSION = 100_000


class OptionError(ValueError):
    """A command-line option that cannot work; the message names it."""


def at_least(name: str, value: int | None, low: int = 1, high: int | None = None) -> int | None:
    """Whole-number options: --trials, --session, --subjects, --batch-size, --max-new-tokens, ..."""
    if value is None:
        return None
    if value < low or (high is not None and value > high):
        rng = f"from {low} to {high}" if high is not None else f"{low} or more"
        raise OptionError(f"{name} must be {rng}, got {value}")
    return value


def batch_size(value: str | int) -> int | str:
    """--batch-size for every command that loads a model: a positive whole number, or `auto` (a token
    budget for the device)."""
    text = str(value).strip().lower()
    if text == "auto":
        return "auto"
    if not text.isdigit():
        raise OptionError(f"--batch-size must be a positive whole number or 'auto', not {value!r}")
    return at_least("--batch-size", int(text), 1, 65_536)  # type: ignore[return-value]


def session_number(value: int) -> int:
    return at_least("--session", value, 1, MAX_SESSION)  # type: ignore[return-value]


def trials_limit(value: int | None) -> int | None:
    return at_least("--trials", value, 1)


def subject_id(name: str, value: str) -> str:
    if not value or not value.isascii() or not value.isalnum():
        raise OptionError(f"{name} {value!r} must be letters and digits only (it becomes part of a Psych-DS file name)")
    return value


def device(value: str) -> str:
    if not _DEVICE.match(value):
        raise OptionError(f"--device must be cpu, cuda, cuda:N, mps or auto, got {value!r}")
    return value


def dtype(value: str) -> str:
    if value not in DTYPES:
        raise OptionError(f"--dtype must be one of {', '.join(DTYPES)}, got {value!r}")
    return value


def output_folder(name: str, path: Path) -> Path:
    """A folder to write into: it may not exist yet, but it may not be a file."""
    if path.exists() and not path.is_dir():
        raise OptionError(f"{name} {path} is a file, not a folder")
    for parent in path.parents:
        if parent.exists() and not parent.is_dir():
            raise OptionError(f"{name} {path}: {parent} is a file, not a folder")
    return path


def output_file(name: str, path: Path) -> Path:
    """A file to write: not a folder, and its folder not a file."""
    if path.is_dir():
        raise OptionError(f"{name} {path} is a folder; give a file name")
    for parent in path.parents:
        if parent.exists() and not parent.is_dir():
            raise OptionError(f"{name} {path}: {parent} is a file, not a folder")
    return path
