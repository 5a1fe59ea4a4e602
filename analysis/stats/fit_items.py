"""A fit as a report item, and one fit run with its failure noted: shared by the report sections
(design_report, reading_report) so that neither imports the other."""
from __future__ import annotations

from typing import Callable
from analysis.stats.formula import FormulaError, TooFewLevels, level_note
from analysis.stats.mixed import MixedModelError
from analysis.stats.ordinal import OrdinalError


def fit_item(kind: str, title: str, fit) -> dict:
    return {"kind": kind, "title": title, "fit": fit.to_dict()}


def fit_or_note(fn: Callable, label: str, skipped: list[str]):
    """Run one fit; a fit that fails is named in the notes (never silently missing)."""
    try:
        f = fn()
    except TooFewLevels as exc:  # one participant, item or condition: one line for all such fits (merge_level_notes)
        skipped.append(level_note(label, exc))
        return None
    except (MixedModelError, OrdinalError, FormulaError) as exc:
        skipped.append(f"{label}: not fitted ({' '.join(str(exc).split())[:400]})")
        return None
    if f.status != "ok":
        skipped.append(f"{label}: {f.status} (see its diagnostics)")
    return f
