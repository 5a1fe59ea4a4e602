"""Self-paced reading and surprisal: per-word rows, log-RT mixed models by region, and the
surprisal-reading-time model with humans beside models.

One row per word (`word_rows`): the trial's subject, item and factors, `position` (1-based word
index), `word`, `length` (characters, punctuation not counted), `region` (1-based, from the item's
`regions` material, the sentence with `|` between regions; one word per region without it), the
human reading time `word_rt_ms` and the model surprisal `surprisal_bits` where the table has them.

Reading times outside [RT_MIN, RT_MAX] ms are left out of every analysis here (a named rule, the
count removed is reported): below 100 ms no word is read, above 5000 ms the reader was interrupted.

Models (lme4 through analysis/formula_fit.py, each with its diagnostics):

- by region: `word_rt_ms ~ <factors> + length + position + (1 | subject) + (1 | item)` on the words of
  each region (log RT, lmer), factors sum-coded;
- surprisal and reading time (Smith & Levy 2013; spillover as in their models): `word_rt_ms ~
  surprisal + surprisal_prev1 + length + length_prev1 [+ log_frequency + log_frequency_prev1] +
  (1 | subject) + (1 | item)`, raw RT in ms (the linking function surprisal theory tests is linear), one
  fit per model subject group whose surprisals are joined to the human trials: same item and the
  same words (the sentence), word by word. `_prev1` is the previous word's value (the first word of a sentence has none
  and is left out). Frequency is used where the item gives per-word frequencies (`frequencies` in its
  materials, one per word; log10(frequency + 1)).
"""
from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from analysis.tasks_choice import json_list, materials

RT_MIN, RT_MAX = 100.0, 5000.0
RT_RULE = f"word reading times outside [{RT_MIN:g}, {RT_MAX:g}] ms are left out"
SPILLOVER = 1


def word_length(w: str) -> int:
    return len(re.sub(r"[^\w]", "", w)) or len(w)


def region_of_words(mat: dict, n_words: int) -> list[int]:
    """1-based region of each word from the `regions` material (`a b | c | d e`); else one region per word."""
    regions = mat.get("regions")
    if isinstance(regions, str) and "|" in regions:
        out = []
        for r, chunk in enumerate(regions.split("|"), start=1):
            out += [r] * len(chunk.split())
        if len(out) == n_words:
            return out
    return list(range(1, n_words + 1))


def word_rows(df: pd.DataFrame, factors: list[str]) -> pd.DataFrame:
    """Explode trials with per-word reading times or surprisals into one row per word."""
    keep = [c for c in ["group", "subject_kind", "subject_key", "subject_id", "item", "item_id", "model", "protocol"]
            + factors if c in df.columns]
    has = pd.Series(False, index=df.index)
    for c in ("word_rts_ms", "word_surprisal_bits"):
        if c in df.columns:
            has |= df[c].notna()
    d = df[has]
    out = []
    mats = materials(d)
    for (_, row), mat in zip(d.iterrows(), mats):
        words = str(row["words"] or "").split() if isinstance(row["words"], str) else []
        rts = json_list(row.get("word_rts_ms"))
        sur = json_list(row.get("word_surprisal_bits"))
        n = len(words)
        if not n:
            continue
        regions = region_of_words(mat, n)
        freqs = mat.get("frequencies")
        freqs = freqs if isinstance(freqs, list) and len(freqs) == n else None
        base = {c: row[c] for c in keep}
        for i, w in enumerate(words):
            out.append(base | {"words": row["words"], "position": i + 1, "word": w, "length": word_length(w),
                               "region": regions[i],
                               "word_rt_ms": float(rts[i]) if rts and len(rts) == n and rts[i] is not None else np.nan,
                               "surprisal_bits": float(sur[i]) if sur and len(sur) == n and sur[i] is not None else np.nan,
                               "log_frequency": math.log10(float(freqs[i]) + 1) if freqs else np.nan})
    cols = keep + ["words", "position", "word", "length", "region", "word_rt_ms", "surprisal_bits", "log_frequency"]
    return pd.DataFrame(out, columns=cols)


