"""A plain CSV/TSV results table (one row per trial, any tool or a spreadsheet) -> SourceTrial records.

The mapping names the columns (`--map`); the defaults are the plain names (participant, item, condition,
sentence, response, answer, rt in ms). A default column the file lacks is left unmapped; a column the
mapping itself names must exist. With an `order` column the rows must come in that order for each
participant (else the error names the line); without one, the file's order is the order. Blank rows are
excluded with the reason; every original cell is kept in `extra`.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from participants.imports.kinds import default_kind
from participants.imports.records import BadTrialValue, Excluded, ImportInputError, Mapping, ReadResult, SourceTrial
from participants.imports.source_csv import SourceTable, read_source_table, require_columns
from participants.imports.values import bool_cell, rt_ms
from stimuli.input_rules import ascii_int

TOOL = "table"
NO_RESPONSE = ("", "None", "none", "NA", "nan")
_FIELDS = ("participant", "session", "item", "condition", "stimulus", "response", "expected", "correct", "rt",
           "order", "practice", "feedback")


def default_mapping() -> Mapping:
    return Mapping(participant="participant", session="session", item="item", condition="condition",
                   task=default_kind(), stimulus="sentence", response="response", expected="answer", correct="correct",
                   rt="rt", rt_unit="ms", order=None, practice="phase", practice_values=("practice",),
                   feedback="feedback")


def effective_mapping(header: list[str], mapping: Mapping | None) -> Mapping:
    """The defaults' columns where this file has them (a default column it lacks is left unmapped); a column
    the mapping changed from the default is kept, and must exist (require_columns)."""
    d = default_mapping()
    m = mapping or d
    return dataclasses.replace(m, **{f: None for f in _FIELDS
                                     if getattr(m, f) == getattr(d, f) and getattr(m, f) not in header})


def read_table(paths: list[Path], mapping: Mapping | None) -> ReadResult:
    result = ReadResult()
    for path in paths:
        table = read_source_table(Path(path), "CSV/TSV results")
        m = effective_mapping(table.header, mapping)
        if not m.participant:
            raise ImportInputError(f"{table.path}: line 1: no participant column (the default is `participant`; "
                                   "name yours with `participant:` in --map)")
        cols = {f: getattr(m, f) for f in _FIELDS}
        cols.update({f"factors.{k}": v for k, v in m.factors.items()})
        require_columns(table, {k: v for k, v in cols.items() if v})
        result.mappings[str(table.path)] = m
        _read_file(table, m, result)
        result.notes += [f"{table.path.name}: {where}: markup kept as text" for where in table.markup]
    return result


def _read_file(table: SourceTable, m: Mapping, result: ReadResult) -> None:
    name = str(table.path)
    result.rows_read[name] = len(table.rows)
    result.tool_version[name] = ""
    orders: dict[tuple[str, str], int] = {}
    last: dict[tuple[str, str], tuple[int, int]] = {}  # person -> (order value, line)
    for line, row in table.rows:
        if not any(v.strip() for v in row.values()):
            result.excluded.append(Excluded(name, line, "blank row"))
            continue
        who = (row[m.participant].strip(), row.get(m.session, "").strip() if m.session else "")
        if not who[0]:
            raise ImportInputError(f"{name}: line {line}, column {table.column_number(m.participant)} "
                                   f"({m.participant}): empty participant")
        if m.order:
            _check_order(table, line, row, m.order, last, who)
        response = row.get(m.response, "") if m.response else ""
        practice = bool(m.practice) and row.get(m.practice, "").strip() in m.practice_values
        try:   # the trial's own values: a broken one excludes the trial (--bad-trials)
            correct = bool_cell(table, line, row, m.correct)
            rt = rt_ms(table, line, row, m.rt, m.rt_unit)
        except BadTrialValue as exc:
            result.excluded.append(Excluded(name, line, exc.reason, bad=True))
            continue
        result.trials.append(SourceTrial(
            tool=TOOL, source_file=name, line=line, participant=who[0], session=who[1],
            order=orders.get(who, 0), phase="practice" if practice else "test",
            item=_cell(row, m.item), condition=_cell(row, m.condition),
            factors={k: row.get(c, "").strip() for k, c in m.factors.items()}, task=m.task,
            stimulus=_cell(row, m.stimulus), response=None if response.strip() in NO_RESPONSE else response.strip(),
            expected=_cell(row, m.expected), correct=correct, rt_ms=rt, feedback=_cell(row, m.feedback),
            extra={k: v for k, v in row.items() if v != ""}))
        orders[who] = orders.get(who, 0) + 1


def _cell(row: dict[str, str], col: str | None) -> str | None:
    v = row.get(col, "").strip() if col else ""
    return v or None


def _check_order(table: SourceTable, line: int, row: dict[str, str], col: str,
                 last: dict[tuple[str, str], tuple[int, int]], who: tuple[str, str]) -> None:
    """The order column, a whole number, increases within each participant's rows."""

    n = ascii_int(row.get(col, ""))
    where = f"{table.path}: line {line}, column {table.column_number(col)} ({col})"
    if n is None:
        raise ImportInputError(f"{where}: {row.get(col, '')[:20]!r} is not a whole number")
    prev = last.get(who)
    if prev is not None and n <= prev[0]:
        raise ImportInputError(f"{where}: rows out of order: participant {who[0]!r} has {col} {n} after {prev[0]} "
                               f"(line {prev[1]}); sort the file by participant and {col}, or map no order")
    last[who] = (n, line)
