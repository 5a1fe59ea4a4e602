"""Measures a reviewer reads beside accuracy: the `direct` protocols' log-probabilities and response times
of the RT tasks with named trimming rules; model ratings (expected value and argmax: kinds/rating/analysis.py)
and lexical decision without a decision rule (AUC, d' at a stated criterion: kinds/lexical_decision/analysis.py,
shown in the log-probability section through its `logprob_table`) are their kinds' own units'.

Why each:
- a model's "rating" is a distribution over the scale; its argmax throws the distribution away (a model
  can put 40% on 1 and 45% on 7: argmax 7, expected value 4.3). Both are reported, named; the expected
  value is the default measure;
- a `direct` protocol's log-probability is the model's measure; when the protocol leaves the response
  empty (lexical decision) a group that "answered 0" trials would say nothing, so the log-probabilities
  are analysed per condition (SLOR where the items give a unigram log-probability);
- lexical decision from log-probabilities needs a criterion: the AUC (probability that a word scores
  above a non-word; 0.5 = chance) needs none, and d' is given at a stated one (the median score);
- response times are analysed on correct trials after named exclusions, each counted.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from analysis.kind_sections import kinds_where
from analysis.stats.bootstrap import N_BOOT, bootstrap_mean


def rt_tasks() -> tuple[str, ...]:
    """The kinds whose people's response times are analysed (each kind registers it: analysis/kind_sections.py)."""

    return kinds_where("rt")


# ---- direct log-probabilities -----------------------------------------------------------------
def _per_char(row_extra, sentence_lp: float, words: str | None) -> float:
    try:
        e = json.loads(row_extra) if isinstance(row_extra, str) and row_extra else {}
    except json.JSONDecodeError:
        e = {}
    if isinstance(e, dict) and e.get("logprob_per_char") is not None:
        return float(e["logprob_per_char"])
    return sentence_lp / max(1, len(str(words or "")))


def logprob_rows(t: pd.DataFrame) -> pd.DataFrame:
    """Model trials with a sentence log-probability (`sentence_logprob`), with `logprob_per_char` and, where
    a `unigram_logprob` column gives the unigram log-probability, SLOR = (log P - log P_unigram) / length
    (length in words)."""
    if "sentence_logprob" not in t.columns:
        return t.iloc[0:0]
    d = t[(t["subject_kind"] == "model") & t["sentence_logprob"].notna()].copy()
    if d.empty:
        return d
    d["logprob"] = d["sentence_logprob"].astype(float)
    d["logprob_per_char"] = [_per_char(e, lp, w) for e, lp, w in zip(
        d["extra"] if "extra" in d.columns else [None] * len(d), d["logprob"], d["words"], strict=False)]
    if "unigram_logprob" in d.columns and d["unigram_logprob"].notna().any():
        n_words = d["words"].astype(str).str.split().str.len().clip(lower=1)
        d["slor"] = (d["logprob"] - pd.to_numeric(d["unigram_logprob"], errors="coerce")) / n_words
    return d


def logprob_means(d: pd.DataFrame, by: list[str], seed: int = 0, n_boot: int = N_BOOT) -> pd.DataFrame:
    """Mean log-probability (and per character, SLOR) per group x cell of `by`; CI over items (a model's
    items are its sample; merged copies are one subject)."""
    rng = np.random.default_rng(seed)
    measures = [m for m in ("logprob", "logprob_per_char", "slor") if m in d.columns]
    out = []
    keys = ["group"] + by
    for key, g in d.groupby(keys, sort=True, observed=True, dropna=False):
        key = dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=False))
        row = key | {"n_items": int(g["item"].nunique()), "n_trials": len(g)}
        for m in measures:
            ci = bootstrap_mean(g.groupby("item")[m].mean().to_numpy(), rng, n_boot, unit="item")
            row |= {f"{m}_mean": ci.estimate, f"{m}_ci_low": ci.low, f"{m}_ci_high": ci.high}
        out.append(row)
    return pd.DataFrame(out)


# ---- response times --------------------------------------------------------------------------
def rt_rule(trim: tuple[float, float], sd: float) -> str:
    return (f"RTs of correct trials only; kept when {trim[0]:g} <= RT <= {trim[1]:g} ms (--rt-trim)"
            + (f", then within {sd:g} SD of the subject's mean in that task (--rt-sd)" if sd > 0 else "")
            + "; means of log RT shown back in ms (geometric means)")


def rt_rows(t: pd.DataFrame, trim: tuple[float, float] = (200.0, 3000.0),
            sd: float = 2.5) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(kept rows, exclusions table): human trials of an RT task with an RT, correct only, trimmed, SD-cut.
    The exclusions table counts what each rule removed, per group and task."""
    if "rt_ms" not in t.columns or "task" not in t.columns:
        return t.iloc[0:0], pd.DataFrame()
    d = t[t["task"].isin(rt_tasks()) & t["rt_ms"].notna() & (t["subject_kind"] == "human")].copy()
    if d.empty:
        return d, pd.DataFrame()
    d["rt_ms"] = d["rt_ms"].astype(float)
    counts = []
    for (g, task), x in d.groupby(["group", "task"], sort=True):
        n0 = len(x)
        wrong = x["correct"].isna() | ~x["correct"].fillna(False).astype(bool)
        x1 = x[~wrong]
        out_range = (x1["rt_ms"] < trim[0]) | (x1["rt_ms"] > trim[1])
        x2 = x1[~out_range]
        n_sd = 0
        if sd > 0 and len(x2):
            m = x2.groupby("subject_key")["rt_ms"].transform("mean")
            s = x2.groupby("subject_key")["rt_ms"].transform("std").fillna(0)
            far = (x2["rt_ms"] - m).abs() > sd * s
            far &= s > 0
            n_sd = int(far.sum())
            x2 = x2[~far]
        counts.append({"group": g, "task": task, "trials_with_rt": n0, "error_or_unanswered": int(wrong.sum()),
                       "outside_trim": int(out_range.sum()), "beyond_sd": n_sd, "kept": len(x2)})
        d.loc[x.index, "_keep"] = False
        d.loc[x2.index, "_keep"] = True
    kept = d[d["_keep"].fillna(False).astype(bool)].drop(columns="_keep")
    kept["log_rt"] = np.log(kept["rt_ms"])
    return kept, pd.DataFrame(counts)


def rt_means(kept: pd.DataFrame, by: list[str], seed: int = 0, n_boot: int = N_BOOT) -> pd.DataFrame:
    """Per group x task x cell of `by`: the mean of the subjects' mean log RT, shown in ms, CI over subjects."""
    rng = np.random.default_rng(seed)
    keys = ["group", "task"] + by
    out = []
    for key, g in kept.groupby(keys, sort=True, observed=True, dropna=False):
        key = dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=False))
        subj = g.groupby("subject_key")["log_rt"].mean().to_numpy()
        ci = bootstrap_mean(subj, rng, n_boot, unit="subject")
        out.append(key | {"n_subjects": len(subj), "n_trials": len(g), "rt_ms": math.exp(ci.estimate),
                          "rt_ci_low": math.exp(ci.low) if np.isfinite(ci.low) else float("nan"),
                          "rt_ci_high": math.exp(ci.high) if np.isfinite(ci.high) else float("nan")})
    return pd.DataFrame(out)
