"""Figures of a general design (matplotlib, Agg): interaction plots with CIs, rating distributions,
reading times by region, surprisal against reading time, position bias. Each takes an analysis table,
writes one PNG and returns its path (None when there is nothing to draw)."""
from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.report.figures import PALETTE, pyplot, save_figure

GRID_COLUMNS = 4  # panels per row; more panels add rows (a figure never drops a group)
TITLE_WIDTH = 30  # characters per line of a panel title (longer titles wrap instead of overlapping)


def _panels(t: pd.DataFrame, keys: list[str]) -> list[tuple[str, pd.DataFrame]]:
    """Every combination of `keys` present (none dropped: a grid grows with them, `panel_grid`)."""
    if not keys:
        return [("", t)]
    out = []
    for k, g in t.groupby(keys, sort=True, dropna=False):
        k = k if isinstance(k, tuple) else (k,)
        out.append((", ".join(f"{n} = {v}" for n, v in zip(keys, k, strict=False)), g))
    return out


def panel_grid(plt, n: int, width: float = 3.6, height: float = 3.4, sharey: bool = True):
    """(fig, flat list of n axes): up to GRID_COLUMNS panels a row, as many rows as needed; unused
    cells of the last row are hidden."""
    cols = max(1, min(n, GRID_COLUMNS))
    rows = max(1, -(-n // cols))
    fig, axes = plt.subplots(rows, cols, figsize=(max(4.0, width * cols), (height + 0.3) * rows),
                             squeeze=False, sharey=sharey, layout="constrained")  # titles and labels never overlap
    flat = list(axes.flat)
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:max(n, 1)]


def panel_title(ax, name: str) -> None:
    """A panel's title wrapped to TITLE_WIDTH characters a line (long group names never overlap)."""
    ax.set_title("\n".join(textwrap.wrap(name, TITLE_WIDTH)) if name else "", fontsize=8)


def _ordered(values, levels: list[str] | None) -> list[str]:
    """Values as text in the spec's level order (booleans as true/false), others after, sorted."""
    present = list(dict.fromkeys(str(v) for v in values))
    lv = [str(v) for v in (levels or [])]
    low = {p.lower(): p for p in present}
    first = [low[v.lower()] for v in lv if v.lower() in low]
    return first + sorted(p for p in present if p not in first)


def interaction_plot(t: pd.DataFrame, by: list[str], value: str, low: str, high: str, ylabel: str, path: Path,
                     title: str = "", levels: dict[str, list[str]] | None = None) -> Path | None:
    """x: the first factor of `by`; one line per level of the second; one panel per group (and per level
    of further factors); error bars: the table's CI columns; levels in the spec's order (`levels`)."""
    if t.empty or not by:
        return None
    plt = pyplot()
    x, line = by[0], (by[1] if len(by) > 1 else None)
    panels = _panels(t, ["group"] + by[2:])
    fig, axes = panel_grid(plt, len(panels))
    for ax, (name, g) in zip(axes, panels, strict=False):
        xs = _ordered(g[x], (levels or {}).get(x))
        pos = {v: i for i, v in enumerate(xs)}
        lines = _panels(g, [line]) if line else [("", g)]
        if line:
            order = _ordered(g[line], (levels or {}).get(line))
            lines.sort(key=lambda p: order.index(p[0].split(" = ", 1)[-1]) if p[0].split(" = ", 1)[-1] in order else 99)
        for j, (lname, h) in enumerate(lines):
            h = h.assign(_x=h[x].astype(str).map(pos)).sort_values("_x")
            off = (j - (len(lines) - 1) / 2) * 0.06
            y = h[value].to_numpy(float)
            err = np.vstack([(y - h[low].to_numpy(float)).clip(0), (h[high].to_numpy(float) - y).clip(0)])
            ax.errorbar(h["_x"] + off, y, yerr=np.nan_to_num(err), marker="o", capsize=3,
                        color=PALETTE[j % len(PALETTE)], label=lname.split(" = ", 1)[-1] if lname else None)
        ax.set_xticks(range(len(xs)), xs)
        ax.set_xlabel(x)
        panel_title(ax, name)
        ax.set_ylabel(ylabel)
        if line:
            ax.legend(title=line, fontsize=8, title_fontsize=8, frameon=False)
    if title:
        fig.suptitle(title, fontsize=10)
    return save_figure(fig, path)


def rating_distribution(dist: pd.DataFrame, path: Path) -> Path | None:
    """Stacked shares of each scale point per group x cell."""
    shares = [c for c in dist.columns if c.startswith("share_")]
    if dist.empty or not shares:
        return None
    plt = pyplot()
    keys = [c for c in dist.columns if c not in shares and c != "n_trials"]
    labels = [" / ".join(str(v) for v in r) for r in dist[keys].itertuples(index=False)]
    fig, ax = plt.subplots(figsize=(max(4.5, 0.6 * len(labels) + 2), 3.6))
    bottom = np.zeros(len(dist))
    cmap = plt.get_cmap("RdYlGn")
    for i, c in enumerate(shares):
        v = dist[c].to_numpy(float)
        ax.bar(range(len(dist)), v, bottom=bottom, color=cmap(i / max(1, len(shares) - 1)), label=c.split("_", 1)[1])
        bottom += v
    ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("share of ratings")
    ax.legend(title="rating", fontsize=7, title_fontsize=8, bbox_to_anchor=(1.01, 1), loc="upper left", frameon=False)
    return save_figure(fig, path)


def region_rts(t: pd.DataFrame, factors: list[str], path: Path) -> Path | None:
    """Mean reading time by region, one line per factor cell, one panel per group (bars: CIs over subjects)."""
    if t.empty:
        return None
    plt = pyplot()
    panels = _panels(t, ["group"])
    fig, axes = panel_grid(plt, len(panels), width=4.2)
    for ax, (name, g) in zip(axes, panels, strict=False):
        cells = _panels(g, factors) if factors else [("all", g)]
        for j, (cname, h) in enumerate(cells):
            h = h.sort_values("region")
            y = h["mean_rt_ms"].to_numpy(float)
            err = np.vstack([(y - h["ci_low"].to_numpy(float)).clip(0), (h["ci_high"].to_numpy(float) - y).clip(0)])
            ax.errorbar(h["region"], y, yerr=np.nan_to_num(err), marker="o", capsize=2, color=PALETTE[j % len(PALETTE)],
                        label=cname)
        ax.set_xlabel("region")
        panel_title(ax, name)
        ax.legend(fontsize=7, frameon=False)
    axes[0].set_ylabel("reading time (ms)")
    return save_figure(fig, path)


def surprisal_scatter(points: dict[str, pd.DataFrame], path: Path) -> Path | None:
    """Per word: the humans' mean reading time against each model's surprisal, with a least-squares line."""
    points = {k: v for k, v in points.items() if len(v)}
    if not points:
        return None
    plt = pyplot()
    items = list(points.items())
    fig, axes = panel_grid(plt, len(items), width=3.8)
    for ax, (g, p) in zip(axes, items, strict=False):
        ax.scatter(p["surprisal_bits"], p["mean_rt_ms"], s=12, alpha=0.6, color=PALETTE[0])
        if len(p) >= 2 and p["surprisal_bits"].std() > 0:
            b, a = np.polyfit(p["surprisal_bits"], p["mean_rt_ms"], 1)
            xs = np.linspace(p["surprisal_bits"].min(), p["surprisal_bits"].max(), 20)
            ax.plot(xs, a + b * xs, color=PALETTE[3])
        ax.set_xlabel(f"surprisal (bits): {g}", fontsize=8)
    axes[0].set_ylabel("human mean reading time (ms)")
    return save_figure(fig, path)


def position_bias_bars(t: pd.DataFrame, path: Path) -> Path | None:
    """Share of choices per screen position per group, chance as a dotted line."""
    if t.empty:
        return None
    plt = pyplot()
    panels = _panels(t, ["n_options"])
    fig, axes = panel_grid(plt, len(panels), width=4.0, height=3.2)
    for ax, (name, g) in zip(axes, panels, strict=False):
        groups = list(dict.fromkeys(g["group"]))
        n = int(g["n_options"].iloc[0])
        w = 0.8 / len(groups)
        for j, gr in enumerate(groups):
            h = g[g["group"] == gr].sort_values("position")
            ax.bar(h["position"] + (j - (len(groups) - 1) / 2) * w, h["share"], width=w,
                   color=PALETTE[j % len(PALETTE)], label=gr)
        ax.axhline(1 / n, ls=":", color="k")
        ax.set_xticks(range(n))
        ax.set_xlabel("screen position chosen (0 = first)")
        panel_title(ax, name)
        ax.legend(fontsize=7, frameon=False)
    axes[0].set_ylabel("share of choices")
    return save_figure(fig, path)


def learning_curves(curves: pd.DataFrame, path: Path) -> Path | None:
    """Error (and mean RT where there are RTs) by exposures and by trial position: one panel per x and
    outcome, one colour per group (people and every model group in the same panel), solid lines for
    test trials, dashed for training; shaded: the table's 95% CIs over subjects."""
    if curves.empty:
        return None
    plt = pyplot()
    xs = list(dict.fromkeys(curves["x_name"]))
    outcomes = [("error_rate", "ci_low", "ci_high", "error rate")]
    if curves["rt_mean"].notna().any():
        outcomes.append(("rt_mean", "rt_ci_low", "rt_ci_high", "mean RT (ms)"))
    groups = list(dict.fromkeys(curves.sort_values("group", key=lambda s: s != "human")["group"]))
    fig, axes = plt.subplots(len(outcomes), len(xs), figsize=(5.2 * len(xs) + 2.6, 3.4 * len(outcomes)),
                             squeeze=False, sharey="row")
    for r, (val, lo, hi, ylabel) in enumerate(outcomes):
        for c, xn in enumerate(xs):
            ax = axes[r][c]
            for j, g in enumerate(groups):
                for kind, ls in (("training", "--"), ("test", "-")):
                    h = curves[(curves["x_name"] == xn) & (curves["group"] == g) & (curves["block_kind"] == kind)]
                    h = h[h[val].notna()].sort_values("x")
                    if h.empty:
                        continue
                    x, y = h["x"].to_numpy(float), h[val].to_numpy(float)
                    color = PALETTE[j % len(PALETTE)]
                    ax.plot(x, y, ls=ls, marker="o", ms=3, lw=1.4, color=color, label=f"{g} ({kind})")
                    ax.fill_between(x, h[lo].to_numpy(float), h[hi].to_numpy(float), color=color, alpha=0.12, lw=0)
            ax.set_xlabel(xn.replace("_", " "))
            ax.set_ylabel(ylabel)
    handles, labels = axes[0][0].get_legend_handles_labels()
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=False):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, ["\n".join(__import__("textwrap").wrap(lab, 34)) for lab in labels], fontsize=7,
               frameon=False, loc="upper left", bbox_to_anchor=(1.0, 0.95))
    fig.tight_layout()
    return save_figure(fig, path)
