"""A factorial design of items from a long-format stimulus file (docs/general_model.md).

One job: read the file (one row per item x condition), check it against the spec's `design:`,
and say which rows a subject gets (`subject_rows`): a Latin square over items x conditions by
default, the file's own `list` column, or every item in every condition. Ordering the rows into
blocks is the compiler's (experiments/design_compiler.py).

Every refusal is a `DesignError` naming the file and line(s); nothing is dropped silently: a column
the spec does not know is kept (in the trial's materials under its own name) and listed by
`DesignFile.unknown_columns`, which `validate` prints.
"""
from __future__ import annotations

import csv
import io
import itertools
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from experiments.tasks.base import material_keys
from experiments.trials import condition_label
from stimuli.textfile import read_text_file
from stimuli.visible_text import nfc, text_problem

ROLES = ("test", "filler", "practice")
ListMode = Literal["latin_square", "column", "all", "given"]
# modes whose lists are the file's own `list` column; `given` also keeps each list's rows in the file's order
# and lets practice and filler rows name a list (data read from another tool: each person's trials as run)
FILE_LISTS = ("column", "given")
SHOWN = 12  # problems listed in one message (the rest counted)
# Size limits (docs/validation.md "Design files"): within them `validate` and `plan` finish in seconds
# (checking is linear in the rows); beyond them the file is refused, saying which limit, before any work.
MAX_FILE_BYTES = 50_000_000
MAX_ROWS = 200_000  # rows of the file (test, filler and practice)
MAX_LISTS = 1_000  # lists of `lists: column` (a Latin square has one list per condition)
MAX_CONDITIONS = 1_000  # the product of the factors' level counts
MAX_CELL_CHARS = 100_000  # characters in one cell (a 20,000-word sentence is ~120,000)
_LIST_NUMBER = re.compile(r"[0-9]{1,9}")  # ASCII digits only: int() also reads '٣', '３' and '1_0'

# columns of the file with a meaning of their own (besides `item` and the factors)
RESERVED = ("role", "list")
# the materials keys are those the registered kinds declare (experiments.tasks.base.material_keys); `option_<n>`
# columns become the list `options`
LIST_KEYS = ("accepted", "question_options")  # `|`-separated in the file, a list in materials
_OPTION = re.compile(r"^option_([1-9][0-9]*)$")
# a factor named like one of these Lakretz columns fills that column of the trial table
LAKRETZ_FACTOR_COLUMNS = ("condition", "grammatical", "structure", "dependency")


class DesignError(ValueError):
    """A design or stimulus file that cannot be used; the message names the file and line(s)."""


def normalise_level(value: Any) -> str:
    """A level as the spec gives it -> its string. YAML reads `true`/`false`/`yes`/`no` unquoted as
    booleans and numbers as numbers; levels are strings, so booleans become "true"/"false" and
    numbers their decimal text ("1", "2.5")."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def conditions_of(factors: dict[str, list[str]]) -> list[tuple[str, ...]]:
    """Every combination of levels, in the spec's factor order (the last factor varies fastest)."""
    return list(itertools.product(*factors.values()))


def check_factors(factors: dict[str, list[str]]) -> None:
    """The design's conditions: at most MAX_CONDITIONS, and each with its own label. A condition's label
    joins its levels with "-" (the table's `condition`, the rows' ids), so levels such as "a-b" x "c" and
    "a" x "b-c" would name two conditions alike and make valid rows look repeated: refused, naming them."""
    n = 1
    for levels in factors.values():
        n *= max(len(levels), 1)
    if n > MAX_CONDITIONS:
        raise DesignError(f"design.factors: {' x '.join(f'{k} ({len(v)})' for k, v in factors.items())} = {n} "
                          f"conditions; at most {MAX_CONDITIONS}")
    seen: dict[str, tuple[str, ...]] = {}
    for cond in conditions_of(factors):
        label = condition_label(cond)
        if label in seen:
            a, b = (" x ".join(map(repr, c)) for c in (seen[label], cond))
            raise DesignError(f"design.factors: the levels {a} and {b} both make the condition label {label!r} "
                              "(levels are joined with '-'); rename a level so that no two conditions read alike")
        seen[label] = cond


