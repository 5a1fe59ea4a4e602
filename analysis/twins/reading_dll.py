"""Twins, part 5: ΔLL, what a model's surprisal adds to a baseline regression of people's word reading times.

As in Wilcox et al. (2020) and Oh & Schuler (2023): per model group, a baseline linear regression of the
word RT on the word's length, log frequency (where the items give it) and position, with the previous word's
length and frequency (spillover), and the same plus the word's surprisal and the previous word's. Both are
fitted on training folds and scored on the held-out fold (Gaussian log-likelihood, sigma the training fit's
maximum-likelihood residual SD); ΔLL per word = (LL_full - LL_base) / held-out words, summed over folds.
Folds are of people (no person in both training and test) and, separately, of items; the 95% CI resamples
the fold unit (people, or items) over the held-out per-word differences. Positive: surprisal predicts the
people's times beyond the baseline. Words without a previous word (a sentence's first) have no spillover and
are left out (counted). The report's lmer of surprisal on RT stays as it is (analysis/report/reading.py).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from analysis.kind_sections import kinds_where
from analysis.measures.reading import add_spillover, join_region_surprisal, join_surprisal, trim_rts, word_rows
from analysis.report.figures import PALETTE, pyplot, save_figure

BASE = ["length", "length_prev1", "position"]
FREQ = ["log_frequency", "log_frequency_prev1"]
SURPRISAL = ["surprisal", "surprisal_prev1"]
K_FOLDS = 10
DOC = ("Per model group: a linear regression of people's word reading times (after the rt_range rule) on the word's "
       "length, position, log frequency where the items give it, and the previous word's length and frequency "
       "(baseline), against the same plus the word's surprisal and the previous word's (full). Both fitted on the "
       "training folds and scored on the held-out fold (Gaussian log-likelihood); `delta_ll_per_word` = the mean of "
       "LL_full - LL_base over held-out words, in nats; 10 folds of people (`folds_by` people: no person in both) "
       "and, separately, of items; 95% CI resampling the fold unit. Positive: surprisal predicts the times beyond the "
       "baseline. A sentence's first word has no spillover and is left out (`words_left_out`). Where the people read "
       "region by region (a press showed a region: no word has a time of its own), the same on regions (`unit` "
       "region): the region's time, its length in characters and number, the summed surprisal of its words, and "
       "the previous region's. The mixed-effects fit of surprisal on RT in the reading section stays as it is.")


def predictors(j: pd.DataFrame) -> tuple[list[str], list[str]]:
    """(baseline, full) predictor columns: frequency only where the items give it."""
    base = BASE + ([c for c in FREQ if c in j.columns and j[c].notna().any()] if "log_frequency" in j.columns else [])
    return base, base + SURPRISAL


def _design(x: pd.DataFrame, cols: list[str]) -> np.ndarray:
    return np.column_stack([np.ones(len(x))] + [x[c].to_numpy(float) for c in cols])


def _fit_score(train: pd.DataFrame, test: pd.DataFrame, cols: list[str]) -> np.ndarray:
    """Per held-out word: the Gaussian log-likelihood under OLS fitted on `train` (sigma: its MLE)."""
    X, y = _design(train, cols), train["word_rt_ms"].to_numpy(float)
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    sigma2 = float(np.mean((y - X @ beta) ** 2))
    r = test["word_rt_ms"].to_numpy(float) - _design(test, cols) @ beta
    return -0.5 * (np.log(2 * math.pi * sigma2) + r ** 2 / sigma2)


def delta_ll_words(j: pd.DataFrame, unit: str, k: int = K_FOLDS, seed: int = 0) -> pd.DataFrame:
    """Per held-out word: its fold's unit and ΔLL (full - baseline), folds of `unit` (subject_key or item)."""
    base, full = predictors(j)
    x = j.dropna(subset=["word_rt_ms"] + full).reset_index(drop=True)
    units = np.array(sorted(set(x[unit].astype(str))))
    rng = np.random.default_rng(seed)
    rng.shuffle(units)
    k = min(k, len(units))
    fold_of = {u: i % k for i, u in enumerate(units)}
    folds = x[unit].astype(str).map(fold_of)
    parts = []
    for f in range(k):
        test, train = x[folds == f], x[folds != f]
        d = _fit_score(train, test, full) - _fit_score(train, test, base)
        parts.append(pd.DataFrame({"unit": test[unit].astype(str).to_numpy(), "fold": f, "delta_ll": d}))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["unit", "fold", "delta_ll"])


