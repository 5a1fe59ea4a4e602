"""Error rates by condition x dependency with 95% bootstrap CIs over subjects (seeds/000 Fig. 2).

Unit: post-training violation trials with an answer (a miss is an error). The rate of a cell is
errors / trials over all its subjects (for the Lakretz data WRONG / (CORRECT + WRONG) on violation
trials); `mean_subject_rate` beside it is the mean of the subjects' own rates (they differ when
subjects contribute different numbers of trials). The CI resamples subjects with all their
trials (a single subject, e.g. one deterministic model subject, falls back to resampling its
trials; `ci_unit` says which).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.load.prepare import condition_order, scored_rows
from analysis.stats.bootstrap import N_BOOT, error_rate_ci, make_progress

KEYS = ["group", "subject_kind", "structure", "condition", "dependency"]


def error_rates(df: pd.DataFrame, seed: int = 0, n_boot: int = N_BOOT, show_progress: bool = True,
                keys: list[str] | None = None) -> pd.DataFrame:
    """One row per group x structure x condition x dependency: n, error_rate, ci_low, ci_high."""
    keys = keys or KEYS
    rows = scored_rows(df)
    rng = np.random.default_rng(seed)
    cells = list(rows.groupby(keys, sort=True, observed=True))
    out = []
    prog = make_progress() if show_progress else None
    task = prog.add_task("bootstrap error rates", total=len(cells)) if prog else None
    if prog:
        prog.start()
    try:
        for key, g in cells:
            ci = error_rate_ci(g, rng, n_boot)
            out.append(dict(zip(keys, key, strict=False)) | {
                "n_subjects": g["subject_key"].nunique(), "n_trials": len(g), "n_errors": int(g["error"].sum()),
                "error_rate": ci.estimate, "ci_low": ci.low, "ci_high": ci.high, "ci_unit": ci.unit,
                "mean_subject_rate": float(g["error"].astype(float).groupby(g["subject_key"]).mean().mean()),
            })
            if prog:
                prog.advance(task)
    finally:
        if prog:
            prog.stop()
    table = pd.DataFrame(out, columns=keys + ["n_subjects", "n_trials", "n_errors", "error_rate", "ci_low",
                                              "ci_high", "ci_unit", "mean_subject_rate"])
    return sort_conditions(table)


def sort_conditions(table: pd.DataFrame) -> pd.DataFrame:
    if table.empty or "condition" not in table:
        return table.reset_index(drop=True)
    order = {c: i for i, c in enumerate(condition_order(table["condition"]))}
    t = table.assign(_o=table["condition"].map(order))
    front = [c for c in ("group", "structure", "dependency", "violation_position") if c in t.columns]
    return t.sort_values(front + ["_o"], kind="stable").drop(columns="_o").reset_index(drop=True)


def false_alarms(df: pd.DataFrame) -> pd.DataFrame:
    """Grammatical trials answered 'violation' (post-training), by group x structure x condition."""
    g = df[(df["violation_position"] == "none") & df["correct"].notna() & ~df["training"]]
    if g.empty:
        return pd.DataFrame(columns=["group", "structure", "condition", "n_trials", "false_alarm_rate"])
    t = (g.groupby(["group", "structure", "condition"], observed=True)["error"]
         .agg(n_trials="size", false_alarm_rate="mean").reset_index())
    return sort_conditions(t)
