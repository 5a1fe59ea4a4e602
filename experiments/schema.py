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
- The header: the layout a study declares (`HEADER`, `GENERAL_HEADER` of that module: the order every
  session was written in before columns were declared, kept byte for byte), then the declared columns of
  the session's kinds that the layout does not name (a third party's kind), then the design's factors.
  Without a declared layout: the core's columns, then the session's kinds' columns, then the factors.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType
from typing import Any, Iterable, Iterator, Mapping

from experiments.core_columns import CORE_COLUMNS, DTYPE_NAMES  # noqa: F401 (plain data; re-exported)

# the columns every table must have and fill (a study may require more of its own sessions' tables)
CORE_REQUIRED: tuple[str, ...] = ("subject_id", "subject_kind", "experiment", "block", "trial_index", "condition",
                                  "correct")


class SchemaError(ValueError):
    """A row or table does not fit the trial-table schema, or a declaration of columns is malformed."""


@dataclass(frozen=True)
class Layout:
    """The header order a study declares: `header` for a session of its own trials, `general` for a general
    design's (before its kinds' added columns and its factors), what its own tables must fill beyond the
    core's (`required`), and the words its datasets' descriptions have always carried for core columns."""

    header: tuple[str, ...]
    general: tuple[str, ...]
    required: tuple[str, ...] = ()
    described_as: Mapping[str, str] = field(default_factory=dict)
    owner: str = "the core"


def _study_tables() -> dict[str, Any]:
    """name -> each study's plain-data table module (its `TABLE`), in listing order."""
    from experiments.studies import declared_modules

    return declared_modules("TABLE")


def _layout(tables: Mapping[str, Any]) -> Layout:
    """The one declared layout (a study's), else the core's columns in their order."""
    declaring = [(name, mod) for name, mod in tables.items() if getattr(mod, "HEADER", None) is not None]
    if len(declaring) > 1:
        raise SchemaError("trial-table layout declared by more than one study "
                          f"({', '.join(n for n, _ in declaring)}); only one layout can be kept byte for byte")
    if not declaring:
        core = tuple(c for c, _, _ in CORE_COLUMNS)
        return Layout(core, core)
    name, mod = declaring[0]
    header = tuple(mod.HEADER)
    general = tuple(getattr(mod, "GENERAL_HEADER", header))
    if general[: len(header)] != header or len(set(general)) != len(general):
        raise SchemaError(f"study {name}: GENERAL_HEADER must begin with HEADER and name each column once")
    return Layout(header, general, tuple(getattr(mod, "TABLE_REQUIRED", ())),
                  MappingProxyType(dict(getattr(mod, "DESCRIBED_AS", {}))), f"study {name}")


_TABLES = _study_tables()
LAYOUT = _layout(_TABLES)
# the header of a session of the layout's own trials (a Lakretz session: byte for byte as ever written)
COLUMN_NAMES: list[str] = list(LAYOUT.header)
# what a general design's header adds to COLUMN_NAMES before its kinds' added columns and its factors
GENERIC_COLUMN_NAMES: list[str] = [c for c in LAYOUT.general if c not in LAYOUT.header]


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
    from experiments.kinds import declared as kinds_declared

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
    undeclared = [c for c in LAYOUT.general if c not in owners]
    if undeclared:
        raise SchemaError(f"{LAYOUT.owner}: its header names column(s) no one declares: {', '.join(undeclared)}")
    by_kind = {n: tuple(c for c, _, _ in _entries(f"kind {n}", cols)) for n, cols in kind_cols.items()}
    return Declared(MappingProxyType(dtypes), MappingProxyType(descriptions), MappingProxyType(owners),
                    MappingProxyType(by_kind))


def declared() -> Declared:
    """Every declared column now (the kinds' registry as it stands: a kind installed later counts)."""
    from experiments.kinds import kind_names

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
    return tuple(c for c in LAYOUT.general if c in names) + tuple(c for c in names if c not in LAYOUT.general)


REQUIRED: tuple[str, ...] = required_columns(False)  # a table of the layout's own trials (a Lakretz session)


def added_columns(kinds: Iterable[str]) -> list[str]:
    """The columns the kinds `kinds` declare that the general layout does not name, in the registry's order
    (a third party's kind; every built-in kind's columns are in the layout)."""
    wanted = set(kinds)
    d = declared()
    return [c for name, cols in d.by_kind.items() if name in wanted for c in cols if c not in LAYOUT.general]


def table_columns(factors: tuple[str, ...] | list[str] = (), generic: bool = False,
                  kinds: Iterable[str] = ()) -> list[str]:
    """A session's header: COLUMN_NAMES (a session of the layout study's own trials, byte for byte), or for a
    general design the general layout, then the added columns of its kinds (`added_columns`), then its
    factors' own columns (a factor named like a column, e.g. `condition`, fills that column)."""
    if not generic and not factors:
        return list(COLUMN_NAMES)
    cols = list(LAYOUT.general) + added_columns(kinds)
    return cols + [f for f in factors if f not in cols]


def is_table_header(header: list[str]) -> bool:
    """A header this version writes: COLUMN_NAMES, or the general layout + added columns + factor names."""
    base = list(LAYOUT.general)
    return header == COLUMN_NAMES or (header[: len(base)] == base and len(set(header)) == len(header))


def kinds_added_in(header: list[str]) -> list[str]:
    """The columns of `header` that kinds declare and the general layout does not name (`added_columns`)."""
    owners = declared().owners
    return [c for c in header if c not in LAYOUT.general and owners.get(c, "").startswith("kind ")]


def is_earlier_header(recorded: list[str], header: list[str]) -> bool:
    """`recorded` is `header` as a session wrote it before its kinds declared their added columns: the same
    columns in the same order, less those (a resume keeps it; the kinds' values go to `extra.columns`)."""
    added = kinds_added_in(header)
    return bool(added) and recorded == [c for c in header if c not in added]


def check_row(row: dict[str, Any], columns: list[str] | None = None) -> dict[str, Any]:
    """Reject unknown columns (typos would otherwise vanish silently); fill missing ones with None.

    `columns`: the session's header (default: COLUMN_NAMES)."""
    columns = COLUMN_NAMES if columns is None else columns
    unknown = sorted(set(row) - set(columns))
    if unknown:
        raise SchemaError(f"unknown trial-table column(s): {', '.join(unknown)}")
    return {c: row.get(c) for c in columns}


def __getattr__(name: str) -> Any:
    """COLUMNS, read when first asked: the layout's own header as (column, dtype, meaning), the meaning in the
    words its datasets' Psych-DS descriptions have always carried (experiments/session.py); GENERIC_COLUMNS:
    the same of what the general layout adds."""
    if name in ("COLUMNS", "GENERIC_COLUMNS"):
        d = declared()
        names = COLUMN_NAMES if name == "COLUMNS" else GENERIC_COLUMN_NAMES
        return [(c, d.dtypes[c], LAYOUT.described_as.get(c, d.descriptions[c])) for c in names]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
