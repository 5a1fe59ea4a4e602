"""Match each results-table row to the log trial it came from.

The table has no session column and `trial_num` restarts in each session, so a row is identified by
what it records: subject, trial_num, sentence type, condition, violation type, Viol_on_slide, the
outcome code and the release's RT. On the public sample this key is unique except for a few pairs of
rows that agree in every column (the same stimulus cell at the same trial number in both sessions,
answered alike): such rows are interchangeable, and pairing them in order gives the same data.

Pass 1 matches on the full key; pass 2 matches what is left on the stimulus alone (subject, trial_num,
sentence type, condition, violation type, slide) and marks the pair `answer_mismatch` (the table's
answer is kept beside the log's). Rows and trials left over are kept and counted by the caller.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

STIMULUS_KEY = ("subject", "trial_num", "stype", "condition", "vtype", "vslide")
ANSWER_KEY = ("outcome", "rt_key")


@dataclass
class MatchCounts:
    exact: int = 0
    interchangeable: int = 0  # exact matches inside groups of identical rows
    ambiguous: int = 0  # exact matches inside groups whose rows differ outside the key
    answer_mismatch: int = 0
    table_unmatched: int = 0
    log_unmatched: int = 0


_NUMERIC = {"subject": -1, "trial_num": -1, "vslide": -9999}


def _keys(frame: pd.DataFrame, cols: tuple[str, ...]) -> pd.DataFrame:
    """The key columns with missing values replaced by sentinels, in dtypes both sides share."""
    out = {}
    for c in cols:
        s = frame[c]
        if c in _NUMERIC:
            out[c] = s.astype("Float64").fillna(_NUMERIC[c]).astype("int64").to_numpy()
        elif c == "rt_key":
            out[c] = s.astype("float64").fillna(-1.0).to_numpy()
        else:
            out[c] = np.array(s.astype(object).where(s.notna(), "<NA>").to_numpy(), dtype=object)
    return pd.DataFrame(out, index=frame.index)


def _pair(table: pd.DataFrame, trials: pd.DataFrame, cols: tuple[str, ...]) -> pd.DataFrame:
    """Pairs (table index, trial index) agreeing on `cols`, the n-th row of a key with its n-th trial."""
    tk = _keys(table, cols)
    lk = _keys(trials, cols)
    tk["_n"] = tk.groupby(list(cols), sort=False).cumcount()
    lk["_n"] = lk.groupby(list(cols), sort=False).cumcount()
    tk["table_idx"] = table.index
    lk["trial_idx"] = trials.index
    return tk.merge(lk, on=list(cols) + ["_n"], how="inner")[["table_idx", "trial_idx"] + list(cols)]


def match_rows(table: pd.DataFrame, trials: pd.DataFrame) -> tuple[pd.Series, pd.Series, pd.Series, MatchCounts]:
    """Match table rows to log trials (finished trials of main-session logs only).

    `trials` must carry subject, trial_num, stype, condition, vtype, vslide, outcome, release_rt_s
    and `eligible` (main session, finished). Returns (table_idx per trial, trial_idx per table row,
    match label per trial) and the counts.
    """
    counts = MatchCounts()
    t = table.copy()
    lg = trials[trials["eligible"]].copy()
    for f in (t, lg):
        f["rt_key"] = np.round(f["release_rt_s"].astype("float64"), 6)
    # columns missing from this table are left out of the key
    usable = [c for c in STIMULUS_KEY + ANSWER_KEY if t[c].notna().any()]
    full = tuple(usable)
    stim = tuple(c for c in usable if c in STIMULUS_KEY)

    pairs1 = _pair(t, lg, full)
    counts.exact = len(pairs1)
    if len(pairs1):
        sizes = _keys(t, full).groupby(list(full), sort=False)[list(full)[0]].transform("size")
        multi = pairs1["table_idx"][sizes.loc[pairs1["table_idx"]].to_numpy() > 1]
        if len(multi):
            other = [c for c in t.columns if c not in full and c not in ("line",)]
            grp = _keys(t.loc[multi], full).astype(str).agg("|".join, axis=1)  # few rows: twins only
            same = (t.loc[multi, other].astype("string").fillna("<NA>").groupby(grp.to_numpy()).nunique()
                    .max(axis=1) <= 1)
            n_same = grp.map(same).fillna(False).astype(bool)
            counts.interchangeable = int(n_same.sum())
            counts.ambiguous = int((~n_same).sum())
    rest_t = t.drop(index=pairs1["table_idx"])
    rest_l = lg.drop(index=pairs1["trial_idx"])
    pairs2 = _pair(rest_t, rest_l, stim) if len(stim) < len(full) else pairs1.iloc[0:0]
    counts.answer_mismatch = len(pairs2)
    counts.table_unmatched = len(t) - len(pairs1) - len(pairs2)
    counts.log_unmatched = len(lg) - len(pairs1) - len(pairs2)

    table_of_trial = pd.Series(pd.NA, index=trials.index, dtype="Int64")
    trial_of_row = pd.Series(pd.NA, index=table.index, dtype="Int64")
    label = pd.Series(pd.NA, index=trials.index, dtype="string")
    for pairs, name in ((pairs1, "exact"), (pairs2, "answer_mismatch")):
        table_of_trial.loc[pairs["trial_idx"].to_numpy()] = pairs["table_idx"].to_numpy()
        trial_of_row.loc[pairs["table_idx"].to_numpy()] = pairs["trial_idx"].to_numpy()
        label.loc[pairs["trial_idx"].to_numpy()] = name
    return table_of_trial, trial_of_row, label, counts
