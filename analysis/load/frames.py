"""The trial frame every analysis of a general design reads, built once: prepared rows, the item key, the
judgment columns from the task's labels, `grammatical` only where the items give it, deterministic model
copies merged (analysis/load/subjects.py). `api.load_sessions` and `twinlab analyze` both call `design_frame`."""
from __future__ import annotations

import pandas as pd

from analysis.load.prepare import prepare
from analysis.load.rows import add_order_columns, select_blocks
from analysis.load.subjects import merge_copies
from analysis.measures.design_rates import add_accepted, design_rows, item_key
from analysis.measures.judgments import fill_grammatical


def is_general_design(d: pd.DataFrame, factors: dict) -> bool:
    """A general design's table carries a task (the Lakretz tables have none) or declared factors."""
    return bool(factors) or ("task" in d.columns and d["task"].notna().any())


def design_frame(df: pd.DataFrame, factors: dict,
                 copies: str = "merge") -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """(rows, deterministic-copies table, notes) of loaded trials; copies merged only for a general design."""
    d = prepare(df)
    d["item"] = item_key(d)
    d = add_accepted(d)
    general = is_general_design(d, factors)
    if general:
        d = fill_grammatical(d, factors)
        # order columns per session first: merged copies keep their own positions and exposures
        d = with_order(d, [f for f in factors if f in d.columns])
        d, table, notes = merge_copies(d, enabled=copies != "subjects")
        return d, table, notes
    return d, pd.DataFrame(), []


def with_order(d: pd.DataFrame, cell: list[str]) -> pd.DataFrame:
    """The order columns (block_kind, trial_position, trials_before, exposures, exposures_any,
    first_encounter) with `cell` the factors of a cell (analysis/load/rows.py)."""
    return add_order_columns(d, cell)


def model_frame(df: pd.DataFrame, blocks: str = "test") -> pd.DataFrame:
    """The rows a formula is fitted on: the blocks `blocks` names (analysis/load/rows.py; default the
    design's test trials); `subject_id` made unique across groups (a human S01 and a model subject S01 are
    two subjects; merged model copies are one), `item` the item group."""
    d = (design_rows(df) if blocks == "test" else select_blocks(df, blocks)).copy()
    if "subject_key" in d.columns:
        d["subject_id"] = d["subject_key"].astype(str)
    return d
