"""`twinlab reproduce hu-frank2024 --authors-outputs DIR --out OUT`: the paper's analysis recomputed from the
authors' released per-item outputs (Figures 2-4, equations (1)-(4), the sensitivity fits) into OUT/report.html,
OUT/tables/*.csv, OUT/figures/*.png and OUT/provenance.json."""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.stats.mixed import MixedModelError, r_fitter
from reproductions.common import Report, ReproError, write_provenance
from reproductions.hu_frank import fits as F
from reproductions.hu_frank.gap import demand_gap, method_means, slopes
from reproductions.hu_frank.models import table2_frame
from reproductions.hu_frank.plots import accuracy_panels, gap_vs_size, training_panels
from reproductions.hu_frank.released import BINARY, LABEL, METHOD_NAME, METHODS, Released, read_released

PAPER = "seeds/002: Hu & Frank (2024), Auxiliary task demands mask the capabilities of smaller language models"
FIGURE = {"digit_mat": ("2A", "2B"), "crt": ("2C", "2D"), "lambada": ("3A", "3B"), "syntax": ("3C", "3D")}
SIZE_KEYS = ["source", "model", "family", "n_params_b"]
DEFAULT_ROW_ORDERS = 5
MAX_ROW_ORDERS = 20


@dataclass
class AuthorsOptions:
    authors_outputs: Path
    out: Path
    fits: bool = True  # the lme4 models (R)
    sensitivity: bool = True  # the sensitivity fits (several minutes)
    # the paper's fits in this many row orders: as read, reversed, then seeded shuffles (5: 3 shuffles; 1: as read
    # only, one fit per model, as the real-release test runs it; the refits are most of the run's 34 minutes)
    row_orders: int = DEFAULT_ROW_ORDERS
    n_boot: int = 1000
    seed: int = 1
    quiet: bool = False
    extra_rows: pd.DataFrame | None = None  # twinlab's own runs, same columns (source = "twinlab")


def _say(opt: AuthorsOptions, msg: str) -> None:
    if not opt.quiet:
        print(f"[hu-frank2024] {msg}", file=sys.stderr, flush=True)


def _labels(domain: str) -> tuple[str, str]:
    low, high = METHODS[domain]
    if BINARY[domain]:
        return "Proportion correct", f"Δ log odds ({METHOD_NAME[low]} − {METHOD_NAME[high]})"
    return "Log-probability of the final word", f"Δ log-probability ({METHOD_NAME[low]} − {METHOD_NAME[high]})"


def _describe_fit(f: F.Fit) -> str:
    if f.fit is None:
        return f"{f.label}: failed ({f.error})"
    c = f.fit.coef(f.term)
    hf = c.get("z_hessian_free", float("nan"))
    ro = f.row_order or {}
    extra = (f"; Hessian-free SE {c['se_hessian_free']:.4g}, z = {hf:.3f}" if np.isfinite(hf) else "")
    if ro:
        extra += (f"; over {ro['n_orders']} row orders {c.get('statistic', 'z')} = {F._range(ro, 'z', 3)}, "
                  f"log-likelihood {F._range(ro, 'loglik', 2)}")
    return (f"{f.label}: {c.get('statistic', 'z')} = {c['z']:.3f}, p = {c['p']:.3g} for {f.term}{extra}; "
            f"status: {f.fit.status}" + (f" ({'; '.join(f.fit.messages)})" if f.fit.messages else ""))


