"""The self-paced-reading figure: people's reading time and each model's surprisal by region, side by side.

One panel per group (people's groups first: reading time in ms; then each model group: surprisal in bits),
regions on the x axis by name in reading order, one line per design cell in the spec's level order,
95% CIs as bars (people: over subjects; models: over items). Sized to stay legible at page width.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from analysis.report.figures import PALETTE, pyplot, save_figure

MAX_PANELS = 6
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]


def _short(name: str, width: int = 16) -> str:
    return name if len(name) <= width else name[:width - 1] + "…"


def _cells(t: pd.DataFrame, factors: list[str]) -> list[tuple[str, pd.DataFrame]]:
    if not factors:
        return [("all trials", t)]
    out = []
    for key, g in t.groupby(factors, sort=True, observed=True, dropna=False):  # categoricals: the declared order
        key = key if isinstance(key, tuple) else (key,)
        out.append((", ".join(str(v) for v in key), g))
    return out


def reading_by_region(rt: pd.DataFrame, sur: pd.DataFrame, factors: list[str], order: list[str],
                      path: Path) -> Path | None:
    """rt: region_means (mean_rt_ms), sur: region_surprisal (mean_surprisal_bits); order: region names."""
    panels = [(str(g), "mean_rt_ms", "reading time "
                                     "(ms)", t) for g, t in rt.groupby("group", sort=True, observed=True)] \
        if len(rt) else []
    panels += [(str(g), "mean_surprisal_bits", "surprisal (bits)", t)
               for g, t in sur.groupby("group", sort=True, observed=True)] if len(sur) else []
    # every group is drawn (a grid of 2 columns grows; a figure never drops a group)
    if not panels:
        return None
    plt = pyplot()
    n = len(panels)
    cols = min(n, 2)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6.6 * cols if cols > 1 else 7.0, 3.6 * rows), squeeze=False)
    x_of = {name: i for i, name in enumerate(order)}
    for ax, (title, col, ylabel, t) in zip(axes.flat, panels, strict=False):
        for j, (cname, g) in enumerate(_cells(t, factors)):
            g = g.assign(_x=g["region_name"].map(x_of)).dropna(subset=["_x"]).sort_values("_x")
            y = g[col].to_numpy(float)
            err = np.vstack([(y - g["ci_low"].to_numpy(float)).clip(0), (g["ci_high"].to_numpy(float) - y).clip(0)])
            ax.errorbar(g["_x"] + (j - 0.5) * 0.06, y, yerr=np.nan_to_num(err), marker=MARKERS[j % len(MARKERS)],
                        capsize=3, linewidth=1.6, markersize=5, color=PALETTE[j % len(PALETTE)], label=cname)
        ax.set_xticks(range(len(order)))
        ax.set_xticklabels([_short(o) for o in order], rotation=30, ha="right", fontsize=10)
        ax.set_ylabel(ylabel, fontsize=11)
        ax.set_title(title, fontsize=11)
        ax.tick_params(axis="y", labelsize=10)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=9, frameon=False, title=" x ".join(factors) if factors else None, title_fontsize=9)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    fig.tight_layout()
    return save_figure(fig, path)
