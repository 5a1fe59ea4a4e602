"""The one registry of task kinds: a kind is one folder (a package), found by name, lazily, by discovery.

A kind is a package (the built-in ones: the folders of the `kinds` package, kinds/<name>/; a third party's:
a package named by an entry point of the group `twinlab.kinds`, `<name> = <module>`). Its `__init__.py`
is light (no imports) and may say `ORDER` (where the kind stands in listings: the runners' lists, the
report's sections; default 1000, then by name) and `COLUMNS` (the trial-table columns it adds, as plain
data: experiments/schema.py collects them through `declared`). Its parts are its modules, each optional:

    task      TaskKind `KIND`: settings, item checks, scoring, declared columns (experiments.tasks.base)
    view      the PsychoPy presentation unit (participants/tasks/__init__.py)
    page.js   the browser builder (participants/web/site.py concatenates every kind's into one script)
    model     ModelKind `MODEL`: its protocols (model_subjects/tasks/registry.py)
    analysis  AnalysisKind `ANALYSIS`: its report section and measures (analysis/kind_sections.py)
    importer  KindImporter `IMPORTER`: its rules for `twinlab import` (participants/imports/kinds.py)

Layers ask here (`kind_names`, `kind_part`, `kind_file`) and never import a kind's module by a static
name; kinds import the layers. Nothing is imported until asked, so `twinlab --help` pays nothing.
"""
from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
from functools import lru_cache
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import Any

from experiments.core_columns import CORE_COLUMNS, DTYPE_NAMES

BUILTIN = "kinds"  # the package whose folders are the built-in kinds
ENTRY_POINTS = "twinlab.kinds"  # the entry-point group a third party's kind is named in
DEFAULT_ORDER = 1000
LAYOUT_KEY = " layout of study "  # reserved_columns' entry (never a column name: it has spaces) for a declared layout


class UnknownKind(LookupError):
    """No registered kind has this name."""


def discover(builtin: str, group: str, what: str) -> dict[str, str]:
    """name -> package of every folder of the package `builtin` and every entry point of `group` that passes
    `entry_point_refusal`, in listing order (`ORDER` of each package, then the name): the one discovery of kinds
    and studies. A third party's entry point that is refused is named in one warning line on stderr and left
    out, so a broken or hostile installed package never replaces a built-in nor stops the other commands."""

    found: dict[str, str] = {}
    package = importlib.import_module(builtin)
    for info in pkgutil.iter_modules(package.__path__):
        if info.ispkg and not info.name.startswith("_"):
            found[info.name] = f"{builtin}.{info.name}"
    builtins = dict(found)
    taken = reserved_columns()
    for ep in _entry_points(group):
        why = entry_point_refusal(ep.name, ep.value, builtins, found, taken, what)
        if why:
            print(f"warning: {group} entry point '{ep.name} = {ep.value}' refused: {why}", file=sys.stderr)
            continue
        found[ep.name] = ep.value

    def order(name: str) -> tuple[float, str]:
        return (getattr(importlib.import_module(found[name]), "ORDER", DEFAULT_ORDER), name)

    return {name: found[name] for name in sorted(found, key=order)}


def _entry_points(group: str) -> list:
    """The installed entry points of `group`, each (name, value) once (a dist seen twice on the path is one)."""

    return list({(ep.name, ep.value): ep for ep in entry_points(group=group)}.values())


def entry_point_refusal(name: str, value: str, builtins: dict[str, str], found: dict[str, str],
                        taken: dict[str, str], what: str) -> str:
    """Why a third party's entry point `name = value` cannot be registered ('' when it can): a name that is not
    a plain identifier, a built-in's or another entry point's name, a module that fails to import, an `ORDER`
    that is not a number, or columns (`COLUMNS`, a study's `TABLE` module's) that are malformed or already
    declared by the core or a built-in (`taken`: column -> owner)."""
    if not name.isidentifier() or name.startswith("_"):
        return f"{name!r} is not a {what} name (letters, digits and _, not starting with _)"
    if name in builtins:
        return f"it takes the built-in {what} {name!r} ({builtins[name]}), which is kept"
    if name in found:
        return f"{what} {name!r} is already registered by {found[name]}"
    try:
        module = importlib.import_module(value)
    except BaseException as exc:  # noqa: B036 (any failure of a third party's import, SystemExit included)
        if isinstance(exc, KeyboardInterrupt):
            raise
        return f"its module {value!r} fails to import ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})"
    order = getattr(module, "ORDER", DEFAULT_ORDER)
    if isinstance(order, bool) or not isinstance(order, (int, float)) or order != order or abs(order) == float("inf"):
        return f"its ORDER must be a number, not {order!r}"
    columns = getattr(module, "COLUMNS", None)
    table = getattr(module, "TABLE", None)
    if table is not None:
        if not isinstance(table, str) or importlib.util.find_spec(f"{value}.{table}") is None:
            return f"its TABLE names no module of it ({table!r})"
        try:
            table_module = importlib.import_module(f"{value}.{table}")
        except Exception as exc:
            return f"its TABLE module {table!r} fails to import ({type(exc).__name__}: {exc})"
        columns = getattr(table_module, "COLUMNS", None)
        if getattr(table_module, "HEADER", None) is not None and "layout" in taken.values():
            return "its TABLE declares a trial-table layout (HEADER); a built-in study's layout is kept"
    if columns is None:
        return ""
    entries = columns if isinstance(columns, (list, tuple)) else [columns]
    for entry in entries:
        if not (isinstance(entry, (list, tuple)) and len(entry) == 3 and all(isinstance(x, str) for x in entry)):
            return f"a column is declared as (name, dtype, meaning), got {entry!r}"
        if entry[1] not in DTYPE_NAMES:
            return f"column {entry[0]!r} has dtype {entry[1]!r}; one of {', '.join(DTYPE_NAMES)}"
        if entry[0] in taken:
            return f"column {entry[0]!r} is declared by {taken[entry[0]]} (a column has one owner)"
    return ""


