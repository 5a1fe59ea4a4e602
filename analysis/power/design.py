"""The design a power simulation runs on: the pilot's own lists, extended along subjects and items.

Why the pilot's structure and not a generic grid: power depends on which subject sees which item in which
condition (a Latin square makes a within-item factor cancel the item intercepts; a between-item factor does
not). The template is read from the pilot's rows, never from a design's name:

- a **list** is the `list` column of the trial table (the list a subject was assigned); without one, the set
  of (item, predictor values) a subject saw (a design that randomises every subject's sequence then has one
  "list" per pilot subject, and simulated subjects take those sequences in rotation). Each list's rows are
  those of its first pilot subject, in trial order, with every predictor column the formula reads (factors,
  numeric covariates such as trial position).
- **subjects** are assigned to lists in rotation (subject j gets list j mod L), as the compiler assigns them;
  fewer subjects than lists is refused (a list nobody runs is not the design) where the lists are the table's.
- a pilot without item groups (the Lakretz results table) has its trials as units: item t1, t2, ... in order.
- **items** beyond the pilot's are copies of the pilot's items in order (item k copies item k mod I, with the
  condition it has in each list), so the Latin square and the items per condition are kept; fewer items than
  the pilot's keeps the first ones (an unbalanced result is said in the notes).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

SUBJECT = "subject_id"
ITEM = "item"
ORDER_COLUMNS = ("session", "block_trial_index", "trial_index")


class DesignError(ValueError):
    """The pilot's rows cannot give a design to simulate on (the message says why)."""


@dataclass
class Template:
    """The pilot's lists: per list its rows (item + predictors), and the pilot items in order."""

    lists: list[pd.DataFrame]
    list_names: list[str]
    items: list[str]
    predictors: list[str]
    n_pilot_subjects: int
    list_source: str  # 'the list column' | 'the items and conditions each subject saw'
    notes: list[str] = field(default_factory=list)

    @property
    def trials_per_list(self) -> list[int]:
        return [len(t) for t in self.lists]


def _ordered(rows: pd.DataFrame) -> pd.DataFrame:
    keys = [c for c in ORDER_COLUMNS if c in rows.columns and rows[c].notna().all()]
    return rows.sort_values(keys, kind="stable") if keys else rows


def _sort_key(name: str):
    try:
        return (0, float(name), name)
    except ValueError:
        return (1, 0.0, name)


def template(rows: pd.DataFrame, predictors: list[str]) -> Template:
    """The lists of the pilot rows (one group's test trials), read as the module docstring says."""
    if SUBJECT not in rows.columns:
        raise DesignError(f"the pilot rows have no {SUBJECT!r} column: the simulation needs subjects")
    cols = [ITEM] + [p for p in predictors if p not in (SUBJECT, ITEM)]
    rows = rows.copy()
    rows.attrs = {}  # the loader's attrs (tables) would be compared by every concat
    notes = []
    if ITEM not in rows.columns or rows[ITEM].isna().all():  # e.g. the Lakretz results table: no item groups
        rows = pd.concat([_ordered(g) for _, g in rows.groupby(SUBJECT, sort=False)])
        rows[ITEM] = "t" + (rows.groupby(SUBJECT, sort=False).cumcount() + 1).astype(str)
        notes.append("the pilot has no item column: a list's trials are its units (t1, t2, ... in trial order) and "
                     "--items counts them")
    use_list = "list" in rows.columns and rows["list"].notna().all()
    subjects = list(dict.fromkeys(rows[SUBJECT].astype(str)))
    by_list: dict[str, pd.DataFrame] = {}
    for s in subjects:
        r = _ordered(rows[rows[SUBJECT].astype(str) == s])
        if use_list:
            key = str(r["list"].iloc[0])
        else:
            key = repr(sorted(map(tuple, r[cols].astype(str).values.tolist())))
        by_list.setdefault(key, r[cols].reset_index(drop=True).copy())
    names = sorted(by_list, key=_sort_key) if use_list else list(by_list)
    lists = [by_list[k] for k in names]
    shown = names if use_list else [str(i + 1) for i in range(len(names))]
    items = sorted(set(rows[ITEM].astype(str)), key=_sort_key)
    return Template(lists, shown, items, [c for c in cols if c != ITEM], len(subjects),
                    "the list column" if use_list else "the items and conditions each subject saw", notes)


def study_rows(t: Template, n_subjects: int, n_items: int | None = None) -> int:
    """The trials of the largest list of a study `extend` would build, times the subjects: its size without
    building it (checked against the bounds before any work)."""
    n_items = len(t.items) if n_items is None else n_items
    per_item = max(len(rows) for rows in t.lists) / max(1, len(t.items))
    return int(round(per_item * n_items)) * n_subjects


def extend(t: Template, n_subjects: int, n_items: int | None = None) -> pd.DataFrame:
    """The rows of a study with `n_subjects` subjects (rotating through the lists) and `n_items` items
    (the pilot's count when None): columns subject_id, item, list and the predictors."""
    if n_subjects < len(t.lists) and t.list_source == "the list column":
        raise DesignError(f"{n_subjects} subjects is fewer than the design's {len(t.lists)} lists: every list "
                          "must be run at least once")
    n_items = len(t.items) if n_items is None else n_items
    index = {it: k for k, it in enumerate(t.items)}
    per_list = []
    for name, rows in zip(t.list_names, t.lists, strict=False):
        reps = []
        for r in range((n_items + len(t.items) - 1) // len(t.items)):
            c = rows.copy()
            k = c[ITEM].astype(str).map(index) + r * len(t.items)
            c = c[k < n_items]
            c[ITEM] = c[ITEM].astype(str) + ("" if r == 0 else f"~{r}")
            reps.append(c)
        per_list.append(pd.concat(reps, ignore_index=True).assign(list=name))
    parts = [per_list[j % len(per_list)].assign(**{SUBJECT: f"sim{j + 1:04d}"}) for j in range(n_subjects)]
    out = pd.concat(parts, ignore_index=True)
    return out[[SUBJECT, ITEM, "list"] + t.predictors]


def balance_notes(t: Template, design: pd.DataFrame, factors: list[str], n_subjects: int) -> list[str]:
    """What is unbalanced in an extended design (subjects not a multiple of the lists, unequal cells)."""
    notes = []
    if n_subjects % len(t.lists):
        notes.append(f"{n_subjects} subjects over {len(t.lists)} lists: the lists are not run equally often")
    fs = [f for f in factors if f in design.columns]
    if fs:
        counts = design.groupby(fs, dropna=False).size()
        if counts.nunique() > 1:
            notes.append(f"{design[ITEM].nunique()} items: the cells of {', '.join(fs)} have unequal numbers of "
                         f"trials ({counts.min()} to {counts.max()})")
    return notes
