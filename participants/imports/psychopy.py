"""PsychoPy Builder's trial-by-trial CSV (one file per participant) -> SourceTrial records.

What Builder writes (checked on files PsychoPy 2026.2.5 wrote: tests/support/psychopy_builder_study.py):
one row per iteration of a loop, and one row per routine outside a loop (instruction pages), in the order
the participant went through them. Each loop `L` has `L.thisN` (0-based, over the loop's run),
`L.thisTrialN`, `L.thisRepN` and `L.thisIndex` (the conditions file's row); the conditions file's columns
come first; a keyboard `key_resp` gives `key_resp.keys` ('None' when nothing was pressed), `key_resp.rt`
(seconds) and `key_resp.corr` (1/0 against its correct answer); newer versions also write the loop-prefixed
copies (`trials.key_resp.keys`). The experiment-info fields (`participant`, `session`, ...) and `date`,
`expName`, `psychopyVersion`, `frameRate` are on every row. Rows outside every loop (instructions) and
blank rows are excluded with the reason; every original cell of a trial is kept in `extra`.
"""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from participants.imports.kinds import default_kind
from participants.imports.records import Excluded, ImportInputError, Mapping, ReadResult, SourceTrial
from participants.imports.source_csv import SourceTable, read_source_table, require_columns

TOOL = "psychopy"
_LOOP = re.compile(r"^(.+)\.thisN$")
# what Builder itself writes: a file with none of these is not a Builder data file
BUILDER_COLUMNS = ("psychopyVersion", "expName", "frameRate", "date")
NO_RESPONSE = ("", "None", "[]")
# conditions-file columns a Builder study commonly names; the first present is the default (--show-map says)
CANDIDATES = {"item": ("item", "item_id", "itemID", "Item"),
              "condition": ("condition", "cond", "Condition", "conditions"),
              "stimulus": ("sentence", "stimulus", "stim", "text", "word", "target"),
              "expected": ("corrAns", "correct_answer", "corr_ans", "correctAns", "answer")}


def default_mapping() -> Mapping:
    """An unedited Builder study: the keyboard `key_resp`, the info dialog's participant and session."""
    return Mapping(participant="participant", session="session", item="item", condition="condition",
                   task=default_kind(), stimulus="sentence", response="key_resp.keys", expected="corrAns",
                   correct="key_resp.corr", rt="key_resp.rt", rt_unit="s", practice_values=("practice",),
                   feedback="feedback.started")


def effective_mapping(header: list[str], mapping: Mapping | None) -> Mapping:
    """The mapping for one file: without one, the defaults with each field's first candidate column the
    file has (a default column the file lacks is dropped); with one, as given (require_columns checks it)."""
    if mapping is not None:  # a default column the file lacks is left unmapped; a changed one must exist
        d = default_mapping()
        return dataclasses.replace(mapping, **{f: None for f in _FIELDS if getattr(mapping, f) == getattr(d, f)
                                               and getattr(mapping, f) not in header})
    m = default_mapping()
    changes: dict[str, str | None] = {}
    for fld in ("participant", "session", "item", "condition", "stimulus", "response", "expected", "correct", "rt",
                "feedback"):
        options = CANDIDATES.get(fld, (getattr(m, fld),))
        changes[fld] = next((c for c in options if c in header), None)
    return dataclasses.replace(m, **changes)


def read_psychopy(paths: list[Path], mapping: Mapping | None) -> ReadResult:
    """Every file's trials and excluded rows (ImportInputError for a file that is not Builder's or breaks
    the mapping, naming the file, line and column)."""
    result = ReadResult()
    for path in paths:
        table = read_source_table(Path(path), "PsychoPy CSV")
        _check_builder(table)
        m = effective_mapping(table.header, mapping)
        require_columns(table, {k: v for k, v in _columns(m).items() if v})
        _read_file(table, m, result)
        result.notes += [f"{table.path.name}: {where}: markup kept as text" for where in table.markup]
    return result


_FIELDS = ("participant", "session", "item", "condition", "stimulus", "response", "expected", "correct", "rt",
           "order", "practice", "feedback")


def _columns(m: Mapping) -> dict[str, str | None]:
    cols = {f: getattr(m, f) for f in ("participant", "session", "item", "condition", "stimulus", "response",
                                       "expected", "correct", "rt", "order", "practice", "feedback")}
    cols.update({f"factors.{k}": v for k, v in m.factors.items()})
    return cols


