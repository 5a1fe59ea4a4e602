"""Which rows an analysis uses (`--blocks`) and the order columns every table of a design has.

Why one module: a fit that silently drops the training block answers "did they learn?" with "no".
Which blocks and roles a table, fit or figure used is one rule here, and every section
says it in words (`scope_text`).

Blocks (`--blocks`, `api.report(blocks=...)`, `api.fit(..., blocks=...)`):

- a row is **training** when its block is named like training or practice (`analysis.load.prepare`'s rule)
  or its role is `practice`; every other row is **test** (fillers are test-block rows of role `filler`);
- `test` (the default): the test rows, fillers left out (they have no factor levels);
- `training,test`: training and test rows, fillers left out;
- `all`: every row, fillers and practice included.

Order columns (per subject, in the order session, trial_index; only where the order is known):

- `block`: the block's name as run; `role`: test, filler or practice (missing: test);
- `block_kind`: training or test (the rule above);
- `trial_position`: 1-based position of the trial inside its block (1 = the block's first trial);
- `trials_before`: trials completed before this one, all blocks and sessions;
- `exposures`: earlier trials of the same cell (the combination of the cell's factors: the design's
  factors, or `--by`), training included; 0 on the subject's first trial of the cell;
- `exposures_any`: earlier trials of any cell (design trials with levels, training included; fillers
  and rows without levels not counted);
- `first_encounter`: the subject's first *test* trial of its cell (training trials before it do not
  count: the question is what the training taught), whether answered or not.

The Lakretz designs keep their own definitions (analysis/load/prepare.py: exposures count post-training
trials only); `LearningConfig` in analysis/learning/general.py expresses them as a configuration.
"""
from __future__ import annotations

from typing import Iterable

import pandas as pd

BLOCK_KINDS = ("training", "test")
BLOCK_CHOICES = ("test", "training,test", "all")
ORDER_COLUMNS = ("block", "role", "block_kind", "trial_position", "trials_before", "exposures", "exposures_any",
                 "first_encounter")


class BlocksError(ValueError):
    """A --blocks value that is not one of the choices (the message lists them)."""


def parse_blocks(text: str | Iterable[str] | None) -> str:
    """'test' | 'training,test' (either order, 'test,training') | 'all' -> the canonical choice."""
    if text is None:
        return "test"
    parts = [p.strip().lower() for p in (text.split(",") if isinstance(text, str) else list(text)) if p.strip()]
    if parts == ["all"]:
        return "all"
    if parts and set(parts) <= set(BLOCK_KINDS) and len(set(parts)) == len(parts):
        return "test" if parts == ["test"] else ("training,test" if set(parts) == set(BLOCK_KINDS) else "training")
    raise BlocksError(f"--blocks {text!r}: use test (the default), training,test or all (training: blocks named "
                      "training/practice and practice rows; all: every row, fillers included)")


def block_kind(d: pd.DataFrame) -> pd.Series:
    """'training' or 'test' per row (the rule of the module doc)."""
    train = d["training"].astype(bool) if "training" in d.columns else pd.Series(False, index=d.index)
    if "role" in d.columns:
        train = train | d["role"].fillna("").astype(str).eq("practice")
    return train.map({True: "training", False: "test"}).astype("string")


def select_blocks(d: pd.DataFrame, blocks: str = "test") -> pd.DataFrame:
    """The rows `blocks` names (the module doc); `test` is exactly analysis.measures.design_rates.design_rows."""
    blocks = parse_blocks(blocks)
    if blocks == "all":
        return d
    kind = block_kind(d)
    keep = kind.isin(blocks.split(","))
    if "role" in d.columns:
        keep &= ~d["role"].fillna("test").astype(str).eq("filler")
    return d[keep]


def scope_text(rows: pd.DataFrame, blocks: str, given: str | None = None) -> str:
    """'Rows (--blocks test): blocks test, roles test; 96 trials.' -- what every section says about the rows it
    used; `given`: the user's --blocks where the section chose other rows itself (said so, never passed off as
    the user's option)."""
    def named(col: str) -> str:
        if col not in rows.columns or rows.empty:
            return "none"
        return ", ".join(sorted(set(rows[col].fillna("test" if col == "role" else "").astype(str)) - {""})) or "none"

    used = parse_blocks(blocks)
    which = (f"--blocks {used}" if given is None or parse_blocks(given) == used
             else f"{used.replace(',', ' and ')} blocks, this section's own rows whatever --blocks says")
    return f"Rows ({which}): blocks {named('block')}, roles {named('role')}; {len(rows)} trials."


def add_order_columns(d: pd.DataFrame, cell: list[str]) -> pd.DataFrame:
    """A copy with the order columns of the module doc; `cell`: the factors whose combination is a cell."""
    d = d.copy()
    if "role" not in d.columns:
        d["role"] = pd.Series(pd.NA, index=d.index, dtype="string")
    d["block_kind"] = block_kind(d)
    known = d["order_known"].astype(bool) if "order_known" in d.columns else pd.Series(True, index=d.index)
    for c in ("trial_position", "trials_before", "exposures", "exposures_any"):
        d[c] = pd.Series(pd.NA, index=d.index, dtype="Int64")
    k = d[known].sort_values(["subject_key", "session", "trial_index"], kind="stable")
    d.loc[k.index, "trials_before"] = k.groupby("subject_key", sort=False).cumcount().astype("Int64")
    pos = k.groupby(["subject_key", "session", "block"], sort=False, dropna=False).cumcount() + 1
    d.loc[k.index, "trial_position"] = pos.astype("Int64")
    cols = [c for c in cell if c in d.columns]
    with_levels = k.dropna(subset=cols) if cols else k.iloc[0:0]
    if "role" in with_levels.columns:
        with_levels = with_levels[~with_levels["role"].fillna("").astype(str).eq("filler")]
    if len(with_levels):
        d.loc[with_levels.index, "exposures"] = (with_levels.groupby(["subject_key"] + cols, sort=False, observed=True)
                                                 .cumcount().astype("Int64"))
        d.loc[with_levels.index, "exposures_any"] = (with_levels.groupby("subject_key", sort=False).cumcount()
                                                     .astype("Int64"))
    test = with_levels[d.loc[with_levels.index, "block_kind"] == "test"]
    first = test.groupby(["subject_key"] + cols, sort=False, observed=True).cumcount() == 0 if len(test) else test.index
    d["first_encounter"] = False
    if len(test):
        d.loc[first[first].index, "first_encounter"] = True
    d["first_encounter"] = d["first_encounter"].astype(bool)
    return d
