"""The paper's measures, computed as the authors' analysis notebook computes them, from the scores.

Input: one row per scored continuation (model, experiment, dataset, item, method, order, shown,
option, prompt, logprob). Output tables:

* `item_table`: one row per model x experiment x dataset x item x method x order, with
  * Exp 1: `value` = log P(ground-truth word) (the measure and the item's "differential");
  * Exp 2: `correct` = log P(plausible) > log P(implausible); `differential` = their difference;
  * Exp 3a Direct: `correct` = log P(good sentence) > log P(bad sentence); differential the difference;
    Exp 3a Meta: `tp` = P(Yes|good prompt) > P(No|good prompt), `tn` = P(No|bad) > P(Yes|bad);
    `differential` = log P(Yes|good prompt) - log P(Yes|bad prompt);
  * Exp 3b Meta: `correct` = log P(good's label) > log P(bad's label) in that order; differential their difference.
* `performance`: Figure 2. Exp 1: mean log-probability; Exp 2, 3b: accuracy, the mean over items x
  answer orders (so the mean of the two orders); Exp 3a: Direct accuracy, Meta balanced accuracy
  (TPR + TNR) / 2. Pooled over the experiment's datasets (the paper's Figure 2) and per dataset
  (Appendix Figures 4-5); 95% percentile bootstrap CI over items.
* `consistency`: Figures 3 and 6. Per model x experiment x dataset x Meta method, Pearson r between
  the Direct and the Meta item-level values (Exp 2, 3b: the Meta differential averaged over both
  answer orders); then averaged over datasets (Figure 6) and over models (Figure 3).
Strict inequalities, as the notebook's (`>`): a tie counts as wrong. An unscored request (NaN: a
served model's refusal or an option outside its top log-probabilities) leaves its item out of that
cell (`n_scored` says how many remain), never counted wrong.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from reproductions.hu_levy.prompts import META, METHODS

KEY = ["model", "experiment", "dataset", "item", "method", "order"]


def _lp(g: pd.DataFrame, shown: str | None, option: str) -> pd.Series:
    sel = g[g["option"] == option] if shown is None else g[(g["shown"] == shown) & (g["option"] == option)]
    return sel.set_index(KEY)["logprob"]


def _gt(a: pd.Series, b: pd.Series) -> pd.Series:
    """a > b as 1.0/0.0, NaN where either is unscored (left out of the measures, never counted wrong)."""
    return (a > b).astype(float).where(a.notna() & b.notna())


def item_table(scores: pd.DataFrame) -> pd.DataFrame:
    """One row per item x method x order (see the module doc); prompts and options kept as JSON lists."""

    frames = []
    for exp, g in scores.groupby("experiment", sort=True):
        if exp == "1":
            v = g.set_index(KEY)["logprob"]
            t = pd.DataFrame({"value": v, "differential": v})
        elif exp in ("2", "3b") or exp == "3a":
            direct_or_pair = g[(g["method"] == "Direct") | (exp != "3a")]
            good, bad = _lp(direct_or_pair, None, "good"), _lp(direct_or_pair, None, "bad")
            t = pd.DataFrame({"logprob_good": good, "logprob_bad": bad})
            t["differential"] = t["logprob_good"] - t["logprob_bad"]
            t["correct"] = _gt(t["logprob_good"], t["logprob_bad"])
            if exp == "3a":
                m = g[g["method"] != "Direct"]
                yg, ng, yb, nb = (_lp(m, s, o)
                                  for s, o in (("good", "Yes"), ("good", "No"), ("bad", "Yes"), ("bad", "No")))
                tm = pd.DataFrame({"logprob_yes_good": yg, "logprob_no_good": ng, "logprob_yes_bad": yb,
                                   "logprob_no_bad": nb})
                tm["tp"] = _gt(tm["logprob_yes_good"], tm["logprob_no_good"])
                tm["tn"] = _gt(tm["logprob_no_bad"], tm["logprob_yes_bad"])
                tm["differential"] = tm["logprob_yes_good"] - tm["logprob_yes_bad"]
                t = pd.concat([t, tm])
        else:
            continue
        agg = g.groupby(KEY, sort=False).agg(prompts=("prompt", lambda s: json.dumps(list(s))),
                                             options=("option", lambda s: json.dumps(list(s))),
                                             logprobs=("logprob", lambda s: json.dumps([round(x, 6) for x in s])))
        frames.append(t.join(agg).reset_index())
    out = pd.concat(frames, ignore_index=True)
    out["method"] = pd.Categorical(out["method"], METHODS, ordered=True)
    return out.sort_values(["model", "experiment", "dataset", "method", "item", "order"], kind="stable",
                           ignore_index=True).assign(method=lambda d: d["method"].astype(str))


def _units(exp: str, method: str, g: pd.DataFrame) -> tuple[str, np.ndarray, np.ndarray]:
    """(measure, numerators, denominators) per item (all answer orders of an item are one unit).

    The cell's estimate is sum(num) / sum(den) over items, and for Exp 3a Meta the mean of the
    two rates; resampling items keeps each item's orders together.
    """
    by = g.groupby(["dataset", "item"], sort=False)
    if exp == "1":
        num, den = by["value"].sum().to_numpy(float), by["value"].count().to_numpy(float)
        return "mean log P(word)", num[den > 0], den[den > 0]
    if exp == "3a" and method != "Direct":
        tp, tn = by["tp"].sum().to_numpy(float), by["tn"].sum().to_numpy(float)
        ok = (by["tp"].count() > 0).to_numpy() & (by["tn"].count() > 0).to_numpy()
        return "balanced accuracy", np.stack([tp[ok], tn[ok]]), by["tp"].count().to_numpy(float)[ok]
    num, den = by["correct"].sum().to_numpy(float), by["correct"].count().to_numpy(float)
    return "accuracy", num[den > 0], den[den > 0]


def _ratio(num: np.ndarray, den: np.ndarray, pick: np.ndarray | slice) -> np.ndarray:
    if num.ndim == 2:  # balanced accuracy: (TPR + TNR) / 2
        return (num[0][..., pick].sum(-1) + num[1][..., pick].sum(-1)) / (2 * den[pick].sum(-1))
    return num[pick].sum(-1) / den[pick].sum(-1)


def performance(items: pd.DataFrame, n_boot: int, seed: int) -> pd.DataFrame:
    """Figure 2's numbers, pooled over datasets (`dataset` = "all") and per dataset; bootstrap over items."""
    rng = np.random.default_rng(seed)
    rows = []
    for pooled in (True, False):
        keys = ["model", "experiment", "method"] + ([] if pooled else ["dataset"])
        for k, g in items.groupby(keys, sort=False):
            d = dict(zip(keys, k, strict=False))
            exp, method = d["experiment"], d["method"]
            measure, num, den = _units(exp, method, g)
            n = len(den)
            if n:
                est = float(_ratio(num, den, slice(None)))
                boots = _ratio(num, den, rng.integers(0, n, (n_boot, n)))
                lo, hi = np.quantile(boots, [0.025, 0.975]) if n_boot else (np.nan, np.nan)
            else:
                est, lo, hi = np.nan, np.nan, np.nan
            extra = {}
            if exp == "3a" and method != "Direct":
                extra = {"true_positive_rate": float(g["tp"].mean()), "true_negative_rate": float(g["tn"].mean())}
            if exp in ("2", "3b") and method != "Direct":
                by = g.groupby("order")["correct"].mean()
                extra = {f"accuracy_{o}": float(by.get(o, np.nan)) for o in ("goodFirst", "badFirst")}
            rows.append({"model": d["model"], "experiment": exp, "dataset": "all" if pooled else d["dataset"],
                         "method": method, "measure": measure, "n_items": int(g.groupby(["dataset", "item"]).ngroups),
                         "n_scored": n, "estimate": est,
                         "ci_low": float(lo), "ci_high": float(hi), **extra})
    return pd.DataFrame(rows)


