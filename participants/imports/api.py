"""The Python API of `twinlab import psychopy|jspsych|pcibex|table` (docs/import.md).

    from participants.imports.api import import_study
    report = import_study("psychopy", ["data/"], "map.yaml", "sessions/", spec_out="my_study.yaml")
    report.trials, report.excluded, report.bad_trials, report.sessions, report.spec_hash

`mapping`: a path to a MAP.yaml, a dict of the same fields, a `Mapping`, or None (the tool's defaults).
Bad input raises `ImportInputError` (the message names the file, line and column) before anything is
written; an argument of the wrong type raises `ImportArgumentError` (both an ImportInputError and a
TypeError) naming the argument; `show_map` returns the text `--show-map` prints and writes nothing.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional, Union

from participants.imports.mapping import mapping_from_dict
from participants.imports.pipeline import BAD_TRIALS, ImportReport, prepare, reader_for, resolve_mapping, run_import
from participants.imports.records import ImportArgumentError, ImportInputError, Mapping
from participants.imports.registry import tool_names
from participants.imports.show_map import show_map_text

MappingLike = Union[None, str, Path, dict, Mapping]

__all__ = ["import_study", "show_map", "ImportReport", "ImportInputError", "ImportArgumentError", "Mapping"]


def as_mapping(tool: str, mapping: MappingLike) -> Optional[Mapping]:
    if mapping is None or isinstance(mapping, Mapping):
        return mapping
    if isinstance(mapping, dict):
        _, defaults = reader_for(tool)
        return mapping_from_dict(mapping, defaults())
    if isinstance(mapping, (str, os.PathLike)):
        return resolve_mapping(tool, Path(mapping))
    raise ImportArgumentError(f"mapping: a MAP.yaml path, a dict, a Mapping or None, got {type(mapping).__name__}")


def _path(name: str, value: Any) -> Path:
    if isinstance(value, (str, os.PathLike)) and str(value):
        return Path(value)
    raise ImportArgumentError(f"{name}: a path (str or Path), got {type(value).__name__} {str(value)[:40]!r}")


def _paths(value: Any) -> list[Path]:
    if isinstance(value, (str, os.PathLike)):
        raise ImportArgumentError(f"paths: a list of files or folders (e.g. [{str(value)[:40]!r}]), got one "
                                  f"{type(value).__name__}")
    if not isinstance(value, (list, tuple)) or not value:
        raise ImportArgumentError(f"paths: a non-empty list of files or folders, got {type(value).__name__}")
    return [_path(f"paths[{k}]", p) for k, p in enumerate(value)]


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):   # force="no" is a non-empty string: never read as true
        raise ImportArgumentError(f"{name}: True or False, got {type(value).__name__} {str(value)[:20]!r}")
    return value


def _choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ImportArgumentError(f"{name}: one of {', '.join(map(repr, choices))}, got {str(value)[:20]!r}")
    return value


def _text(name: str, value: Any) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value
    raise ImportArgumentError(f"{name}: a text or None, got {type(value).__name__}")


def _tool(value: Any) -> str:
    return _choice("tool", value, tool_names())


def import_study(tool: str, paths: list[Any], mapping: MappingLike, out: Any, spec_out: Any = None,
                 force: bool = False, add: bool = False, encoding: Optional[str] = None,
                 bad_trials: str = "exclude") -> ImportReport:
    """Import a study's files as twinlab sessions under `out` (and the spec read from them to `spec_out`).
    `encoding`: the files' one encoding (None: UTF-8, each other line read as cp1252 and noted); `bad_trials`:
    "exclude" (a trial with a broken own value is excluded, counted in `report.bad_trials`) or "refuse"."""
    tool, files, out_path = _tool(tool), _paths(paths), _path("out", out)
    spec = None if spec_out is None else _path("spec_out", spec_out)
    force, add = _flag("force", force), _flag("add", add)
    enc, bad = _text("encoding", encoding), _choice("bad_trials", bad_trials, BAD_TRIALS)
    return run_import(tool, files, as_mapping(tool, mapping), out_path, spec_out=spec, force=force, add=add,
                      encoding=enc, bad_trials=bad)


def show_map(tool: str, paths: list[Any], mapping: MappingLike = None, encoding: Optional[str] = None,
             bad_trials: str = "exclude") -> str:
    """The text `--show-map` prints: what the import would make of the files, with counts and where each value
    of the mapping came from; where the import would stop, the last line says why."""

    tool, files = _tool(tool), _paths(paths)
    enc, bad = _text("encoding", encoding), _choice("bad_trials", bad_trials, BAD_TRIALS)
    m = as_mapping(tool, mapping)
    return show_map_text(tool, m, prepare(tool, files, m, encoding=enc, bad_trials=bad, keep_refusal=True))