def reserved_columns() -> dict[str, str]:
    """column -> owner of the columns no third party may declare: the core's, the built-in kinds' `COLUMNS` and
    the built-in studies' `TABLE` modules' (read from their light packages, without the schema)."""

    out = {c: "the core" for c, _, _ in CORE_COLUMNS}
    for builtin, label in ((BUILTIN, "kind"), ("studies", "study")):
        package = importlib.import_module(builtin)
        for info in pkgutil.iter_modules(package.__path__):
            if not info.ispkg or info.name.startswith("_"):
                continue
            module = importlib.import_module(f"{builtin}.{info.name}")
            table = getattr(module, "TABLE", None)
            table_module = None if table is None else importlib.import_module(f"{builtin}.{info.name}.{table}")
            columns = getattr(table_module or module, "COLUMNS", None)
            for entry in columns or ():
                out.setdefault(str(entry[0]), f"{label} {info.name}")
            if getattr(table_module, "HEADER", None) is not None:
                out[f"{LAYOUT_KEY}{info.name}"] = "layout"  # a built-in study declares the trial-table layout
    return out


@lru_cache(maxsize=1)
def _modules() -> dict[str, str]:
    """name -> the kind's package, in listing order (the built-in folders, then the entry points)."""
    return discover(BUILTIN, ENTRY_POINTS, "task kind")


def refresh() -> None:
    """Forget what was discovered (a kind installed or removed while the process runs: a test's toy kind)."""
    _modules.cache_clear()
    importlib.invalidate_caches()


def kind_names() -> tuple[str, ...]:
    """Every registered kind, in listing order."""
    return tuple(_modules())


def kind_module(name: str) -> ModuleType:
    """The kind's package (UnknownKind when no kind has this name)."""
    mods = _modules()
    if name not in mods:
        raise UnknownKind(name)
    return importlib.import_module(mods[name])


def kind_part(name: str, part: str) -> ModuleType | None:
    """The kind's module `part` (task, view, model, analysis, ...), imported when first asked; None when
    the kind has no such part (an error inside a part that exists is raised, never taken for absence)."""
    package = kind_module(name).__name__
    if importlib.util.find_spec(f"{package}.{part}") is None:
        return None
    return importlib.import_module(f"{package}.{part}")


def kind_file(name: str, filename: str) -> Path | None:
    """A file of the kind's folder (its page.js, its README.md), or None when it has none."""
    path = Path(kind_module(name).__file__ or "").parent / filename
    return path if path.is_file() else None


def parts(part: str, attribute: str) -> dict[str, object]:
    """name -> the `attribute` of each kind's `part` that has it (TaskKind `KIND`, ModelKind `MODEL`, ...),
    in listing order: each layer's view of the one registry."""
    out: dict[str, object] = {}
    for name in kind_names():
        mod = kind_part(name, part)
        if mod is not None and getattr(mod, attribute, None) is not None:
            out[name] = getattr(mod, attribute)
    return out


def declared(attribute: str) -> dict[str, Any]:
    """name -> what each kind's light `__init__` declares under `attribute` (only the kinds that do: its
    trial-table `COLUMNS`, experiments/schema.py), in listing order, without importing the kind's modules."""
    out: dict[str, Any] = {}
    for name in kind_names():
        value = getattr(kind_module(name), attribute, None)
        if value is not None:
            out[name] = value
    return out


def kind_attrs(name: str, part: str, *attributes: str) -> Any:
    """Names from a kind's part, for a layer that uses one kind's rule by the kind's name (the one reading
    of a rule lives in its kind): one attribute's value, or a tuple of them in the order asked."""
    mod = kind_part(name, part)
    if mod is None:
        raise UnknownKind(f"task kind {name!r} has no {part} part")
    values = tuple(getattr(mod, a) for a in attributes)
    return values[0] if len(values) == 1 else values


