"""Accuracy by method and model, and the demand gap as the paper defines it.

Demand gap (the authors' compute_log_odds): log-odds of the low-demand method's proportion correct minus
that of the high-demand method, per model (forced choice - production; direct - metalinguistic). For word
prediction: the mean over items of direct - metalinguistic final-word log-probability. A proportion of 0 or 1
makes the gap infinite: the paper leaves such a point out of Figure 2D (and caps it at 5 in its
training-time notebook); here it is kept in the table, flagged, and left out of the regression lines.

The bands of Figures 2B/D and 3B/D are seaborn's regplot bands, recomputed: the OLS line of the gap on
log10(size) over the models, refitted on 1000 bootstrap resamples of the models (percentile 95% band).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from reproductions.hu_frank.released import BINARY, METHOD_NAME, METHODS

KEYS = ["source", "model", "family", "n_params_b"]


def _metric(domain: str) -> str:
    return "correct" if BINARY[domain] else "logprob"


def method_means(rows: pd.DataFrame, domain: str, by: list[str], n_boot: int, seed: int) -> pd.DataFrame:
    """Mean of the domain's measure per `by` and method with a percentile bootstrap CI over rows (the
    authors' bar plots resample rows the same way)."""
    rng = np.random.default_rng(seed)
    metric = _metric(domain)
    out = []
    for key, g in rows.groupby(by + ["method"], sort=False, dropna=False):
        v = g[metric].to_numpy(float)
        n = len(v)
        est = float(v.mean())
        if n > 1 and n_boot > 0:
            # means of bootstrap resamples in chunks (a 5000-row item set x 1000 resamples is 40 MB at once)
            means = np.concatenate([v[rng.integers(0, n, size=(min(200, n_boot - i), n))].mean(axis=1)
                                    for i in range(0, n_boot, 200)])
            lo, hi = np.quantile(means, [0.025, 0.975])
        else:
            lo = hi = float("nan")
        low, high = METHODS[domain]
        method = key[-1]
        out.append({**dict(zip(by, key[:-1], strict=False)), "method": method, "method_name": METHOD_NAME[method],
                    "demand": "low" if method == low else "high", "measure": "proportion correct" if BINARY[domain]
                    else "final-word "
                         "log-probability", "n_rows": n, "mean": est, "ci_low": float(lo), "ci_high": float(hi)})
    return pd.DataFrame(out)


def demand_gap(rows: pd.DataFrame, domain: str, by: list[str]) -> pd.DataFrame:
    """The paper's gap per `by` (low - high demand: log-odds difference, or log-probability difference)."""
    low, high = METHODS[domain]
    metric = _metric(domain)
    m = rows.groupby(by + ["method"], dropna=False)[metric].mean().unstack("method")
    out = m[[low, high]].rename(columns={low: "low_demand", high: "high_demand"}).reset_index()
    if BINARY[domain]:
        with np.errstate(divide="ignore", invalid="ignore"):
            lo_odds = np.log(out["low_demand"] / (1 - out["low_demand"]))
            hi_odds = np.log(out["high_demand"] / (1 - out["high_demand"]))
        out["gap"] = lo_odds - hi_odds
        out["gap_measure"] = "log-odds difference"
        flag = np.where(~np.isfinite(out["gap"]), "infinite: a proportion of 0 or 1 (left out of the lines)", "")
    else:
        out["gap"] = out["low_demand"] - out["high_demand"]
        out["gap_measure"] = "log-probability difference"
        flag = np.full(len(out), "")
    out["flag"] = flag
    out["low_method"], out["high_method"] = METHOD_NAME[low], METHOD_NAME[high]
    return out


def regression_band(x: np.ndarray, y: np.ndarray, grid: np.ndarray, n_boot: int = 1000,
                    seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """OLS line of y on x at `grid` and its percentile 95% band from resampling the points."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    line = np.polyval(np.polyfit(x, y, 1), grid)
    rng = np.random.default_rng(seed)
    fits = []
    for _ in range(n_boot):
        i = rng.integers(0, len(x), len(x))
        if np.ptp(x[i]) == 0:
            continue
        fits.append(np.polyval(np.polyfit(x[i], y[i], 1), grid))
    fits = np.asarray(fits)
    lo, hi = np.quantile(fits, [0.025, 0.975], axis=0)
    return line, lo, hi


def slopes(gaps: pd.DataFrame, x: str = "n_params_b") -> pd.DataFrame:
    """OLS slope of the gap on log10(x), per family and over all models (finite gaps only): the lines drawn."""
    out = []
    d = gaps[np.isfinite(gaps["gap"])]
    groups = [("all models", d)] + [(f, g) for f, g in d.groupby("family", sort=False)]
    for name, g in groups:
        lx = np.log10(g[x].astype(float).to_numpy())
        if len(g) < 2 or np.ptp(lx) == 0:
            out.append({"family": name, "n_models": len(g), "slope_per_log10": float("nan"), "intercept": float("nan")})
            continue
        b, a = np.polyfit(lx, g["gap"].to_numpy(float), 1)
        out.append({"family": name, "n_models": len(g), "slope_per_log10": float(b), "intercept": float(a)})
    return pd.DataFrame(out)
