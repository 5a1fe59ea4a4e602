"""Figures 2-4 of seeds/002, drawn from the tables of gap.py (the authors' layout: one panel per model family
for accuracy; gap against log size with per-family lines and the bootstrapped overall band; OLMo-7B
checkpoints against training step). Models a lab ran through twinlab are drawn in their own panel / with
a star marker and labelled "twinlab"."""
from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.report.figures import pyplot, save_figure
from reproductions.hu_frank.gap import regression_band
from reproductions.hu_frank.models import FAMILY_ORDER, MODEL_ORDER

LOW, HIGH = "#7FB8B3", "#DE8971"  # the paper's low/high-demand colours (low darkened a little for print)
FAMILY_COLOR = {"Pythia": "#3A78B5", "OLMo": "#D0413A", "Gemma": "#3B9A53", "Llama-2": "#7C5BA6", "Mistral": "#E07B22"}
FAMILY_MARKER = {"Pythia": "o", "OLMo": "v", "Gemma": "p", "Llama-2": "D", "Mistral": "s"}
TWINLAB_COLOR, TWINLAB_MARKER = "#222222", "*"


def _setup():
    plt = pyplot()
    plt.rcParams.update({"savefig.dpi": 150, "font.size": 10})
    return plt


def _families(t: pd.DataFrame) -> list[str]:
    fams = [f for f in FAMILY_ORDER if f in set(t["family"])]
    return fams + sorted(set(t["family"]) - set(fams))


def _model_order(t: pd.DataFrame) -> list[str]:
    known = [m for m in MODEL_ORDER if m in set(t["model"])]
    rest = t[~t["model"].isin(known)].sort_values("n_params_b")["model"].drop_duplicates().tolist()
    return known + rest


def _wrap(name: str, width: int = 12) -> str:
    return "\n".join(textwrap.wrap(name.replace("-", "- "), width)).replace("- ", "-")


def accuracy_panels(acc: pd.DataFrame, title: str, ylabel: str, path: Path) -> Path | None:
    """Figures 2A/C, 3A/C: the low- and high-demand method per model, one panel per family."""
    if acc.empty:
        return None
    plt = _setup()
    fams = _families(acc)
    widths = [max(acc[acc["family"] == f]["model"].nunique(), 1) for f in fams]
    fig, axes = plt.subplots(1, len(fams), sharey=True, figsize=(max(7.0, 0.55 * sum(widths) + 1.5), 3.0),
                             gridspec_kw={"width_ratios": widths}, squeeze=False)
    for ax, fam in zip(axes[0], fams, strict=False):
        d = acc[acc["family"] == fam]
        models = _model_order(d)
        x = np.arange(len(models))
        for k, (demand, color) in enumerate((("low", LOW), ("high", HIGH))):
            s = d[d["demand"] == demand].set_index("model").reindex(models)
            err = np.vstack([(s["mean"] - s["ci_low"]).clip(lower=0).fillna(0),
                             (s["ci_high"] - s["mean"]).clip(lower=0).fillna(0)])
            ax.bar(x + (k - 0.5) * 0.4, s["mean"], 0.4, yerr=err, color=color, edgecolor="white", capsize=2,
                   error_kw={"lw": 0.8},
                   label=f"{s['method_name'].dropna().iloc[0] if s['method_name'].notna().any() else demand} "
                         f"({demand} task demands)")
        ax.set_xticks(x)
        ax.set_xticklabels([m.split(" ", 1)[1] if m.startswith(fam + " ") else _wrap(m.removesuffix(" (twinlab)"))
                            for m in models], rotation=0 if len(models) < 6 else 30, fontsize=9)
        ax.set_title(fam, fontsize=10 if len(models) > 1 else 9)
    axes[0][0].set_ylabel(ylabel)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
    fig.supxlabel("Model size", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)