@dataclass(frozen=True)
class Row:
    """One row of the stimulus file."""

    line: int
    item: str
    role: str
    levels: tuple[str, ...] | None  # in factor order; None for a filler/practice row without factors
    list_number: int | None
    materials: tuple[tuple[str, Any], ...]

    @property
    def condition(self) -> str:
        return condition_label(self.levels) if self.levels else ""

    @property
    def row_id(self) -> str:
        """Unique per row: `<item>:<condition>` (the item alone for a row without factors)."""
        return f"{self.item}:{self.condition}" if self.levels else self.item


@dataclass(frozen=True)
class DesignFile:
    path: str
    factors: dict[str, list[str]]
    rows: tuple[Row, ...]
    columns: tuple[str, ...]
    unknown_columns: tuple[str, ...]  # kept in materials under their own names
    mode: ListMode
    n_lists: int  # lists subjects rotate through (1 for `all`)
    test_items: tuple[str, ...]  # in file order
    lists_by_number: dict[int, tuple[Row, ...]] = field(default_factory=dict)

    def role_rows(self, role: str) -> list[Row]:
        return [r for r in self.rows if r.role == role]

    def shared_rows(self, role: str, list_number: int) -> list[Row]:
        """The practice or filler rows of a list: those without a list number (every list's) and, with
        `lists: given`, those naming this list."""
        return [r for r in self.rows if r.role == role and r.list_number in (None, list_number)]

    def list_for(self, subject_number: int) -> int:
        """Subjects rotate through the lists: subject k gets list ((k - 1) mod L) + 1."""
        return (subject_number - 1) % self.n_lists + 1

    def test_rows(self, list_number: int) -> list[Row]:
        """The test rows of one list, in file order of items."""
        return list(self.lists_by_number[list_number])

    def summary(self) -> str:
        if self.mode == "given":
            return self.given_summary()
        n_cond = len(conditions_of(self.factors))
        counts = {role: len(self.role_rows(role)) for role in ROLES}
        sizes = sorted({len(rows) for rows in self.lists_by_number.values()})
        per_list = "/".join(map(str, sizes))
        text = (f"{len(self.test_items)} items x {n_cond} conditions ({counts['test']} test rows), "
                f"{counts['filler']} filler and {counts['practice']} practice rows; lists: {self.mode} "
                f"({self.n_lists} list(s) of {per_list} test trials)")
        return text + self.balance_note()

    def given_summary(self) -> str:
        """The file's own lists as they are: each list's rows by role and its test rows by condition (a given
        design need not cross items with conditions, so `items x conditions` would be a number it has not)."""
        per_list = []
        for ln, rows in sorted(self.lists_by_number.items()):
            conds = Counter(r.condition for r in rows)
            others = []
            for role in ROLES[1:]:
                own = self.shared_rows(role, ln)
                cells = Counter(r.condition for r in own if r.levels)
                if own:  # an adaptation block's rows are practice rows with the design's factors
                    others.append(f"{len(own)} {role}" + (" (" + ", ".join(f"{c} {n}" for c, n in sorted(cells.items()))
                                                          + ")" if cells else ""))
            per_list.append(f"list {ln}: {len(rows)} test rows ("
                            + ", ".join(f"{c} {n}" for c, n in sorted(conds.items())) + ")"
                            + (", " + ", ".join(others) if others else ""))
        counts = {role: len(self.role_rows(role)) for role in ROLES}
        return (f"{counts['test']} test rows of {len(self.test_items)} items, {counts['filler']} filler and "
                f"{counts['practice']} practice rows in the file; lists: given ({self.n_lists} list(s): "
                + "; ".join(per_list) + ")" + self.balance_note())

    def balance_note(self) -> str:
        """For the file's own lists: how unbalanced they are (conditions per list), or ""."""
        if self.mode == "all":
            n_cond = len(conditions_of(self.factors))
            by_item = Counter(r.item for r in self.lists_by_number[1])
            partial = sum(1 for n in by_item.values() if n < n_cond)
            return (f"; {partial} of {len(by_item)} items are not in every condition (shown in the ones they have: "
                    "a between-item factor?)") if partial else ""
        if self.mode not in FILE_LISTS:
            return ""  # a Latin square is balanced by construction
        per_list = {}
        for ln, rows in sorted(self.lists_by_number.items()):
            counts = {condition_label(c): 0 for c in conditions_of(self.factors)}
            for r in rows:
                counts[r.condition] += 1
            per_list[ln] = counts
        shown = {ln: ", ".join(f"{c} {n}" for c, n in counts.items()) for ln, counts in per_list.items()}
        if len(set(shown.values())) > 1:  # the lists differ: people are not given the same conditions
            return "; UNBALANCED: conditions per list differ (" + "; ".join(f"list {ln}: {t}" for ln, t in
                                                                          shown.items()) + ")"
        if any(len(set(counts.values())) > 1 for counts in per_list.values()):
            return (f"; every list has the same conditions ({next(iter(shown.values()))}), not each equally often"
                    if len(per_list) > 1 else f"; the list's conditions: {next(iter(shown.values()))}")
        return "; every list has each condition equally often"


