"""A fit as a report item, and one fit run with its failure noted: shared by the report sections
(design_report, reading_report) so that neither imports the other."""
from __future__ import annotations

from typing import Callable

from analysis.stats.formula import FormulaError, TooFewLevels, level_note
from analysis.stats.mixed import MixedModelError
from analysis.stats.ordinal import OrdinalError


def fit_item(kind: str, title: str, fit) -> dict:
    return {"kind": kind, "title": title, "fit": fit.to_dict()}


NOT_FITTED = ": not fitted ("
ONE_LEVEL = "grouping factors must have > 1 sampled level"


def fit_or_note(fn: Callable, label: str, skipped: list[str]):
    """Run one fit; a fit that fails is named in the notes (never silently missing), its cause in words."""
    try:
        f = fn()
    except TooFewLevels as exc:  # one participant, item or condition: one line for all such fits (merge_level_notes)
        skipped.append(level_note(label, exc))
        return None
    except (MixedModelError, OrdinalError, FormulaError) as exc:
        skipped.append(f"{label}{NOT_FITTED}{failure_cause(str(exc))})")
        return None
    if f.status != "ok":
        skipped.append(f"{label}: {f.status} (see its diagnostics)")
    return f


def failure_cause(message: str) -> str:
    """A fit's failure as the cause a user can act on: lme4's one-level refusal says that a random effect needs
    two or more subjects (or items); anything else is R's own message, on one line."""
    text = " ".join(message.split())
    if ONE_LEVEL in text:
        return ("a random effect needs two or more levels of its grouping column (subjects, items) and these rows "
                "hold one; lme4: " + ONE_LEVEL)
    return text[:400]


def grouped_notes(notes: list[str]) -> list[str]:
    """The notes with the fits that failed for one cause on one line ("not fitted (cause): a, b, c (3 fits)"),
    in the order each cause first appears; every other note as it is."""
    out: list[str] = []
    by_cause: dict[str, list[str]] = {}
    for n in notes:
        label, sep, rest = n.partition(NOT_FITTED)
        if not sep or not rest.endswith(")"):
            out.append(n)
            continue
        cause = rest[:-1]
        if cause not in by_cause:
            by_cause[cause] = []
            out.append(cause)  # a placeholder, filled below
        by_cause[cause].append(label)
    return [f"not fitted ({n}): {', '.join(by_cause[n])}" + (f" ({len(by_cause[n])} fits)" if len(by_cause[n]) > 1
                                                             else "")
            if n in by_cause else n for n in out]
