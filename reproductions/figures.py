"""Figures of the reproductions that analysis.report.figures has no layout for (drawn from tables only)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from analysis.load.prepare import condition_order
from analysis.report.figures import HUMAN_COLOR, PALETTE, pyplot, save_figure
from reproductions.common import cells_study

PSP_COLOR = "#C44E52"  # the key condition of seeds/000, drawn thick


def interpolation_lines(t: pd.DataFrame, human: pd.DataFrame | None, path: Path, title: str) -> Path | None:
    """seeds/000 Figure 5: error rate by the number of nested examples in the eight-shot prompt.

    `t`: n_nested, condition, error_rate, ci_low, ci_high (one model, one subtask). One line per
    condition, PSP drawn thick; the humans' PSP error rate as a dashed line when given.
    """
    if t.empty:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    conds = condition_order(t["condition"])

    key_condition = cells_study().KEY_CONDITION  # the study's name of the paper's key condition
    others = [c for c in PALETTE if c != PSP_COLOR]
    for k, cond in enumerate(conds):
        d = t[t["condition"] == cond].sort_values("n_nested")
        key = cond == key_condition
        color = PSP_COLOR if key else others[k % len(others)]
        err = np.vstack([(d["error_rate"] - d["ci_low"]).clip(lower=0).fillna(0),
                         (d["ci_high"] - d["error_rate"]).clip(lower=0).fillna(0)])
        ax.errorbar(d["n_nested"], d["error_rate"], yerr=err if key else None, marker="o", ms=3 if key else 2,
                    lw=2.2 if key else 0.9, alpha=1.0 if key else 0.55, color=color,
                    capsize=2, label=cond)
    if human is not None and not human.empty:
        h = human[human["condition"] == key_condition]["error_rate"]
        if len(h):
            ax.axhline(float(h.iloc[0]), color=HUMAN_COLOR, ls="--", lw=1.3, label=f"humans, {key_condition}")
    ax.axhline(0.5, color="grey", lw=0.6, ls=":")
    ax.set_xticks(range(0, 9))
    ax.set_xlim(-0.3, 8.3)
    ax.set_ylim(0, 1)
    ax.set_xlabel("nested examples in the eight-shot prompt (the rest successive)")
    ax.set_ylabel("error rate (inner dependency)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return save_figure(fig, path)


def accuracy_bars(t: pd.DataFrame, x: str, hue: str, path: Path, title: str, ylabel: str = "accuracy",
                  chance: float | None = 0.5) -> Path | None:
    """Grouped bars with CIs: `x` on the axis, one bar per `hue` (Hu & Levy / Hu & Frank layouts).

    `t`: columns x, hue, estimate, ci_low, ci_high.
    """
    if t.empty:
        return None
    plt = pyplot()
    xs = list(dict.fromkeys(t[x]))
    hues = list(dict.fromkeys(t[hue]))
    width = 0.8 / max(1, len(hues))
    fig, ax = plt.subplots(figsize=(max(4.0, 1.6 * len(xs) + 2.5), 3.6))
    for k, h in enumerate(hues):
        d = t[t[hue] == h].set_index(x).reindex(xs)
        pos = np.arange(len(xs)) + (k - (len(hues) - 1) / 2) * width
        est = d["estimate"].astype(float)
        err = np.vstack([(est - d["ci_low"].astype(float)).clip(lower=0).fillna(0),
                         (d["ci_high"].astype(float) - est).clip(lower=0).fillna(0)])
        ax.bar(pos, est.fillna(0), width=width, color=PALETTE[k % len(PALETTE)], alpha=0.85, label=str(h))
        ax.errorbar(pos, est.fillna(0), yerr=err, fmt="none", ecolor="black", capsize=2, lw=0.8)
    if chance is not None:
        ax.axhline(chance, color="grey", lw=0.6, ls=":")
    ax.set_xticks(np.arange(len(xs)), [str(v).replace(" · ", "\n") for v in xs], fontsize=7)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return save_figure(fig, path)
