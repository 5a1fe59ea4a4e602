"""Command-line option rules shared by every command, so `run-model` and `run-human` refuse the same things.

Each check returns the value or raises `OptionError` with a message naming the option; the CLI
turns it into one line and exit code 2 before any work starts (no model loaded, no window opened).
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from stimuli.input_rules import ascii_int
from stimuli.textfile import regular_file_problem

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


def session_number(value: int) -> int:
    return at_least("--session", value, 1, MAX_SESSION)  # type: ignore[return-value]


def trials_limit(value: int | None) -> int | None:
    return at_least("--trials", value, 1)


def subject_id(name: str, value: str) -> str:
    if not value or not value.isascii() or not value.isalnum():
        raise OptionError(f"{name} {value!r} must be letters and digits only (it becomes part of a Psych-DS file name)")
    return value


def device(value: str, name: str = "--device") -> str:
    if not isinstance(value, str) or not _DEVICE.match(value):
        raise OptionError(f"{name} must be cpu, cuda, cuda:N, mps or auto, got {value!r}")
    return value


def dtype(value: str, name: str = "--dtype") -> str:
    if value not in DTYPES:
        raise OptionError(f"{name} must be one of {', '.join(DTYPES)}, got {value!r}")
    return value


def batch_size(value: int | str, name: str = "--batch-size") -> int | str:
    """A positive whole number of rows per forward pass, or 'auto' (a token budget for the device)."""
    if isinstance(value, str) and value.lower() == "auto":
        return "auto"
    if isinstance(value, str) and ascii_int(value, strip=False) is not None:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise OptionError(f"{name} must be a positive whole number or 'auto', not {value!r}")
    return at_least(name, value, 1, 65_536)  # type: ignore[return-value]


def threads(value: int | None, name: str = "--threads") -> int | None:
    """CPU threads for torch; 0 or None: torch's default."""
    return at_least(name, value, 0, 1024)


_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def label(name: str, value: str) -> str:
    """A name that becomes one path component (a sweep's model folder, a reproduction's arm):
    no folder separators, no `..`, not empty, not hidden."""
    if not isinstance(value, str) or not _LABEL.match(value) or ".." in value:
        raise OptionError(f"{name} {value!r} must be one folder name: letters, digits, '.', '_' or '-', "
                          "starting with a letter or digit, without '/' or '..'")
    return value


def path_component(name: str, value: str) -> str:
    """A name derived from another (a model's folder name) that becomes one path component: it
    may hold any of its characters but no folder separator and may not be `.` or `..`."""
    if not value or "/" in value or "\\" in value or "\0" in value or value in (".", ".."):
        raise OptionError(f"{name} {value!r} cannot be a folder name (it would write outside the output folder)")
    return value


def unique_labels(name: str, labels: list[str], hint: str = "give each its own label") -> None:
    """Labels that become sibling folders must differ (else two runs would share one folder)."""
    seen: dict[str, int] = {}
    for k, lab in enumerate(labels):
        key = lab.casefold()  # case-insensitive file systems would merge them
        if key in seen:
            raise OptionError(f"{name}: entries {seen[key]} and {k} both write to {lab!r}; {hint}")
        seen[key] = k


_WEIGHTS = ("*.safetensors", "*.bin", "*.gguf", "*.safetensors.index.json", "*.bin.index.json", "*.pt", "*.pth")


def model_path(name: str, value: str | None) -> str | None:
    """A model that can be found without loading it: the bundled default, a .gguf file, a folder
    with config.json *and* weights, or a hub id (left to the loader, which looks in the local cache).

    Checked before any work so a model folder without weights says so, instead of a tokenizer
    error deep inside transformers, and a sweep's second model fails before the first one runs.
    """

    text = (value or "").strip()
    if text.lower() in ("", "default", "smollm2", "smollm2-135m", "smollm2-135m-instruct", "smollm2-135m-instruct"):
        return value
    p = Path(text).expanduser()
    if p.suffix.lower() == ".gguf":
        problem = regular_file_problem(p, "model")
        if problem:
            raise OptionError(f"{name} {text}: {problem}")
        return value
    if p.is_dir():
        if not (p / "config.json").is_file():
            if len(list(p.glob("*.gguf"))) == 1:
                return value
            raise OptionError(f"{name} {text}: the folder has no config.json; it is not a saved transformers model "
                              "(give the folder that holds config.json and the weights, or a .gguf file)")
        if not any(any(p.glob(pattern)) for pattern in _WEIGHTS):
            raise OptionError(f"{name} {text}: the folder has config.json but no weights (*.safetensors or *.bin); "
                              "was the model saved completely?")
        return value
    if p.exists():
        raise OptionError(f"{name} {text}: is a file but not a .gguf model; give a .gguf file, a saved "
                          "transformers folder or a Hugging Face id in the local cache")
    if text.startswith((".", "/", "~")) or text.count("/") > 1:
        raise OptionError(f"{name}: model path '{text}' does not exist")
    return value


def output_folder(name: str, path: Path) -> Path:
    """A folder to write into: it may not exist yet, but it may not be a file, and it (or the
    nearest folder that exists above it) must be writable."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise OptionError(f"{name} {path} is a file, not a folder")
    for parent in path.parents:
        if parent.exists() and not parent.is_dir():
            raise OptionError(f"{name} {path}: {parent} is a file, not a folder")
    _writable(name, path)
    return path


def _writable(name: str, path: Path, shown: Path | None = None) -> None:
    """The folder `path` (or the nearest existing folder above it, where it would be created) can
    be written: checked before work starts, not found out at the first row."""

    here = Path(os.path.abspath(path))
    while not here.exists() and here != here.parent:
        here = here.parent
    if here.is_dir() and not os.access(here, os.W_OK | os.X_OK):
        shown = shown or path
        where = " " if here == Path(os.path.abspath(shown)) else f": {here} "
        raise OptionError(f"{name} {shown}{where}is not writable (read-only folder or file system)")


def output_file(name: str, path: Path) -> Path:
    """A file to write: not a folder, its folder not a file, and that folder writable."""
    path = Path(path)
    if path.is_dir():
        raise OptionError(f"{name} {path} is a folder; give a file name")
    for parent in path.parents:
        if parent.exists() and not parent.is_dir():
            raise OptionError(f"{name} {path}: {parent} is a file, not a folder")
    _writable(name, path.parent, shown=path)
    return path


def cli_name(field: str) -> str:
    return "--" + field.replace("_", "-")
