"""The paper's figures, drawn from our tables only: 2 (performance), 3 and 6 (consistency heat maps),
7-10 (item-level differential scatters, every panel).

Layouts follow the authors' notebook: Figure 2 bars by model (x) and method (hue, Direct darkest),
chance dashed at 0.5 for accuracies; Figure 3 a tasks x Meta-methods heat map (rows from Exp 1 at
the bottom to Exp 3b at the top, colour scale -1..1, numbers in the cells); Figure 6 one such map per
model; Figures 7-10 a grid per experiment, rows = Meta methods, columns = model x dataset, Direct on
x and the Meta value on y, a least-squares line, r and p in each panel (Exp 1 and 2 with the x = y line
and equal scales, as the paper draws them). Panels stay about 2.2 in wide, so a grid of up to 6
columns fits a page width and stays legible; more columns wrap onto further rows of panels.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from analysis.report.figures import pyplot, save_figure
from reproductions.hu_levy.prompts import META, METHODS, TASK_LABELS

# the authors' cubehelix hues: Direct stands out dark, the Meta methods lighter in order of distance
METHOD_COLORS = {"Direct": "#1b2a41", "MetaQuestionSimple": "#5b7fa6", "MetaInstruct": "#8fb5a3",
                 "MetaQuestionComplex": "#d9c9a3"}
EXP_ORDER = ("1", "2", "3a", "3b")
DATASET_LABELS = {"p18": "P18", "news": "News", "dtfit": "DTFit", "syntaxgym": "SyntaxGym", "blimp": "BLiMP"}


def figure2(perf: pd.DataFrame, path: Path, dataset: str = "all", title: str | None = None) -> Path | None:
    """Four panels (a-d: Exp 1, 2, 3a, 3b), bars by model and method with 95% CIs (Figure 11: the
    experiments present, with its own `title`)."""
    t = perf[perf["dataset"] == dataset] if dataset == "all" else perf[perf["dataset"].isin([dataset])]
    exps = [e for e in EXP_ORDER if e in set(t["experiment"])]
    if t.empty or not exps:
        return None
    plt = pyplot()
    models = list(dict.fromkeys(perf["model"]))
    fig, axes = plt.subplots(1, len(exps), figsize=(max(3.3 * len(exps) + 0.4 * len(models), 6.5), 3.4),
                             squeeze=False)
    width = 0.8 / len(METHODS)
    for ax, exp, letter in zip(axes[0], exps, "abcd", strict=False):
        d = t[t["experiment"] == exp]
        for j, m in enumerate(METHODS):
            dm = d[d["method"] == m].set_index("model").reindex(models)
            x = np.arange(len(models)) + (j - 1.5) * width
            err = np.vstack([dm["estimate"] - dm["ci_low"], dm["ci_high"] - dm["estimate"]])
            ax.bar(x, dm["estimate"], width, color=METHOD_COLORS[m], label=m, edgecolor="white", linewidth=0.5)
            ax.errorbar(x, dm["estimate"], yerr=np.nan_to_num(err), fmt="none", ecolor="black", elinewidth=0.8,
                        capsize=1.5)
        if exp == "1":
            ax.set_ylabel("log P(final word)")
        else:
            ax.axhline(0.5, ls="--", color="black", lw=0.8, alpha=0.7)
            ax.set_ylim(0, 1)
            ax.set_ylabel("balanced accuracy (Meta) / accuracy" if exp == "3a" else "accuracy")
        ax.set_xticks(np.arange(len(models)))
        ax.set_xticklabels([_short(m) for m in models], rotation=20, ha="right", fontsize=8)
        ax.set_title(f"({letter}) {TASK_LABELS[exp]}", fontsize=9)
    where = "pooled over datasets" if dataset == "all" else DATASET_LABELS.get(dataset, dataset)
    fig.suptitle(title or f"Figure 2: task performance by experiment, model and method ({where})", fontsize=10)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.tight_layout(rect=(0, 0, 1, 0.86))
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.93), ncol=4, fontsize=8, frameon=False)
    return save_figure(fig, path)


def _short(model: str) -> str:
    return model if len(model) <= 22 else model[:10] + "…" + model[-10:]


def _heat(ax, m: np.ndarray, exps: list[str], annotate_size: int = 10):
    im = ax.imshow(m, cmap="RdBu_r", vmin=-1, vmax=1, origin="lower", aspect="equal")
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            v = m[i, j]
            ax.text(j, i, "n/a" if np.isnan(v) else f"{v:.2f}", ha="center", va="center", fontsize=annotate_size,
                    color="white" if not np.isnan(v) and abs(v) > 0.6 else "black")
    ax.set_xticks(range(len(META)))
    ax.set_xticklabels([x.replace("Meta", "Meta\n").replace("Question", "Question\n") for x in META], fontsize=7)
    ax.set_yticks(range(len(exps)))
    ax.set_yticklabels([TASK_LABELS[e].replace(" (", "\n(") for e in exps], fontsize=7)
    return im


def _matrix(t: pd.DataFrame, exps: list[str]) -> np.ndarray:
    m = np.full((len(exps), len(META)), np.nan)
    for i, e in enumerate(exps):
        for j, meth in enumerate(META):
            v = t[(t["experiment"] == e) & (t["method"] == meth)]["pearson_r"]
            if len(v):
                m[i, j] = v.iloc[0]
    return m


def figure3(overall: pd.DataFrame, path: Path, n_models: int) -> Path | None:
    """Mean Pearson r between Direct and each Meta method: tasks (rows) x methods, averaged over models."""
    exps = [e for e in EXP_ORDER if e in set(overall["experiment"])]
    if not exps:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(4.6, 4.4))
    im = _heat(ax, _matrix(overall, exps), exps)
    fig.colorbar(im, ax=ax, shrink=0.8, label="mean Pearson r")
    ax.set_xlabel("more distant prompt →", fontsize=8, color="slategrey")
    ax.set_ylabel("more distant task →", fontsize=8, color="slategrey")
    ax.set_title(f"Figure 3: internal consistency\n(mean over datasets and {n_models} model(s))", fontsize=9)
    fig.tight_layout()
    return save_figure(fig, path)


def figure6(by_model: pd.DataFrame, path: Path) -> Path | None:
    """Figure 3's heat map for each model (r averaged over the datasets of each task)."""
    models = list(dict.fromkeys(by_model["model"]))
    if not models:
        return None
    exps = [e for e in EXP_ORDER if e in set(by_model["experiment"])]
    plt = pyplot()
    ncol = min(3, len(models))
    nrow = (len(models) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.6 * ncol, 3.5 * nrow), squeeze=False)
    for ax in axes.flat[len(models):]:
        ax.set_visible(False)
    for k, (ax, model) in enumerate(zip(axes.flat, models, strict=False)):
        im = _heat(ax, _matrix(by_model[by_model["model"] == model], exps), exps, annotate_size=9)
        ax.set_title(_short(model), fontsize=9)
        if k % ncol:  # task names on the first column only, method names on the bottom panels only
            ax.set_yticklabels([])
        if k + ncol < len(models):
            ax.set_xticklabels([])
    fig.subplots_adjust(wspace=0.06, hspace=0.18)
    fig.colorbar(im, ax=list(axes.flat[:len(models)]), shrink=0.7, label="Pearson r")
    fig.suptitle("Figure 6: internal consistency by model", fontsize=10, y=0.96)
    return save_figure(fig, path)


