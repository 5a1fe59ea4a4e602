"""First encounter after training (seeds/000 Figure 6a-b, Table C1, Figure C1).

For each subject, the first post-training trial of each structure x condition x violation
position (`first_encounter` in analysis/prepare.py). If that trial has no usable answer the
subject is left out of that cell (the next trial is *not* a first encounter).
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from analysis.bootstrap import N_BOOT, error_rate_ci
from analysis.error_rates import sort_conditions
from analysis.prepare import condition_order, scored_rows

KEYS = ["group", "subject_kind", "structure", "condition", "violation_position"]


def first_rows(df: pd.DataFrame) -> pd.DataFrame:
    rows = scored_rows(df)
    return rows[rows["first_encounter"]]


def first_encounter_table(df: pd.DataFrame, seed: int = 0, n_boot: int = N_BOOT) -> pd.DataFrame:
    """Long table: error rate on the first encounter per cell, bootstrap CI over subjects."""
    rows = first_rows(df)
    rng = np.random.default_rng(seed)
    out = []
    for key, g in rows.groupby(KEYS, sort=True, observed=True):
        ci = error_rate_ci(g, rng, n_boot)
        out.append(dict(zip(KEYS, key)) | {
            "n_subjects": g["subject_key"].nunique(), "n_errors": int(g["error"].sum()),
            "error_rate": ci.estimate, "ci_low": ci.low, "ci_high": ci.high,
            "mean_trial": float(g["trials_before"].astype(float).mean()),
        })
    return sort_conditions(pd.DataFrame(out, columns=KEYS + ["n_subjects", "n_errors", "error_rate", "ci_low",
                                                             "ci_high", "mean_trial"]))


def table_c1(long: pd.DataFrame, group: str = "human", structure: str = "long_nested") -> pd.DataFrame:
    """Table C1 layout: rows violation position (inner, outer), columns conditions, cells error rate."""
    t = long[(long["group"] == group) & (long["structure"] == structure)]
    if t.empty:
        return pd.DataFrame()
    wide = t.pivot(index="violation_position", columns="condition", values="error_rate")
    wide = wide.reindex(index=[v for v in ("inner", "outer") if v in wide.index],
                        columns=condition_order(wide.columns))
    wide.index.name = "violation_type"
    wide.columns.name = None
    return wide


def logistic_fit(x: np.ndarray, y: np.ndarray) -> dict:
    """error ~ x by maximum likelihood (statsmodels GLM, binomial); a note instead of a fit when impossible."""
    import statsmodels.api as sm

    x = np.asarray(x, float)
    y = np.asarray(y, float)
    res = {"n": int(len(y)), "intercept": np.nan, "slope": np.nan, "slope_se": np.nan, "slope_p": np.nan,
           "status": "not fitted", "note": ""}
    if len(y) < 5:
        res["note"] = "fewer than 5 trials"
    elif y.min() == y.max():
        res["note"] = "no errors" if y.max() == 0 else "all errors"
    elif np.ptp(x) == 0:
        res["note"] = "a single trial position"
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                fit = sm.GLM(y, sm.add_constant(x), family=sm.families.Binomial()).fit()
                res.update(intercept=float(fit.params[0]), slope=float(fit.params[1]),
                           slope_se=float(fit.bse[1]), slope_p=float(fit.pvalues[1]),
                           status="ok" if fit.converged else "not converged, do not interpret")
            except Exception as exc:  # perfect separation, no convergence (warnings are errors here)
                res["note"] = f"no fit ({type(exc).__name__}: {' '.join(str(exc).split())[:120]})"
                res["status"] = "not converged, do not interpret"
    return res


def first_encounter_fits(df: pd.DataFrame, x: str = "trials_before") -> pd.DataFrame:
    """Figure C1 curves: per cell, logistic regression of first-encounter error on trial number."""
    rows = first_rows(df)
    out = []
    for key, g in rows.groupby(KEYS, sort=True, observed=True):
        out.append(dict(zip(KEYS, key)) | {"x": x} | logistic_fit(g[x].astype(float), g["error"].astype(float)))
    return sort_conditions(pd.DataFrame(out, columns=KEYS + ["x", "n", "intercept", "slope", "slope_se", "slope_p",
                                                             "status", "note"]))


def first_encounter_points(df: pd.DataFrame, x: str = "trials_before") -> pd.DataFrame:
    """Figure C1 points: mean first-encounter error of all subjects who met the cell at that trial."""
    rows = first_rows(df)
    if rows.empty:
        return pd.DataFrame(columns=KEYS + [x, "n", "error_rate"])
    return (rows.groupby(KEYS + [x], observed=True)["error"].agg(n="size", error_rate="mean").reset_index())
