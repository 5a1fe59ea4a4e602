"""Figures (matplotlib, Agg): the seeds' layouts, drawn from the analysis tables.

Each function takes tables (never the raw trials), writes one PNG and returns its path, or None
when there is nothing to draw.
"""
from __future__ import annotations

import io
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.load.prepare import condition_order, is_human_group, structure_order
from analysis.measures.levels import level_series
from analysis.stats.mixed import status_of
from experiments.atomic import atomic_write_bytes

HUMAN_COLOR = "#222222"
PALETTE = ["#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C"]
DEP_COLOR = {"inner": "#C44E52", "outer": "#4C72B0"}



def tight_layout(fig) -> None:
    """`fig.tight_layout()`; where its panels cannot hold their titles and labels (many groups in one
    figure: matplotlib then warns "Tight layout not applied" on the user's terminal and leaves them
    overlapping), the figure is made larger until they fit (at most 4x its area). Other warnings pass."""
    for _ in range(5):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fig.tight_layout()
        failed = [w for w in caught if "Tight layout not applied" in str(w.message)]
        for w in caught:
            if w not in failed:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        if not failed:
            return
        width, height = fig.get_size_inches()
        fig.set_size_inches(width * 1.25, height * 1.25)

def pyplot():
    import matplotlib  # late: matplotlib loads only when a figure is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # late: matplotlib loads only when a figure is drawn

    plt.rcParams.update({"figure.dpi": 100, "savefig.dpi": 100, "axes.spines.top": False,
                         "axes.spines.right": False, "font.size": 10})
    return plt


def save_figure(fig, path: Path) -> Path:
    """Save a figure whole or not at all (rendered in memory, then written to a temporary file and renamed)."""
    buf = io.BytesIO()
    fig.savefig(buf, format=path.suffix.lstrip(".") or "png", bbox_inches="tight")
    atomic_write_bytes(path, buf.getvalue())
    import matplotlib.pyplot as plt  # late: matplotlib loads only when a figure is drawn

    plt.close(fig)
    return path


def _yerr(t: pd.DataFrame) -> np.ndarray:
    lo = (t["error_rate"] - t["ci_low"]).clip(lower=0).fillna(0)
    hi = (t["ci_high"] - t["error_rate"]).clip(lower=0).fillna(0)
    return np.vstack([lo.to_numpy(float), hi.to_numpy(float)])


