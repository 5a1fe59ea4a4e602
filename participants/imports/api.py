"""The Python API of `twinlab import psychopy|jspsych|pcibex|table` (docs/import.md).

    from participants.imports.api import import_study
    report = import_study("psychopy", ["data/"], "map.yaml", "sessions/", spec_out="my_study.yaml")
    report.trials, report.excluded, report.sessions, report.spec_hash

`mapping`: a path to a MAP.yaml, a dict of the same fields, a `Mapping`, or None (the tool's defaults).
Bad input raises `ImportInputError` (the message names the file, line and column) before anything is
written; `show_map` returns the text `--show-map` prints and writes nothing.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Union

from participants.imports.pipeline import ImportReport, read_all, reader_for, resolve_mapping, run_import
from participants.imports.records import ImportInputError, Mapping

MappingLike = Union[None, str, Path, dict, Mapping]

__all__ = ["import_study", "show_map", "ImportReport", "ImportInputError", "Mapping"]


def as_mapping(tool: str, mapping: MappingLike) -> Optional[Mapping]:
    if mapping is None or isinstance(mapping, Mapping):
        return mapping
    if isinstance(mapping, dict):
        from participants.imports.mapping import mapping_from_dict

        _, defaults = reader_for(tool)
        return mapping_from_dict(mapping, defaults())
    return resolve_mapping(tool, Path(mapping))


def import_study(tool: str, paths: list[Any], mapping: MappingLike, out: Any, spec_out: Any = None,
                 force: bool = False, add: bool = False) -> ImportReport:
    """Import a study's files as twinlab sessions under `out` (and the spec read from them to `spec_out`)."""
    return run_import(tool, [Path(p) for p in paths], as_mapping(tool, mapping), Path(out),
                      spec_out=None if spec_out is None else Path(spec_out), force=force, add=add)


def show_map(tool: str, paths: list[Any], mapping: MappingLike = None) -> str:
    from participants.imports.show_map import show_map_text

    m = as_mapping(tool, mapping)
    files, result = read_all(tool, [Path(p) for p in paths], m)
    return show_map_text(tool, files, m, result)
