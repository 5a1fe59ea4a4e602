"""What a PsychoPy Builder data file says about its own loops and components, read from the rows themselves.

Why: Builder writes one row per iteration of *every* loop (ExperimentHandler.nextEntry at the end of each
iteration of a loop marked "is trials"), with `L.thisN` etc. of each loop still running (loopsUnfinished). So
an outer loop `blocks` writes a row of its own at the end of each block (its inner loop already finished: no
`trials.thisN` on it), a questionnaire loop writes rows with no keyboard answer, and the routines outside
every loop write rows with no loop at all. Which rows are the study's trials is therefore a question of which
loop's rows hold the answer: the answer component is the keyboard (any name: `key_resp`, `stim_resp`, ...)
whose `.keys` the loops' rows carry, and the trial loops are the loops whose own rows carry it.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from participants.imports.source_csv import SourceTable

LOOP_COLUMN = re.compile(r"^(.+)\.thisN$")
# what each kind of Builder component writes as its answer, in order of preference, and the component it is
ANSWER_SUFFIXES = (".keys", ".response", ".clicked_name", ".text")
COMPONENT_KINDS = {".keys": "keyboard", ".response": "slider", ".clicked_name": "mouse", ".text": "textbox"}
# one rule for practice loops, by the names Builder studies give them: practice, practice_trials, prac_block,
# PracticeLoop, training, train_trials (a word of the name starting with "prac" or "train")
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def is_practice_loop(name: str) -> bool:
    """True for a loop named as practice by the study's own conventions (a word of its name starts with prac or
    train: `practice_trials`, `PracLoop`, `training`; not `trials`, `constraint_trials`)."""
    return any(w.lower().startswith(("prac", "train")) for w in _WORDS.findall(name))


def loop_names(header: list[str]) -> list[str]:
    """Every loop of the file (a `L.thisN` column), in header order."""
    return [m.group(1) for h in header if (m := LOOP_COLUMN.match(h))]


@dataclass(frozen=True)
class LoopMap:
    """The loops of one file: which is the innermost loop of each row, and which loops lie inside which."""
    loops: list[str]
    rows_of: dict[str, frozenset[int]]   # loop -> the lines carrying its thisN
    inner: dict[int, str | None]         # line -> the innermost loop running on that row (None: outside every loop)

    def encloses(self, outer: str, inner: str) -> bool:
        """True when every row of `inner` also carries `outer`'s thisN (Builder keeps an outer loop's thisN on
        the rows of the loops inside it)."""
        return outer != inner and bool(self.rows_of[inner]) and self.rows_of[inner] <= self.rows_of[outer]


def map_loops(table: SourceTable) -> LoopMap:
    """The innermost loop of each row: of the loops whose thisN the row carries, the one every other of them
    encloses (the one with the fewest rows)."""
    loops = loop_names(table.header)
    rows_of: dict[str, set[int]] = {lp: set() for lp in loops}
    for line, row in table.rows:
        for lp in loops:
            if row.get(f"{lp}.thisN", "").strip() != "":
                rows_of[lp].add(line)
    inner: dict[int, str | None] = {}
    for line, _ in table.rows:
        running = [lp for lp in loops if line in rows_of[lp]]
        inner[line] = min(running, key=lambda lp: (len(rows_of[lp]), -loops.index(lp))) if running else None
    return LoopMap(loops, {lp: frozenset(s) for lp, s in rows_of.items()}, inner)


@dataclass(frozen=True)
class AnswerColumn:
    """A component's answer column as the loops' rows carry it."""
    column: str
    rows: int        # loop rows with a value in it
    loop_rows: int   # rows of the loops those rows belong to (the answer's share of its loops' rows: rows/loop_rows)
    position: int    # the column's place in the header (the routine shown first comes first)
    distinct: int    # distinct values (a "press space to go on" key has one)
    scored: bool     # the component scores its answer (a `C.corr` column): the study's correct answer

    @property
    def share(self) -> float:
        return self.rows / self.loop_rows if self.loop_rows else 0.0


def answer_columns(table: SourceTable, lm: LoopMap, only: set[str] | None = None) -> list[AnswerColumn]:
    """Each component's answer column (`C.keys`, `C.response`, ...) that loop rows carry (not the loop-prefixed
    copies `trials.C.keys` newer versions add, nor rows outside every loop: instructions, forms); `only`: the
    rows of these loops alone."""
    prefixes = tuple(f"{lp}." for lp in lm.loops)
    cols = [h for h in table.header if h.endswith(ANSWER_SUFFIXES) and not h.startswith(prefixes)]
    counts: Counter[str] = Counter()
    loops_of: dict[str, set[str]] = {c: set() for c in cols}
    values: dict[str, set[str]] = {c: set() for c in cols}
    own_rows: Counter[str | None] = Counter(lm.inner.values())
    for line, row in table.rows:
        loop = lm.inner[line]
        if loop is None or (only is not None and loop not in only):
            continue
        for c in cols:
            if row.get(c, "").strip() != "":
                counts[c] += 1
                loops_of[c].add(loop)
                values[c].add(row[c].strip())
    return [AnswerColumn(c, counts[c], sum(own_rows[lp] for lp in loops_of[c]), table.header.index(c),
                         len(values[c] - {"None"}), f"{component_of(c)}.corr" in table.header)
            for c in cols if counts[c]]


def pick_answer(found: list[AnswerColumn]) -> str | None:
    """The study's answer: of the answer columns filled on at least half of their loops' rows (a trial asks for
    an answer; a catch-detection key pressed now and then is not the task's), one with more than one value (not
    a "press space to start the trial" key), then one the component scores (`C.corr`), then the one on the most
    rows, the first in the header on a tie. None when no loop row holds one."""
    if not found:
        return None
    return min(found, key=lambda a: (a.share < 0.5, a.distinct < 2, not a.scored, -a.rows, a.position)).column


def component_kind(column: str | None) -> str | None:
    """`q_slider.response` -> "slider" (what kinds' `tool_hints` name for psychopy); None for another column."""
    return next((k for suffix, k in COMPONENT_KINDS.items() if column and column.endswith(suffix)), None)


def component_of(column: str) -> str | None:
    """`stim_resp.keys` -> `stim_resp`; a column not of a component's answer -> None."""
    for s in ANSWER_SUFFIXES:
        if column.endswith(s) and len(column) > len(s):
            return column[:-len(s)]
    return None


def trial_loops(table: SourceTable, lm: LoopMap, response: str) -> list[str]:
    """The loops whose own rows (the rows they are the innermost loop of) carry the response column."""
    found = {lm.inner[line] for line, row in table.rows
             if lm.inner[line] is not None and row.get(response, "").strip() != ""}
    return [lp for lp in lm.loops if lp in found]