def differentials(items: pd.DataFrame) -> pd.DataFrame:
    """Item-level Direct and Meta values (Meta averaged over the answer orders), one row per item x Meta method."""
    per = items.groupby(["model", "experiment", "dataset", "item", "method"], sort=False)["differential"].mean()
    per = per.unstack("method")
    out = []
    for m in META:
        if m not in per or "Direct" not in per:
            continue
        d = per[["Direct", m]].dropna().rename(columns={"Direct": "direct", m: "meta"}).reset_index()
        out.append(d.assign(method=m))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()


def consistency(diffs: pd.DataFrame) -> pd.DataFrame:
    """Pearson r (with p and 95% CI) per model x experiment x dataset x Meta method."""
    from scipy.stats import pearsonr  # scipy.stats (~0.5 s) loads with the first test statistic

    rows = []
    for (model, exp, ds, m), g in diffs.groupby(["model", "experiment", "dataset", "method"], sort=False):
        row = {"model": model, "experiment": exp, "dataset": ds, "method": m, "n_items": len(g),
               "pearson_r": np.nan, "p": np.nan, "ci_low": np.nan, "ci_high": np.nan}
        if len(g) >= 3 and g["direct"].std() > 0 and g["meta"].std() > 0:
            res = pearsonr(g["direct"], g["meta"])
            row.update(pearson_r=float(res.statistic), p=float(res.pvalue))
            if len(g) >= 4:
                ci = res.confidence_interval(0.95)
                row.update(ci_low=float(ci.low), ci_high=float(ci.high))
        rows.append(row)
    return pd.DataFrame(rows)


def consistency_means(ic: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(Figure 6: per model, r averaged over datasets; Figure 3: those averaged over models)."""
    by_model = ic.groupby(["model", "experiment", "method"], sort=False)["pearson_r"].mean().reset_index()
    overall = by_model.groupby(["experiment", "method"], sort=False)["pearson_r"].mean().reset_index()
    return by_model, overall
