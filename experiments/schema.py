"""The one trial-table schema shared by human and model sessions: the core's columns plus the columns the
registered studies and kinds declare.

Every row has every column of its session's header (empty where it does not apply), so tables concatenate
without surprises; runner-specific details that do not deserve a column go in `extra` as JSON.

- The core (`CORE_COLUMNS`) holds what a session of any kind has: who, which session and sequence, where in
  it, the item and its condition, the answer and its time, the model's protocol and scores, a general
  design's item, list, task, role and materials, the clock.
- A kind adds its own (`COLUMNS` in kinds/<name>/__init__.py, plain data: a rating's scale point, a choice's
  option order, ...); a study its paradigm's (`TABLE` in studies/<name>/__init__.py names a plain-data module
  with its `COLUMNS`). A column has one owner: a name declared twice is refused (SchemaError).
- The header of a study's own session: the layout that study declares (`HEADER` of that module: the order
  every such session was written in before columns were declared, kept byte for byte). The header of a
  general design's session: the core's columns, then the declared columns of the session's kinds, then the
  design's factors; no study's column. A study may declare the general layout its tables had before
  (`EARLIER_GENERAL_HEADER`): a session written with it keeps it when resumed (`table_columns(earlier=True)`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType
from typing import Any, Iterable, Iterator, Mapping

from experiments.core_columns import CORE_COLUMNS, DTYPE_NAMES
from experiments.kinds import declared as kinds_declared
from experiments.kinds import kind_attrs, kind_names
from experiments.studies import declared_modules

# the columns every table must have and fill (a study may require more of its own sessions' tables)
CORE_REQUIRED: tuple[str, ...] = ("subject_id", "subject_kind", "experiment", "block", "trial_index", "condition",
                                  "correct")


class SchemaError(ValueError):
    """A row or table does not fit the trial-table schema, or a declaration of columns is malformed."""


@dataclass(frozen=True)
class Layout:
    """The header order a study declares: `header` for a session of its own trials, `general` for a general
    design's (the core's columns, before its kinds' columns and its factors), `earlier_general`: the general
    layout sessions were written with before (a study's, kept when such a session resumes), what its own
    tables must fill beyond the core's (`required`), and the words its datasets' descriptions have always
    carried for core columns."""

    header: tuple[str, ...]
    general: tuple[str, ...]
    earlier_general: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    described_as: Mapping[str, str] = field(default_factory=dict)
    owner: str = "the core"


def _study_tables() -> dict[str, Any]:
    """name -> each study's plain-data table module (its `TABLE`), in listing order."""

    return declared_modules("TABLE")


def _layout(tables: Mapping[str, Any]) -> Layout:
    """The one declared layout (a study's), else the core's columns in their order."""
    declaring = [(name, mod) for name, mod in tables.items() if getattr(mod, "HEADER", None) is not None]
    if len(declaring) > 1:
        raise SchemaError("trial-table layout declared by more than one study "
                          f"({', '.join(n for n, _ in declaring)}); only one layout can be kept byte for byte")
    core = tuple(c for c, _, _ in CORE_COLUMNS)
    if not declaring:
        return Layout(core, core)
    name, mod = declaring[0]
    header = tuple(mod.HEADER)
    earlier = tuple(getattr(mod, "EARLIER_GENERAL_HEADER", ()))
    if earlier and (earlier[: len(header)] != header or len(set(earlier)) != len(earlier)):
        raise SchemaError(f"study {name}: EARLIER_GENERAL_HEADER must begin with HEADER and name each column once")
    return Layout(header, core, earlier, tuple(getattr(mod, "TABLE_REQUIRED", ())),
                  MappingProxyType(dict(getattr(mod, "DESCRIBED_AS", {}))), f"study {name}")


_TABLES = _study_tables()
LAYOUT = _layout(_TABLES)
# the header of a session of the layout's own trials (a Lakretz session: byte for byte as ever written)
COLUMN_NAMES: list[str] = list(LAYOUT.header)
# the core's columns that a study's own header does not name (a general design's generic columns)
GENERIC_COLUMN_NAMES: list[str] = [c for c in LAYOUT.general if c not in LAYOUT.header]
# a general design's header before its kinds' columns and its factors: the core's columns (no study's)
GENERAL_COLUMN_NAMES: list[str] = list(LAYOUT.general)


@dataclass(frozen=True)
class Declared:
    """Every declared column: its dtype, meaning and owner, and each kind's own columns in order."""

    dtypes: Mapping[str, str]
    descriptions: Mapping[str, str]
    owners: Mapping[str, str]
    by_kind: Mapping[str, tuple[str, ...]]


def _entries(owner: str, cols: Any) -> list[tuple[str, str, str]]:
    """A declaration checked: (column, dtype, meaning) triples of text, a dtype the tables know."""
    out = []
    for entry in cols if isinstance(cols, (list, tuple)) else [cols]:
        if not (isinstance(entry, (list, tuple)) and len(entry) == 3 and all(isinstance(x, str) for x in entry)):
            raise SchemaError(f"{owner}: a column is declared as (name, dtype, meaning), got {entry!r}")
        if entry[1] not in DTYPE_NAMES:
            raise SchemaError(f"{owner}: column {entry[0]!r} has dtype {entry[1]!r}; one of {', '.join(DTYPE_NAMES)}")
        out.append((entry[0], entry[1], entry[2]))
    return out


@lru_cache(maxsize=8)
def _union(kinds: tuple[str, ...]) -> Declared:
    """The columns of the core, the studies and the kinds `kinds` (the registry's, at the time), each once."""

    sources = [("the core", CORE_COLUMNS)] + [(f"study {n}", getattr(m, "COLUMNS", ())) for n, m in _TABLES.items()]
    kind_cols = {n: c for n, c in kinds_declared("COLUMNS").items() if n in kinds}
    sources += [(f"kind {n}", c) for n, c in kind_cols.items()]
    dtypes: dict[str, str] = {}
    descriptions: dict[str, str] = {}
    owners: dict[str, str] = {}
    for owner, cols in sources:
        for name, dtype, meaning in _entries(owner, cols):
            if name in owners:
                raise SchemaError(f"trial-table column {name!r} is declared by {owners[name]} and by {owner} "
                                  "(a column has one owner; a kind records another's column without declaring it)")
            dtypes[name], descriptions[name], owners[name] = dtype, meaning, owner
    undeclared = [c for c in (*LAYOUT.header, *LAYOUT.earlier_general) if c not in owners]
    if undeclared:
        raise SchemaError(f"{LAYOUT.owner}: its header names column(s) no one declares: {', '.join(undeclared)}")
    by_kind = {n: tuple(c for c, _, _ in _entries(f"kind {n}", cols)) for n, cols in kind_cols.items()}
    return Declared(MappingProxyType(dtypes), MappingProxyType(descriptions), MappingProxyType(owners),
                    MappingProxyType(by_kind))


def declared() -> Declared:
    """Every declared column now (the kinds' registry as it stands: a kind installed later counts)."""

    return _union(kind_names())


def column_names() -> list[str]:
    """Every declared column's name: the core's, the studies', the registered kinds'."""
    return list(declared().owners)


class _Live(Mapping[str, str]):
    """A read-only view of one field of `declared()`, read at each use (DTYPES, DESCRIPTIONS)."""

    def __init__(self, field_name: str) -> None:
        self._field = field_name

    def _now(self) -> Mapping[str, str]:
        return getattr(declared(), self._field)

    def __getitem__(self, key: str) -> str:
        return self._now()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._now())

    def __len__(self) -> int:
        return len(self._now())