def analyse(rel: Released, opt: AuthorsOptions, rep: Report) -> dict:
    """Tables, figures and fits of every domain; returns the paper-vs-twinlab table and the fits."""
    size = dict(rel.size)
    if opt.extra_rows is not None and not opt.extra_rows.empty:
        for d, g in opt.extra_rows.groupby("domain"):
            size[d] = pd.concat([size.get(d, pd.DataFrame()), g], ignore_index=True)
    figs = opt.out / "figures"
    all_fits: list[F.Fit] = []
    acc_all, gap_all, slope_all = [], [], []
    for domain in [d for d in ("digit_mat", "crt", "lambada", "syntax") if d in size]:
        rows = size[domain]
        ylabel, gap_label = _labels(domain)
        fa, fb = FIGURE[domain]
        acc = method_means(rows, domain, SIZE_KEYS, opt.n_boot, opt.seed).assign(domain=domain)
        gaps = demand_gap(rows, domain, SIZE_KEYS).assign(domain=domain)
        sl = slopes(gaps).assign(domain=domain)
        acc_all.append(acc)
        gap_all.append(gaps)
        slope_all.append(sl)
        rep.heading(f"{LABEL[domain].capitalize()} (Figure {fa[0]}{fa[1]}/{fb[1]})", anchor=domain)
        parts = []
        for src, g in rows.groupby("source", sort=True):
            n_items = g.groupby("model")["item"].nunique()
            who = "of the authors'" if src == "authors" else "twinlab"
            parts.append(f"{len(n_items)} {who} model"
                         f"{'s' if len(n_items) != 1 else ''} ({int(n_items.median())} items each)")
        rep.text(" and ".join(parts) + f"; {len(rows):,} rows (method x item x model"
                 f"{' x prompt order' if domain == 'syntax' else ''}).")
        rep.figure(accuracy_panels(acc, f"{LABEL[domain]}: {ylabel.lower()} by method and model", ylabel,
                                   figs / f"fig{fa}_{domain}_accuracy.png"),
                   f"Figure {fa}: {ylabel.lower()} per model and method (95% bootstrap CI over rows).")
        rep.figure(gap_vs_size(gaps, gap_label, f"{LABEL[domain]}: demand gap by "
                                                "size", figs / f"fig{fb}_{domain}_gap_size.png",
                               n_boot=opt.n_boot, seed=opt.seed),
                   f"Figure {fb}: the demand gap against model size; coloured lines: OLS within family; black line and "
                   "grey band: OLS over the paper's models with its 95% bootstrap band (models resampled); stars: "
                   "models run by twinlab (not in the line).")
        for r in gaps[gaps["flag"] != ""].itertuples():
            rep.note(f"{r.model}: {r.flag} (low {r.low_demand:.3f}, high {r.high_demand:.3f}); the paper leaves it out "
                     "of "
                     "the figure too.")
        if opt.fits:
            _say(opt, f"{domain}: equation {'(1)' if BINARY[domain] else '(2)'} (lme4)")
            data = F.model_frame(rows[rows["source"] == "authors"], domain)
            fit = F.paper_fit(domain, data)
            if opt.row_orders > 1:
                _say(opt, f"{domain}: the paper's model in {opt.row_orders - 1} more row order(s)")
                F.add_row_order(fit, data, opt.row_orders)
            all_fits.append(fit)
            rep.note(_describe_fit(fit))
            if opt.sensitivity:  # for every size model: the authors' own four fits were all singular
                data = F.model_frame(rows[rows["source"] == "authors"], domain)
                sens = F.sensitivity(domain, data, progress=lambda m: _say(opt, m))
                _say(opt, f"{domain}: the paper's model on the rows in reverse order")
                rev = F.run_fit(domain, "size", "(d) the paper's model, rows reversed",
                                data.iloc[::-1].reset_index(drop=True), F.formula(domain), mixed=True)
                all_fits += sens + [rev]
    for domain, rows in rel.training.items():
        fit = training_section(domain, rows, "OLMo-7B checkpoints", opt, rep)
        if fit is not None:
            all_fits.append(fit)
    tables = {"accuracy": pd.concat(acc_all, ignore_index=True) if acc_all else pd.DataFrame(),
              "demand_gap": pd.concat(gap_all, ignore_index=True) if gap_all else pd.DataFrame(),
              "gap_slopes": pd.concat(slope_all, ignore_index=True) if slope_all else pd.DataFrame()}
    return {"fits": all_fits, "tables": tables}


def training_section(domain: str, rows: pd.DataFrame, what: str, opt: AuthorsOptions, rep: Report,
                     suffix: str = "") -> F.Fit | None:
    """Figure 4's panels (each method and the gap against the training step) for one domain of one checkpoint
    series, and equation (3) or (4) when opt.fits."""
    if rows.empty:
        return None
    figs = opt.out / "figures"
    ylabel, gap_label = _labels(domain)
    means = method_means(rows, domain, ["training_step"], opt.n_boot, opt.seed).assign(domain=domain)
    gaps = demand_gap(rows, domain, ["training_step"]).assign(domain=domain)
    letter = "A" if domain == "digit_mat" else "B"
    tail = f"_{suffix}" if suffix else ""
    rep.heading(f"{LABEL[domain].capitalize()} over training (Figure 4{letter}){': ' + what if suffix else ''}",
                anchor=f"training-{domain}{tail}")
    rep.figure(training_panels(means, gaps, ylabel, gap_label, f"{LABEL[domain]}: {what}",
                               figs / f"fig4{letter}_{domain}_training{tail}.png"),
               f"Figure 4{letter}: left, each method against the training step (95% bootstrap band over items); "
               "right, the demand gap.")
    rep.table(f"training_{domain}{tail}", pd.concat([means, gaps.assign(method="gap")], ignore_index=True),
              f"{LABEL[domain]}: each method and the gap per checkpoint", show=False)
    if not opt.fits:
        return None
    _say(opt, f"{domain}: equation {'(3)' if BINARY[domain] else '(4)'}")
    data = F.model_frame(rows, domain, training=True)
    fit = F.paper_fit(domain, data, training=True)
    if opt.row_orders > 1:
        F.add_row_order(fit, data, opt.row_orders)
    rep.note(_describe_fit(fit))
    return fit