def gap_vs_size(gaps: pd.DataFrame, ylabel: str, title: str, path: Path, n_boot: int = 1000,
                seed: int = 1) -> Path | None:
    """Figures 2B/D, 3B/D: the gap against log10(parameters), per-family lines, the overall OLS line and its
    bootstrapped 95% band (resampling models). Infinite gaps are listed under the axes, not drawn."""
    if gaps.empty:
        return None
    plt = _setup()
    fig, ax = plt.subplots(figsize=(5.2, 3.8))
    d = gaps.assign(lx=np.log10(gaps["n_params_b"].astype(float)))
    fin = d[np.isfinite(d["gap"])]
    base = fin[fin["source"] == "authors"] if (fin["source"] == "authors").any() else fin  # the paper's line
    grid = np.linspace(base["lx"].min(), base["lx"].max(), 50)
    if len(base) >= 3:
        line, lo, hi = regression_band(base["lx"], base["gap"], grid, n_boot, seed)
        ax.fill_between(grid, lo, hi, color="silver", alpha=0.45, lw=0,
                        label=("paper's models: 95% bootstrap band" if len(base) < len(fin)
                               else "all models: 95% bootstrap band"))
        ax.plot(grid, line, color="k", lw=1.6, label="paper's models: OLS "
                                                     "line" if len(base) < len(fin) else "all models: OLS line")
    for r in fin[fin["source"] == "twinlab"].itertuples():
        ax.scatter([r.lx], [r.gap], marker=TWINLAB_MARKER, s=140, color=TWINLAB_COLOR, zorder=6, label=r.model)
    for fam in _families(fin[fin["source"] != "twinlab"]):
        g = fin[fin["family"] == fam]
        twin = False
        color = TWINLAB_COLOR if twin else FAMILY_COLOR.get(fam, "#555555")
        ax.scatter(g["lx"], g["gap"], marker=TWINLAB_MARKER if twin else FAMILY_MARKER.get(fam, "o"),
                   s=90 if twin else 60,
                   color=color, zorder=5, label=fam + (" (twinlab)" if twin else ""), edgecolor="white", lw=0.5)
        if g["lx"].nunique() >= 2:
            b, a = np.polyfit(g["lx"], g["gap"], 1)
            xs = np.array([g["lx"].min(), g["lx"].max()])
            ax.plot(xs, a + b * xs, color=color, lw=1.2)
    ax.axhline(0, color="#999999", lw=0.6, ls=":")
    ax.set_xlabel("# parameters (log10 billions)")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False, fontsize=9)
    inf = d[~np.isfinite(d["gap"])]
    if not inf.empty:
        ax.text(0, -0.2, "not drawn (infinite gap): " + ", ".join(inf["model"]), transform=ax.transAxes, fontsize=8,
                color="#444444")
    fig.tight_layout()
    return save_figure(fig, path)


def training_panels(means: pd.DataFrame, gaps: pd.DataFrame, ylabel: str, gap_label: str, title: str,
                    path: Path) -> Path | None:
    """Figure 4: each method against the OLMo-7B training step (bootstrapped 95% band over items), and the gap."""
    if means.empty:
        return None
    plt = _setup()
    fig, (a, b) = plt.subplots(1, 2, figsize=(9.0, 3.2))
    for demand, color in (("low", LOW), ("high", HIGH)):
        s = means[means["demand"] == demand].sort_values("training_step")
        a.fill_between(s["training_step"] / 1000, s["ci_low"], s["ci_high"], color=color, alpha=0.3, lw=0)
        a.plot(s["training_step"] / 1000, s["mean"], marker="o", ms=4, color=color,
               label=f"{s['method_name'].iloc[0]} ({demand} demands)")
    a.set_xlabel("OLMo-7B training step (thousands)")
    a.set_ylabel(ylabel)
    a.legend(frameon=False, fontsize=9)
    g = gaps.sort_values("training_step")
    y = g["gap"].replace([np.inf, -np.inf], np.nan)
    b.plot(g["training_step"] / 1000, y, marker="o", ms=4, color="#444444")
    b.axhline(0, color="#999999", lw=0.6, ls=":")
    b.set_xlabel("OLMo-7B training step (thousands)")
    b.set_ylabel(gap_label.replace(" (", "\n(", 1))
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return save_figure(fig, path)
