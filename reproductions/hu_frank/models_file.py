"""The models file of `reproduce hu-frank2024 --data DIR --models FILE`: each model's path, family, size and
(optionally) training step, so that the paper's equations (1)-(4) can be fitted on a lab's own models.

Why a file and not flags: the paper's size axis is the models' nominal size and its random effects are by
family; neither can be read reliably from a checkpoint, so the user names them. YAML (safe-loaded) or CSV:

    models:                                # YAML                path,family,size,step,name   (CSV)
      - {path: ckpt/t5-a, family: t5, size: 60M}
      - {path: ckpt/run/step1000, family: mine, size: 1.2e6, step: 1000}

`size` is a number of parameters (a number, or with a K/M/B suffix); `step` a whole number >= 1 (the paper's
training axis is log10 of the step); `name` a label for tables and figures (default: the path's last part,
with the step). Every entry is checked before any model loads; errors name the file, the entry and the field.
"""
from __future__ import annotations

import csv
import io
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import yaml

from reproductions.common import ReproError
from stimuli.input_rules import ascii_int, name_problem
from stimuli.textfile import read_text_file as read_user_text

FIELDS = ("path", "family", "size", "step", "name")
MAX_MODELS = 1000  # entries in one models file (each is a model to load and score: the paper has 24)
MAX_FILE_BYTES = 2_000_000
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*([kKmMbBtT]?)\s*$")
_SUFFIX = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}


@dataclass(frozen=True)
class ModelEntry:
    path: str
    family: str
    size: float | None  # parameters; None = the loaded model's parameter count
    step: int | None = None  # training step of a checkpoint (a checkpoint series: same family and size)
    name: str = ""

    @property
    def label(self) -> str:
        if self.name:
            return self.name
        base = Path(self.path.rstrip("/")).name or self.path
        return base if self.step is None or f"{self.step}" in base else f"{base} step {self.step}"


def parse_size(value: object) -> float:
    """Parameters from 135000000, 1.35e8, '135M', '1.4B'; ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError
    if isinstance(value, (int, float)):
        v = float(value)
    else:
        m = _SIZE.match(str(value))
        if not m:
            raise ValueError
        v = float(m.group(1)) * _SUFFIX[m.group(2).lower()]
    if not v > 0 or v != v or v == float("inf"):
        raise ValueError
    return v


def _entry(where: str, raw: dict) -> ModelEntry:
    unknown = sorted(set(map(str, raw)) - set(FIELDS))
    if unknown:
        raise ReproError(f"{where}: unknown field(s) {', '.join(unknown)} (fields: {', '.join(FIELDS)})")
    path = raw.get("path")
    if path is None or not str(path).strip():
        raise ReproError(f"{where}.path: missing (the model's folder, file or name)")
    family = raw.get("family")
    if family is None or not str(family).strip():
        raise ReproError(f"{where}.family: missing (the model family: the paper's random effects are by family)")
    size = raw.get("size")
    if size is None or str(size).strip() == "":
        size_v = None
    else:
        try:
            size_v = parse_size(size)
        except ValueError:
            raise ReproError(f"{where}.size: {size!r} is not a number of parameters (e.g. 135000000, 1.35e8, 135M, "
                             "1.4B)") from None
    step = raw.get("step")
    if step is None or str(step).strip() == "":
        step_v = None
    else:
        step_v = ascii_int(step) if isinstance(step, (int, str)) else None
        if step_v is None or step_v < 1:
            raise ReproError(f"{where}.step: {step!r} is not a whole number of at least 1 (the training axis is log10 "
                             "of the step)")
    name = "" if raw.get("name") is None else str(raw.get("name")).strip()
    entry = ModelEntry(str(path).strip(), str(family).strip(), size_v, step_v, name)
    for what, value in (("family", entry.family), ("name", entry.label)):
        problem = name_problem(value)  # both are written into the tables (CSV opened in spreadsheets)
        if problem:
            raise ReproError(f"{where}.{what}: {problem}")
    return entry


def _check_count(p: Path, n: int) -> None:
    if n > MAX_MODELS:
        raise ReproError(f"{p}: more than {MAX_MODELS} models (each is loaded and scored; split the file)")


def read_models_file(path: Path) -> list[ModelEntry]:
    """The entries of a models file (YAML by its .yaml/.yml suffix, CSV otherwise), checked."""
    p = Path(path).expanduser()
    if not p.exists():
        raise ReproError(f"--models {path}: no such file")
    text = read_user_text(p, ReproError, "models", MAX_FILE_BYTES)  # BOM-tolerant (a spreadsheet's CSV)
    entries = []
    if p.suffix.lower() in (".yaml", ".yml"):
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ReproError(f"{p}: not valid YAML ({' '.join(str(exc).split())})") from None
        items = doc.get("models") if isinstance(doc, dict) else None
        if not isinstance(items, list) or not items:
            raise ReproError(f"{p}: expected a list under 'models:' (one entry per model)")
        _check_count(p, len(items))
        for i, raw in enumerate(items):
            if not isinstance(raw, dict):
                raise ReproError(f"{p}: models[{i}]: expected fields {', '.join(FIELDS)}, got {type(raw).__name__}")
            entries.append(_entry(f"{p}: models[{i}]", raw))
    else:
        reader = csv.DictReader(io.StringIO(text))
        missing = [f for f in ("path", "family") if f not in (reader.fieldnames or [])]
        if missing:
            raise ReproError(f"{p}: missing column(s) {', '.join(missing)} (columns: {', '.join(FIELDS)})")
        for line, raw in enumerate(reader, start=2):
            _check_count(p, line - 1)
            entries.append(_entry(f"{p} line {line}", {k: v for k, v in raw.items() if k is not None}))
        if not entries:
            raise ReproError(f"{p}: no models (one row per model)")
    counts = Counter(e.label for e in entries)  # linear: list.count per label was quadratic in the rows
    dup = sorted(x for x, k in counts.items() if k > 1)
    if dup:
        raise ReproError(f"{p}: model label(s) given twice: {', '.join(dup)} (give each entry its own name)")
    return entries
