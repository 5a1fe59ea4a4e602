"""Rates by a design's own factors: by-subject (F1) and by-item (F2) summaries, acceptance, d' and c.

Why both units: trials of one subject are not independent, and neither are the trials of one item
(the same lexical material in every list); psycholinguists report a cell's rate with its
variability over subjects and over items (F1/F2-style). Per group (humans, each model condition) x
the cells of `by`:

- `rate`: pooled outcome / trials, with a 95% percentile bootstrap CI resampling subjects with all
  their trials (`rate_ci_*`, as the error rates of the Lakretz sections);
- `by_subject_mean`: the mean of the subjects' own rates, CI resampling subjects (F1);
- `by_item_mean`: the mean of the items' own rates, CI resampling items (F2).

Acceptance (`accepted`): a trial answered "acceptable" (yes, no_violation, the grammatical option of a
two-way judgment). Signal detection treats an ungrammatical sentence as the signal: a hit rejects an
ungrammatical trial, a false alarm rejects a grammatical one; d' = z(H) - z(F) and c = -(z(H) + z(F)) / 2
with the log-linear correction (analysis/detection.py), counts pooled over the cell's subjects, the CI
resampling subjects.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.bootstrap import N_BOOT, bootstrap_mean, bootstrap_ratio
from analysis.detection import dprime_c

NON_DESIGN_ROLES = ("practice", "filler")
BINARY_TASKS = ("judgment", "violation_detection", "lexical_decision")


def item_key(df: pd.DataFrame) -> pd.Series:
    """The item a row belongs to: the design's `item` group where given, else the row's item_id."""
    item = df["item"].astype("string") if "item" in df.columns else pd.Series(pd.NA, index=df.index, dtype="string")
    return item.fillna(df["item_id"].astype("string"))


def design_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The experimental trials: not practice/training, not fillers (they have no factor levels)."""
    keep = ~df["training"] if "training" in df.columns else pd.Series(True, index=df.index)
    if "role" in df.columns:
        keep &= ~df["role"].fillna("test").isin(NON_DESIGN_ROLES)
    return df[keep]


def add_accepted(df: pd.DataFrame) -> pd.DataFrame:
    """`accepted` (1 = judged acceptable): no_violation / violation answers directly; a two-way judgment
    from its correctness and the sentence's grammaticality (right on a grammatical sentence = accepted,
    right on an ungrammatical one = rejected). Missing for other tasks and unanswered trials."""
    out = df.copy()
    acc = pd.Series(np.nan, index=df.index, dtype=float)
    resp = df["response"].astype("string") if "response" in df.columns else pd.Series(pd.NA, index=df.index)
    acc[resp == "no_violation"] = 1.0
    acc[resp == "violation"] = 0.0
    task = df["task"].astype("string").fillna("violation_detection") if "task" in df.columns else \
        pd.Series("violation_detection", index=df.index, dtype="string")
    binary = task.isin(BINARY_TASKS) & acc.isna() & df["correct"].notna() & df["grammatical"].notna()
    corr = df["correct"].astype("Float64")
    gram = df["grammatical"].astype("boolean")
    derived = corr.where(gram.fillna(False), 1 - corr)
    acc[binary.fillna(False)] = derived[binary.fillna(False)].astype(float)
    out["accepted"] = acc
    return out


def _cells(df: pd.DataFrame, by: list[str]):
    keys = ["group"] + by
    for key, g in df.groupby(keys, sort=True, observed=True, dropna=False):
        yield dict(zip(keys, key if isinstance(key, tuple) else (key,))), g