def _delimiter(path: Path) -> str:
    return "\t" if path.suffix.lower() in (".tsv", ".tab") else ","


def _lines(numbers: list[int]) -> str:
    return ", ".join(map(str, numbers[:8])) + (f" and {len(numbers) - 8} more" if len(numbers) > 8 else "")


def _refuse(path: str, problems: list[str]) -> None:
    if problems:
        shown = problems[:SHOWN] + ([f"... and {len(problems) - SHOWN} more"] if len(problems) > SHOWN else [])
        raise DesignError(f"{path}: {len(problems)} problem(s) with the design\n" + "\n".join(f"  {p}" for p in shown))


def _materials(row: dict[str, str], columns: list[str]) -> tuple[tuple[str, Any], ...]:
    out: dict[str, Any] = {}
    options: list[tuple[int, str]] = []
    for c in columns:
        v = (row.get(c) or "").strip()
        if not v:
            continue
        m = _OPTION.match(c)
        if m:
            options.append((int(m.group(1)), v))
        elif c in LIST_KEYS:
            out[c] = tuple(p.strip() for p in v.split("|") if p.strip())
        else:
            out[c] = v
    if options:
        out["options"] = tuple(v for _, v in sorted(options))
    return tuple(sorted(out.items()))


def _read_cells(where: str, text: str, delim: str) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """The header (stripped) and each row with its line number; a row over the size limits or with more
    cells than the header is refused at its line, as it is read (before any work on a huge file)."""
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delim)
        header = [h.strip() for h in (reader.fieldnames or [])]
        reader.fieldnames = header
        raw = []
        for r in reader:
            if None in r:
                raise DesignError(f"{where}: line {reader.line_num}: more cells than the header has columns "
                                  f"(a stray {'tab' if delim == chr(9) else 'comma'}?)")
            if len(raw) >= MAX_ROWS:
                raise DesignError(f"{where}: line {reader.line_num}: more than {MAX_ROWS} rows; at most {MAX_ROWS} "
                                  "are read (docs/validation.md, design files)")
            long_cell = next((k for k, v in r.items() if v is not None and len(v) > MAX_CELL_CHARS), None)
            if long_cell is not None:
                raise DesignError(f"{where}: line {reader.line_num}, column {header.index(long_cell) + 1} "
                                  f"({long_cell}): {len(r[long_cell])} characters; at most {MAX_CELL_CHARS} in a cell")
            raw.append((reader.line_num, r))
    except csv.Error as exc:
        raise DesignError(f"{where}: not readable as CSV/TSV ({exc})") from None
    return header, raw


