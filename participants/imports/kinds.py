"""Which kinds an import writes, found through the one registry: each kind's `importer` part.

A kind's kinds/<kind>/importer.py holds its import rules (`IMPORTER`, a kind_importer.KindImporter): which tool
elements mean it, its labels, items-file columns, `task:` section and raw record. This module names no kind: it
asks every registered kind. Each reader states a trial's kind where its file says it (`tool_kinds`: PCIbex's
controller or element, jsPsych's plugin), else None (a key press may be any kind: the `default` kind unless
`task:` in --map says otherwise). A spec has one task, so the records' kinds must be one; with `task:` in --map,
trials a reader states to be of another kind are excluded, each row counted with the reason.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace
from functools import lru_cache

from experiments.kinds import kind_names, parts
from participants.imports.kind_importer import KindImporter
from participants.imports.records import Excluded, ImportInputError, Mapping, ReadResult

# tasks the tools' elements state that twinlab may have no kind for: a study of them is refused, never read as
# the default kind; a registered kind whose importer names the element takes it (a kinds/<name>/importer.py)
# (none now: each task the tools state has its kind; tool -> {element: kind name})
STATED_WITHOUT_KIND: dict[str, dict[str, str]] = {}


def importers() -> dict[str, KindImporter]:
    """name -> the importer of every registered kind that has one, in the import's listing order."""

    return _importers(kind_names())


@lru_cache(maxsize=4)
def _importers(names: tuple[str, ...]) -> dict[str, KindImporter]:
    found: dict[str, KindImporter] = {}
    for name, imp in parts("importer", "IMPORTER").items():
        if not isinstance(imp, KindImporter) or imp.kind != name:
            raise ValueError(f"task kind {name!r}: its importer part's IMPORTER is not a KindImporter for {name!r}")
        found[name] = imp
    return dict(sorted(found.items(), key=lambda kv: (kv[1].order, kv[0])))


def import_kinds() -> tuple[str, ...]:
    """The kinds an import writes (those with an importer part)."""
    return tuple(importers())


def refuse_kind(kind: str, where: str = "") -> None:
    """Refuse a kind the import cannot write: the message names it and lists those it can."""

    writable = import_kinds()
    if kind in writable:
        return
    if kind in kind_names():
        why = f"task kind {kind!r} has no importer part (kinds/{kind}/importer.py)"
    elif any(kind in table.values() for table in STATED_WITHOUT_KIND.values()):
        why = (f"{kind.replace('_', ' ').capitalize()} has no twinlab kind yet (a tool states it: its trials stay "
               "readable with the tool's reader, e.g. participants.imports.pcibex.read_pcibex, in each trial's words, "
               "word_rts and extra)")
    else:
        why = f"the import cannot write task kind {kind!r}"
    raise ImportInputError(f"{where}{why}; an import writes the task kinds {', '.join(writable)}")


def importer_for(kind: str, where: str = "") -> KindImporter:
    """The kind's import rules (refused, naming the kinds that have some, when it has none)."""
    refuse_kind(kind, where)
    return importers()[kind]


def default_kind() -> str:
    """The kind of a trial whose tool states none (a key press): the one importer declaring `default`."""
    found = [name for name, imp in importers().items() if imp.default]
    if len(found) != 1:
        raise ImportInputError(f"{len(found)} task kinds' importers declare themselves the default "
                               f"({', '.join(found) or 'none'}); one must")
    return found[0]


def tool_kinds(tool: str) -> dict[str, str]:
    """element or plugin -> the kind it states, in `tool`'s files: every registered kind's `tool_hints`, over
    the tasks the tools state that may have no kind (STATED_WITHOUT_KIND)."""

    return _tool_kinds(tool, kind_names())


@lru_cache(maxsize=16)
def _tool_kinds(tool: str, names: tuple[str, ...]) -> dict[str, str]:
    table = dict(STATED_WITHOUT_KIND.get(tool, {}))
    claimed: dict[str, str] = {}
    for name, imp in _importers(names).items():
        for element in imp.tool_hints.get(tool, ()):
            if element in claimed:
                raise ValueError(f"{tool} element {element!r} is claimed by the kinds {claimed[element]} and {name}")
            claimed[element] = table[element] = name
    return table


def decide_task(result: ReadResult, m: Mapping) -> str:
    """The study's kind: the mapping's `task`, else the one kind the records state (the default kind where none
    is stated). With `task:` mapped, trials stated to be another kind become excluded rows (in `result`)."""
    default = default_kind()
    stated = Counter(t.task or default for t in result.trials)
    if m.task:
        refuse_kind(m.task, "--map task: ")
        keep = [t for t in result.trials if t.task in (None, m.task)]
        for t in result.trials:
            if t.task not in (None, m.task):
                why = f"a {t.task} trial, not of the study's task {m.task} (`task:` in --map)"
                result.excluded += [Excluded(t.source_file, line, why) for line in (t.rows or (t.line,))]
        if not keep:
            raise ImportInputError(f"no {m.task} trials (`task:` in --map); the files' trials are "
                                   + ", ".join(f"{n} {k}" for k, n in stated.most_common()))
        result.trials = [replace(t, task=m.task) for t in keep]
        return m.task
    if len(stated) > 1:
        raise ImportInputError("the trials are of several task kinds (" + ", ".join(
            f"{n} {k}" for k, n in stated.most_common()) + "); a twinlab spec has one task: map `task: KIND` in "
            "--map to import that kind's trials (the others are excluded, each row counted)")
    kind = next(iter(stated))
    t = next(t for t in result.trials if (t.task or default) == kind)
    refuse_kind(kind, f"{t.source_file}: line {t.line}: ")
    return kind