def rates(df: pd.DataFrame, by: list[str], outcome: str = "correct", seed: int = 0,
          n_boot: int = N_BOOT) -> pd.DataFrame:
    """One row per group x cell of `by`: the pooled rate of `outcome` (0/1) with subject and item CIs."""
    d = df[df[outcome].notna()].copy() if outcome in df.columns else df.iloc[0:0].copy()
    d["_y"] = d[outcome].astype(float) if len(d) else pd.Series(dtype=float)
    d["_item"] = item_key(d) if len(d) else pd.Series(dtype="string")
    rng = np.random.default_rng(seed)
    out = []
    for key, g in _cells(d, by):
        subj = g.groupby("subject_key")["_y"].agg(["sum", "size"])
        pooled = bootstrap_ratio(subj["sum"].to_numpy(), subj["size"].to_numpy(), rng, n_boot, unit="subject")
        f1 = bootstrap_mean((subj["sum"] / subj["size"]).to_numpy(), rng, n_boot, unit="subject")
        f2 = bootstrap_mean(g.groupby("_item")["_y"].mean().to_numpy(), rng, n_boot, unit="item")
        out.append(key | {"n_subjects": len(subj), "n_items": int(g["_item"].nunique()), "n_trials": len(g),
                          "n_outcome": int(g["_y"].sum()), "rate": pooled.estimate, "rate_ci_low": pooled.low,
                          "rate_ci_high": pooled.high, "by_subject_mean": f1.estimate, "by_subject_ci_low": f1.low,
                          "by_subject_ci_high": f1.high, "by_item_mean": f2.estimate, "by_item_ci_low": f2.low,
                          "by_item_ci_high": f2.high})
    cols = ["group"] + by + ["n_subjects", "n_items", "n_trials", "n_outcome", "rate", "rate_ci_low", "rate_ci_high",
                             "by_subject_mean", "by_subject_ci_low", "by_subject_ci_high", "by_item_mean",
                             "by_item_ci_low", "by_item_ci_high"]
    return pd.DataFrame(out, columns=cols)


def acceptance_rates(df: pd.DataFrame, by: list[str], seed: int = 0, n_boot: int = N_BOOT) -> pd.DataFrame:
    """Acceptance rates on grammatical and ungrammatical trials, by the cells of `by` (grammatical added)."""
    d = df if "accepted" in df.columns else add_accepted(df)
    keys = [b for b in by if b != "grammatical"] + ["grammatical"]
    return rates(d, keys, outcome="accepted", seed=seed, n_boot=n_boot)


DPRIME_COLUMNS = ["n_subjects", "signal_trials", "hits", "noise_trials", "false_alarms", "hit_rate",
                  "false_alarm_rate", "dprime", "dprime_ci_low", "dprime_ci_high", "criterion_c", "c_ci_low",
                  "c_ci_high"]


def dprime_table(df: pd.DataFrame, by: list[str], seed: int = 0, n_boot: int = N_BOOT) -> pd.DataFrame:
    """d' and c per group x cell of `by` (grammaticality is the signal, so it is not a cell factor)."""
    d = df if "accepted" in df.columns else add_accepted(df)
    d = d[d["accepted"].notna() & d["grammatical"].notna()].copy()
    d["_rejected"] = 1.0 - d["accepted"].astype(float)
    d["_signal"] = ~d["grammatical"].astype(bool)
    keys = [b for b in by if b != "grammatical"]
    rng = np.random.default_rng(seed)
    out = []
    for key, g in _cells(d, keys):
        sig, noi = g[g["_signal"]], g[~g["_signal"]]
        if sig.empty or noi.empty:
            continue
        counts = pd.DataFrame({"hits": sig.groupby("subject_key")["_rejected"].sum(),
                               "signal": sig.groupby("subject_key").size(),
                               "fas": noi.groupby("subject_key")["_rejected"].sum(),
                               "noise": noi.groupby("subject_key").size()}).fillna(0)
        h, s, f, n = (float(counts[c].sum()) for c in ("hits", "signal", "fas", "noise"))
        dp, c = dprime_c(h, s, f, n)
        if len(counts) >= 2:
            idx = rng.integers(0, len(counts), size=(n_boot, len(counts)))
            bd, bc = dprime_c(*(counts[c].to_numpy(float)[idx].sum(axis=1) for c in ("hits", "signal", "fas", "noise")))
            ci = (np.quantile(bd, [0.025, 0.975]), np.quantile(bc, [0.025, 0.975]))
        else:
            ci = (np.array([np.nan, np.nan]), np.array([np.nan, np.nan]))
        out.append(key | {"n_subjects": len(counts), "signal_trials": int(s), "hits": int(h), "noise_trials": int(n),
                          "false_alarms": int(f), "hit_rate": h / s, "false_alarm_rate": f / n, "dprime": float(dp),
                          "dprime_ci_low": float(ci[0][0]), "dprime_ci_high": float(ci[0][1]), "criterion_c": float(c),
                          "c_ci_low": float(ci[1][0]), "c_ci_high": float(ci[1][1])})
    return pd.DataFrame(out, columns=["group"] + keys + DPRIME_COLUMNS)
