"""Cumulative-link mixed models (R `ordinal::clmm`, logit link, flexible thresholds): the ordinal family of
`--family ordinal` / `api.fit(..., family="ordinal")` and the rating kind's model of people's ratings.

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
R starts on the first fit only (analysis/stats/mixed.py).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from analysis.stats import formula as fm
from analysis.stats.formula import CONTRASTS_NOTE
from analysis.stats.mixed import fit_status, r_frame

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
# the response: the trial table's column of scale points (a column, not a kind: R_CLMM orders its levels)
RESPONSE: str = "rating"
MAX_GRAD = 2e-3  # lme4's gradient check (check.conv.grad, tol 0.002) on the scaled gradient
MAX_COND_H = 1e4


class OrdinalError(RuntimeError):
    """R's ordinal package is missing or clmm failed; the message says which."""


def clmm_fitter():
    global _CLMM
    if _CLMM is None:
        from analysis.stats.mixed import r_fitter  # late: R starts with the first fit (~30 s)

        r_fitter()
        import rpy2.robjects as ro  # late: R starts with the first fit

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
    f = fm.parse(formula)
    if f.response_var != RESPONSE:
        raise fm.FormulaError(f"a cumulative-link model needs the response {RESPONSE!r}, not {f.response_var!r}")
    if any(r.double_bar for r in f.random):
        raise fm.FormulaError("clmm has no '||' (uncorrelated) random terms; write them as separate terms")
    fm.check_columns(f, list(df.columns))
    d = df[f.variables].dropna().copy()
    d[RESPONSE] = d[RESPONSE].astype(float)
    for g in f.groups:
        d[g] = d[g].astype(str)
    fm.check_groups(d, f.groups)  # one participant (or item): said before R is asked
    d, coded, codings = fm.sum_code(d, f, declared)
    used = [c for c in d.columns if c in set(fm.names_in(coded.r_text()))]
    rd = r_frame(d[used])

    def run(method: str) -> dict:
        try:
            r = clmm_fitter()(coded.r_text(), rd, method)
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
            get, refit = second, ("refitted with method=ucminf after the default (nlminb) fit did not converge "
                                  f"({first})")
        else:
            refit = f"refit with method=ucminf did not converge either (first fit: {first}); the first fit is reported"
    coefs = [{"term": t, "estimate": float(e), "se": float(se), "z": float(z), "p": float(p)}
             for t, e, se, z, p in zip(get["term"], get["estimate"], get["se"], get["z"], get["p"], strict=False)]
    rfx = [{"group": n.split(".(", 1)[0] if ".(" in n else n.split(".", 1)[0],
            "term": "sd__" + (n[len(n.split(".(", 1)[0]) + 1:] if ".(" in n else n.split(".", 1)[-1]),
            "estimate": float(sd)} for n, sd in zip(get["re_names"], get["re_sd"], strict=False)]
    max_grad, cond_h = float(get["max_grad"][0]), float(get["cond_h"][0])
    used = sorted({int(v) for v in d[RESPONSE].dropna()})
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
    return OrdinalFit(
        formula=formula, fitted=coded.r_text(), n_obs=int(get["nobs"][0]), n_thresholds=int(get["n_thresholds"][0]),
        coefficients=coefs, random_effects=rfx, loglik=float(get["loglik"][0]), aic=float(get["aic"][0]),
        converged=converged, singular=singular, max_grad=max_grad, scaled_grad=scaled, cond_h=cond_h,
        optimizer_message=str(get["opt_message"][0]), messages=messages, unused_points=unused,
        contrasts=[{"factor": c.factor, "levels": c.levels, "coding": c.text()} for c in codings],
        contrasts_note=CONTRASTS_NOTE, status=fit_status(converged, singular, ill), fallback=refit)