def error_rate_bars(er: pd.DataFrame, structure: str, path: Path) -> Path | None:
    """seeds/000 Figure 2: model error rates by condition (bars, bootstrap CIs), humans as dashed lines.

    One panel per model group and dependency; with human data only, the bars are the humans'.
    """
    t = er[er["structure"] == structure]
    if t.empty:
        return None
    plt = pyplot()
    humans = [g for g in ("human", "human (simulated)") if g in set(t["group"])]
    groups = [g for g in t["group"].unique() if not is_human_group(g)] or humans[:1]
    deps = [d for d in ("inner", "outer") if d in set(t["dependency"])]
    conds = condition_order(t["condition"])
    human_label = {"human": "humans", "human (simulated)": "simulated humans (not data)"}.get(humans[0] if humans
                                                                                             else "", "humans")
    human = t[t["group"] == humans[0]] if humans and groups != humans[:1] else t.iloc[0:0]
    # wrap the groups into rows of at most `ncol` panels so the figure stays legible at page width
    ncol = min(len(groups), 3 if len(conds) > 4 else 4)
    grows = -(-len(groups) // ncol)
    fig, axes = plt.subplots(grows * len(deps), ncol,
                             figsize=(max(0.5 * len(conds), 2.6) * ncol + 1.4, 2.5 * len(deps) * grows + 0.6),
                             squeeze=False, sharey=True)
    for ax in axes.flat:
        ax.set_visible(False)
    for i, g in enumerate(groups):
        for r, dep in enumerate(deps):
            ax = axes[(i // ncol) * len(deps) + r][i % ncol]
            ax.set_visible(True)
            c = i
            bars = t[(t["group"] == g) & (t["dependency"] == dep)].set_index("condition").reindex(conds)
            x = np.arange(len(conds))
            color = HUMAN_COLOR if is_human_group(g) else PALETTE[c % len(PALETTE)]
            ax.bar(x, bars["error_rate"].fillna(0), color=color, alpha=0.85 if not is_human_group(g) else 0.5,
                   width=0.7)
            ok = bars["error_rate"].notna()
            ax.errorbar(x[ok.to_numpy()], bars.loc[ok, "error_rate"], yerr=_yerr(bars[ok]), fmt="none",
                        ecolor="black", capsize=2, lw=0.8)
            if not is_human_group(g) and not human.empty:
                h = human[human["dependency"] == dep].set_index("condition").reindex(conds)["error_rate"]
                for xi, hv in zip(x, h, strict=False):
                    if pd.notna(hv):
                        ax.hlines(hv, xi - 0.42, xi + 0.42, colors=HUMAN_COLOR, linestyles="--", lw=1.3)
            ax.axhline(0.5, color="grey", lw=0.6, ls=":")
            ax.set_xticks(x, conds, rotation=0 if len(conds) <= 8 else 90, fontsize=8)
            ax.set_ylim(0, 1)
            if r == 0:
                ax.set_title(g.replace(" · ", "\n"), fontsize=8)
            if i % ncol == 0:
                ax.set_ylabel(f"error rate ({dep})")
    handles = []
    from matplotlib.lines import Line2D  # late: matplotlib loads only when a figure is drawn

    if not human.empty:
        handles.append(Line2D([], [], color=HUMAN_COLOR, ls="--", label=human_label))
    handles.append(Line2D([], [], color="grey", ls=":", label="0.5"))
    fig.legend(handles=handles, loc="upper right", fontsize=8, frameon=False)
    fig.suptitle(f"Error rates, {structure} (bars: 95% bootstrap CI)", fontsize=10)
    tight_layout(fig)
    return save_figure(fig, path)


def rates_by_structure(t: pd.DataFrame, position_col: str, title: str, ylabel: str, path: Path) -> Path | None:
    """One group (e.g. the humans): one panel per structure, conditions on x, inner and outer bars
    side by side with 95% CIs. Compact: the whole design in one row at page width."""
    if t.empty:
        return None
    plt = pyplot()
    structures = structure_order(set(t["structure"]))
    widths = [len(set(t.loc[t["structure"] == s, "condition"])) for s in structures]
    fig, axes = plt.subplots(1, len(structures), figsize=(0.44 * sum(widths) + 1.2, 3.4), squeeze=False, sharey=True,
                             gridspec_kw={"width_ratios": widths}, layout="constrained")
    for ax, st in zip(axes[0], structures, strict=False):
        x_t = t[t["structure"] == st]
        conds = condition_order(x_t["condition"])
        x = np.arange(len(conds))
        for k, pos in enumerate(("inner", "outer")):
            d = x_t[x_t[position_col] == pos].set_index("condition").reindex(conds)
            if d["error_rate"].isna().all():
                continue
            xs = x + (k - 0.5) * 0.4
            ax.bar(xs, d["error_rate"].fillna(0), width=0.4, color=DEP_COLOR[pos], alpha=0.8, label=pos)
            ok = d["error_rate"].notna().to_numpy()
            ax.errorbar(xs[ok], d.loc[ok, "error_rate"], yerr=_yerr(d[ok]), fmt="none", ecolor="black", capsize=1.5,
                        lw=0.7)
        ax.axhline(0.5, color="grey", lw=0.7, ls=":")
        ax.set_xticks(x, conds, rotation=90, fontsize=9)
        ax.set_ylim(0, 1)
        ax.set_title(st.replace("_", " "), fontsize=10)
    axes[0][0].set_ylabel(ylabel)
    from matplotlib.patches import Patch  # late: matplotlib loads only when a figure is drawn

    present = [v for v in ("inner", "outer") if v in set(t[position_col])]
    axes[0][-1].legend(handles=[Patch(color=DEP_COLOR[v], alpha=0.8, label=v) for v in present], title="violation",
                       fontsize=9, frameon=False, loc="upper right")
    fig.suptitle(title, fontsize=11)
    return save_figure(fig, path)


def first_encounter_bars(fe: pd.DataFrame, structure: str, path: Path) -> Path | None:
    """seeds/000 Figure 6a: error on the first post-training encounter of each condition, per group."""
    t = fe[fe["structure"] == structure]
    if t.empty:
        return None
    plt = pyplot()
    positions = [v for v in ("inner", "outer") if v in set(t["violation_position"])]
    groups = list(t["group"].unique())
    conds = condition_order(t["condition"])
    fig, axes = plt.subplots(len(positions), 1, figsize=(min(14.0, 1.6 + 0.28 * len(conds) * (len(groups) + 1)),
                                                         2.4 * len(positions) + 0.4), squeeze=False, sharey=True)
    width = 0.8 / len(groups)
    for r, pos in enumerate(positions):
        ax = axes[r][0]
        for k, g in enumerate(groups):
            d = t[(t["group"] == g) & (t["violation_position"] == pos)].set_index("condition").reindex(conds)
            x = np.arange(len(conds)) + (k - (len(groups) - 1) / 2) * width
            color = HUMAN_COLOR if is_human_group(g) else PALETTE[k % len(PALETTE)]
            ax.bar(x, d["error_rate"].fillna(0), width=width, color=color, alpha=0.6 if is_human_group(g) else 0.85,
                   label=g)
            ok = d["error_rate"].notna().to_numpy()
            ax.errorbar(x[ok], d.loc[ok, "error_rate"], yerr=_yerr(d[ok]), fmt="none", ecolor="black", capsize=2,
                        lw=0.8)
        ax.axhline(0.5, color="grey", lw=0.8, ls=":")
        ax.set_xticks(np.arange(len(conds)), conds)
        ax.set_ylim(0, 1)
        ax.set_ylabel(f"{pos} violation\nerror, first encounter")
    if len(groups) > 1:
        axes[0][0].legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle(f"First encounter after training, {structure} (95% bootstrap CI over subjects)", fontsize=10)
    tight_layout(fig)
    return save_figure(fig, path)


def _curve(ax, fit: pd.Series | dict | None, xmax: float, color: str, ls: str = "-", label: str | None = None):
    if fit is None:
        return
    b0, b1 = fit.get("intercept"), fit.get("slope")
    if b0 is None or b1 is None or pd.isna(b0) or pd.isna(b1):
        return
    xs = np.linspace(0, max(xmax, 1), 100)
    ax.plot(xs, 1 / (1 + np.exp(-(b0 + b1 * xs))), color=color, ls=ls, lw=1.4, label=label)


def grid_by_cell(points: pd.DataFrame, fits: pd.DataFrame, group: str, structure: str, x: str, xlabel: str,
                 title: str, path: Path, annotate: bool = False) -> Path | None:
    """Figure C1/C2/C3 layout: rows violation position, columns conditions; points sized by n, logistic curves."""
    p = points[(points["group"] == group) & (points["structure"] == structure)]
    if p.empty:
        return None
    plt = pyplot()
    positions = [v for v in ("inner", "outer") if v in set(p["violation_position"])]
    conds = condition_order(p["condition"])
    f = fits[(fits["group"] == group) & (fits["structure"] == structure)] if not fits.empty else fits
    xmax = float(p[x].max())
    fig, axes = plt.subplots(len(positions), len(conds), figsize=(1.35 * len(conds) + 0.9, 2.1 * len(positions) + 0.8),
                             squeeze=False, sharex=True, sharey=True, layout="constrained")
    nmax = max(1, int(p["n"].max()))
    for r, pos in enumerate(positions):
        for c, cond in enumerate(conds):
            ax = axes[r][c]
            d = p[(p["violation_position"] == pos) & (p["condition"] == cond)]
            color = DEP_COLOR.get(pos, "black")
            ax.scatter(d[x], d["error_rate"], s=8 + 40 * d["n"] / nmax, color=color, alpha=0.55, lw=0)
            if not f.empty:
                row = f[(f["violation_position"] == pos) & (f["condition"] == cond)]
                if len(row):
                    _curve(ax, row.iloc[0].to_dict(), xmax, color)
                    status = row.iloc[0].get("status")
                    if annotate and isinstance(status, str) and status not in ("ok", ""):
                        ax.text(0.97, 0.96, status.replace(", ", ",\n"), transform=ax.transAxes, ha="right",
                                va="top", fontsize=7, color="#b00020")
                    elif annotate and pd.notna(row.iloc[0].get("slope")):
                        p_ = row.iloc[0]["p"]
                        star = "*" if p_ < 0.05 else ""
                        ax.text(0.97, 0.96, f"β={row.iloc[0]['slope']:.2f}\np={p_:.2f}{star}",
                                transform=ax.transAxes, ha="right", va="top", fontsize=8, color="#333")
            ax.axhline(0.5, color="grey", lw=0.5, ls=":")
            ax.set_ylim(-0.05, 1.05)
            ax.set_yticks([0, 0.5, 1], ["0", ".5", "1"])
            ax.tick_params(labelsize=9)
            if r == 0:
                ax.set_title(cond, fontsize=11, fontweight="bold")
            if c == 0:
                ax.set_ylabel(f"{pos}\nerror rate")
    fig.supxlabel(xlabel, fontsize=10)
    fig.suptitle(f"{title} ({group}, {structure})", fontsize=11)
    return save_figure(fig, path)


def _in_cell(t: pd.DataFrame, focus: dict[str, str]) -> pd.Series:
    keep = pd.Series(True, index=t.index)
    for k, v in focus.items():
        keep &= level_series(t[k]) == v
    return keep


def exposure_focus(points: pd.DataFrame, group_fits: dict[str, dict], glm_fits: pd.DataFrame, focus: dict[str, str],
                   path: Path) -> Path | None:
    """seeds/000 Figure 6c: error on the focus cell ({factor: level}) by exposures; glmer fixed-effect curve
    per group."""
    p = points[_in_cell(points, focus)]
    if p.empty:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.8, 3.4))
    xmax = float(p["exposures"].max())
    for k, (g, d) in enumerate(p.groupby("group", sort=False)):
        color = HUMAN_COLOR if is_human_group(g) else PALETTE[k % len(PALETTE)]
        ax.scatter(d["exposures"], d["error_rate"], s=12 + 60 * d["n"] / max(1, p["n"].max()), color=color, alpha=0.6,
                   lw=0, label=f"{g} (mean)")
        fit = group_fits.get(g)
        status = status_of(fit.get("base")) if fit else ""
        if fit and fit.get("base") and status == "ok":
            coefs = {c["term"]: c["estimate"] for c in fit["base"]["coefficients"]}
            _curve(ax, {"intercept": coefs["(Intercept)"], "slope": coefs["exposures"]}, xmax, color,
                   label=f"{g}: glmer fixed effect")
        else:
            row = glm_fits[(glm_fits["group"] == g) & _in_cell(glm_fits, focus)] if not glm_fits.empty else glm_fits
            why = f" (glmer {status})" if status and status != "ok" else ""
            if len(row):
                _curve(ax, row.iloc[0].to_dict(), xmax, color, ls="--", label=f"{g}: logistic fit{why}")
            elif why:
                ax.plot([], [], color=color, ls="--", label=f"{g}: glmer {status}")
    ax.axhline(0.5, color="grey", lw=0.6, ls=":")
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("earlier exposures to this condition and violation")
    ax.set_ylabel("error rate")
    ax.set_xticks(sorted(p["exposures"].unique()))
    ax.set_title(f"Learning over exposures: {':'.join(focus.values())}", fontsize=9)
    ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    tight_layout(fig)
    return save_figure(fig, path)


def demand_gap_plot(dg: pd.DataFrame, path: Path) -> Path | None:
    """Demand gap per model, context and contrast as horizontal bars (labels stay legible at page
    width); a flagged gap (a method never or always right) is hatched and says so at its bar."""
    if dg.empty:
        return None
    plt = pyplot()
    d = dg.reset_index(drop=True)
    flags = d["flag"].fillna("") if "flag" in d.columns else pd.Series([""] * len(d))

    def short(name: str) -> str:
        return str(name).replace("sentence_comparison:", "comparison:").replace("sentence_judgment:", "judgment:")

    labels = ["\n".join(textwrap.wrap(f"{Path(str(r.model)).name} · {r.context_mode}", 34))
              + f"\n{short(r.low_demand)} vs {short(r.high_demand)}" for r in d.itertuples()]
    fig, ax = plt.subplots(figsize=(8.6, 0.62 * len(d) + 1.3))
    y = np.arange(len(d))[::-1]
    gap = d["demand_gap"].astype(float).to_numpy()
    colors = ["#BBBBBB" if f else PALETTE[0] for f in flags]
    ax.barh(y, gap, color=colors, hatch=None, height=0.6)
    for yi, g, f in zip(y, gap, flags, strict=False):
        if f:
            ax.barh(yi, g, color="none", edgecolor="#666666", hatch="///", height=0.6, lw=0)
    err = np.vstack([(gap - d["ci_low"].astype(float)).clip(lower=0), (d["ci_high"].astype(float) - gap).clip(lower=0)])
    ax.errorbar(gap, y, xerr=err, fmt="none", ecolor="black", capsize=3, lw=0.8)
    ax.axvline(0, color="black", lw=0.6)
    ax.set_yticks(y, labels, fontsize=7.5)
    xmin, xmax = min(0.0, float(np.nanmin(d["ci_low"]))), max(0.0, float(np.nanmax(d["ci_high"])))
    pad = 0.05 * (xmax - xmin or 1)
    ax.set_xlim(xmin - pad, xmax + pad)
    for yi, f in zip(y, flags, strict=False):
        if f:
            ax.text(xmin, yi - 0.42, f.split(":")[0] + " (not a result)", fontsize=7, color="#b00020", va="center")
    ax.set_xlabel("demand gap: log odds (low-demand) - log odds (high-demand), accuracy smoothed (k+0.5)/(n+1)",
                  fontsize=8)
    ax.set_title("Demand gap (seeds/002); hatched: a method never (or always) right", fontsize=9)
    tight_layout(fig)
    return save_figure(fig, path)


def consistency_scatter(pairs: pd.DataFrame, ic: pd.DataFrame, path: Path) -> Path | None:
    if pairs.empty:
        return None
    plt = pyplot()
    keys = list(pairs.groupby(["model_label", "context", "protocol_direct", "protocol_meta"]).groups)[:12]
    ncol = min(4, len(keys))
    nrow = (len(keys) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.2 * ncol, 3.1 * nrow), squeeze=False)
    for ax in axes.flat[len(keys):]:
        ax.set_visible(False)
    for ax, key in zip(axes.flat, keys, strict=False):
        d = pairs[(pairs["model_label"] == key[0]) & (pairs["context"] == key[1]) & (pairs["protocol_direct"] == key[2])
                  & (pairs["protocol_meta"] == key[3])]
        ax.scatter(d["direct"], d["meta"], s=8, alpha=0.5, color=PALETTE[0], lw=0)
        r = ic[(ic["model"] == key[0]) & (ic["context_mode"] == key[1]) & (ic["direct_protocol"] == key[2])
               & (ic["meta_protocol"] == key[3])]
        rv = r["pearson_r"].iloc[0] if len(r) else np.nan
        ax.set_title(f"{key[0]} · {key[1]}\n{key[3]}: r = {rv:.2f} (n={len(d)})", fontsize=8)
        ax.set_xlabel(f"direct differential ({key[2]})")
        ax.set_ylabel("metalinguistic differential")
        ax.axhline(0, color="grey", lw=0.5)
        ax.axvline(0, color="grey", lw=0.5)
    fig.suptitle("Internal consistency (seeds/003)", fontsize=10)
    tight_layout(fig)
    return save_figure(fig, path)


