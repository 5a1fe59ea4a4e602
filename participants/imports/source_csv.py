"""A results table another tool wrote (PsychoPy's CSV, a plain CSV/TSV), read once with every check that
is about the file itself, not its meaning: size, encoding, a torn last line, ragged rows, spreadsheet
formulas and markup in cells.

One place for these rules, so every reader of a CSV/TSV says the same thing about the same file
(`ImportInputError` naming the file, line and column). Formulas are refused (a cell such as
`=HYPERLINK(...)` would run when the imported table is opened in a spreadsheet, and no tool writes one
as data); markup (`<b>`, `<script>`) is imported as text and stated (`SourceTable.markup`): a jsPsych
or web study may show HTML, and the analysis escapes what it prints.
"""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from participants.imports.cells import is_formula
from participants.imports.records import MAX_FILE_BYTES, ImportInputError, check_file_size
from participants.imports.text_input import read_text

_MARKUP = re.compile(r"<\s*/?\s*[A-Za-z!][^<>]*>")
MARKUP_SHOWN = 5


@dataclass
class SourceTable:
    """A file's header and rows, each with its 1-based line number (the header is line 1)."""
    path: Path
    header: list[str]
    rows: list[tuple[int, dict[str, str]]]
    markup: list[str] = field(default_factory=list)  # "line L, column C (name)" of cells with markup, kept as text

    def column_number(self, name: str) -> int:
        return self.header.index(name) + 1


def delimiter_for(path: Path, first_line: str) -> str:
    """Tab for .tsv/.tab (or a header with tabs and no commas), else comma."""
    if path.suffix.lower() in (".tsv", ".tab"):
        return "\t"
    return "\t" if "\t" in first_line and "," not in first_line else ","


def read_source_table(path: Path, what: str) -> SourceTable:
    """Read and check one CSV/TSV results file (`what` names the format in messages, e.g. "PsychoPy CSV")."""
    path = Path(path)
    check_file_size(path)
    text = read_text(path, what=what, max_bytes=MAX_FILE_BYTES)
    if not text.strip():
        raise ImportInputError(f"{path}: empty file (no header line)")
    delim = delimiter_for(path, text.split("\n", 1)[0])
    header, rows = _parse(path, text, delim)
    table = SourceTable(path, header, rows)
    _check_cells(table)
    return table


def _parse(path: Path, text: str, delim: str) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim, strict=True)
    try:
        header = [h.strip() for h in next(reader)]
        doubled = sorted({h for h in header if header.count(h) > 1 and h})
        if doubled:
            raise ImportInputError(f"{path}: line 1: column(s) {', '.join(map(repr, doubled))} appear twice in the "
                                   "header")
        rows: list[tuple[int, dict[str, str]]] = []
        start = reader.line_num + 1
        for cells in reader:
            line, start = start, reader.line_num + 1
            if len(cells) > len(header):
                raise ImportInputError(f"{path}: line {line}: {len(cells)} cells but the header has {len(header)} "
                                       f"columns (a stray {'tab' if delim == chr(9) else 'comma'}?)")
            if len(cells) < len(header) and any(c.strip() for c in cells):
                torn = reader.line_num == _last_line(text) and not text.endswith(("\n", "\r"))
                raise ImportInputError(
                    f"{path}: line {line}: {len(cells)} of {len(header)} cells"
                    + ("; the last line is cut short (no line end): the file was not completely written" if torn
                       else " (a row with cells missing)"))
            rows.append((line, {h: (cells[k] if k < len(cells) else "") for k, h in enumerate(header)}))
    except csv.Error as exc:
        raise ImportInputError(f"{path}: line {reader.line_num}: not readable as CSV/TSV ({exc}); "
                               "a quoted cell without its closing quote is a torn or damaged file") from None
    return header, rows


def _last_line(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _check_cells(table: SourceTable) -> None:
    """Refuse a spreadsheet formula; note markup (kept as text)."""
    for line, row in table.rows:
        for name, value in row.items():
            if not value:
                continue
            if is_formula(value):
                raise ImportInputError(
                    f"{table.path}: line {line}, column {table.column_number(name)} ({name}): {value[:40]!r} is a "
                    "spreadsheet formula (a cell starting with = + - @ that is not a number); no tool writes one "
                    "as data: remove it or export the sheet as values")
            if _MARKUP.search(value):
                table.markup.append(f"line {line}, column {table.column_number(name)} ({name})")


def require_columns(table: SourceTable, names: dict[str, str | None]) -> None:
    """Each mapped field's column must be in the header: else the error names the field, the column and the
    file's columns (`names`: mapping field -> column, None where unmapped)."""
    for fld, col in names.items():
        if col and col not in table.header:
            shown = ", ".join(table.header[:40]) + (" ..." if len(table.header) > 40 else "")
            raise ImportInputError(f"{table.path}: line 1: the mapping's {fld} names column {col!r}, which this file "
                                   f"does not have; its columns: {shown}")
