"""Violation detection's materials (Lakretz et al. 2021): what one RSVP trial of a Lakretz spec needs.

A Lakretz trial is a generic `Trial` whose materials are these keys, in this order (the order of the
old dataclass fields, so the hashed JSON and the trial-table row keep their bytes). A trial of a general
design has no such materials; its Lakretz columns are filled by `design_values` with the values general
designs have always written (structure = the experiment, critical_index = -1, ...), so recorded sessions
keep their sequence hashes and stay resumable. Imports nothing of the trial (no import circle).

This module is the study's trial record adapter (`TRIAL_RECORD` in the study's `__init__`): the core's
`Trial` (experiments/trials.py) builds, reads and writes every trial's flat record through the names below
(`KEYS`, `FEEDBACK_AFTER`, `materials`, `is_record`, `design_values`, `read_columns`, `row_columns`, `view`)
and never imports this study; what reads a trial's record reads it through `Trial.study_record` (a `Record`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from experiments.trials import condition_label

Dependency = Literal["inner", "outer"]
ViolationPosition = Literal["none", "inner", "outer", "other"]  # other: a filler (a violation of another kind)

# the keys, in the trial-table / hashed order; `feedback` (a block setting, not a material) sits between
# correct_response and lexicon there (FEEDBACK_AFTER)
KEYS: tuple[str, ...] = (
    "structure",  # long_nested, short_nested, single, successive..., harder variants
    "condition",  # number of the nouns, e.g. "PSP" (outer, inner, distractor)
    "dependency",  # which verb is critical: inner/outer (None for fillers)
    "violation_position",  # "none" for grammatical trials, "other" for a filler
    "words",  # the RSVP units as presented (a unit may hold several words, e.g. Italian "l' uomo")
    "critical_index",  # the critical unit (-1: none)
    "critical_word",  # as presented
    "correct_form",  # the grammatical form at the critical position
    "alternative_word",  # number-flipped form of the presented word
    "correct_response",  # violation / no_violation
    "lexicon",  # the lexicon the item was built from
)
FEEDBACK_AFTER = "correct_response"


def materials(**values: Any) -> tuple[tuple[str, Any], ...]:
    """The frozen materials of a Lakretz trial, every key given (a missing or unknown one is a bug)."""
    if set(values) != set(KEYS):
        raise TypeError(f"Lakretz materials: missing {sorted(set(KEYS) - set(values))}, "
                        f"unknown {sorted(set(values) - set(KEYS))}")
    values["words"] = tuple(values["words"])
    values["critical_index"] = int(values["critical_index"])
    return tuple((k, values[k]) for k in KEYS)


def is_record(materials: tuple[tuple[str, Any], ...]) -> bool:
    """Whether a trial's materials are this record (a Lakretz trial's: exactly KEYS, in order)."""
    return tuple(k for k, _ in materials) == KEYS


def read_columns(kw: dict[str, Any], row: dict[str, Any]) -> None:
    """The record's columns of a flat record or a trial-table row, in place, as a Trial holds them: the RSVP
    units (`rsvp_units` wins over `words`; a row's `critical_index` counts words, a Trial's counts units;
    "": no words) and an empty `dependency` (a filler's; NaN from pandas) as None."""
    units = row.get("rsvp_units")
    w = kw["words"]
    if isinstance(units, str) and units.strip():
        kw["words"] = tuple(json.loads(units))
        if isinstance(w, str):  # a table row: its critical_index counts words; find that word's unit
            starts = [sum(len(u.split(" ")) for u in kw["words"][:k]) for k in range(len(kw["words"]))]
            kw["critical_index"] = starts.index(int(kw["critical_index"]))
    else:
        kw["words"] = tuple((w.split(" ") if w else ()) if isinstance(w, str) else w)
    if kw.get("dependency") in ("", None) or kw.get("dependency") != kw.get("dependency"):
        kw["dependency"] = None


def design_values(experiment: str, factors: tuple[tuple[str, str], ...], task: str, role: str,
                  mat: dict[str, Any]) -> dict[str, Any]:
    """The Lakretz columns of a general design's trial (values general designs wrote before `Trial`
    became generic; a factor named `structure` or `condition` fills that column)."""
    levels = dict(factors)
    text = str(mat.get("sentence") or mat.get("prefix") or "")
    answer = mat.get("answer", "")
    answer = answer if isinstance(answer, str) else ""
    label = condition_label(tuple(v for _, v in factors)) if factors else ""
    return {
        "structure": levels.get("structure", experiment),
        "condition": levels.get("condition", label or role),  # factor-less: its role
        "dependency": None,
        "violation_position": "other" if task == "violation_detection" and answer == "violation" else "none",
        "words": tuple(text.split()), "critical_index": -1, "critical_word": "", "correct_form": "",
        "alternative_word": "", "correct_response": answer, "lexicon": "",
    }


@dataclass(frozen=True)
class Record:
    """A trial's record, typed: the cell (structure, condition, dependency, violation position), the RSVP
    units and the critical one, its forms, the answer key and the lexicon (`Trial.study_record`)."""

    structure: str
    condition: str
    dependency: Dependency | None
    violation_position: ViolationPosition
    words: tuple[str, ...]
    critical_index: int
    critical_word: str
    correct_form: str
    alternative_word: str
    correct_response: str
    lexicon: str

    @property
    def grammatical(self) -> bool:
        return self.violation_position == "none"

    @property
    def multiword_units(self) -> bool:
        return any(" " in w for w in self.words)

    @property
    def prefix_words(self) -> tuple[str, ...]:
        """Units before the critical one (the forced-choice context)."""
        return self.words[: self.critical_index]


def view(values: dict[str, Any]) -> Record:
    """The typed view of a record's columns (a record trial's materials, or a general design's values)."""
    return Record(**{k: values[k] for k in KEYS})


def row_columns(values: dict[str, Any], feedback: bool) -> dict[str, Any]:
    """The record's trial-table columns, in the order its tables have always held them (`feedback` after
    the answer key): the units joined as `words`, `rsvp_units` when a unit holds several words, the critical
    index counted in words of `words` (inside a Trial it counts units; -1: none), `grammatical` last."""
    rec = view(values)
    out: dict[str, Any] = {}
    for k in KEYS:
        out[k] = values[k]
        if k == FEEDBACK_AFTER:
            out["feedback"] = feedback
    out["words"] = " ".join(rec.words)
    out["critical_index"] = (sum(len(u.split(" ")) for u in rec.words[: rec.critical_index])
                             if rec.critical_index >= 0 else rec.critical_index)
    out["rsvp_units"] = json.dumps(list(rec.words), ensure_ascii=False) if rec.multiword_units else None
    out["grammatical"] = rec.grammatical
    return out