def training_bars(c4: pd.DataFrame, path: Path) -> Path | None:
    """seeds/000 Figure C4: error rates during training by structure (panels) and violation (bars)."""
    if c4.empty:
        return None
    plt = pyplot()
    structures = list(dict.fromkeys(c4["structure"]))
    order = ["none", "inner", "outer", "other"]
    fig, axes = plt.subplots(1, len(structures), figsize=(2.3 * len(structures) + 1.0, 3.0), squeeze=False, sharey=True)
    for ax, st in zip(axes[0], structures, strict=False):
        t = c4[c4["structure"] == st].set_index("violation_type")
        vs = [v for v in order if v in t.index] + sorted(v for v in t.index if v not in order)
        t = t.reindex(vs)
        x = np.arange(len(vs))
        ax.bar(x, t["error_rate"].fillna(0), color=[DEP_COLOR.get(v, "#8C8C8C") for v in vs], alpha=0.8, width=0.7)
        ax.errorbar(x, t["error_rate"].fillna(0), yerr=_yerr(t), fmt="none", ecolor="black", capsize=2, lw=0.8)
        for xi, n in zip(x, t["n_trials"], strict=False):
            ax.text(xi, 0.98, f"n={int(n)}", ha="center", va="top", fontsize=7, color="#555")
        ax.set_xticks(x, vs)
        ax.set_ylim(0, 1)
        ax.set_title(st, fontsize=9)
        ax.axhline(0.5, color="grey", lw=0.6, ls=":")
    axes[0][0].set_ylabel("error rate in training")
    fig.suptitle("Errors during training, session 1 (seeds/000 Fig. C4)", fontsize=10)
    tight_layout(fig)
    return save_figure(fig, path)


