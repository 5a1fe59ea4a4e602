"""Rating tasks (a k-point scale): distributions, mean ratings with subject and item CIs, and a
cumulative-link mixed model (R `ordinal::clmm`, logit link, flexible thresholds).

Why an ordinal model: the distance between "3" and "4" on an acceptability scale is not known to equal
the distance between "6" and "7"; a linear model of the raw ratings assumes it. clmm models the
probability of rating at or below each point with one set of thresholds and the user's factors
(sum-coded, analysis/stats/formula.py) shifting them, plus random intercepts (and slopes, when given) of
subjects and items. Diagnostics as ordinal reports them: the optimiser's convergence code and message,
lme4's gradient check applied to clmm's gradient g and Hessian H (converged when max(min(|H^-1/2 g|, |g|))
< 0.002, as lme4's check.conv.grad; `max.grad`, the largest absolute gradient, is shown beside it), and the
condition number of the
Hessian (`cond.H`; above 1e4 the model is ill-defined: too many parameters for the data, or a
threshold without observations). A random-effect SD near 0 (below 1e-4) is reported as singular.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from analysis.stats import formula as fm
from analysis.kind_sections import AnalysisKind, SectionArgs

KIND = "rating"

R_CLMM = r"""
function(formula, d, method) {
  msgs <- character(0)
  keep <- function(expr) withCallingHandlers(expr,
    warning = function(w) { msgs <<- c(msgs, conditionMessage(w)); invokeRestart("muffleWarning") },
    message = function(w) { msgs <<- c(msgs, conditionMessage(w)); invokeRestart("muffleMessage") })
  d$rating <- factor(d$rating, levels = sort(unique(d$rating)), ordered = TRUE)
  ctrl <- if (method == "default") ordinal::clmm.control() else ordinal::clmm.control(method = method)
  m <- keep(ordinal::clmm(stats::as.formula(formula), data = d, link = "logit", threshold = "flexible",
                          control = ctrl))
  s <- keep(summary(m))
  cf <- s$coefficients
  vc <- ordinal::VarCorr(m)
  sds <- unlist(lapply(vc, function(v) attr(v, "stddev")))
  list(term = rownames(cf), estimate = unname(cf[, 1]), se = unname(cf[, 2]), z = unname(cf[, 3]),
       p = unname(cf[, 4]), n_thresholds = length(m$alpha), re_names = names(sds), re_sd = unname(sds),
       convergence = as.integer(m$optRes$convergence), opt_message = as.character(m$optRes$message),
       max_grad = as.numeric(s$info$max.grad), cond_h = as.numeric(s$info$cond.H),
       scaled_grad = tryCatch(max(pmin(abs(solve(chol(m$Hessian), m$gradient)), abs(m$gradient))),
                              error = function(e) NA_real_),
       loglik = as.numeric(m$logLik), aic = stats::AIC(m), nobs = as.integer(nrow(d)),
       messages = unique(msgs))
}
"""
_CLMM = None
MAX_GRAD = 2e-3  # lme4's gradient check (check.conv.grad, tol 0.002) on the scaled gradient
MAX_COND_H = 1e4


class OrdinalError(RuntimeError):
    """R's ordinal package is missing or clmm failed; the message says which."""


def _clmm():
    global _CLMM
    if _CLMM is None:
        from analysis.stats.mixed import _r

        _r()
        import rpy2.robjects as ro

        try:
            ro.r("suppressPackageStartupMessages(requireNamespace('ordinal', quietly = TRUE)) || stop('not installed')")
            _CLMM = ro.r(R_CLMM)
        except Exception as exc:
            raise OrdinalError("cannot load the R package 'ordinal' (cumulative-link mixed models of ratings; "
                               "scripts/setup.sh installs r-cran-ordinal): " + " ".join(str(exc).split())) from exc
    return _CLMM


@dataclass
class OrdinalFit:
    formula: str
    fitted: str
    n_obs: int
    n_thresholds: int
    coefficients: list[dict]  # thresholds (1|2, ...) and effects
    random_effects: list[dict]
    loglik: float
    aic: float
    converged: bool
    singular: bool
    max_grad: float
    scaled_grad: float
    cond_h: float
    optimizer_message: str
    messages: list[str] = field(default_factory=list)
    contrasts: list[dict] = field(default_factory=list)
    contrasts_note: str = ""
    status: str = "ok"
    method: str = "clmm"
    fallback: str = ""
    unused_points: list[int] = field(default_factory=list)  # scale points no trial used (no threshold there)
    random_structure: str = "as given (clmm: never simplified)"

    def to_dict(self) -> dict:
        return asdict(self)

    def coef(self, term: str) -> dict:
        return next(c for c in self.coefficients if c["term"] == term)