def _text_problems(header: list[str], raw: list[tuple[int, dict[str, str]]]) -> list[str]:
    """Every cell (and header name) made NFC in place; a hidden or control character or a mixed-script
    look-alike word is a problem naming the line, column and characters (stimuli/visible_text.py)."""

    problems = [f"line 1, column {k + 1} ({h!r}): {p}" for k, h in enumerate(header) if (p := text_problem(h))]
    col = {h: k + 1 for k, h in enumerate(header)}
    for i, (line, r) in enumerate(raw):
        cells = {}
        for k, v in r.items():
            v = nfc(v) if v else v
            p = text_problem(v) if v else None
            if p:
                problems.append(f"line {line}, column {col.get(k, '?')} ({k}): {p}")
            cells[nfc(k) if isinstance(k, str) else k] = v
        raw[i] = (line, cells)
    header[:] = [nfc(h) for h in header]
    return problems


def _check_header(where: str, header: list[str], factors: dict[str, list[str]], mode: ListMode,
                  item_column: str, n_rows: int) -> None:
    """Refuse a file whose header cannot carry the declared design (checked before any row is)."""
    if not header:
        raise DesignError(f"{where}: empty file (no header line)")
    doubled = sorted({c for c in header if header.count(c) > 1})
    if doubled:
        raise DesignError(f"{where}: line 1: column(s) {', '.join(map(repr, doubled))} appear twice in the header")
    missing = [c for c in [item_column, *factors] if c not in header]
    if missing:
        what = ["the item column" if c == item_column else f"factor {c!r}" for c in missing]
        raise DesignError(f"{where}: line 1: no column for {', '.join(what)} (declared in the spec's design); "
                          f"the file's columns: {', '.join(header)}")
    if mode in FILE_LISTS and "list" not in header:
        raise DesignError(f"{where}: line 1: design.lists is `{mode}` but the file has no `list` column")
    if not n_rows:
        raise DesignError(f"{where}: no rows below the header")


def _row_levels(line: int, r: dict[str, str], role: str, factors: dict[str, list[str]],
                problems: list[str]) -> list[str] | None:
    """The row's level of each factor ("" where empty), or None when a problem was noted (every bad
    level of the row is listed, not only the first)."""
    levels: list[str] = []
    for name, declared in factors.items():
        cell = (r.get(name) or "").strip()
        if cell and cell not in declared:
            # true/false are matched whatever their case (spreadsheets write TRUE)
            match = [lv for lv in declared if lv in ("true", "false") and lv == cell.lower()]
            if match:
                cell = match[0]
            else:
                problems.append(f"line {line}: {name} {cell!r} is not a declared level ({', '.join(declared)})")
                continue
        levels.append(cell)
    if len(levels) < len(factors):
        return None
    if role == "test" and not all(levels):
        empty = [n for n, lv in zip(factors, levels, strict=False) if not lv]
        problems.append(f"line {line}: a test row needs a level of every factor; empty: {', '.join(empty)}")
        return None
    if any(levels) and not all(levels):
        empty = [n for n, lv in zip(factors, levels, strict=False) if not lv]
        problems.append(f"line {line}: a {role} row gives some factors but not {', '.join(empty)} "
                        "(give all or none)")
        return None
    return levels


def _parse_row(line: int, r: dict[str, str], factors: dict[str, list[str]], mode: ListMode, item_column: str,
               header: list[str], material_cols: list[str], problems: list[str]) -> Row | None:
    """One file row as a Row, or None (a blank line, or a problem noted: all rows are checked before
    the file is refused, so one message lists them)."""
    if not any((v or "").strip() for v in r.values()):
        return None  # a blank line
    item = (r.get(item_column) or "").strip()
    role = (r.get("role") or "").strip() or "test"
    if not item:
        problems.append(f"line {line}: empty {item_column!r}")
        return None
    if role not in ROLES:
        problems.append(f"line {line}: role {role!r} is not one of {', '.join(ROLES)}")
        return None
    levels = _row_levels(line, r, role, factors, problems)
    if levels is None:
        return None
    list_number = None
    lv = (r.get("list") or "").strip()
    if (mode == "column" and role == "test") or (mode == "given" and (role == "test" or lv)):
        if not _LIST_NUMBER.fullmatch(lv) or int(lv) < 1:
            problems.append(f"line {line}, column {header.index('list') + 1} (list): {lv!r} must be a list "
                            f"number written in ASCII digits (1, 2, ...)")
            return None
        list_number = int(lv)
        if list_number > MAX_LISTS:
            problems.append(f"line {line}, column {header.index('list') + 1} (list): list {list_number}; "
                            f"at most {MAX_LISTS} lists")
            return None
    return Row(line, item, role, tuple(levels) if all(levels) and levels else None, list_number,
               _materials(r, material_cols))


