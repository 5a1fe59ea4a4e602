"""Signal detection for violation-detection tasks (humans and models alike).

An error rate on violation trials (a miss rate) cannot tell a subject that detects violations from
one that answers "violation" to everything: both make no errors there. Signal detection separates
sensitivity from bias. Per group x structure x condition x violated dependency:

- signal trials: post-training trials with a violation at that dependency (inner / outer);
  a hit = answered "violation";
- noise trials: the grammatical post-training trials of the same structure and condition (they have
  no dependency, so inner and outer share them); a false alarm = answered "violation";
- rates with the log-linear correction (Hautus 1995): H = (hits + 0.5) / (signal + 1),
  F = (false alarms + 0.5) / (noise + 1), applied to every cell so that rates of 0 and 1 stay
  finite and all cells are treated alike;
- d' = z(H) - z(F) (sensitivity), c = -(z(H) + z(F)) / 2 (criterion: c < 0 leans to "violation",
  c > 0 to "no violation"; c = 0 unbiased), z = the standard normal quantile.

Counts are pooled over a group's subjects (as the error rates are); 95% percentile bootstrap CIs
resample subjects with all their trials (a single subject: its signal and noise trials, each set
resampled on its own; `ci_unit` says which). Only trials answered "violation" or "no_violation"
count: forced-choice protocols (a word, not a judgment) and unanswered trials are not detection
trials. `mean_subject_dprime` is the mean of the subjects' own (corrected) d'.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import norm

from analysis.load.prepare import SCORED_POSITIONS
from analysis.measures.error_rates import sort_conditions
from analysis.stats.bootstrap import N_BOOT

CORRECTION = ("log-linear correction (Hautus 1995): H = (hits + 0.5) / (signal trials + 1), F = (false alarms + 0.5) / "
              "(noise trials + 1), in every cell")
ANSWERS = ("violation", "no_violation")
KEYS = ["group", "subject_kind", "structure", "condition", "dependency"]
COLUMNS = KEYS + ["n_subjects", "signal_trials", "hits", "noise_trials", "false_alarms", "hit_rate",
                  "false_alarm_rate", "miss_rate", "hit_rate_corrected", "false_alarm_rate_corrected", "dprime",
                  "dprime_ci_low", "dprime_ci_high", "criterion_c", "c_ci_low", "c_ci_high", "ci_unit",
                  "mean_subject_dprime"]


def dprime_c(hits, signal, false_alarms, noise) -> tuple[np.ndarray, np.ndarray]:
    """d' and c from counts with the log-linear correction (arrays or scalars)."""
    h = (np.asarray(hits, float) + 0.5) / (np.asarray(signal, float) + 1.0)
    f = (np.asarray(false_alarms, float) + 0.5) / (np.asarray(noise, float) + 1.0)
    zh, zf = norm.ppf(h), norm.ppf(f)
    return zh - zf, -(zh + zf) / 2.0


def detection_trials(df: pd.DataFrame) -> pd.DataFrame:
    """Post-training trials answered violation / no_violation, with a violation at inner/outer or none."""
    if "response" not in df.columns:
        return df.iloc[0:0]
    r = df[~df["training"] & df["response"].isin(ANSWERS)
           & df["violation_position"].isin(SCORED_POSITIONS + ("none",))]
    return r.assign(said_violation=(r["response"] == "violation").astype(int))


def _per_subject_counts(signal: pd.DataFrame, noise: pd.DataFrame) -> pd.DataFrame:
    s = signal.groupby("subject_key")["said_violation"].agg(hits="sum", signal_trials="size")
    n = noise.groupby("subject_key")["said_violation"].agg(false_alarms="sum", noise_trials="size")
    return s.join(n, how="outer").fillna(0)