def fit_clmm(df: pd.DataFrame, formula: str, declared: dict[str, list[str]] | None = None,
             points: int | None = None) -> OrdinalFit:
    """Fit `rating ~ ... + (1 | subject) + (1 | item)` by ordinal::clmm; factors sum-coded. The random effects
    are fitted as given (no simplification); a fit whose default optimiser does not converge is refitted
    once with ucminf (one grouping factor only), and the fit says which it reports. Scale points that no
    trial used are named (`unused_points`; `points`: the scale's size, else the highest point used)."""
    from analysis.stats.formula import CONTRASTS_NOTE
    from analysis.stats.mixed import _r_frame, fit_status

    f = fm.parse(formula)
    if f.response_var != "rating":
        raise fm.FormulaError(f"a cumulative-link model needs the response 'rating', not {f.response_var!r}")
    if any(r.double_bar for r in f.random):
        raise fm.FormulaError("clmm has no '||' (uncorrelated) random terms; write them as separate terms")
    fm.check_columns(f, list(df.columns))
    d = df[f.variables].dropna().copy()
    d["rating"] = d["rating"].astype(float)
    for g in f.groups:
        d[g] = d[g].astype(str)
    d, coded, codings = fm.sum_code(d, f, declared)
    used = [c for c in d.columns if c in set(fm.names_in(coded.r_text()))]
    rd = _r_frame(d[used])

    def run(method: str) -> dict:
        try:
            r = _clmm()(coded.r_text(), rd, method)
        except Exception as exc:
            raise OrdinalError(f"clmm failed for {coded.r_text()}: {' '.join(str(exc).split())}") from exc
        return {k: list(r.rx2(k)) for k in r.names}

    def ok(g: dict) -> bool:
        sg = float(g["scaled_grad"][0])
        return int(g["convergence"][0]) == 0 and not np.isnan(sg) and sg < MAX_GRAD

    get, refit = run("default"), ""
    if not ok(get) and len(f.groups) == 1:
        # the usual remedy (ordinal's clmm.control): another optimiser (ucminf works with one grouping
        # factor only); the report says which fit it shows
        second = run("ucminf")
        first = f"scaled gradient {float(get['scaled_grad'][0]):.2g}, optimiser code {int(get['convergence'][0])}"
        if ok(second):
            get, refit = second, f"refitted with method=ucminf after the default (nlminb) fit did not converge ({first})"
        else:
            refit = f"refit with method=ucminf did not converge either (first fit: {first}); the first fit is reported"
    coefs = [{"term": t, "estimate": float(e), "se": float(se), "z": float(z), "p": float(p)}
             for t, e, se, z, p in zip(get["term"], get["estimate"], get["se"], get["z"], get["p"])]
    rfx = [{"group": n.split(".(", 1)[0] if ".(" in n else n.split(".", 1)[0],
            "term": "sd__" + (n[len(n.split(".(", 1)[0]) + 1:] if ".(" in n else n.split(".", 1)[-1]),
            "estimate": float(sd)} for n, sd in zip(get["re_names"], get["re_sd"])]
    max_grad, cond_h = float(get["max_grad"][0]), float(get["cond_h"][0])
    used = sorted({int(v) for v in d["rating"].dropna()})
    unused = [p for p in range(1, (points or (max(used) if used else 0)) + 1) if p not in used]
    scaled = float(get["scaled_grad"][0])
    converged = ok(get)
    singular = any(r["estimate"] < 1e-4 for r in rfx)
    messages = [" ".join(str(m).split()) for m in get["messages"]] + ([refit] if refit else [])
    if not converged:
        messages.append(f"not converged: optimiser code {int(get['convergence'][0])} "
                        f"({get['opt_message'][0]}), scaled gradient {scaled:.2g} (lme4's check needs < {MAX_GRAD:g})")
    ill = cond_h > MAX_COND_H
    if ill:
        messages.append(f"cond.H = {cond_h:.3g} > {MAX_COND_H:g}: the model is ill-defined (too many parameters "
                        "for the data, or a scale point never used)")
    if singular:
        messages.append("a random-effect SD is near 0 (singular fit)")
    if unused:
        messages.append(f"scale point(s) {', '.join(map(str, unused))} never occur: the model has "
                        f"{int(get['n_thresholds'][0])} threshold(s) between the {len(used)} point(s) used "
                        f"({', '.join(map(str, used))}), not one per step of the scale")
    for name, v in (("cond.H", cond_h), ("max.grad", max_grad), ("scaled gradient", scaled)):
        if not np.isfinite(v):
            messages.append(f"{name}: not available (R returned no value)")
    return OrdinalFit(formula=formula, fitted=coded.r_text(), n_obs=int(get["nobs"][0]),
                      n_thresholds=int(get["n_thresholds"][0]), coefficients=coefs, random_effects=rfx,
                      loglik=float(get["loglik"][0]), aic=float(get["aic"][0]), converged=converged, singular=singular,
                      max_grad=max_grad, scaled_grad=scaled, cond_h=cond_h, optimizer_message=str(get["opt_message"][0]), messages=messages,
                      contrasts=[{"factor": c.factor, "levels": c.levels, "coding": c.text()} for c in codings],
                      contrasts_note=CONTRASTS_NOTE, status=fit_status(converged, singular, ill), fallback=refit, unused_points=unused)


