"""Rates by a design's own factors: by-subject (F1) and by-item (F2) summaries, acceptance, d' and c.

Why both units: trials of one subject are not independent, and neither are the trials of one item
(the same lexical material in every list); psycholinguists report a cell's rate with its
variability over subjects and over items (F1/F2-style). Per group (humans, each model condition) x
the cells of `by`:

- `rate`: pooled outcome / trials, with a 95% percentile bootstrap CI resampling subjects with all
  their trials (`rate_ci_*`, as the error rates of the Lakretz sections);
- `by_subject_mean`: the mean of the subjects' own rates, CI resampling subjects (F1);
- `by_item_mean`: the mean of the items' own rates, CI resampling items (F2).

A cell with a single subject (one person, or a model whose sessions are deterministic copies merged
into one subject, analysis/load/subjects.py) cannot be resampled over subjects: its pooled rate's CI then
resamples items (the item is the unit; `ci_unit` says which).

Acceptance (`accepted`): the share of trials answered with the task's accepting label (yes, no_violation,
word), read from the response through the task's labels (analysis/measures/judgments.py). Signal detection takes
the items whose answer is the rejecting label as the signal: a hit rejects one, a false alarm rejects an
item whose answer is the accepting label; d' = z(H) - z(F) and c = -(z(H) + z(F)) / 2 with the log-linear
correction (analysis/measures/detection.py), counts pooled over the cell's subjects, the CI resampling subjects.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.measures.detection import dprime_c
from analysis.measures.judgments import add_judgment_columns, answer_label, judged_rows
from analysis.stats.bootstrap import N_BOOT, bootstrap_mean, bootstrap_ratio

NON_DESIGN_ROLES = ("practice", "filler")


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
    """`accepted`, `signal`, `said_reject` of judgment-like trials, read from the responses and the items'
    answers through the task's labels (analysis/measures/judgments.py); never from `grammatical` or `correct`."""
    return add_judgment_columns(df)


def _cells(df: pd.DataFrame, by: list[str]):
    keys = ["group"] + by
    for key, g in df.groupby(keys, sort=True, observed=True, dropna=False):
        yield dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=False)), g


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
        unit = "subject" if len(subj) >= 2 else "item"
        clusters = subj if unit == "subject" else g.groupby("_item")["_y"].agg(["sum", "size"])
        pooled = bootstrap_ratio(clusters["sum"].to_numpy(), clusters["size"].to_numpy(), rng, n_boot, unit=unit)
        f1 = bootstrap_mean((subj["sum"] / subj["size"]).to_numpy(), rng, n_boot, unit="subject")
        f2 = bootstrap_mean(g.groupby("_item")["_y"].mean().to_numpy(), rng, n_boot, unit="item")
        out.append(key | {"n_subjects": len(subj), "n_items": int(g["_item"].nunique()), "n_trials": len(g),
                          "n_outcome": int(g["_y"].sum()), "rate": pooled.estimate, "rate_ci_low": pooled.low,
                          "rate_ci_high": pooled.high, "by_subject_mean": f1.estimate, "by_subject_ci_low": f1.low,
                          "by_subject_ci_high": f1.high, "by_item_mean": f2.estimate, "by_item_ci_low": f2.low,
                          "by_item_ci_high": f2.high, "ci_unit": unit})
    cols = ["group"] + by + ["n_subjects", "n_items", "n_trials", "n_outcome", "rate", "rate_ci_low", "rate_ci_high",
                             "by_subject_mean", "by_subject_ci_low", "by_subject_ci_high", "by_item_mean",
                             "by_item_ci_low", "by_item_ci_high", "ci_unit"]
    return pd.DataFrame(out, columns=cols)


def answer_confounded(d: pd.DataFrame, by: list[str]) -> list[str]:
    """The factors of `by` whose every level has one answer (e.g. a factor `grammatical`): within their
    cells there is no signal or no noise, so d' is computed over them, not by them."""
    out = []
    for b in by:
        per = d.groupby(b, observed=True, dropna=False)["signal"].nunique()
        if len(per) and (per <= 1).all() and d["signal"].nunique() > 1:
            out.append(b)
    return out