def read_design(path: str | Path, factors: dict[str, list[str]], mode: ListMode = "latin_square",
                item_column: str = "item") -> DesignFile:
    """Read and check a long-format stimulus file against the declared factors and list mode."""
    p = Path(path)
    where = str(p)
    check_factors(factors)
    text = read_text_file(p, DesignError, "CSV/TSV stimulus", MAX_FILE_BYTES)
    header, raw = _read_cells(where, text, _delimiter(p))
    _refuse(where, _text_problems(header, raw))  # before the header's names are matched
    _check_header(where, header, factors, mode, item_column, len(raw))
    special = {item_column, *factors, *RESERVED}
    material_cols = [c for c in header if c not in special]
    known = material_keys()
    unknown = tuple(c for c in material_cols if c not in known and not _OPTION.match(c))
    problems: list[str] = []
    rows: list[Row] = []
    for line, r in raw:
        row = _parse_row(line, r, factors, mode, item_column, header, material_cols, problems)
        if row is not None:
            rows.append(row)
    _refuse(where, problems)
    return _check_and_build(where, factors, mode, rows, tuple(header), unknown)


def _row_problems(rows: list[Row], factors: dict[str, list[str]]) -> list[str]:
    """Rows that repeat one another or share a trial id, and a design without test rows or with a
    declared level no test row has."""
    problems: list[str] = []
    seen: dict[tuple, int] = {}
    ids: dict[str, Row] = {}
    for r in rows:  # one row per item x condition (and one per filler/practice item); lists may share rows
        key = (r.list_number, r.item, r.levels)  # the levels themselves, not a label text that could collide
        if key in seen:
            what = f"item {r.item!r} in condition {r.condition!r}" if r.levels else f"{r.role} item {r.item!r}"
            where_list = f" of list {r.list_number}" if r.list_number is not None else ""
            problems.append(f"line {r.line}: {what}{where_list} again (first on line {seen[key]})")
            continue
        seen[key] = r.line
        other = ids.setdefault(r.row_id, r)  # a trial's id (`item:condition`) names one row of the file
        if (other.item, other.levels) != (r.item, r.levels):
            problems.append(f"line {r.line}: item {r.item!r} in condition {r.condition!r} has the trial id "
                            f"{r.row_id!r} of item {other.item!r} in condition {other.condition!r} (line "
                            f"{other.line}); rename the item or the level (a ':' in one)")
    test = [r for r in rows if r.role == "test"]
    if not test:
        problems.append("no test rows (rows with role test, or without a role column)")
    for k, (name, declared) in enumerate(factors.items()):
        present = {r.levels[k] for r in test if r.levels}
        empty = [lv for lv in declared if lv not in present]
        if empty:
            problems.append(f"factor {name!r}: level(s) {', '.join(map(repr, empty))} have no test row")
    return problems