def rating_rows(df: pd.DataFrame) -> pd.DataFrame:
    if "task" not in df.columns or "rating" not in df.columns:
        return df.iloc[0:0]
    return df[(df["task"] == KIND) & df["rating"].notna()].copy()


def distribution(d: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Counts and shares of each scale point per group x cell (wide: one column per point)."""
    if d.empty:
        return pd.DataFrame(columns=["group"] + by)
    keys = ["group"] + by
    t = d.groupby(keys + ["rating"], sort=True, observed=True, dropna=False).size().rename("n").reset_index()
    t["share"] = t["n"] / t.groupby(keys, dropna=False)["n"].transform("sum")
    wide = t.pivot_table(index=keys, columns="rating", values="share", fill_value=0.0, dropna=False)
    wide.columns = [f"share_{int(c) if float(c).is_integer() else c}" for c in wide.columns]
    n = d.groupby(keys, sort=True, observed=True, dropna=False).size().rename("n_trials")
    return wide.join(n).reset_index()


# ---- ratings ---------------------------------------------------------------------------------
def rating_measures(r: pd.DataFrame) -> pd.DataFrame:
    """One row per rating trial and measure: humans `chosen point`; models `expected value` (the default)
    and `argmax`. Column `value` holds the number, `measure` names it."""
    parts = []
    hum = r[r["subject_kind"] != "model"]
    if len(hum):
        parts.append(hum.assign(measure="chosen point", value=hum["rating"].astype(float)))
    mod = r[r["subject_kind"] == "model"]
    if len(mod):
        if "rating_expected" in mod.columns and mod["rating_expected"].notna().any():
            e = mod[mod["rating_expected"].notna()]
            parts.append(e.assign(measure="expected value (default)", value=e["rating_expected"].astype(float)))
        parts.append(mod.assign(measure="argmax", value=mod["rating"].astype(float)))
    if not parts:
        return r.iloc[0:0].assign(measure=[], value=[])
    out = pd.concat(parts, ignore_index=True)
    out["measure"] = pd.Categorical(out["measure"], categories=list(MEASURES), ordered=True)
    return out


MEASURES = ("chosen point", "expected value (default)", "argmax")  # the order of the tables


def unused_points(r: pd.DataFrame, points: int | None = None) -> list[int]:
    """Scale points never chosen (a cumulative-link model has no threshold between two unused points)."""
    used = sorted({int(v) for v in r["rating"].dropna()})
    if not used:
        return []
    top = points or max(used)
    return [p for p in range(1, top + 1) if p not in used]


# ---- the report's section (was analysis/tasks_rating_report.py) --------------------------------------------
def rating_section(a: SectionArgs) -> None:
    """The report's rating section: distribution, means (people: the chosen point; models: expected value, the
    default, and argmax, both named) and, for people, a cumulative-link mixed model, or why none was fitted."""
    from analysis.report import design_figures as dfig
    from analysis.measures.design_rates import rates
    from analysis.report.design import F1F2, shown_rates

    res, by, opt, out = a.res, a.by, a.opt, a.out
    r = rating_rows(a.rows)
    dist = distribution(r, by)
    rm = rating_measures(r)
    means = rates(rm, ["measure"] + by, "value", opt.seed, opt.n_boot).drop(columns=["n_outcome"])
    tabs = [res.table("rating_distribution", dist, "Rating distribution (share of each scale point; models: the argmax)"),
            res.table("rating_means", shown_rates(means, ["measure"] + by).rename(
                columns={"rate [CI subjects]": "mean [CI subjects]"}), "Mean rating"),
            res.table("rating_means_long", means, "Mean rating (long format)", show=False)]
    items, why = rating_clmm(res, r, by, a.factors, opt, a.log, a.skipped, tabs)
    res.section("task_rating", "Ratings: distributions, means" + (" and a cumulative-link mixed model" if items else ""),
                "Share of each scale point per cell, and the mean rating (" + F1F2.replace("rate", "mean", 1) + "). "
                "`measure`: people's chosen point; a model's rating is a distribution over the scale, reported as its "
                "expected value (sum of point x probability, the default measure) and its argmax (the most probable "
                "point), both named. " + why, tabs,
                [res.figure("rating_distribution", dfig.rating_distribution(dist, out / "figures" / "rating_distribution.png"),
                            "Share of each rating per group and cell.")], items)


def _scale_points(r: pd.DataFrame) -> int | None:
    for s in (r["task_settings"].dropna().unique() if "task_settings" in r.columns else []):
        try:
            pts = (json.loads(s).get("scale") or {}).get("points")
        except (ValueError, AttributeError):
            continue
        if isinstance(pts, int):
            return pts
    return None


def rating_clmm(res, r: pd.DataFrame, by: list[str], factors: dict, opt, log, skipped: list[str],
                tabs: list) -> tuple[list[dict], str]:
    """The people's cumulative-link mixed model; returns (fit items, the text saying what was fitted or why not)."""
    from analysis.report.design import CLMM_FALLBACK
    from analysis.stats.fit_items import fit_item, fit_or_note as _fit_or_note
    from analysis.load.frames import model_frame

    humans = r[r["subject_kind"] == "human"]
    varying = [f for f in by if f in humans.columns and humans[f].nunique() > 1]
    if humans.empty:
        return [], ("No cumulative-link mixed model: it is fitted to people's ratings and there are none here "
                    "(a model's ratings are its distribution, summarised above).")
    if not opt.mixed:
        return [], "No cumulative-link mixed model: mixed models are off (--no-mixed)."
    if not varying or humans["rating"].nunique() < 2:
        return [], ("No cumulative-link mixed model: " + ("no factor varies among the people's trials." if not varying
                                                          else "the people used a single scale point."))
    formula = f"rating ~ {' * '.join(varying)} + (1 | subject_id) + (1 | item)"
    log(f"fitting the cumulative-link mixed model {formula} (ordinal::clmm)")
    f = _fit_or_note(lambda: fit_clmm(model_frame(humans), formula, factors, _scale_points(humans)),
                     "rating clmm (humans)", skipped)
    text = ("The cumulative-link mixed model of the people's ratings (R ordinal::clmm, logit link, flexible thresholds, "
            f"factors sum-coded) `{formula}` treats the scale as ordered categories; a positive effect shifts ratings "
            "up. " + CLMM_FALLBACK + " Diagnostics: optimiser convergence, the scaled gradient (lme4's check, < 0.002), "
            "max.grad, cond.H (> 1e4: ill-defined), and scale points never used (no threshold between them).")
    if f is None:
        return [], text + " The fit failed: see the notes."
    tabs.append(res.table("rating_clmm", pd.DataFrame(f.coefficients), "clmm coefficients", show=False))
    return [fit_item("ordinal_fit", "Humans: cumulative-link mixed model", f)], text


# the kind on the analysis side; its section: distributions, means (a model's expected value and argmax,
# named), the people's cumulative-link mixed model
ANALYSIS = AnalysisKind(KIND, section=rating_section)
