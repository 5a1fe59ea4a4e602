"""Model-side measures: demand gap (seeds/002) and internal consistency (seeds/003).

Both compare evaluation methods of the same model on the same items. A row's method comes from
its `protocol` (see `evaluation_method`).

- Demand gap (Hu & Frank): logit(accuracy of the low-demand method) - logit(accuracy of the
  high-demand method), i.e. direct - metalinguistic, and forced choice - production. Infinite when
  an accuracy is 0 or 1 (as in seeds/002); a 95% percentile bootstrap CI resamples trials within
  each method.
- Internal consistency (Hu & Levy): Pearson r between item-level differentials of the direct and
  the metalinguistic method. A row's differential is its `margin` = logP(correct option) -
  logP(other option): for the direct method logP(grammatical form) - logP(ungrammatical form),
  for a metalinguistic prompt the log-probability advantage of the right answer. Items are matched
  on (item_id, dependency, violation_position) within model and context.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

LOW_HIGH = (("direct", "metalinguistic"), ("direct", "production"))


def evaluation_method(protocol: str | None) -> str:
    """direct | metalinguistic | production | other, from a protocol name.

    forced_choice, direct, violation_judgment:direct and Hu & Levy 'Direct' are direct;
    names with 'meta' and plain violation_judgment are metalinguistic; 'production'/'generate'
    are production.
    """
    if protocol is None or (isinstance(protocol, float) and math.isnan(protocol)) or protocol is pd.NA:
        return "other"
    p = str(protocol).lower()
    if "meta" in p:
        return "metalinguistic"
    if "direct" in p or p.startswith("forced_choice") or p == "forced-choice":
        return "direct"
    if p.startswith("violation_judgment"):
        return "metalinguistic"
    if "production" in p or "generat" in p:
        return "production"
    return "other"


def _model_rows(df: pd.DataFrame) -> pd.DataFrame:
    m = df[(df["subject_kind"] == "model") & df["correct"].notna()].copy()
    m["method"] = [evaluation_method(p) for p in m["protocol"].tolist()]
    m["model_label"] = m["model"].fillna("model").astype(str)
    m["context"] = m["context_mode"].fillna("").astype(str)
    return m


def _log_odds(acc: float) -> float:
    if acc <= 0.0:
        return -math.inf
    if acc >= 1.0:
        return math.inf
    return math.log(acc / (1.0 - acc))


def demand_gap(df: pd.DataFrame, seed: int = 0, n_boot: int = 2000) -> pd.DataFrame:
    """One row per model x context x (low, high) method pair present in the data."""
    m = _model_rows(df)
    rng = np.random.default_rng(seed)
    out = []
    for (model, context), g in m.groupby(["model_label", "context"], sort=True):
        for low, high in LOW_HIGH:
            a = g.loc[g["method"] == low, "correct"].astype(float).to_numpy()
            b = g.loc[g["method"] == high, "correct"].astype(float).to_numpy()
            if len(a) == 0 or len(b) == 0:
                continue
            acc_a, acc_b = a.mean(), b.mean()
            gap = _log_odds(acc_a) - _log_odds(acc_b)
            ba = a[rng.integers(0, len(a), (n_boot, len(a)))].mean(axis=1)
            bb = b[rng.integers(0, len(b), (n_boot, len(b)))].mean(axis=1)
            with np.errstate(divide="ignore"):
                boots = np.log(ba / (1 - ba)) - np.log(bb / (1 - bb))
            boots = boots[~np.isnan(boots)]
            lo, hi = (np.quantile(boots, [0.025, 0.975]) if len(boots) else (np.nan, np.nan))
            out.append({"model": model, "context_mode": context, "low_demand": low, "high_demand": high,
                        "n_low": len(a), "n_high": len(b), "accuracy_low": acc_a, "accuracy_high": acc_b,
                        "log_odds_low": _log_odds(acc_a), "log_odds_high": _log_odds(acc_b),
                        "demand_gap": gap, "ci_low": float(lo), "ci_high": float(hi)})
    return pd.DataFrame(out, columns=["model", "context_mode", "low_demand", "high_demand", "n_low", "n_high",
                                      "accuracy_low", "accuracy_high", "log_odds_low", "log_odds_high",
                                      "demand_gap", "ci_low", "ci_high"])


ITEM_KEYS = ["item_id", "dependency", "violation_position"]


def paired_differentials(df: pd.DataFrame) -> pd.DataFrame:
    """Item-level margins of direct and metalinguistic rows side by side (mean over repeats)."""
    m = _model_rows(df)
    m = m[m["method"].isin(["direct", "metalinguistic"]) & m["margin"].notna() & m["item_id"].notna()]
    if m.empty:
        return pd.DataFrame(columns=["model_label", "context", "protocol_meta"] + ITEM_KEYS + ["direct", "meta"])
    m["margin"] = m["margin"].astype(float)
    keys = ["model_label", "context"] + ITEM_KEYS
    direct = m[m["method"] == "direct"].groupby(keys, dropna=False)["margin"].mean().rename("direct")
    meta = (m[m["method"] == "metalinguistic"].groupby(keys + ["protocol"], dropna=False)["margin"].mean()
            .rename("meta").reset_index().rename(columns={"protocol": "protocol_meta"}))
    return meta.merge(direct.reset_index(), on=keys, how="inner")


def internal_consistency(df: pd.DataFrame) -> pd.DataFrame:
    """Pearson r (95% CI by Fisher z) between direct and each metalinguistic protocol's differentials."""
    from scipy.stats import pearsonr

    pairs = paired_differentials(df)
    out = []
    for (model, context, proto), g in pairs.groupby(["model_label", "context", "protocol_meta"], sort=True):
        row = {"model": model, "context_mode": context, "meta_protocol": proto, "n_items": len(g),
               "pearson_r": np.nan, "ci_low": np.nan, "ci_high": np.nan, "p": np.nan}
        if len(g) >= 3 and g["direct"].std() > 0 and g["meta"].std() > 0:
            res = pearsonr(g["direct"], g["meta"])
            ci = res.confidence_interval(0.95) if len(g) > 3 else None
            row.update(pearson_r=float(res.statistic), p=float(res.pvalue),
                       ci_low=float(ci.low) if ci else np.nan, ci_high=float(ci.high) if ci else np.nan)
        out.append(row)
    return pd.DataFrame(out, columns=["model", "context_mode", "meta_protocol", "n_items", "pearson_r", "ci_low",
                                      "ci_high", "p"])