DTYPES: Mapping[str, str] = _Live("dtypes")  # column -> pandas dtype (the union)
DESCRIPTIONS: Mapping[str, str] = _Live("descriptions")  # column -> meaning (the union)


def required_columns(generic: bool) -> tuple[str, ...]:
    """The columns a table must have and fill, in header order: the core's, and for a table of the layout
    study's own trials (not a general design) the columns that study requires too (its TABLE_REQUIRED)."""
    names = CORE_REQUIRED if generic else CORE_REQUIRED + LAYOUT.required
    order = LAYOUT.general if generic else LAYOUT.header
    return tuple(c for c in order if c in names) + tuple(c for c in names if c not in order)


REQUIRED: tuple[str, ...] = required_columns(False)  # a table of the layout's own trials (a Lakretz session)


def added_columns(kinds: Iterable[str], layout: Iterable[str] = LAYOUT.general) -> list[str]:
    """The columns the kinds `kinds` declare that `layout` does not name, in the registry's order (the
    general layout names none: a general design's header carries exactly its kinds' columns)."""
    wanted, named = set(kinds), set(layout)
    d = declared()
    return [c for name, cols in d.by_kind.items() if name in wanted for c in cols if c not in named]


def table_columns(factors: tuple[str, ...] | list[str] = (), generic: bool = False,
                  kinds: Iterable[str] = (), earlier: bool = False) -> list[str]:
    """A session's header: COLUMN_NAMES (a session of the layout study's own trials, byte for byte), or for a
    general design the core's columns, then its kinds' columns (`kind_columns`), then its factors' own
    columns (a factor named like a column, e.g. `condition`, fills that column). `earlier`: the header such a
    session was written with under the study's earlier general layout (None-free: the layout, when declared)."""
    if not generic and not factors:
        return list(COLUMN_NAMES)
    if earlier and LAYOUT.earlier_general:
        cols = list(LAYOUT.earlier_general) + added_columns(kinds, LAYOUT.earlier_general)
    else:
        cols = list(LAYOUT.general) + [c for c in kind_columns(kinds) if c not in LAYOUT.general]
    return cols + [f for f in factors if f not in cols]


