"""`--show-map`: what the import makes of the files, with counts of distinct values and where each value of the
mapping came from (the tool's defaults, inferred from the data, or --map), before anything is written.

It runs the import's own preparation (pipeline.prepare: the same reading, cell checks, --bad-trials, task
decision and design), so it shows what the import would do and, where the import would stop, why.
"""
from __future__ import annotations

import importlib
from collections import Counter
from typing import Optional

from participants.imports.cells import printable
from participants.imports.kinds import default_kind
from participants.imports.pipeline import Prepared
from participants.imports.records import Mapping
from participants.imports.registry import tool_importer
from participants.imports.source_csv import read_source_table

FIELDS = ("participant", "session", "item", "condition", "stimulus", "response", "expected", "correct", "rt_ms",
          "phase", "feedback")
COLUMN_OF = {"rt_ms": "rt", "phase": "practice"}


def applied_mappings(tool: str, prep: Prepared, mapping: Optional[Mapping]) -> list[Mapping]:
    """The mapping as the reader applied it to each file (the reader's own record, else the defaults made
    concrete for the first file's header, else the mapping given or the defaults)."""

    if prep.result.mappings:
        return list(prep.result.mappings.values())
    imp = tool_importer(tool)
    files = prep.files
    reader = importlib.import_module(f"participants.imports.{tool}")
    if hasattr(reader, "files_mapping") and files:  # a reader whose defaults depend on the files' contents
        return [reader.files_mapping(files, mapping)]
    if files and files[0].suffix.lower() in (".csv", ".tsv", ".txt"):
        try:
            eff = imp.effective_mapping(read_source_table(files[0], f"{tool} results").header, mapping)
        except Exception:   # a file the reader read its own way: the mapping as given  # noqa: BLE001
            eff = None
        if eff is not None:
            return [eff]
    return [mapping or imp.default_mapping()]


def origin(name: str, applied: list[Mapping], defaults: Mapping, mapping: Optional[Mapping]) -> str:
    """Where a mapping field's value came from: --map, the tool's defaults, or inferred from the data."""
    if mapping is not None and name in mapping.given:
        return "--map"
    values = [getattr(m, name) for m in applied]
    if len({str(v) for v in values}) > 1:
        return f"inferred per file ({len({str(v) for v in values})} ways)"
    default = getattr(defaults, name)
    if values and values[0] in (None, {}, ()) and default not in (None, {}, ()):
        return f"none (default {printable(str(default), 16)} absent)"
    if values and values[0] != default:
        return "inferred from the data"
    return "defaults"


def show_map_text(tool: str, mapping: Optional[Mapping], prep: Prepared) -> str:
    result, report = prep.result, prep.report
    defaults = tool_importer(tool).default_mapping()
    applied = applied_mappings(tool, prep, mapping)
    m = applied[0]
    lines = [f"{tool}: {len(prep.files)} file(s), {sum(result.rows_read.values())} rows: {len(result.trials)} trials, "
             f"{len(result.excluded)} excluded" + ("" if mapping is not None else " (the tool's defaults and what "
                                                                                   "they infer; --map changes them)")]
    for reason, n in Counter(e.reason for e in result.excluded).most_common():
        lines.append(f"  excluded {n}: {reason}")
    if report.bad_trials:
        lines.append(f"  of these, {report.bad_trials} trial(s) with a broken value (--bad-trials "
                     f"{report.bad_trials_policy}), first: {report.bad_trial_rows[0]}")
    lines.append(f"{'field':<12} {'column':<28} {'distinct':>8}  {'from':<22}  examples")
    for fld in FIELDS:
        name = COLUMN_OF.get(fld, fld)
        col = getattr(m, name, None)
        if fld == "phase" and not m.practice:
            col = "(loop named prac*/train*)" if tool == "psychopy" else None
        values = Counter(str(getattr(t, fld)) for t in result.trials if getattr(t, fld) is not None)
        shown_values = ", ".join(f"{printable(v)} ({n})" for v, n in values.most_common(4)) + (
            " ..." if len(values) > 4 else "")
        came = origin(name, applied, defaults, mapping)
        lines.append(f"{fld:<12} {str(col or '-'):<28} {len(values):>8}  {came:<22}  {shown_values}")
    for name, col in m.factors.items():
        vals = Counter(t.factors.get(name, "") for t in result.trials)
        lines.append(f"factor {name:<5} {col:<28} {len(vals):>8}  {origin('factors', applied, defaults, mapping):<22}  "
                     + ", ".join(f"{printable(v)} ({n})" for v, n in vals.most_common(4)))
    lines.append(f"task: {task_line(prep, defaults, mapping)}; labels: "
                 + (", ".join(f"{k} = {v}" for k, v in m.labels.items())
                    + f" ({origin('labels', applied, defaults, mapping)})" if m.labels
                    else "the raw responses themselves"))
    lines.append(f"rt unit: {m.rt_unit} ({origin('rt_unit', applied, defaults, mapping)})")
    people = Counter(t.participant for t in result.trials)
    lines.append(f"people: {len(people)} ("
                 + ", ".join(f"{printable(p)}: {n} trials" for p, n in list(people.items())[:8])
                 + (" ..." if len(people) > 8 else "") + ")")
    for note in result.notes[:10]:
        lines.append(f"note: {note}")
    if prep.refusal:
        lines.append(f"the import would stop: {prep.refusal}")
    lines.append("nothing was written (--show-map)")
    return "\n".join(lines)


def task_line(prep: Prepared, defaults: Mapping, mapping: Optional[Mapping]) -> str:
    """The study's kind and where it came from, with the counts of the kinds the reader stated per trial."""
    decided = prep.report.task
    stated = {k: n for k, n in prep.stated_kinds.items() if k}
    unstated = prep.stated_kinds.get("", 0)
    parts = [f"{k} ({n})" for k, n in sorted(stated.items(), key=lambda kv: -kv[1])] + (
        [f"not stated ({unstated})"] if unstated else [])
    counts = ", ".join(parts) or "no trials"
    if mapping is not None and "task" in mapping.given:
        return f"{mapping.task} (--map; trials as read: {counts})"
    if not decided:
        return f"not decided (trials as read: {counts})"
    if defaults.task == decided:
        return f"{decided} (defaults: {counts})"
    if stated:
        return f"{decided} (inferred from the data: {counts})"
    return f"{decided} (defaults: no tool element states a kind, so the default kind {default_kind()}; {counts})"