def _orders_text(n: int) -> str:
    if n < 2:
        return "One fit per model, the rows as read (--row-orders 1: no row-order refits)."
    shuffles = f" and in {n - 2} seeded shuffle{'s' if n != 3 else ''}" if n > 2 else ""
    return f"Row orders: the rows as read, reversed{shuffles}."


def _paper_shown(paper: pd.DataFrame, n_orders: int) -> pd.DataFrame:
    """The report's view of paper_vs_twinlab.csv (the row-order columns only where there were refits)."""
    cols = ["domain", "analysis", "equation", "paper", "twinlab", "matches_printed_digits", "z_hessian_free",
            "row_order_z", "row_order_loglik", "fit_status", "authors_fit", "verdict"]
    if n_orders < 2:
        cols = [c for c in cols if not c.startswith("row_order")]
    shown = paper[[c for c in cols if c in paper.columns]].rename(
        columns={"matches_printed_digits": "printed digits", "fit_status": "twinlab's "
                                                                           "fit", "authors_fit": "authors' fit",
                 "z_hessian_free": "Hessian-free z", "row_order_z": f"z over {n_orders} row orders",
                 "row_order_loglik": f"logLik over {n_orders} row orders"})
    if "Hessian-free z" in shown:
        shown["Hessian-free z"] = shown["Hessian-free z"].map(lambda v: "" if pd.isna(v) else f"{v:.3f}")
    return shown


def require_r(fits: bool) -> None:
    """With fits, R and lme4 must start before anything is written or run (else: say so, or --no-fits)."""
    if fits:
        try:
            r_fitter()
        except MixedModelError as exc:
            raise ReproError(f"{exc} (or pass --no-fits)") from None


def _paper_section(rep: Report, fits: list, row_orders: int) -> None:
    """The paper's statistics beside twinlab's, each verdict, the flagged fits and the fixed effects."""
    paper = F.paper_table(fits)
    rep.heading("The paper's statistics beside twinlab's", anchor="paper")
    rep.table("paper_vs_twinlab", paper, "Interaction of size (or training step) and evaluation method: the paper "
              "prints |z| or |t|; the sign follows R's reference level (production, direct). Hessian-free z: the "
              f"estimate over lme4's SE from vcov(use.hessian = FALSE) (glmer only). {_orders_text(row_orders)}"
              " Estimates, SEs and lme4's messages are in the CSV", shown=_paper_shown(paper, row_orders))
    for r in paper.itertuples():
        if isinstance(getattr(r, "verdict", None), str) and r.verdict:
            rep.note(f"{r.domain}, {r.analysis}, equation {r.equation}: {r.verdict}")
    flagged = paper[~paper["fit_status"].astype(str).isin(["ok", ""])]
    if not flagged.empty:
        rep.note("Fits not to interpret as they stand (boundary rule, docs/analysis/analyses.md "
                 "'Boundary fits'): " + "; ".join(
            f"{r.domain}, equation {r.equation} ({r.fit_status.split(',')[0]})" for r in flagged.itertuples())
            + ". The authors' own summaries say 'boundary (singular) fit' for every size model. A singular "
            "fit's random-effect covariance sits on the boundary and the Wald SE of its interaction is not a "
            "stable number (it moves with the order of the rows: check (d) below); read the sensitivity "
            "analysis before these p-values.")
    fixed = F.authors_fixed_table(fits)
    if not fixed.empty:
        rep.table("authors_fixed_effects", fixed, "Every fixed effect of the four size models beside the authors' "
                  "printed summaries (analysis/lmers/*_lmer_size.txt)",
                  shown=fixed[["domain", "term", "authors_estimate", "twinlab_estimate", "difference", "authors_se",
                               "twinlab_se", "twinlab_se_hessian_free", "fit_status"]].round(
                      {"twinlab_estimate": 5, "difference": 5, "twinlab_se": 5, "twinlab_se_hessian_free": 5}))