def kind_columns(kinds: Iterable[str]) -> list[str]:
    """The columns of the kinds `kinds`, in the registry's order: each kind's declared ones, then the declared
    columns it records (`TaskKind.recorded`: one kind may record another's column, e.g. per-word times)."""

    wanted = set(kinds)
    d = declared()
    out: list[str] = []
    for name in kind_names():
        if name in wanted:
            own = d.by_kind.get(name, ())
            recorded = kind_attrs(name, "task", "KIND").recorded
            out += [c for c in (*own, *recorded) if c in d.owners]
    return list(dict.fromkeys(out))


def is_table_header(header: list[str]) -> bool:
    """A header this version writes or keeps: COLUMN_NAMES, or a general layout (the core's, or the study's
    earlier one) + kinds' columns + factor names."""
    if header == COLUMN_NAMES:
        return True
    return len(set(header)) == len(header) and any(
        base and header[: len(base)] == base for base in (list(LAYOUT.general), list(LAYOUT.earlier_general)))


def kinds_added_in(header: list[str]) -> list[str]:
    """The columns of `header` that kinds declare and the general layout it begins with does not name."""
    owners = declared().owners
    study = list(header[: len(LAYOUT.header)]) == list(LAYOUT.header) and LAYOUT.header != LAYOUT.general
    base = (LAYOUT.earlier_general or LAYOUT.header) if study else LAYOUT.general
    return [c for c in header if c not in base and owners.get(c, "").startswith("kind ")]


def is_earlier_header(recorded: list[str], header: list[str]) -> bool:
    """`recorded` is `header` as a session wrote it before its kinds declared their added columns: the same
    columns in the same order, less those (a resume keeps it; the kinds' values go to `extra.columns`)."""
    added = kinds_added_in(header)
    return bool(added) and recorded == [c for c in header if c not in added]


def unknown_columns(row: dict[str, Any], columns: list[str] | frozenset[str]) -> list[str]:
    """The row's columns the header lacks, less the declared ones it leaves empty (a runner's column of another
    kind, a study's column in a general design's row: nothing to keep)."""
    owners = declared().owners
    return sorted(c for c in set(row) - set(columns) if not (c in owners and row[c] is None))


def check_row(row: dict[str, Any], columns: list[str] | None = None) -> dict[str, Any]:
    """Reject unknown columns (typos would otherwise vanish silently); fill missing ones with None.

    `columns`: the session's header (default: COLUMN_NAMES)."""
    columns = COLUMN_NAMES if columns is None else columns
    unknown = unknown_columns(row, columns)
    if unknown:
        raise SchemaError(f"unknown trial-table column(s): {', '.join(unknown)}")
    return {c: row.get(c) for c in columns}


def described_columns(generic: bool = False) -> list[tuple[str, str, str]]:
    """The layout's own header as (column, dtype, meaning), the meaning in the words its datasets' Psych-DS
    descriptions have always carried (experiments/session.py); `generic`: the same of what the general layout
    adds. Read from the registry when asked, since the kinds declare their columns."""
    d = declared()
    names = GENERIC_COLUMN_NAMES if generic else COLUMN_NAMES
    return [(c, d.dtypes[c], LAYOUT.described_as.get(c, d.descriptions[c])) for c in names]
