"""The trial-table formats beyond twinlab's sessions: the released tables the registered studies read
(`FRAME_FORMATS` in a study's `__init__`: a name for `analyze --format`, the columns that recognise it, the
study's module and its reader). Read from the studies' declarations: a study's reader module is imported only
when a file of its format is read."""
from __future__ import annotations

from typing import Callable

from experiments.studies import declared, study_part


def frame_formats() -> dict[str, tuple[str, dict]]:
    """format name -> (study, its declaration), in the studies' listing order."""
    return {f["name"]: (study, f) for study, formats in declared("FRAME_FORMATS").items() for f in formats}


def frame_format_names() -> tuple[str, ...]:
    return tuple(frame_formats())


def sniff_study_format(columns) -> str | None:
    """The first study format whose recognising columns the table has, else None."""
    cols = set(columns)
    return next((name for name, (_, f) in frame_formats().items() if set(f["columns"]) <= cols), None)


def frame_reader(name: str) -> Callable:
    """The study's reader of format `name`: reader(path, training_blocks=..., keep_outliers=...) ->
    (frame, LoadInfo); its module is imported when first asked."""
    study, f = frame_formats()[name]
    return getattr(study_part(study, f["module"]), f["reader"])
