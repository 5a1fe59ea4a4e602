"""Twins, part 4: item by item, the people's share of each answer beside the model's probability of it.

Per model group and item x condition (`item_id`): the people's answers counted per option (the model's
options, analysis/twins/answers.answer_index), the model's renormalised probability of each (context none / few-shot:
its sessions on that item; replay: the mean over its replays of the people who saw it). Agreement over items:
Pearson r of share and probability (each item's first k-1 options: the last share is fixed by the others),
with a 95% bootstrap CI resampling items; Jensen-Shannon divergence (bits, 0 = the same distribution, 1 = no
overlap) per item, its mean with a CI over items; calibration: the model's probabilities in ten bins against
the people's pooled share. A scale (every option a number): the people's mean answer beside the model's
expected value, and their correlation over items.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from analysis.load.prepare import is_human_group
from analysis.report.figures import PALETTE, pyplot, save_figure
from analysis.twins.answers import (
    _floats,
    _labels,
    _model_table,
    answer_index,
    context_of,
    is_replay,
    is_replay_context,
    person_answer,
    renormalised,
)

DOC = ("Per model group and item x condition: the people's share of each answer beside the model's renormalised "
       "probability of it (replay: the mean over the replays of the people who saw the item). `r_share_vs_p`: Pearson "
       "r over items' options (each item's first k-1 options: the last share follows from the others), 95% bootstrap "
       "CI resampling items; `mean_jsd_bits`: the mean Jensen-Shannon divergence per item (bits: 0 the same "
       "distribution, 1 no overlap), CI over items; `r_mean_vs_expected`: a scale's people's mean answer against the "
       "model's expected value, over items. `items`, `people_trials`: what each number rests on.")


def _replay_table(m: pd.DataFrame) -> dict:
    out: dict = {}
    for item_id, x in m.groupby("item_id", sort=False):
        labs, probs = None, []
        for lab_cell, lp_cell in zip(x["option_labels"], x["option_logprobs"], strict=False):
            lab, lp = _labels(lab_cell), _floats(lp_cell)
            if lab is None or lp is None or len(lab) != len(lp) or len(lp) < 2 or (labs is not None and lab != labs):
                continue
            labs = labs or lab
            probs.append(np.exp(renormalised(lp)))
        if probs:
            out[str(item_id)] = (labs, np.mean(probs, axis=0), len(probs), str(x["protocol"].iloc[0]), None)
    return out


def item_shares(d: pd.DataFrame) -> pd.DataFrame:
    """One row per model group, item x condition and option: people_n, people_share, model_p."""
    people = d[d["group"].astype(str).map(is_human_group) & ~is_replay(d)]
    rows = []
    if people.empty:
        return pd.DataFrame()
    answers = {iid: [person_answer(r) for _, r in x.iterrows()] for iid, x in people.groupby("item_id", sort=False)}
    meta = people.drop_duplicates("item_id").set_index("item_id")
    for g, m in d[d["subject_kind"] == "model"].groupby("group", sort=True):
        ctx = context_of(m)
        if ctx.startswith("running"):
            continue
        table = _replay_table(m) if is_replay_context(ctx) else _model_table(m)
        for iid, ans in answers.items():
            hit = table.get(str(iid))
            if hit is None:
                continue
            labels, probs, _, proto, sett = hit
            idx = [answer_index(labels, a, proto, sett) for a in ans]
            n = sum(i is not None for i in idx)
            if n == 0:
                continue
            for k, lab in enumerate(labels):
                c = sum(i == k for i in idx)
                rows.append({"group": str(g), "context": ctx, "item_id": iid, "item": meta.loc[iid].get("item"),
                             "condition": meta.loc[iid].get("condition"), "option": lab, "option_index": k,
                             "n_options": len(labels), "people": n, "people_n": c, "people_share": c / n,
                             "model_p": float(probs[k])})
    return pd.DataFrame(rows)


def jsd_bits(p: np.ndarray, q: np.ndarray) -> float:
    """Jensen-Shannon divergence in bits (base 2: from 0 to 1)."""
    m = (p + q) / 2

    def kl(a: np.ndarray, b: np.ndarray) -> float:
        nz = a > 0
        return float((a[nz] * np.log2(a[nz] / b[nz])).sum())
    return 0.5 * kl(p, m) + 0.5 * kl(q, m)


def _r(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 3 or np.std(x) == 0 or np.std(y) == 0:
        return math.nan
    return float(np.corrcoef(x, y)[0, 1])


def _per_item(s: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for iid, x in s.groupby("item_id", sort=False):
        x = x.sort_values("option_index")
        p, q = x["people_share"].to_numpy(float), x["model_p"].to_numpy(float)
        vals = pd.to_numeric(x["option"], errors="coerce").to_numpy(float)
        scale = not np.isnan(vals).any()
        rows.append({"item_id": iid, "jsd_bits": jsd_bits(p, q), "people": int(x["people"].iloc[0]),
                     "people_mean": float((vals * p).sum()) if scale else math.nan,
                     "model_expected": float((vals * q).sum()) if scale else math.nan})
    return pd.DataFrame(rows)


def _boot(free: pd.DataFrame, ids: np.ndarray, jsd: np.ndarray, rng: np.random.Generator,
          n_boot: int) -> tuple[np.ndarray, list[float]]:
    """Bootstrap over items (vectorised through per-item sums): Pearson r of share vs p, and mean JSD."""
    if n_boot == 0:
        return np.array([]), []
    x, y = free["people_share"].to_numpy(float), free["model_p"].to_numpy(float)
    pos = {iid: k for k, iid in enumerate(ids)}
    k = free["item_id"].map(pos).to_numpy()
    sums = np.zeros((len(ids), 6))
    for col, v in enumerate((np.ones_like(x), x, y, x * x, y * y, x * y)):
        np.add.at(sums[:, col], k, v)
    counts = np.stack([np.bincount(row, minlength=len(ids)) for row in rng.integers(0, len(ids), (n_boot, len(ids)))])
    n, sx, sy, sxx, syy, sxy = (counts @ sums).T
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (n * sxy - sx * sy) / np.sqrt((n * sxx - sx ** 2) * (n * syy - sy ** 2))
    boot_j = list((counts @ jsd) / counts.sum(1))
    return r[np.isfinite(r)], boot_j


def agreement(shares: pd.DataFrame, seed: int = 0, n_boot: int = 2000) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per group: r with CI over items, mean JSD with CI, scale r; per item: JSD, means) from item_shares."""
    rng = np.random.default_rng(seed)
    out, items_out = [], []
    for (g, ctx), s in shares.groupby(["group", "context"], sort=True):
        free = s[s["option_index"] < s["n_options"] - 1]
        per = _per_item(s).assign(group=g)
        items_out.append(per)
        ids = per["item_id"].to_numpy()
        jsd = per.set_index("item_id")["jsd_bits"]
        br, boot_j = _boot(free, ids, jsd.to_numpy(float), rng, n_boot if len(ids) >= 3 else 0)
        scale = per.dropna(subset=["people_mean", "model_expected"])
        out.append({"group": g, "context": ctx, "items": len(ids), "people_trials": int(per["people"].sum()),
                    "r_share_vs_p": _r(free["people_share"].to_numpy(float), free["model_p"].to_numpy(float)),
                    "r_ci_low": float(np.percentile(br, 2.5)) if len(br) else math.nan,
                    "r_ci_high": float(np.percentile(br, 97.5)) if len(br) else math.nan,
                    "mean_jsd_bits": float(jsd.mean()),
                    "jsd_ci_low": float(np.percentile(boot_j, 2.5)) if boot_j else math.nan,
                    "jsd_ci_high": float(np.percentile(boot_j, 97.5)) if boot_j else math.nan,
                    "r_mean_vs_expected": _r(scale["people_mean"].to_numpy(float),
                                             scale["model_expected"].to_numpy(float)) if len(scale) else math.nan})
    return pd.DataFrame(out), (pd.concat(items_out, ignore_index=True) if items_out else pd.DataFrame())


