"""`--show-map`: what the mapping makes of the files, with counts of distinct values, before anything is written."""
from __future__ import annotations

import importlib
from collections import Counter
from pathlib import Path
from typing import Optional

from participants.imports.kinds import default_kind
from participants.imports.records import Mapping, ReadResult

FIELDS = ("participant", "session", "item", "condition", "stimulus", "response", "expected", "correct", "rt_ms",
          "phase", "feedback")
COLUMN_OF = {"rt_ms": "rt", "phase": "practice"}


def used_mapping(tool: str, files: list[Path], mapping: Optional[Mapping]) -> Optional[Mapping]:
    """The mapping as the reader applies it to the first file (its defaults made concrete), where it says."""
    if mapping is not None:
        return mapping
    mod = importlib.import_module(f"participants.imports.{tool}")
    if hasattr(mod, "effective_mapping") and files and files[0].suffix.lower() in (".csv", ".tsv", ".txt"):
        from participants.imports.source_csv import read_source_table

        table = read_source_table(files[0], f"{tool} results")
        if tool == "psychopy":   # its answer component and trial loops are found from the rows, not the header
            return mod.effective_mapping(table.header, None, table)
        return mod.effective_mapping(table.header, None)
    return mod.default_mapping()


def show_map_text(tool: str, files: list[Path], mapping: Optional[Mapping], result: ReadResult) -> str:
    m = used_mapping(tool, files, mapping)
    lines = [f"{tool}: {len(files)} file(s), {sum(result.rows_read.values())} rows: {len(result.trials)} trials, "
             f"{len(result.excluded)} excluded" + ("" if mapping is not None else " (the tool's defaults; --map changes them)")]
    for reason, n in Counter(e.reason for e in result.excluded).most_common():
        lines.append(f"  excluded {n}: {reason}")
    lines.append(f"{'field':<12} {'column':<28} {'distinct':>8}  examples")
    for fld in FIELDS:
        col = getattr(m, COLUMN_OF.get(fld, fld), None) if m else None
        if fld == "phase" and m is not None and not m.practice:
            col = "(loop named prac*/train*)" if tool == "psychopy" else None
        values = Counter(str(getattr(t, fld)) for t in result.trials if getattr(t, fld) is not None)
        shown = ", ".join(f"{v[:24]} ({n})" for v, n in values.most_common(4)) + (" ..." if len(values) > 4 else "")
        lines.append(f"{fld:<12} {str(col or '-'):<28} {len(values):>8}  {shown}")
    if m is not None:
        for name, col in m.factors.items():
            vals = Counter(t.factors.get(name, "") for t in result.trials)
            lines.append(f"factor {name:<5} {col:<28} {len(vals):>8}  " + ", ".join(f"{v} ({n})" for v, n in vals.most_common(4)))
        stated = Counter(t.task or f"not stated ({default_kind()})" for t in result.trials)
        kinds = f"{m.task} (--map)" if m.task else "as the files state: " + ", ".join(
            f"{k} ({n})" for k, n in stated.most_common())
        lines.append(f"task: {kinds}; labels: " + (", ".join(f"{k} = {v}" for k, v in m.labels.items())
                                                   or "the raw responses themselves"))
        lines.append(f"rt unit: {m.rt_unit}")
    people = Counter(t.participant for t in result.trials)
    lines.append(f"people: {len(people)} (" + ", ".join(f"{p}: {n} trials" for p, n in list(people.items())[:8])
                 + (" ..." if len(people) > 8 else "") + ")")
    lines += [f"note: {n}" for n in result.notes[:8]] + ([f"note: ... {len(result.notes) - 8} more"]
                                                         if len(result.notes) > 8 else [])
    lines.append("nothing was written (--show-map)")
    return "\n".join(lines)