def acceptance_rates(df: pd.DataFrame, by: list[str], seed: int = 0, n_boot: int = N_BOOT) -> pd.DataFrame:
    """Acceptance (share of the accepting label) per group x cell of `by` x the item's answer (`answer`:
    'accept (yes)' / 'reject (no)'), from the judged trials only."""
    d = judged_rows(df if "signal" in df.columns else add_accepted(df))
    d = d.assign(answer=answer_label(d))
    keys = [b for b in by if b != "answer"] + ["answer"]
    return rates(d, keys, outcome="accepted", seed=seed, n_boot=n_boot)


DPRIME_COLUMNS = ["n_subjects", "signal_trials", "hits", "noise_trials", "false_alarms", "hit_rate",
                  "false_alarm_rate", "dprime", "dprime_ci_low", "dprime_ci_high", "criterion_c", "c_ci_low",
                  "c_ci_high", "ci_unit", "accept_value", "reject_value", "bias"]


def _bias_words(c: float, lo: float, hi: float, acc: str, rej: str, h: float, s: float, f: float, n: float) -> str:
    if f == n and h == s:
        return f"answers {rej!r} on every trial"
    if f == 0 and h == 0:
        return f"answers {acc!r} on every trial"
    if not np.isfinite(c):
        return ""
    if np.isfinite(lo) and np.isfinite(hi) and lo <= 0 <= hi:
        return "no clear bias"
    return f"leans to {rej!r}" if c < 0 else f"leans to {acc!r}"


def dprime_table(df: pd.DataFrame, by: list[str], seed: int = 0, n_boot: int = N_BOOT) -> pd.DataFrame:
    """d' and c per group x cell of `by`: signal = items whose answer is the rejecting label, a hit rejects
    one, a false alarm rejects an item whose answer is the accepting label (analysis/measures/judgments.py). Factors
    of `by` that fix the answer are pooled over. CIs resample subjects (one subject: its items)."""
    d = judged_rows(df if "signal" in df.columns else add_accepted(df)).copy()
    d["_item"] = item_key(d) if len(d) else pd.Series(dtype="string")
    keys = [b for b in by if b not in answer_confounded(d, by)] if len(d) else list(by)
    rng = np.random.default_rng(seed)
    out = []
    for key, g in _cells(d, keys):
        sig, noi = g[g["signal"].astype(bool)], g[~g["signal"].astype(bool)]
        if sig.empty or noi.empty:
            continue
        unit = "subject_key" if g["subject_key"].nunique() >= 2 else "_item"
        counts = pd.DataFrame({"hits": sig.groupby(unit)["said_reject"].sum(),
                               "signal": sig.groupby(unit).size(),
                               "fas": noi.groupby(unit)["said_reject"].sum(),
                               "noise": noi.groupby(unit).size()}).fillna(0)
        h, s, f, n = (float(counts[c].sum()) for c in ("hits", "signal", "fas", "noise"))
        dp, c = dprime_c(h, s, f, n)
        if len(counts) >= 2:
            idx = rng.integers(0, len(counts), size=(n_boot, len(counts)))
            bd, bc = dprime_c(*(counts[c].to_numpy(float)[idx].sum(axis=1) for c in ("hits", "signal", "fas", "noise")))
            ci = (np.quantile(bd, [0.025, 0.975]), np.quantile(bc, [0.025, 0.975]))
        else:
            ci = (np.array([np.nan, np.nan]), np.array([np.nan, np.nan]))
        acc, rej = str(g["accept_value"].iloc[0]), str(g["reject_value"].iloc[0])
        out.append(key | {"n_subjects": int(g["subject_key"].nunique()), "signal_trials": int(s), "hits": int(h),
                          "noise_trials": int(n), "false_alarms": int(f), "hit_rate": h / s, "false_alarm_rate": f / n,
                          "dprime": float(dp), "dprime_ci_low": float(ci[0][0]), "dprime_ci_high": float(ci[0][1]),
                          "criterion_c": float(c), "c_ci_low": float(ci[1][0]), "c_ci_high": float(ci[1][1]),
                          "ci_unit": "subject" if unit == "subject_key" else "item", "accept_value": acc,
                          "reject_value": rej,
                          "bias": _bias_words(float(c), float(ci[1][0]), float(ci[1][1]), acc, rej, h, s, f, n)})
    return pd.DataFrame(out, columns=["group"] + keys + DPRIME_COLUMNS)