def _bootstrap(counts: pd.DataFrame, signal: pd.DataFrame, noise: pd.DataFrame, rng: np.random.Generator,
               n_boot: int) -> tuple[np.ndarray, np.ndarray, str]:
    if len(counts) >= 2:
        idx = rng.integers(0, len(counts), size=(n_boot, len(counts)))
        sums = [counts[c].to_numpy(float)[idx].sum(axis=1) for c in ("hits", "signal_trials", "false_alarms",
                                                                     "noise_trials")]
        d, c = dprime_c(*sums)
        return d, c, "subject"
    sv, nv = signal["said_violation"].to_numpy(float), noise["said_violation"].to_numpy(float)
    hs = sv[rng.integers(0, len(sv), size=(n_boot, len(sv)))].sum(axis=1) if len(sv) else np.zeros(n_boot)
    fs = nv[rng.integers(0, len(nv), size=(n_boot, len(nv)))].sum(axis=1) if len(nv) else np.zeros(n_boot)
    d, c = dprime_c(hs, len(sv), fs, len(nv))
    return d, c, "trial"


def _row(key: dict, signal: pd.DataFrame, noise: pd.DataFrame, rng, n_boot: int) -> dict:
    counts = _per_subject_counts(signal, noise)
    hits, s_n = int(signal["said_violation"].sum()), len(signal)
    fas, n_n = int(noise["said_violation"].sum()), len(noise)
    d, c = dprime_c(hits, s_n, fas, n_n)
    bd, bc, unit = _bootstrap(counts, signal, noise, rng, n_boot)
    sd, _ = dprime_c(counts["hits"], counts["signal_trials"], counts["false_alarms"], counts["noise_trials"])
    return key | {
        "n_subjects": int(signal["subject_key"].nunique()), "signal_trials": s_n, "hits": hits, "noise_trials": n_n,
        "false_alarms": fas, "hit_rate": hits / s_n, "false_alarm_rate": fas / n_n if n_n else float("nan"),
        "miss_rate": 1 - hits / s_n, "hit_rate_corrected": (hits + 0.5) / (s_n + 1),
        "false_alarm_rate_corrected": (fas + 0.5) / (n_n + 1), "dprime": float(d),
        "dprime_ci_low": float(np.quantile(bd, 0.025)), "dprime_ci_high": float(np.quantile(bd, 0.975)),
        "criterion_c": float(c), "c_ci_low": float(np.quantile(bc, 0.025)), "c_ci_high": float(np.quantile(bc, 0.975)),
        "ci_unit": unit, "mean_subject_dprime": float(np.mean(sd)),
    }


def detection_table(df: pd.DataFrame, seed: int = 0, n_boot: int = N_BOOT, pooled: bool = False) -> pd.DataFrame:
    """One row per group x structure x condition x dependency (`pooled`: conditions pooled, condition
    'all'); cells need signal and noise trials."""
    t = detection_trials(df)
    rng = np.random.default_rng(seed)
    out = []
    for (g, kind, st), x in t.groupby(["group", "subject_kind", "structure"], sort=True, observed=True):
        conds = ["all"] if pooled else list(dict.fromkeys(x["condition"].dropna()))
        for cond in conds:
            xc = x if cond == "all" else x[x["condition"] == cond]
            noise = xc[xc["violation_position"] == "none"]
            for dep in SCORED_POSITIONS:
                signal = xc[xc["violation_position"] == dep]
                if signal.empty or noise.empty:
                    continue
                key = {"group": g, "subject_kind": kind, "structure": st, "condition": cond, "dependency": dep}
                out.append(_row(key, signal, noise, rng, n_boot))
    return sort_conditions(pd.DataFrame(out, columns=COLUMNS))


def bias_label(c: float, ci_low: float, ci_high: float) -> str:
    """Plain words for the criterion, from its CI (0 inside the CI: no clear bias)."""
    if not np.isfinite(c):
        return ""
    if np.isfinite(ci_low) and np.isfinite(ci_high) and ci_low <= 0 <= ci_high:
        return "no clear bias"
    return "leans to 'violation'" if c < 0 else "leans to 'no violation'"