def dprime_criterion_plot(det: pd.DataFrame, path: Path, max_structures: int = 4) -> Path | None:
    """Sensitivity against bias at a glance: d' (y) against the criterion c (x), one point per group and
    violated dependency (conditions pooled), 95% bootstrap CIs as bars; one panel per structure.
    c < 0: the subject leans to answering 'violation'; c > 0: to 'no violation'."""
    if det.empty:
        return None
    plt = pyplot()
    structures = structure_order(set(det["structure"]))
    structures = structures[:max_structures]
    groups = sorted((g for g in set(det["group"])), key=lambda g: (not is_human_group(g), g))
    ncol = min(2, len(structures))
    nrow = -(-len(structures) // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.6 * ncol + 2.6, 3.1 * nrow + 0.5), squeeze=False,
                             sharey=True, sharex=True)
    for ax in axes.flat[len(structures):]:
        ax.set_visible(False)
    lim = max(2.5, float(np.nanmax(np.abs(det[["criterion_c", "c_ci_low", "c_ci_high"]].to_numpy(float)))) + 0.2)
    for ax, st in zip(axes.flat, structures, strict=False):
        t = det[det["structure"] == st]
        for k, g in enumerate(groups):
            color = HUMAN_COLOR if is_human_group(g) else PALETTE[k % len(PALETTE)]
            for dep, marker in (("inner", "o"), ("outer", "s")):
                r = t[(t["group"] == g) & (t["dependency"] == dep)]
                if r.empty:
                    continue
                r = r.iloc[0]
                xerr = [[max(0, r["criterion_c"] - r["c_ci_low"])], [max(0, r["c_ci_high"] - r["criterion_c"])]]
                yerr = [[max(0, r["dprime"] - r["dprime_ci_low"])], [max(0, r["dprime_ci_high"] - r["dprime"])]]
                ax.errorbar(r["criterion_c"], r["dprime"], xerr=xerr, yerr=yerr, fmt=marker, color=color, ms=6,
                            capsize=2, lw=0.8, mfc=color if dep == "inner" else "white",
                            label=f"{g} · {dep}" if st == structures[0] else None)
        ax.axvline(0, color="grey", lw=0.6, ls=":")
        ax.axhline(0, color="grey", lw=0.6)
        ax.set_xlim(-lim, lim)
        ax.set_title(st, fontsize=10)
    for ax in axes[:, 0]:
        ax.set_ylabel("d' (sensitivity)")
    for ax in axes[-1]:
        ax.set_xlabel("criterion c\n\u2190 'violation' more  |  'no violation' more \u2192", fontsize=8)
    fig.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 0.93))
    fig.suptitle("Violation detection: d' and criterion c (conditions pooled, 95% bootstrap CIs)", fontsize=10)
    tight_layout(fig)
    return save_figure(fig, path)
