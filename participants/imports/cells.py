"""The one rule on the text of every imported trial, whatever reader made it, checked before anything is written.

- A spreadsheet formula (a cell starting with = + - @ tab or CR that is not a number) is **refused**, naming the
  file, line and field: the items file and the session tables are CSV files people open in a spreadsheet,
  where `=HYPERLINK(...)` would run, and no tool writes one as data (the CSV readers refuse it in any cell as
  they read, source_csv.py, with the same test `stimuli.input_rules.starts_like_formula`).
- A cell longer than MAX_CELL_CHARS is refused before any staging file exists (a 68 MB cell would otherwise
  pass into the items file and be refused by its loader, naming a temporary file).
- A participant id with a control character (a line break) is refused: it would forge lines in every message
  and listing that names the person; an id that looks like a path or a device is safe (the twinlab id keeps
  its letters and digits only, study.subject_id_for).
Markup (`<b>`, `<script>`) is kept as text: what prints it escapes it.
"""
from __future__ import annotations

import re
from typing import Iterator, Optional

from participants.imports.records import ImportInputError, ReadResult, SourceTrial
from stimuli.input_rules import starts_like_formula

MAX_CELL_CHARS = 1_000_000   # one cell of an imported trial (a sentence, a response, an original field)
TEXT_FIELDS = ("participant", "session", "item", "condition", "stimulus", "response", "expected", "feedback")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SIGNS_ONLY = re.compile(r"[+\-]+")

__all__ = ["check_cells", "is_formula", "MAX_CELL_CHARS", "shown", "printable"]


def shown(text: str, most: int = 40) -> str:
    """A value as a message shows it: bounded, control characters escaped (repr)."""
    return repr(text[:most]) + ("..." if len(text) > most else "")


def printable(text: str, most: int = 24) -> str:
    """A value as a listing prints it: its first `most` characters, control characters escaped (a line break in
    a cell never forges a line of the listing)."""
    return _CONTROL.sub(lambda c: repr(c.group())[1:-1], text[:most])


def _written_cells(t: SourceTrial) -> Iterator[tuple[str, str]]:
    """(field, text) of every value of the trial that becomes a cell of its own in a CSV the import writes."""
    for name in TEXT_FIELDS:
        value = getattr(t, name)
        if isinstance(value, str):
            yield name, value
    for name, value in t.factors.items():
        yield f"factor {name}", value
    for k, w in enumerate(t.words or ()):
        yield f"word {k + 1}", w


def is_formula(value: str) -> bool:
    """The one formula test of an import (every reader, every written cell): a spreadsheet would run it. A cell
    of signs only (`+` as a fixation cross, `-` as a word) runs nothing and stays."""
    text = value.strip()
    return bool(text) and starts_like_formula(value) and _SIGNS_ONLY.fullmatch(text) is None


def cell_problem(value: str) -> Optional[str]:
    """Why a written cell cannot be (None: it can)."""
    if len(value) > MAX_CELL_CHARS:
        return f"a cell of {len(value):,} characters; at most {MAX_CELL_CHARS:,} in one cell of an imported trial"
    if is_formula(value):
        return (f"{shown(value)} is a spreadsheet formula (a cell starting with = + - @ that is not a number); no "
                "tool writes one as data: remove it or export the sheet as values")
    return None


def check_cells(result: ReadResult) -> None:
    """Every trial's written cells and original fields (the rules above); ImportInputError naming file, line
    and field."""
    for t in result.trials:
        where = f"{t.source_file}: line {t.line}"
        for name, value in _written_cells(t):
            problem = cell_problem(value)
            if problem:
                raise ImportInputError(f"{where}, {name}: {problem}")
        for name, value in t.extra.items():
            if isinstance(value, str) and len(value) > MAX_CELL_CHARS:
                raise ImportInputError(f"{where}, field {shown(str(name))}: a cell of {len(value):,} characters; at "
                                       f"most {MAX_CELL_CHARS:,} in one cell of an imported trial")
        if _CONTROL.search(t.participant):
            raise ImportInputError(f"{where}: participant {shown(t.participant)} holds a control character (a line "
                                   "break or tab); a participant id is one line of text")