FIGURE_OF_EXPERIMENT = {"1": 7, "2": 8, "3a": 9, "3b": 10}


def scatter_figure(diffs: pd.DataFrame, ic: pd.DataFrame, experiment: str, path: Path,
                   max_cols: int = 6) -> Path | None:
    """Figures 7-10: every panel (Meta methods x models x datasets) of one experiment."""
    d = diffs[diffs["experiment"] == experiment]
    if d.empty:
        return None
    plt = pyplot()
    rank = {k: i for i, k in enumerate(DATASET_LABELS)}  # the paper's order: P18, News; SyntaxGym, BLiMP
    models = list(dict.fromkeys(d["model"]))
    cols = sorted(dict.fromkeys(zip(d["model"], d["dataset"], strict=False)),
                  key=lambda md: (models.index(md[0]), rank.get(md[1], len(rank)), md[1]))
    blocks = [cols[i:i + max_cols] for i in range(0, len(cols), max_cols)]
    ncol = min(len(cols), max_cols)
    nrow = len(META) * len(blocks)
    fig, axes = plt.subplots(nrow, ncol, figsize=(2.3 * ncol + 0.6, 2.2 * nrow + 0.6), squeeze=False)
    same_scale = experiment in ("1", "2")
    if same_scale:
        lo, hi = float(np.nanmin(d[["direct", "meta"]].to_numpy())), float(np.nanmax(d[["direct", "meta"]].to_numpy()))
        pad = 0.05 * (hi - lo or 1)
        lim = (lo - pad, hi + pad)
    for b, block in enumerate(blocks):
        for i, meth in enumerate(META):
            row = b * len(META) + i
            for j in range(ncol):
                ax = axes[row][j]
                if j >= len(block):
                    ax.set_visible(False)
                    continue
                model, ds = block[j]
                g = d[(d["model"] == model) & (d["dataset"] == ds) & (d["method"] == meth)]
                ax.scatter(g["direct"], g["meta"], s=9, alpha=0.45, color="#555555", edgecolors="none")
                if len(g) >= 2 and g["direct"].std() > 0:
                    k, c = np.polyfit(g["direct"], g["meta"], 1)
                    xs = np.linspace(g["direct"].min(), g["direct"].max(), 10)
                    ax.plot(xs, k * xs + c, color="#4C72B0", lw=1.2)
                if same_scale:
                    ax.plot(lim, lim, ls="--", color="#C44E52", lw=0.8, zorder=0)
                    ax.set_xlim(lim)
                    ax.set_ylim(lim)
                r = ic[(ic["model"] == model) & (ic["dataset"] == ds) & (ic["method"] == meth)
                       & (ic["experiment"] == experiment)]
                if len(r) and pd.notna(r["pearson_r"].iloc[0]):
                    p = r["p"].iloc[0]
                    ptxt = "p < 0.001" if p < 0.001 else f"p = {p:.3f}"
                    ax.text(0.04, 0.96, f"r = {r['pearson_r'].iloc[0]:.2f}\n{ptxt}\nn = {len(g)}",
                            transform=ax.transAxes, va="top", fontsize=7, color="dimgrey", zorder=5,
                            bbox=dict(boxstyle="round,pad=0.2", fc="white", ec="none", alpha=0.8))
                ax.tick_params(labelsize=7)
                if i == 0:
                    ax.set_title(f"{_short(model)}\n{DATASET_LABELS.get(ds, ds)}", fontsize=8)
                if j == 0:
                    ax.set_ylabel(meth.replace("Meta", "Meta\n"), fontsize=8)
                if i == len(META) - 1:
                    ax.set_xlabel("Direct", fontsize=8)
    what = {"1": "log P(ground-truth word)", "2": "log P(plausible) - log P(implausible)",
            "3a": "Direct: log P(good) - log P(bad); Meta: log P(Yes | good) - log P(Yes | bad)",
            "3b": "Direct: log P(good) - log P(bad); Meta: log P(good's label) - log P(bad's label)"}[experiment]
    fig.suptitle(f"Figure {FIGURE_OF_EXPERIMENT[experiment]}: {TASK_LABELS[experiment]}, item level\n{what}",
                 fontsize=9)
    fig.tight_layout()
    return save_figure(fig, path)
