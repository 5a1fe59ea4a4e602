"""The one registry of studies: a study is one package (a paradigm and its paper), found by name, lazily.

A study is what a published paradigm brings beyond its task kinds: its cells and their ordering, its
materials, its texts, its importers of the released data, its report plan and paper sections, its
scoring and error-rate rules, the trial-table columns it registers. The built-in studies are the folders
of the `studies` package (studies/<name>/); a third party's is a package named by an entry point of the
group `twinlab.studies` (`<name> = <module>`). The discovery is the kinds' (`experiments.kinds.discover`).

A study's `__init__.py` is light (no imports): it declares, as plain data, what it lends the core (for
example `IMPORTERS`: the formats `twinlab import` lists, each naming a module of the study; `TABLE`: the
plain-data module holding the trial-table columns it adds, read by experiments/schema.py); its modules
are imported only when asked (`study_part`). The core asks here and never imports a study by name.
"""
from __future__ import annotations

import importlib
import importlib.util
from functools import lru_cache
from types import ModuleType
from typing import Any

from experiments.kinds import discover

BUILTIN = "studies"  # the package whose folders are the built-in studies
ENTRY_POINTS = "twinlab.studies"  # the entry-point group a third party's study is named in


class UnknownStudy(LookupError):
    """No registered study has this name."""


@lru_cache(maxsize=1)
def _modules() -> dict[str, str]:
    """name -> the study's package, in listing order (the built-in folders, then the entry points)."""
    return discover(BUILTIN, ENTRY_POINTS, "study")


def refresh() -> None:
    """Forget what was discovered (a study installed or removed while the process runs)."""
    _modules.cache_clear()
    importlib.invalidate_caches()


def study_names() -> tuple[str, ...]:
    """Every registered study, in listing order."""
    return tuple(_modules())


def study_module(name: str) -> ModuleType:
    """The study's package (its light `__init__`; UnknownStudy when no study has this name)."""
    mods = _modules()
    if name not in mods:
        raise UnknownStudy(name)
    return importlib.import_module(mods[name])


def study_part(name: str, part: str) -> ModuleType | None:
    """The study's module `part` (dotted inside the study: `report`, `importers.cli`), imported when first
    asked; None when the study has no such module (an error inside one that exists is raised)."""
    package = study_module(name).__name__
    if importlib.util.find_spec(f"{package}.{part}") is None:
        return None
    return importlib.import_module(f"{package}.{part}")


def declared(attribute: str) -> dict[str, Any]:
    """name -> what each study's `__init__` declares under `attribute` (only the studies that do), in
    listing order: how a layer collects the studies' contributions without importing their modules."""
    out: dict[str, Any] = {}
    for name in study_names():
        value = getattr(study_module(name), attribute, None)
        if value is not None:
            out[name] = value
    return out


def declared_modules(attribute: str) -> dict[str, ModuleType]:
    """name -> the module each study's `__init__` names under `attribute` (a plain-data module, e.g. `TABLE`:
    its trial-table columns and header layout, experiments/schema.py), imported; only the studies that do."""
    out: dict[str, ModuleType] = {}
    for name, part in declared(attribute).items():
        mod = study_part(name, str(part))
        if mod is None:
            raise UnknownStudy(f"study {name!r}: its {attribute} names module {part!r}, which it does not have")
        out[name] = mod
    return out

def study_object(name: str, ref: str) -> Any:
    """What a study's declaration names as `"<module>:<attribute>"` (the module dotted inside the study):
    how the core reaches a study's function or table without naming the study's modules."""
    module, _, attribute = ref.partition(":")
    mod = study_part(name, module)
    if mod is None or not hasattr(mod, attribute):
        raise UnknownStudy(f"study {name!r} declares {ref!r}, but it has no such {'attribute' if mod else 'module'}")
    return getattr(mod, attribute)


def stimuli_part(key: str) -> Any:
    """The part `key` (`source`, `structures`, `lexicons`, `generate`) that the study supplying a spec's
    `stimuli:` section declares in its `STIMULI` (the section names no study: exactly one may supply it)."""
    found = declared("STIMULI")
    if len(found) != 1:
        raise UnknownStudy("a spec's `stimuli:` items come from the one study that declares STIMULI; "
                           + (f"several do: {', '.join(found)}" if found else "no registered study does"))
    (name, parts), = found.items()
    return study_object(name, parts[key])