def calibration(shares: pd.DataFrame, bins: int = 10) -> pd.DataFrame:
    """Per group and bin of the model's probability: mean probability, people's pooled share, counts."""
    if shares.empty:
        return shares
    s = shares.assign(bin=np.minimum((shares["model_p"] * bins).astype(int), bins - 1))
    t = (s.groupby(["group", "bin"]).apply(lambda x: pd.Series({
        "mean_model_p": float(np.average(x["model_p"], weights=x["people"])),
        "people_share": float(x["people_n"].sum() / x["people"].sum()),
        "item_options": len(x), "answers": int(x["people"].sum())}), include_groups=False).reset_index())
    t["bin_low"], t["bin_high"] = t["bin"] / bins, (t["bin"] + 1) / bins
    return t


def calibration_figure(cal: pd.DataFrame, path) -> object:
    if cal.empty:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(4.6, 4.2))
    ax.plot([0, 1], [0, 1], ls=":", color="grey", label="perfect calibration")
    for j, (g, x) in enumerate(cal.groupby("group", sort=True)):
        ax.plot(x["mean_model_p"], x["people_share"], marker="o", color=PALETTE[j % len(PALETTE)], label=str(g))
        for _, r in x.iterrows():
            ax.annotate(str(int(r["answers"])), (r["mean_model_p"], r["people_share"]), fontsize=6,
                        textcoords="offset points", xytext=(3, 3))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("model's probability of an answer (bin mean)")
    ax.set_ylabel("people's share giving it")
    ax.legend(fontsize=6, loc="upper left")
    ax.set_title("Calibration against the people (numbers: answers)", fontsize=8)
    return save_figure(fig, path)
