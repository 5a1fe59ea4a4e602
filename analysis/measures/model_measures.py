"""Model-side measures: demand gap (seeds/002) and internal consistency (seeds/003).

Both compare evaluation methods of the same model on the same items. A row's method comes from
its `protocol` (see `evaluation_method`).

- Demand gap (Hu & Frank): logit(accuracy of the low-demand protocol) - logit(accuracy of the
  high-demand protocol): each metalinguistic or production protocol against its direct partner of the
  same task family (`task_family`; e.g. sentence_judgment:MetaInstruct vs sentence_judgment:Direct,
  violation_judgment vs direct, production vs forced_choice), falling back to forced_choice.
  Infinite when an accuracy is 0 or 1 (as in seeds/002); a 95% percentile bootstrap CI resamples
  trials within each protocol.
- Internal consistency (Hu & Levy): Pearson r between item-level differentials of the direct and
  the metalinguistic method. A row's differential is its `margin` = logP(correct option) -
  logP(other option): for the direct method logP(grammatical form) - logP(ungrammatical form),
  for a metalinguistic prompt the log-probability advantage of the right answer. Items are matched
  on (item_id, dependency, violation_position) within model and context, each metalinguistic
  protocol with the same direct partner as for the demand gap.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from analysis.kind_sections import low_demand_protocols, protocol_family, protocol_method


def evaluation_method(protocol: str | None) -> str:
    """direct | metalinguistic | production | other, from a protocol name.

    forced_choice, direct and Hu & Levy's Direct prompt type (sentence_judgment:Direct, ...) are
    direct; names with 'meta' (MetaQuestionSimple, MetaInstruct, ...) and plain violation_judgment
    are metalinguistic; production (any scoring) is production.
    """
    if protocol is None or protocol is pd.NA or (isinstance(protocol, float) and math.isnan(protocol)):
        return "other"

    p = str(protocol).lower()
    if "meta" in p:
        return "metalinguistic"
    if "direct" in p:
        return "direct"
    registered = protocol_method(p)  # a kind's own names (violation detection: forced_choice, violation_judgment)
    if registered:
        return registered
    if "production" in p or "generat" in p:
        return "production"
    return "other"


def task_family(protocol: str | None) -> str:
    """Protocols that pose the same task at different demands share a family.

    sentence_judgment:<PromptType> and sentence_comparison:<PromptType> (Hu & Levy) are families of
    their own; a kind registers its other families (analysis/kind_sections.py; violation detection:
    direct with violation_judgment, the human's question, and forced choice with production, Hu & Frank).
    """

    p = "" if protocol is None or protocol is pd.NA else str(protocol)
    head = p.split(":")[0].lower()
    family = protocol_family(head)  # the kinds' registered families (kinds/violation_detection/analysis.py)
    if family is None and ("production" in head or "generat" in head):
        family = protocol_family("production")
    return family or head or "other"


def _model_rows(df: pd.DataFrame) -> pd.DataFrame:
    m = df[(df["subject_kind"] == "model") & df["correct"].notna()].copy()
    m["method"] = [evaluation_method(p) for p in m["protocol"].tolist()]
    m["family"] = [task_family(p) for p in m["protocol"].tolist()]
    m["protocol"] = m["protocol"].fillna("").astype(str)
    m["model_label"] = m["model"].fillna("model").astype(str)
    m["context"] = m["context_mode"].fillna("").astype(str)
    return m


SMOOTHING = ("log odds of a smoothed accuracy, (correct + 0.5) / (trials + 1) (the log-linear correction), so that "
             "an accuracy of 0 or 1 gives a finite gap; the raw accuracies and the unsmoothed gap are kept beside it")


def smoothed_log_odds(correct, n):
    """log((k + 0.5) / (n - k + 0.5)): the log odds of (k + 0.5) / (n + 1), finite for k = 0 and k = n."""
    k = np.asarray(correct, float)
    n = np.asarray(n, float)
    return np.log((k + 0.5) / (n - k + 0.5))


def gap_flag(acc_low: float, acc_high: float, low: str, high: str) -> str:
    """A method that is never (or always) right is a task failure (or a ceiling), not a measured gap."""
    flags = []
    for acc, name in ((acc_high, high), (acc_low, low)):
        if acc <= 0.0:
            flags.append(f"task failure: {name} never right (accuracy 0)")
        elif acc >= 1.0:
            flags.append(f"ceiling: {name} always right (accuracy 1)")
    return "; ".join(flags)


def _log_odds(acc: float) -> float:
    if acc <= 0.0:
        return -math.inf
    if acc >= 1.0:
        return math.inf
    return math.log(acc / (1.0 - acc))


def low_demand_partner(protocols: list[tuple[str, str, str]], family: str) -> str | None:
    """The direct protocol to compare with: the same family's, else forced_choice, else any direct one."""
    direct = [p for p, meth, fam in protocols if meth == "direct"]
    same = [p for p, meth, fam in protocols if meth == "direct" and fam == family]
    if same:
        return sorted(same)[0]

    preferred = [p for p in low_demand_protocols() if p in direct]
    if preferred:
        return preferred[0]
    return sorted(direct)[0] if direct else None


def demand_gap(df: pd.DataFrame, seed: int = 0, n_boot: int = 2000) -> pd.DataFrame:
    """One row per model x context x high-demand protocol, against its low-demand (direct) partner."""
    m = _model_rows(df)
    rng = np.random.default_rng(seed)
    out = []
    for (model, context), g in m.groupby(["model_label", "context"], sort=True):
        protos = sorted(set(zip(g["protocol"], g["method"], g["family"], strict=False)))
        for high, meth, fam in protos:
            if meth not in ("metalinguistic", "production"):
                continue
            low = low_demand_partner(protos, fam)
            if low is None:
                continue
            a = g.loc[g["protocol"] == low, "correct"].astype(float).to_numpy()
            b = g.loc[g["protocol"] == high, "correct"].astype(float).to_numpy()
            acc_a, acc_b = a.mean(), b.mean()
            lo_a, lo_b = smoothed_log_odds(a.sum(), len(a)), smoothed_log_odds(b.sum(), len(b))
            ka = a[rng.integers(0, len(a), (n_boot, len(a)))].sum(axis=1)
            kb = b[rng.integers(0, len(b), (n_boot, len(b)))].sum(axis=1)
            boots = smoothed_log_odds(ka, len(a)) - smoothed_log_odds(kb, len(b))
            lo, hi = np.quantile(boots, [0.025, 0.975])
            out.append({"model": model, "context_mode": context, "low_demand": low, "high_demand": high,
                        "high_method": meth, "n_low": len(a), "n_high": len(b), "accuracy_low": acc_a,
                        "accuracy_high": acc_b, "log_odds_low": float(lo_a), "log_odds_high": float(lo_b),
                        "demand_gap": float(lo_a - lo_b), "ci_low": float(lo), "ci_high": float(hi),
                        "demand_gap_unsmoothed": _log_odds(acc_a) - _log_odds(acc_b),
                        "flag": gap_flag(acc_a, acc_b, low, high)})
    return pd.DataFrame(out, columns=["model", "context_mode", "low_demand", "high_demand", "high_method", "n_low",
                                      "n_high", "accuracy_low", "accuracy_high", "log_odds_low", "log_odds_high",
                                      "demand_gap", "ci_low", "ci_high", "demand_gap_unsmoothed", "flag"])


ITEM_KEYS = ["item_id", "dependency", "violation_position"]


def paired_differentials(df: pd.DataFrame) -> pd.DataFrame:
    """Item-level margins of each metalinguistic protocol beside its direct partner's (mean over repeats)."""
    cols = ["model_label", "context", "protocol_direct", "protocol_meta"] + ITEM_KEYS + ["direct", "meta"]
    m = _model_rows(df)
    m = m[m["method"].isin(["direct", "metalinguistic"]) & m["margin"].notna() & m["item_id"].notna()]
    if m.empty:
        return pd.DataFrame(columns=cols)
    m = m.assign(margin=m["margin"].astype(float))
    parts = []
    for (model, context), g in m.groupby(["model_label", "context"], sort=True):
        protos = sorted(set(zip(g["protocol"], g["method"], g["family"], strict=False)))
        for meta, meth, fam in protos:
            if meth != "metalinguistic":
                continue
            low = low_demand_partner(protos, fam)
            if low is None:
                continue
            d = g[g["protocol"] == low].groupby(ITEM_KEYS, dropna=False)["margin"].mean().rename("direct")
            x = g[g["protocol"] == meta].groupby(ITEM_KEYS, dropna=False)["margin"].mean().rename("meta")
            pair = pd.concat([d, x], axis=1, join="inner").reset_index()
            parts.append(pair.assign(model_label=model, context=context, protocol_direct=low, protocol_meta=meta))
    return pd.concat(parts, ignore_index=True)[cols] if parts else pd.DataFrame(columns=cols)


def internal_consistency(df: pd.DataFrame) -> pd.DataFrame:
    """Pearson r (95% CI by Fisher z) between direct and each metalinguistic protocol's differentials."""
    from scipy.stats import pearsonr  # scipy.stats (~0.5 s) loads with the first test statistic

    pairs = paired_differentials(df)
    out = []
    for (model, context, low, proto), g in pairs.groupby(["model_label", "context", "protocol_direct", "protocol_meta"],
                                                         sort=True):
        row = {"model": model, "context_mode": context, "direct_protocol": low, "meta_protocol": proto,
               "n_items": len(g), "pearson_r": np.nan, "ci_low": np.nan, "ci_high": np.nan, "p": np.nan}
        if len(g) >= 3 and g["direct"].std() > 0 and g["meta"].std() > 0:
            res = pearsonr(g["direct"], g["meta"])
            ci = res.confidence_interval(0.95) if len(g) > 3 else None
            row.update(pearson_r=float(res.statistic), p=float(res.pvalue),
                       ci_low=float(ci.low) if ci else np.nan, ci_high=float(ci.high) if ci else np.nan)
        out.append(row)
    return pd.DataFrame(out, columns=["model", "context_mode", "direct_protocol", "meta_protocol", "n_items",
                                      "pearson_r", "ci_low", "ci_high", "p"])
