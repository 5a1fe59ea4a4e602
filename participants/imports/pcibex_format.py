"""The PCIbex/Ibex results file as Ibex's server.py writes it: `#` comment blocks name the columns of the rows
below them, in one of three styles, and every submission starts with a "# Results on ..." block.

- "# Columns below this comment are as follows:" then "# 1. Name." lines: one format for the rows below;
- "# The lines below this comment are in groups of K." then "# Line i:" / "#     Col. j: Name." lines: the
  rows below cycle through K formats;
- "# ...First 7... [8] Name -- [9] Name" (SIMPLE_RESULTS_FILE_COMMENTS): the format of the next row only.

Values are joined by commas (a comma inside a value is written %2C); nothing is quoted.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from participants.imports.jspsych_files import MISSING, where
from participants.imports.records import ImportInputError

FIRST_SEVEN = ("Time results were received", "MD5 hash of participant's IP address", "Controller name",
               "Item number", "Element number", "Type", "Group")
NUMBERED = re.compile(r"^#\s*(\d+)\.\s(.*)$")
GROUP_COL = re.compile(r"^#\s+Col\.\s*(\d+):\s(.*)$")
GROUP_LINE = re.compile(r"^#\s*Line\s+(\d+):\s*$")
GROUPS = re.compile(r"^#\s*The lines below this comment are in groups of (\d+)\.")
SIMPLE = re.compile(r"\[(\d+)\]\s(.*?)(?=\s--\s\[\d+\]|$)")
DESIGN = re.compile(r"^#\s*Design number was (?:non-)?random\s*=\s*(\S+)")
NULLS = MISSING + ("NULL", "None", "NA", "undefined")   # what Ibex and PennController write for "no value"


def column_name(text: str) -> str:
    """A header's column name without the period server.py adds (ensure_period)."""
    text = text.strip()
    return text[:-1] if text.endswith(".") else text


@dataclass
class Row:
    line: int
    submission: int             # 0-based "# Results on" block (-1 before any)
    design: str                 # "Design number was non-random = N" of that submission ("" unknown)
    fields: dict[str, str]      # column name -> value, as written


@dataclass
class _State:
    formats: list[list[str]] = field(default_factory=list)   # the cycle of formats now in force
    cycle: int = 0                                           # rows read under them
    pending: list[str] = field(default_factory=list)         # the header being read
    groups: list[list[str]] = field(default_factory=list)
    mode: str = ""                                           # "columns" | "groups" | ""
    once: list[str] | None = None                            # a SIMPLE header: the next row only
    submission: int = -1
    design: str = ""


def parse(path: Path, text: str) -> list[Row]:
    """Every data row with its columns named by the header in force; refuses rows no header names."""
    state, rows = _State(), []
    lines = text.split("\n")
    last = len(lines) - (1 if lines and lines[-1] == "" else 0)
    for n, raw in enumerate(lines[:last], start=1):
        line = raw.rstrip("\r")
        if line.startswith("#"):
            _comment(line, state)
            continue
        _close_header(state)
        if not line.strip():
            continue
        rows.append(_row(path, n, line, state, torn_possible=n == last))
    return rows


def _comment(line: str, st: _State) -> None:
    if line.startswith("# Results on"):
        _close_header(st)
        st.submission, st.design, st.formats = st.submission + 1, "", []
    elif DESIGN.match(line):
        st.design = DESIGN.match(line).group(1)
    elif line.startswith("# Columns below this comment"):
        _close_header(st)
        st.mode, st.pending = "columns", []
    elif GROUPS.match(line):
        _close_header(st)
        st.mode, st.groups = "groups", []
    elif st.mode == "groups" and GROUP_LINE.match(line):
        st.groups.append([])
    elif st.mode == "groups" and GROUP_COL.match(line) and st.groups:
        st.groups[-1].append(column_name(GROUP_COL.match(line).group(2)))
    elif st.mode == "columns" and NUMBERED.match(line):
        st.pending.append(column_name(NUMBERED.match(line).group(2)))
    elif line.startswith("# ...First 7..."):
        st.once = list(FIRST_SEVEN) + [column_name(m.group(2)) for m in SIMPLE.finditer(line)]


def _close_header(st: _State) -> None:
    if st.mode == "columns" and st.pending:
        st.formats, st.cycle = [st.pending], 0
    elif st.mode == "groups" and st.groups:
        st.formats, st.cycle = st.groups, 0
    st.mode, st.pending, st.groups = "", [], []


def _row(path: Path, n: int, line: str, st: _State, torn_possible: bool) -> Row:
    if st.once is not None:
        names, st.once = st.once, None
    elif st.formats:
        names = st.formats[st.cycle % len(st.formats)]
        st.cycle += 1
    else:
        hint = " (a jsPsych file: use `twinlab import jspsych`)" if "trial_type" in line else ""
        raise ImportInputError(f"{where(path, n)}: a results row before any '# Columns below this comment' "
                               f"header: not a PCIbex/Ibex results file{hint}")
    values = line.split(",")
    if len(values) > len(names) and names[-1] == "Comments":
        values = values[:len(names) - 1] + [",".join(values[len(names) - 1:])]
    if len(values) != len(names):
        torn = " (a torn last line?)" if torn_possible and len(values) < len(names) else ""
        raise ImportInputError(f"{where(path, n)}: {len(values)} fields, the header above names {len(names)}"
                               f"{torn}")
    return Row(n, st.submission, st.design, dict(zip(names, values, strict=True)))


class BadValue(Exception):
    """A trial's own value is broken (a negative reading time, a time that is not a number): the trial is
    excluded as a bad trial (records.Excluded(bad=True)) naming this line, not the whole file refused."""

    def __init__(self, line: int, column: str, value: str, why: str):
        super().__init__(f"line {line}, column {column!r}: {value!r} {why}")
        self.line = line


def tool_time(r: Row, column: str) -> Optional[float]:
    """A time the tool itself wrote (ms: a reading time, a time taken to answer, an EventTime): None when the
    tool wrote no value; a time that is not a number, or is negative, is a bad value of this trial."""
    value = r.fields.get(column, "")
    if value.strip() in NULLS or value.strip() == "Never":   # "Never": PennController's time of no event
        return None
    try:
        x = float(value)
    except ValueError:
        raise BadValue(r.line, column, value, "is not a number") from None
    if not math.isfinite(x):
        raise BadValue(r.line, column, value, "is not a number")
    if x < 0:
        raise BadValue(r.line, column, value, "is a negative time")
    return x


def unescape(value: str) -> str:
    """Ibex writes a comma inside a value as %2C."""
    return value.replace("%2C", ",")