def _latin_square_lists(where: str, factors: dict[str, list[str]], conditions: list[tuple[str, ...]],
                        items: list[str], by_item: dict[str, dict[tuple[str, ...], Row]]) -> dict[int, tuple[Row, ...]]:
    """List l: item i (0-based) in condition (i + l - 1) mod L; refused unless every item is in every
    condition and the items are a multiple of the conditions (else the lists are unbalanced)."""
    problems: list[str] = []
    for it in items:
        lacking = [condition_label(c) for c in conditions if c not in by_item[it]]
        if lacking:
            first = min(r.line for r in by_item[it].values())
            problems.append(f"item {it!r} (line {first}): no row for condition(s) {', '.join(lacking)} "
                            f"(a Latin square needs every item in every condition of {' x '.join(factors)})")
    _refuse(where, problems)
    n = len(conditions)
    if len(items) < n:
        raise DesignError(f"{where}: {len(items)} item(s) for {n} conditions ({' x '.join(factors)}): too few items "
                          f"for a Latin square (each subject sees each item once, so it needs at least {n} items, "
                          f"a multiple of {n})")
    if len(items) % n:
        raise DesignError(f"{where}: {len(items)} items for {n} conditions: a Latin square needs a multiple of {n} "
                          f"items so that every list has each condition equally often (with {len(items)}, "
                          f"{len(items) % n} condition(s) would get one item more); add "
                          f"{n - len(items) % n} or remove {len(items) % n} item(s)")
    lists: dict[int, tuple[Row, ...]] = {}
    for list_number in range(1, n + 1):  # list l: item i (0-based) in condition (i + l - 1) mod L
        lists[list_number] = tuple(by_item[it][conditions[(i + list_number - 1) % n]] for i, it in enumerate(items))
    return lists


def _column_lists(where: str, test: list[Row], items: list[str], given: bool = False) -> dict[int, tuple[Row, ...]]:
    """The file's own lists (`list` column): numbered 1, 2, ... without gaps, an item at most once in a
    list, each list's rows in the file order of items. `given`: each list's rows in the file's order of
    its own rows, and an item may come in several conditions (never twice in one: `_row_problems`)."""
    problems: list[str] = []
    lists: dict[int, tuple[Row, ...]] = {}
    numbers = sorted({r.list_number for r in test if r.list_number is not None})
    if numbers != list(range(1, len(numbers) + 1)):
        have = set(numbers)
        gap = next(k for k in range(1, len(numbers) + 2) if k not in have)
        raise DesignError(f"{where}: list numbers must run 1, 2, ... without gaps; the file numbers "
                          f"{len(numbers)} list(s) from {numbers[0]} to {numbers[-1]} and has no list {gap}")
    by_list: dict[int, list[Row]] = {}
    for r in test:
        by_list.setdefault(r.list_number, []).append(r)  # type: ignore[arg-type]
    position = {it: i for i, it in enumerate(items)}
    for ln in numbers:
        rows_l = by_list[ln]
        if given:
            lists[ln] = tuple(rows_l)
            continue
        per_item = Counter(r.item for r in rows_l)
        twice = sorted(it for it, c in per_item.items() if c > 1)
        if twice:
            lines = [r.line for r in rows_l if per_item[r.item] > 1]
            problems.append(f"list {ln}: item(s) {', '.join(map(repr, twice))} appear more than once "
                            f"(lines {_lines(lines)}); a subject sees an item once")
        lists[ln] = tuple(sorted(rows_l, key=lambda r: position[r.item]))
    _refuse(where, problems)
    return lists


def _check_and_build(where: str, factors: dict[str, list[str]], mode: ListMode, rows: list[Row],
                     header: tuple[str, ...], unknown: tuple[str, ...]) -> DesignFile:
    """Check the rows as a whole (repeats, coverage of the levels) and build the mode's lists."""
    _refuse(where, _row_problems(rows, factors))
    test = [r for r in rows if r.role == "test"]
    conditions = conditions_of(factors)
    items = list(dict.fromkeys(r.item for r in test))
    by_item: dict[str, dict[tuple[str, ...], Row]] = {}
    for r in test:
        by_item.setdefault(r.item, {})[r.levels] = r  # type: ignore[index]
    if mode == "latin_square":
        lists = _latin_square_lists(where, factors, conditions, items, by_item)
        n_lists = len(conditions)
    elif mode == "all":  # every row; an item may lack conditions (a between-item factor): summary() says so
        lists = {1: tuple(by_item[it][c] for it in items for c in conditions if c in by_item[it])}
        n_lists = 1
    else:
        lists = _column_lists(where, test, items, given=mode == "given")
        n_lists = len(lists)
    return DesignFile(path=where, factors=factors, rows=tuple(rows), columns=header, unknown_columns=unknown,
                      mode=mode, n_lists=n_lists, test_items=tuple(items), lists_by_number=lists)