def trim_rts(w: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Human words with a reading time inside [RT_MIN, RT_MAX]; returns (rows, count removed)."""
    h = w[w["word_rt_ms"].notna()]
    ok = h["word_rt_ms"].between(RT_MIN, RT_MAX)
    return h[ok].copy(), int((~ok).sum())


def region_means(h: pd.DataFrame, factors: list[str], seed: int = 0, n_boot: int = 2000) -> pd.DataFrame:
    """Mean reading time per group x region x factor cell: region RT = sum of its words' RTs per trial;
    mean over subjects' means with a bootstrap CI over subjects."""
    from analysis.bootstrap import bootstrap_mean

    if h.empty:
        return pd.DataFrame(columns=["group", "region"] + factors + ["n_subjects", "mean_rt_ms", "ci_low", "ci_high"])
    trial = ["group", "subject_key", "item_id", "region"] + factors
    per_trial = h.groupby(trial, dropna=False, observed=True)["word_rt_ms"].sum().reset_index()
    rng = np.random.default_rng(seed)
    out = []
    for key, g in per_trial.groupby(["group", "region"] + factors, dropna=False, sort=True, observed=True):
        subj = g.groupby("subject_key")["word_rt_ms"].mean().to_numpy()
        ci = bootstrap_mean(subj, rng, n_boot)
        out.append(dict(zip(["group", "region"] + factors, key)) | {"n_subjects": len(subj), "mean_rt_ms": ci.estimate,
                                                                   "ci_low": ci.low, "ci_high": ci.high})
    return pd.DataFrame(out)


def region_surprisal(w: pd.DataFrame, factors: list[str]) -> pd.DataFrame:
    """Models: mean surprisal (bits) per group x region x factor cell; a region's surprisal is the sum of its
    words' (the log probability of the region), averaged over trials."""
    s = w[(w["subject_kind"] == "model") & w["surprisal_bits"].notna()]
    cols = ["group", "region"] + factors + ["n_trials", "mean_surprisal_bits"]
    if s.empty:
        return pd.DataFrame(columns=cols)
    per_trial = s.groupby(["group", "subject_key", "item_id", "region"] + factors, dropna=False,
                          observed=True)["surprisal_bits"].sum().reset_index()
    return (per_trial.groupby(["group", "region"] + factors, dropna=False, observed=True)["surprisal_bits"]
            .agg(n_trials="size", mean_surprisal_bits="mean").reset_index()[cols])


def humans_beside_models(rt: pd.DataFrame, sur: pd.DataFrame, factors: list[str]) -> pd.DataFrame:
    """Region by region and cell by cell: the humans' mean reading time beside each model's mean surprisal."""
    if rt.empty or sur.empty:
        return pd.DataFrame()
    keys = ["region"] + factors
    h = rt[rt["group"] == "human"][keys + ["mean_rt_ms"]].rename(columns={"mean_rt_ms": "human_mean_rt_ms"})
    wide = sur.pivot_table(index=keys, columns="group", values="mean_surprisal_bits", dropna=False)
    wide.columns = [f"surprisal_bits: {c}" for c in wide.columns]
    return h.merge(wide.reset_index(), on=keys, how="outer").sort_values(keys).reset_index(drop=True)


def region_formula(factors: list[str], h: pd.DataFrame) -> str:
    """The by-region model: the design's factors that vary, length and position; subject and item intercepts."""
    varying = [f for f in factors if h[f].nunique(dropna=True) > 1]
    preds = (" * ".join(varying) + " + " if varying else "") + "length"
    if h["position"].nunique() > 1:
        preds += " + position"
    return f"word_rt_ms ~ {preds} + (1 | subject_id) + (1 | item)"


def add_spillover(w: pd.DataFrame, cols: list[str], k: int = SPILLOVER) -> pd.DataFrame:
    """`<col>_prev1`: the previous word's value within the same trial (subject, item, sentence)."""
    w = w.sort_values(["subject_key", "item_id", "words", "position"], kind="stable").copy()
    g = w.groupby(["subject_key", "item_id", "words"], sort=False)
    for c in cols:
        w[f"{c}_prev{k}"] = g[c].shift(k)
    return w


def join_surprisal(w: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Human word rows with each model group's surprisal (mean over its subjects: one model scores a
    word the same way every time) joined by item_id, sentence and position."""
    humans = w[(w["subject_kind"] == "human") & w["word_rt_ms"].notna()]
    models = w[(w["subject_kind"] == "model") & w["surprisal_bits"].notna()]
    out = {}
    for g, m in models.groupby("group", sort=True):
        s = m.groupby(["item", "words", "position"], dropna=False)["surprisal_bits"].mean().rename("surprisal")
        j = humans.drop(columns=["surprisal_bits"]).join(s, on=["item", "words", "position"], how="inner")
        if len(j):
            out[str(g)] = j
    return out


def surprisal_formula(j: pd.DataFrame) -> str:
    preds = ["surprisal", f"surprisal_prev{SPILLOVER}", "length", f"length_prev{SPILLOVER}"]
    if j["log_frequency"].notna().any():
        preds += ["log_frequency", f"log_frequency_prev{SPILLOVER}"]
    return "word_rt_ms ~ " + " + ".join(preds) + " + (1 | subject_id) + (1 | item)"


def surprisal_beside_rt(j: pd.DataFrame) -> pd.DataFrame:
    """Per word of each sentence: the humans' mean RT beside the model's surprisal (the scatter's points)."""
    return (j.groupby(["item", "words", "position", "word"], sort=True)
            .agg(n_subjects=("subject_key", "nunique"), mean_rt_ms=("word_rt_ms", "mean"),
                 surprisal_bits=("surprisal", "first"), length=("length", "first")).reset_index())

