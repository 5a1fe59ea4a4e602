"""The demand gap between any two protocols of the same items (seeds/002, Hu & Frank 2024, generalised).

Why generalised: the Lakretz sections compare each metalinguistic protocol with its direct partner of
one task family (analysis/measures/model_measures.py); a general design may run any protocols (direct, meta,
production, a prompt of one's own) on the same items. Here every pair of protocols of one model and
context is compared on the items both answered (matched on item_id, so an item missing in one
protocol leaves both), low-demand first (direct before metalinguistic before production; two of a
kind in name order), or the pairs the analyst names (`pairs`).

Two definitions, both written:

- `gap_paper`: the paper's definition, log-odds(accuracy low) - log-odds(accuracy high); infinite when
  an accuracy is 0 or 1 (the paper's models never hit that; small runs do);
- `gap_smoothed`: twinlab's, the same difference of log-linear-smoothed log odds,
  log((k + 0.5) / (n - k + 0.5)), finite at 0 and 1 (analysis/measures/model_measures.SMOOTHING), with a 95%
  percentile bootstrap CI resampling the matched items (paired);
- `gap_logprob` (word prediction, where both protocols record `target_logprob`): the paper's
  difference of mean log P(target), low minus high.
"""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from analysis.measures.model_measures import _log_odds, evaluation_method, gap_flag, smoothed_log_odds


class GapError(ValueError):
    """A --gap pair that names no pair of protocols in the data; the message lists the protocols there are."""


SEPARATOR = "=>"


def parse_pair(text: str, option: str = "--gap") -> tuple[str, str]:
    """`LOW=>HIGH` (any protocol names, `:` included), or `LOW:HIGH` when there is exactly one ':'.

    Why '=>': protocol names may hold ':' (a prompt of one's own, `meta:question`), so `A:B:C` cannot
    say where one name ends; no protocol name holds '=>' (refused here when one would have to)."""
    if not isinstance(text, str):
        raise GapError(f"{option}: a pair is text LOW=>HIGH, not {type(text).__name__}")
    if SEPARATOR in text:
        parts = text.split(SEPARATOR)
        if len(parts) != 2:
            raise GapError(f"{option} {text!r}: write one pair LOW=>HIGH (one '=>')")
        low, high = parts
    elif text.count(":") == 1:
        low, _, high = text.partition(":")
    elif ":" in text:
        raise GapError(f"{option} {text!r}: more than one ':' cannot say where a protocol name ends; write "
                       "LOW=>HIGH, e.g. --gap 'direct=>meta:question'")
    else:
        raise GapError(f"{option} {text!r}: write LOW=>HIGH (or LOW:HIGH), e.g. --gap direct=>meta")
    low, high = low.strip(), high.strip()
    if not low or not high:
        raise GapError(f"{option} {text!r}: a protocol name is empty; write LOW=>HIGH")
    return low, high


def model_protocols(df: pd.DataFrame) -> dict[tuple[str, str], set[str]]:
    """The protocols each model and context ran (scored model rows only)."""
    if "protocol" not in df.columns or "subject_kind" not in df.columns:
        return {}
    m = df[(df["subject_kind"] == "model") & df["protocol"].notna()]
    if "correct" in m.columns:
        m = m[m["correct"].notna()]
    model = m["model"].fillna("model").astype(str) if "model" in m.columns else pd.Series("model", index=m.index)
    ctx = m["context_mode"].fillna("").astype(str) if "context_mode" in m.columns else pd.Series("", index=m.index)
    out: dict[tuple[str, str], set[str]] = {}
    for (a, b), p in zip(zip(model, ctx, strict=False), m["protocol"].astype(str), strict=False):
        out.setdefault((a, b), set()).add(p)
    return out


def check_pairs(df: pd.DataFrame, pairs: list[tuple[str, str]] | None, option: str = "--gap"
                ) -> list[tuple[str, str]]:
    """The pairs, each naming two different protocols that one model and context ran both of; anything
    else is refused naming the protocols there are (never silently left out). Duplicates are dropped."""
    if not pairs:
        return []
    runs = model_protocols(df)
    there = sorted(set().union(*runs.values())) if runs else []
    listing = ", ".join(there) if there else "none (no model rows with a protocol)"
    out: list[tuple[str, str]] = []
    for pair in pairs:
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(p, str) for p in pair)):
            raise GapError(f"{option}: a pair is two protocol names (LOW, HIGH), not {pair!r}")
        low, high = pair
        if low == high:
            raise GapError(f"{option} {low}=>{high}: a pair of one protocol has no gap; the protocols there are: "
                           f"{listing}")
        for p in (low, high):
            if p not in there:
                raise GapError(f"{option} {low}=>{high}: unknown protocol {p!r}; the protocols there are: {listing}")
        if not any(low in ps and high in ps for ps in runs.values()):
            raise GapError(f"{option} {low}=>{high}: no model and context ran both; the protocols each ran: "
                           + "; ".join(f"{m}{' · ' + c if c else ''}: {', '.join(sorted(ps))}"
                                       for (m, c), ps in sorted(runs.items())))
        if (low, high) not in out:
            out.append((low, high))
    return out


METHOD_RANK = {"direct": 0, "metalinguistic": 1, "production": 2, "other": 3}
COLUMNS = ["model", "context_mode", "low_demand", "high_demand", "n_items", "accuracy_low", "accuracy_high",
           "gap_paper", "gap_smoothed", "ci_low", "ci_high", "gap_logprob", "flag"]


def _order(a: str, b: str) -> tuple[str, str]:
    ka, kb = (METHOD_RANK[evaluation_method(a)], a), (METHOD_RANK[evaluation_method(b)], b)
    return (a, b) if ka <= kb else (b, a)


def demand_gaps(df: pd.DataFrame, pairs: list[tuple[str, str]] | None = None, seed: int = 0,
                n_boot: int = 2000) -> pd.DataFrame:
    """One row per model x context x protocol pair with both definitions of the gap (named pairs checked
    by check_pairs: an unknown or degenerate pair is refused, never silently left out)."""
    pairs = check_pairs(df, pairs) or None
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
                        "gap_logprob": lp, "flag": "; ".join(f for f in [gap_flag(acc_a, acc_b, low, high)]
                                                              + [one_label_flag(g, p, items) for p in (low, high)]
                                                              if f)})
    return pd.DataFrame(out, columns=COLUMNS)


def one_label_flag(g: pd.DataFrame, protocol: str, items: list) -> str:
    """A protocol that gave one label on every trial (e.g. 'no' on 160/160) measures a response bias, not
    the contrast: its accuracy is the share of items whose answer is that label, and a gap is not a finding."""
    if "response" not in g.columns:
        return ""
    rows = g[(g["protocol"] == protocol) & g["item_id"].isin(items)]
    said = rows["response"].dropna().astype(str)
    said = said[said != ""]
    answers = rows["correct_response"].dropna().astype(str).nunique() if "correct_response" in rows else 2
    if len(said) >= 2 and said.nunique() == 1 and answers >= 2:
        return (f"one label: {protocol} answered {said.iloc[0]!r} on all {len(said)} trials (a response bias; "
                "its accuracy is the share of items with that answer, so this gap is not a finding)")
    return ""
