"""Choice tasks (2 to n options shown together): accuracy and position bias.

Why position bias: a subject (or a prompted model) that prefers the first option scores above chance
on any item whose answer happens to be shown first; counterbalanced positions make the bias
measurable. From the table: `option_order` (the options' original indices in the order shown),
`chosen_position` (0-based screen position chosen) and the item's `materials` (options, answer).

- `position_bias`: per group and number of options, how often each screen position was chosen, beside
  chance (1/n), with a two-sided exact binomial test;
- `accuracy_by_position`: accuracy when the correct option was shown at each position (a bias toward
  position 0 shows as higher accuracy there).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.kind_sections import AnalysisKind, SectionArgs
from analysis.measures.cells import json_list, materials
from analysis.report import design_figures as dfig
from kinds.choice.task import answer_position

KIND = "choice"


def choice_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Choice trials with n_options and the screen position of the correct option (where known)."""
    if "task" not in df.columns:
        return df.iloc[0:0]
    d = df[df["task"] == KIND].copy()
    n_opt, correct_pos = [], []
    for order, mat in zip(d["option_order"].tolist() if "option_order" in d else [None] * len(d), materials(d),
                          strict=False):
        order = json_list(order)
        opts = mat.get("options")
        n_opt.append(len(order) if order else (len(opts) if isinstance(opts, list) else np.nan))
        pos = answer_position(order, opts, mat.get("answer")) if order and isinstance(opts, list) else None
        correct_pos.append(np.nan if pos is None else pos)  # (the answer found by the kind's own rule)
    d["n_options"] = pd.array(n_opt, dtype="Float64")
    d["correct_position"] = pd.array(correct_pos, dtype="Float64")
    return d


def position_bias(d: pd.DataFrame) -> pd.DataFrame:
    """Share of choices per screen position against chance 1/n (exact binomial test), per group."""
    from scipy.stats import binomtest  # scipy.stats (~0.5 s) loads with the first test statistic

    cols = ["group", "n_options", "position", "n_trials", "n_chosen", "share", "chance", "p_binomial"]
    x = d[d["chosen_position"].notna() & d["n_options"].notna()] if len(d) else d
    out = []
    for (g, n), gg in x.groupby(["group", "n_options"], sort=True):
        n = int(n)
        for pos in range(n):
            k = int((gg["chosen_position"] == pos).sum())
            out.append({"group": g, "n_options": n, "position": pos, "n_trials": len(gg), "n_chosen": k,
                        "share": k / len(gg), "chance": 1 / n,
                        "p_binomial": float(binomtest(k, len(gg), 1 / n).pvalue)})
    return pd.DataFrame(out, columns=cols)


def accuracy_by_position(d: pd.DataFrame) -> pd.DataFrame:
    """Accuracy by the screen position of the correct option, per group."""
    cols = ["group", "correct_position", "n_trials", "accuracy"]
    x = d[d["correct_position"].notna() & d["correct"].notna()] if len(d) else d
    if x.empty:
        return pd.DataFrame(columns=cols)
    t = x.assign(_c=x["correct"].astype(float)).groupby(["group", "correct_position"], sort=True)["_c"].agg(
        n_trials="size", accuracy="mean").reset_index()
    t["correct_position"] = t["correct_position"].astype(int)
    return t[cols]


def choice_section(a: SectionArgs) -> None:
    """The report's choice section: position bias and accuracy by the correct option's position."""

    c = choice_rows(a.rows)
    pb, ap = position_bias(c), accuracy_by_position(c)
    res = a.res
    res.section("task_choice", "Choice: position bias",
                "Share of choices per screen position (0 = first shown) against chance (1/n options), two-sided "
                "exact binomial test; accuracy by the screen position of the correct option (a bias to position 0 "
                "shows as higher accuracy there). From `chosen_position`, `option_order` and the item's options.",
                [res.table("choice_position_bias", pb, "Position bias"),
                 res.table("choice_accuracy_by_position", ap, "Accuracy by the correct option's position")],
                [res.figure("choice_position_bias",
                            dfig.position_bias_bars(pb, a.out / "figures" / "choice_position_bias.png"),
                            "Share of choices per screen position; dotted: chance.")])


def choice_bias(d: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """analysis.api.choice_bias on the design's frame: (position bias, accuracy by the correct option's screen
    position) of its choice trials."""
    c = choice_rows(d)
    return position_bias(c), accuracy_by_position(c)


# the kind on the analysis side: people's RTs are analysed; its section: position bias and accuracy by the
# correct option's position
ANALYSIS = AnalysisKind(KIND, rt=True, section=choice_section, api={"choice_bias": choice_bias})