def _check_builder(table: SourceTable) -> None:
    loops = [h for h in table.header if _LOOP.match(h)]
    have = [c for c in BUILDER_COLUMNS if c in table.header]
    if not loops or len(have) < 2:
        from participants.imports.sniff import other_tool

        guess = other_tool(table.header)
        raise ImportInputError(
            f"{table.path}: line 1: not a PsychoPy Builder data file (Builder writes loop columns such as "
            f"trials.thisN and {', '.join(BUILDER_COLUMNS)}; this file has "
            f"{'no loop column' if not loops else 'only ' + (', '.join(have) or 'none of them')})"
            + (f"; it looks like a {guess} file: use `twinlab import {guess}`" if guess else ""))


def loop_of(row: dict[str, str], loops: list[str]) -> str | None:
    """The loop this row is an iteration of: the innermost (last in the header) loop with a thisN."""
    inside = [lp for lp in loops if row.get(f"{lp}.thisN", "") != ""]
    return inside[-1] if inside else None


def _read_file(table: SourceTable, m: Mapping, result: ReadResult) -> None:
    name = str(table.path)
    loops = [_LOOP.match(h).group(1) for h in table.header if _LOOP.match(h)]  # type: ignore[union-attr]
    result.rows_read[name] = len(table.rows)
    versions = {r.get("psychopyVersion", "") for _, r in table.rows} - {""}
    result.tool_version[name] = sorted(versions)[0] if len(versions) == 1 else ", ".join(sorted(versions))
    last_n: dict[str, int] = {}
    who: tuple[str, str] | None = None
    order = 0
    for line, row in table.rows:
        if not any(v.strip() for v in row.values()):
            result.excluded.append(Excluded(name, line, "blank row (Builder writes one e.g. after a loop)"))
            continue
        loop = loop_of(row, loops)
        if loop is None:
            result.excluded.append(Excluded(name, line, "not a loop iteration (a routine outside every loop, e.g. "
                                                        "instructions)"))
            continue
        _check_order(table, line, row, loop, last_n)
        trial = _trial(table, line, row, loop, m, order)
        if who is None:
            who = (trial.participant, trial.session)
        elif (trial.participant, trial.session) != who:
            raise ImportInputError(f"{name}: line {line}, column {table.column_number(m.participant)} "
                                   f"({m.participant}): participant {trial.participant!r} session {trial.session!r} "
                                   f"in the file of {who[0]!r} session {who[1]!r} (Builder writes one file per "
                                   "participant and session)")
        result.trials.append(trial)
        order += 1


def _check_order(table: SourceTable, line: int, row: dict[str, str], loop: str, last_n: dict[str, int]) -> None:
    """A loop's thisN counts 0, 1, 2, ... in the file (0 again when the loop runs anew); anything else
    means rows out of order (a sorted or edited file)."""
    col = f"{loop}.thisN"
    from stimuli.input_rules import ascii_int

    n = ascii_int(row[col])
    if n is None:
        raise ImportInputError(f"{table.path}: line {line}, column {table.column_number(col)} ({col}): "
                               f"{row[col][:20]!r} is not a whole number")
    prev = last_n.get(loop)
    if n != 0 and n != (prev if prev is not None else -1) + 1:
        raise ImportInputError(f"{table.path}: line {line}, column {table.column_number(col)} ({col}): rows out of "
                               f"order: {loop} iteration {n} follows iteration {prev if prev is not None else 'none'} "
                               "(Builder writes each iteration in turn; was the file sorted?)")
    last_n[loop] = n


def _cell(row: dict[str, str], col: str | None) -> str | None:
    if not col:
        return None
    v = row.get(col, "")
    return v if v != "" else None


def _trial(table: SourceTable, line: int, row: dict[str, str], loop: str, m: Mapping, order: int) -> SourceTrial:
    from participants.imports.values import bool_cell, rt_ms

    practice = (row.get(m.practice, "") in m.practice_values) if m.practice else loop in m.practice_values
    response = _cell(row, m.response)
    return SourceTrial(
        tool=TOOL, source_file=str(table.path), line=line,
        participant=(_cell(row, m.participant) or "").strip(), session=(_cell(row, m.session) or "").strip(),
        order=order, phase="practice" if practice else "test",
        item=_cell(row, m.item), condition=_cell(row, m.condition),
        factors={k: row.get(c, "") for k, c in m.factors.items()}, task=m.task, stimulus=_cell(row, m.stimulus),
        response=None if response in NO_RESPONSE else response, expected=_cell(row, m.expected),
        correct=bool_cell(table, line, row, m.correct), rt_ms=rt_ms(table, line, row, m.rt, m.rt_unit),
        feedback=_cell(row, m.feedback), extra={**{k: v for k, v in row.items() if v != ""}, "psychopy.loop": loop})