def cluster_ci(words: pd.DataFrame, seed: int = 0, n_boot: int = 2000) -> tuple[float, float]:
    """95% percentile CI of the mean ΔLL per word, resampling the fold unit with all its words."""
    per = words.groupby("unit")["delta_ll"].agg(["sum", "size"])
    if len(per) < 2:
        return math.nan, math.nan
    s, n = per["sum"].to_numpy(), per["size"].to_numpy()
    idx = np.random.default_rng(seed).integers(0, len(per), size=(n_boot, len(per)))
    m = s[idx].sum(1) / n[idx].sum(1)
    return float(np.percentile(m, 2.5)), float(np.percentile(m, 97.5))


def delta_ll(joined: dict[str, pd.DataFrame], seed: int = 0, n_boot: int = 2000) -> pd.DataFrame:
    """Per model group and fold unit (people, items): ΔLL per word with CI, and what it rests on."""
    rows = []
    for g, j in joined.items():
        base, full = predictors(j)
        used = j.dropna(subset=["word_rt_ms"] + full)
        for unit, label in (("subject_key", "people"), ("item", "items")):
            n_units = used[unit].nunique()
            if n_units < 2:
                rows.append({"group": g, "unit": j.attrs.get("unit", "word"), "folds_by": label, "folds": 0,
                             "note": f"fewer than two {label}: no folds"})
                continue
            w = delta_ll_words(j, unit, seed=seed)
            lo, hi = cluster_ci(w, seed, n_boot)
            rows.append({"group": g, "unit": j.attrs.get("unit", "word"), "folds_by": label,
                         "folds": int(w["fold"].nunique()), "people": used["subject_key"].nunique(),
                         "items": used["item"].nunique(), "words": len(w), "words_left_out": len(j) - len(used),
                         "delta_ll_per_word": float(w["delta_ll"].mean()), "ci_low": lo, "ci_high": hi,
                         "baseline": " + ".join(base), "added": " + ".join(SURPRISAL), "note": ""})
    return pd.DataFrame(rows)


def joined_words(d: pd.DataFrame, factors: dict) -> dict[str, pd.DataFrame]:
    """People's word rows (the rt_range rule applied) with each model group's surprisal and spillover columns."""
    from analysis.load.frames import model_frame  # late: frames imports the twins' answers (a circle at import)

    m = model_frame(d)
    if "task" not in m.columns or not m["task"].astype("string").isin(kinds_where("word_by_word")).any():
        return {}
    w = word_rows(m, {f: lv for f, lv in factors.items() if f in m.columns})
    if "word_rt_ms" not in w.columns or "surprisal_bits" not in w.columns:
        return {}
    h, _ = trim_rts(w)
    both = pd.concat([h, w[w["subject_kind"] == "model"]], ignore_index=True)
    both.attrs = dict(w.attrs)
    joined = {g: add_spillover(j, ["surprisal", "length", "log_frequency"]) for g, j in join_surprisal(both).items()}
    # people who read region by region (no word times): the same on regions (their spillover is the region's)
    return joined or join_region_surprisal(both)


def dll_figure(t: pd.DataFrame, path) -> object:
    t = t[t["folds"] > 0] if "folds" in t.columns else t
    if t.empty:
        return None
    plt = pyplot()
    groups = list(dict.fromkeys(t["group"]))
    fig, ax = plt.subplots(figsize=(max(4.5, 2.2 * len(groups) + 1.5), 3.5))
    for j, by in enumerate(("people", "items")):
        x = t[t["folds_by"] == by].set_index("group").reindex(groups)
        pos = np.arange(len(groups)) + (j - 0.5) * 0.35
        y = x["delta_ll_per_word"].to_numpy(float)
        err = np.vstack([y - x["ci_low"].to_numpy(float), x["ci_high"].to_numpy(float) - y])
        ax.bar(pos, y, width=0.35, color=PALETTE[j], yerr=np.nan_to_num(err).clip(0), capsize=4,
               label=f"folds by {by}")
    ax.axhline(0, color="grey", lw=0.6)
    ax.set_xticks(range(len(groups)), groups, fontsize=7)
    ax.set_ylabel("ΔLL per word (nats)")
    ax.set_title("What surprisal adds to the baseline (held-out folds)", fontsize=9)
    ax.legend(fontsize=7)
    return save_figure(fig, path)
