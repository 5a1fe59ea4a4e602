"""Percentile bootstrap CIs of a mean error rate, resampling subjects (or trials), seeded.

Why resample subjects: trials of one subject are not independent, so the CI of a group's error
rate must reflect between-subject variation (seeds/000 uses bootstrap 95% CIs; over subjects
for humans, over task examples for a single model).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from experiments.cli_common import progress_bar

N_BOOT = 2000


@dataclass(frozen=True)
class CI:
    estimate: float
    low: float
    high: float
    n_units: int
    unit: str


def bootstrap_mean(values: np.ndarray, rng: np.random.Generator, n_boot: int = N_BOOT,
                   level: float = 0.95, unit: str = "subject") -> CI:
    """Mean of `values` (one per unit) with a percentile bootstrap CI (vectorised)."""
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    n = len(v)
    if n == 0:
        return CI(float("nan"), float("nan"), float("nan"), 0, unit)
    est = float(v.mean())
    if n == 1:
        return CI(est, float("nan"), float("nan"), 1, unit)
    idx = rng.integers(0, n, size=(n_boot, n))
    means = v[idx].mean(axis=1)
    a = (1.0 - level) / 2.0
    lo, hi = np.quantile(means, [a, 1.0 - a])
    return CI(est, float(lo), float(hi), n, unit)


def bootstrap_ratio(errors: np.ndarray, trials: np.ndarray, rng: np.random.Generator, n_boot: int = N_BOOT,
                    level: float = 0.95, unit: str = "subject") -> CI:
    """sum(errors) / sum(trials) with a percentile bootstrap CI resampling the units (clusters)."""
    e = np.asarray(errors, dtype=float)
    t = np.asarray(trials, dtype=float)
    n = len(t)
    if n == 0 or t.sum() == 0:
        return CI(float("nan"), float("nan"), float("nan"), n, unit)
    est = float(e.sum() / t.sum())
    if n == 1:
        return CI(est, float("nan"), float("nan"), 1, unit)
    idx = rng.integers(0, n, size=(n_boot, n))
    ratios = e[idx].sum(axis=1) / t[idx].sum(axis=1)
    a = (1.0 - level) / 2.0
    lo, hi = np.quantile(ratios, [a, 1.0 - a])
    return CI(est, float(lo), float(hi), n, unit)


def error_rate_ci(rows: pd.DataFrame, rng: np.random.Generator, n_boot: int = N_BOOT,
                  subject_col: str = "subject_key", value_col: str = "error") -> CI:
    """Pooled error rate errors / trials (WRONG / (CORRECT + WRONG)), CI resampling subjects with
    all their trials (a cluster bootstrap); one subject only -> CI over its trials."""
    vals = rows[value_col].astype(float)
    if rows[subject_col].nunique() >= 2:
        g = vals.groupby(rows[subject_col])
        return bootstrap_ratio(g.sum().to_numpy(), g.size().to_numpy(), rng, n_boot, unit="subject")
    return bootstrap_mean(vals.to_numpy(), rng, n_boot, unit="trial")


def make_progress():
    """The progress of bootstrap and model-fitting loops on stderr (a bar on a terminal, plain lines in a log)."""
    return progress_bar()