def _sensitivity_section(rep: Report, fits: list) -> None:
    """The sensitivity fits of the size models (when run) and their verdicts, then every fit's full tables."""
    sens = F.sensitivity_summary(fits)
    if not sens.empty:
        rep.heading("Sensitivity analysis (size models)", anchor="sensitivity")
        rep.text("(a) the same fixed effects with simpler by-family random effects, from the richest down, until a "
                 "fit is neither singular nor unconverged; (b) model family as a fixed effect (glm/lm); (c) family "
                 "fixed with random intercepts for items (every item is seen by all 13 models); (d) the paper's "
                 "model with the rows in reverse order (a singular fit's SE can depend on it).")
        compact = sens.assign(model=sens["formula"].str.split("~", n=1).str[1].str.strip())[
            ["domain", "fit", "model", "estimate", "se", "statistic", "value", "p", "status"]]
        rep.table("sensitivity", sens, "The interaction under each model (formulas in full in the CSV)",
                  shown=compact.round({"estimate": 4, "se": 4, "value": 3}))
        for line in F.sensitivity_verdicts(sens):
            rep.note(line)
    rep.table("fits", F.fits_table(fits), "Every coefficient of every fit, with its diagnostics", show=False)
    rep.table("random_effects", F.random_effects_table(fits), "Random-effect SDs and correlations", show=False)


def _authors_provenance(opt: AuthorsOptions, rel: Released, fits: list, started: float) -> None:
    """provenance.json: the release files read, the options, each fit's status and optimizer, R's versions."""
    files = {f"release:{f.relative_to(Path(opt.authors_outputs).expanduser())}": f for f in rel.files}
    opts = {"authors_outputs": str(opt.authors_outputs), "out": str(opt.out), "fits": opt.fits,
            "sensitivity": opt.sensitivity, "row_orders": opt.row_orders, "n_boot": opt.n_boot, "seed": opt.seed}
    fit_info = [{"domain": f.domain, "analysis": f.analysis, "fit": f.label, "formula": f.formula,
                 "status": f.fit.status if f.fit else "failed", "optimizer": f.fit.optimizer if f.fit else ""}
                for f in fits]
    write_provenance(opt.out, PAPER, opts, [], {}, {}, files, [], started,
                     extra={"fits": fit_info, "r_packages": _r_versions() if opt.fits else {}})


def reproduce_authors(opt: AuthorsOptions) -> Path:
    """Read and check the release, analyse it, and put the paper-vs-twinlab summary first in the report."""
    started = time.time()
    if not 1 <= opt.row_orders <= MAX_ROW_ORDERS:
        raise ReproError(f"--row-orders must be 1 to {MAX_ROW_ORDERS} (1: the rows as read only), not {opt.row_orders}")
    rel = read_released(opt.authors_outputs)  # every file's header is checked before anything is written
    require_r(opt.fits)
    opt.out.mkdir(parents=True, exist_ok=True)
    rep = Report(opt.out, "Hu & Frank (2024) recomputed from the authors' released outputs")
    rep.text("Input: the per-item outputs of the 13 models and the OLMo-7B checkpoints released with the paper "
             f"(`{opt.authors_outputs}`), read as the authors' notebooks read them (model_size.ipynb, "
             "training_time.ipynb) and fitted as their analysis/lmers.R fits them. Sizes and families: the paper's "
             "Table 2 (tables/models.csv).")
    summary_at = len(rep.blocks)
    for n in rel.notes:
        rep.note(n)
    res = analyse(rel, opt, rep)
    fits = res["fits"]
    blocks_after = rep.blocks[summary_at:]
    rep.blocks = rep.blocks[:summary_at]
    if fits:
        _paper_section(rep, fits, opt.row_orders)
        _sensitivity_section(rep, fits)
    rep.blocks += blocks_after
    rep.heading("Tables", anchor="tables")
    for name, t in res["tables"].items():
        rep.table(name, t, {"accuracy": "Each method per model (Figures 2A/C, 3A/C)", "demand_gap":
                            "The demand gap per model (Figures 2B/D, 3B/D)", "gap_slopes":
                            "Slope of the gap on log10 size per family and overall (the lines "
                            "drawn)"}[name], show=False)
    rep.table("models", table2_frame(), "The paper's Table 2 (the sizes and families used)")
    _authors_provenance(opt, rel, fits, started)
    return rep.write()


def _r_versions() -> dict[str, str]:
    try:
        import rpy2.robjects as ro  # R starts only when a model is fitted

        out = {"R": str(ro.r("R.version.string")[0])}
        for p in ("lme4", "lmerTest", "Matrix"):
            out[p] = str(ro.r(f"if (requireNamespace('{p}', quietly=TRUE)) as.character(packageVersion('{p}')) else "
                              "''")[0])
        return out
    except Exception:  # provenance only: never fail a finished analysis for it
        return {}
