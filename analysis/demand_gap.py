"""The demand gap between any two protocols of the same items (seeds/002, Hu & Frank 2024, generalised).

Why generalised: the Lakretz sections compare each metalinguistic protocol with its direct partner of
one task family (analysis/model_measures.py); a general design may run any protocols (direct, meta,
production, a prompt of one's own) on the same items. Here every pair of protocols of one model and
context is compared on the items both answered (matched on item_id, so an item missing in one
protocol leaves both), low-demand first (direct before metalinguistic before production; two of a
kind in name order), or the pairs the analyst names (`pairs`).

Two definitions, both written:

- `gap_paper`: the paper's definition, log-odds(accuracy low) - log-odds(accuracy high); infinite when
  an accuracy is 0 or 1 (the paper's models never hit that; small runs do);
- `gap_smoothed`: twinlab's, the same difference of log-linear-smoothed log odds,
  log((k + 0.5) / (n - k + 0.5)), finite at 0 and 1 (analysis/model_measures.SMOOTHING), with a 95%
  percentile bootstrap CI resampling the matched items (paired);
- `gap_logprob` (word prediction, where both protocols record `target_logprob`): the paper's
  difference of mean log P(target), low minus high.
"""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from analysis.model_measures import _log_odds, evaluation_method, gap_flag, smoothed_log_odds

METHOD_RANK = {"direct": 0, "metalinguistic": 1, "production": 2, "other": 3}
COLUMNS = ["model", "context_mode", "low_demand", "high_demand", "n_items", "accuracy_low", "accuracy_high",
           "gap_paper", "gap_smoothed", "ci_low", "ci_high", "gap_logprob", "flag"]


def _order(a: str, b: str) -> tuple[str, str]:
    ka, kb = (METHOD_RANK[evaluation_method(a)], a), (METHOD_RANK[evaluation_method(b)], b)
    return (a, b) if ka <= kb else (b, a)


def demand_gaps(df: pd.DataFrame, pairs: list[tuple[str, str]] | None = None, seed: int = 0,
                n_boot: int = 2000) -> pd.DataFrame:
    """One row per model x context x protocol pair with both definitions of the gap."""
    m = df[(df["subject_kind"] == "model") & df["correct"].notna() & df["protocol"].notna()].copy()
    if m.empty:
        return pd.DataFrame(columns=COLUMNS)
    m["model_label"] = m["model"].fillna("model").astype(str)
    m["context"] = m["context_mode"].fillna("").astype(str)
    m["_c"] = m["correct"].astype(float)
    rng = np.random.default_rng(seed)
    out = []
    for (model, ctx), g in m.groupby(["model_label", "context"], sort=True):
        protos = sorted(set(g["protocol"].astype(str)))
        todo = [p for p in (pairs or [_order(a, b) for a, b in itertools.combinations(protos, 2)])
                if p[0] in protos and p[1] in protos]
        for low, high in todo:
            a = g[g["protocol"] == low].groupby("item_id")
            b = g[g["protocol"] == high].groupby("item_id")
            items = sorted(set(a.groups) & set(b.groups))
            if not items:
                continue
            ca = a["_c"].agg(["sum", "size"]).loc[items]
            cb = b["_c"].agg(["sum", "size"]).loc[items]
            acc_a, acc_b = ca["sum"].sum() / ca["size"].sum(), cb["sum"].sum() / cb["size"].sum()
            smooth = float(smoothed_log_odds(ca["sum"].sum(), ca["size"].sum())
                           - smoothed_log_odds(cb["sum"].sum(), cb["size"].sum()))
            idx = rng.integers(0, len(items), size=(n_boot, len(items)))
            boots = (smoothed_log_odds(ca["sum"].to_numpy()[idx].sum(1), ca["size"].to_numpy()[idx].sum(1))
                     - smoothed_log_odds(cb["sum"].to_numpy()[idx].sum(1), cb["size"].to_numpy()[idx].sum(1)))
            lp = np.nan
            if "target_logprob" in g.columns:
                la = g[(g["protocol"] == low) & g["item_id"].isin(items)]["target_logprob"].dropna()
                lb = g[(g["protocol"] == high) & g["item_id"].isin(items)]["target_logprob"].dropna()
                if len(la) and len(lb):
                    lp = float(la.astype(float).mean() - lb.astype(float).mean())
            out.append({"model": model, "context_mode": ctx, "low_demand": low, "high_demand": high,
                        "n_items": len(items), "accuracy_low": float(acc_a), "accuracy_high": float(acc_b),
                        "gap_paper": _log_odds(acc_a) - _log_odds(acc_b), "gap_smoothed": smooth,
                        "ci_low": float(np.quantile(boots, 0.025)), "ci_high": float(np.quantile(boots, 0.975)),
                        "gap_logprob": lp, "flag": gap_flag(acc_a, acc_b, low, high)})
    return pd.DataFrame(out, columns=COLUMNS)
