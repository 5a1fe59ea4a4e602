"""Linear mixed models (lme4::lmer, Satterthwaite t tests by lmerTest when installed) and plain glm/lm
fits through the same R session as analysis.stats.mixed.fit_glmer, with the same diagnostics (converged,
singular, optimiser messages) in the same MixedFit record.

Why beside analysis/stats/mixed.py rather than in it: mixed.py's glmer path is used by the Appendix C
reanalysis and must not change; these fits add the Gaussian and the fixed-effects-only models that
seeds/002's equations (2)-(4) need. Coefficient dicts carry `z` (the Wald statistic: z for binomial
models, t for Gaussian ones), `statistic` ("z" or "t") and `df` (Satterthwaite or residual df; NaN for z).
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from analysis.stats.mixed import (
    MixedFit,
    MixedModelError,
    _f,
    boundary_messages,
    boundary_reasons,
    convergence_failures,
    degenerate_warnings,
    fit_status,
    r_fitter,
    r_frame,
)

_EXTRA = None

R_LMER = r"""
function(formula, d, reml) {
  msgs <- character(0)
  handlers <- function(expr) withCallingHandlers(expr,
    warning = function(w) { msgs <<- c(msgs, conditionMessage(w)); invokeRestart("muffleWarning") },
    message = function(w) { msgs <<- c(msgs, conditionMessage(w)); invokeRestart("muffleMessage") })
  satterthwaite <- requireNamespace("lmerTest", quietly = TRUE)
  fitter <- if (satterthwaite) lmerTest::lmer else lme4::lmer
  m <- handlers(fitter(stats::as.formula(formula), data = d, REML = reml))
  cf <- handlers(stats::coef(summary(m)))
  has_df <- ncol(cf) == 5
  vc <- as.data.frame(lme4::VarCorr(m))
  ll <- stats::logLik(m)
  conv <- m@optinfo$conv$lme4$messages
  list(term = rownames(cf), estimate = unname(cf[, 1]), se = unname(cf[, 2]),
       df = if (has_df) unname(cf[, 3]) else rep(NA_real_, nrow(cf)),
       z = unname(cf[, if (has_df) 4 else 3]),
       p = if (has_df) unname(cf[, 5]) else rep(NA_real_, nrow(cf)),
       vc_group = as.character(vc$grp), vc_var1 = ifelse(is.na(vc$var1), "", as.character(vc$var1)),
       vc_var2 = ifelse(is.na(vc$var2), "", as.character(vc$var2)), vc_sdcor = vc$sdcor,
       aic = stats::AIC(m), bic = stats::BIC(m), loglik = as.numeric(ll), npar = as.integer(attr(ll, "df")),
       nobs = as.integer(stats::nobs(m)), singular = lme4::isSingular(m),
       messages = unique(c(msgs, if (is.null(conv)) character(0) else conv)),
       opt_code = as.integer(if (is.null(m@optinfo$conv$opt)) 0L else m@optinfo$conv$opt),
       check_messages = if (is.null(conv)) character(0) else conv,
       optimizer = paste(m@optinfo$optimizer, collapse = "+"), satterthwaite = satterthwaite,
       reml_criterion = if (reml) as.numeric(lme4::REMLcrit(m)) else NA_real_)
}
"""

R_FIXED = r"""
function(formula, d, binomial) {
  msgs <- character(0)
  handlers <- function(expr) withCallingHandlers(expr,
    warning = function(w) { msgs <<- c(msgs, conditionMessage(w)); invokeRestart("muffleWarning") })
  m <- handlers(if (binomial) stats::glm(stats::as.formula(formula), data = d, family = stats::binomial(link = "logit"))
                else stats::lm(stats::as.formula(formula), data = d))
  cf <- stats::coef(summary(m))
  ll <- stats::logLik(m)
  list(term = rownames(cf), estimate = unname(cf[, 1]), se = unname(cf[, 2]), z = unname(cf[, 3]),
       p = unname(cf[, 4]), df = stats::df.residual(m), aic = stats::AIC(m), bic = stats::BIC(m),
       loglik = as.numeric(ll), npar = as.integer(attr(ll, "df")), nobs = as.integer(stats::nobs(m)),
       converged = if (binomial) m$converged else TRUE, boundary = if (binomial) m$boundary else FALSE,
       aliased = names(which(is.na(stats::coef(m)))), messages = unique(msgs))
}
"""


def _extra():
    global _EXTRA
    if _EXTRA is None:
        r_fitter()  # starts R with lme4 (and the environment fix-ups of analysis.stats.mixed)
        import rpy2.robjects as ro  # late: R starts only when a model is fitted

        _EXTRA = (ro.r(R_LMER), ro.r(R_FIXED))
    return _EXTRA


def _frame(data: pd.DataFrame, formula: str):
    tokens = set(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", formula))
    d = data[[c for c in data.columns if c in tokens]]
    if d.isna().any().any():
        d = d.dropna()
    return d, r_frame(d)


def _coefs(get: dict, statistic: str) -> list[dict]:
    from scipy.stats import norm  # scipy.stats (~0.5 s) loads with the first test statistic
    from scipy.stats import t as tdist  # scipy.stats (~0.5 s) loads with the first test statistic
    out = []
    dfs = get["df"] if len(get["df"]) == len(get["term"]) else [get["df"][0]] * len(get["term"])
    for term, e, se, z, p, df in zip(get["term"], get["estimate"], get["se"], get["z"], get["p"], dfs, strict=False):
        e, se, z, p, df = _f(e), _f(se), _f(z), _f(p), _f(df)
        if statistic == "t" and np.isfinite(df):
            q = tdist.ppf(0.975, df)
        else:
            q = norm.ppf(0.975)
        if not np.isfinite(p):  # lme4 without lmerTest prints no p: the normal approximation, said in `p_method`
            p = float(2 * norm.sf(abs(z)))
        out.append({"term": term, "estimate": e, "se": se, "z": z, "p": p, "df": df, "statistic": statistic,
                    "ci_low": e - q * se, "ci_high": e + q * se})
    return out


def fit_lmer(data: pd.DataFrame, formula: str, group: str, reml: bool = True) -> MixedFit:
    """lmer (REML by default, as lme4) with lmerTest's Satterthwaite df and p when lmerTest is installed."""
    fit_r, _ = _extra()
    d, rd = _frame(data, formula)
    try:
        r = fit_r(formula, rd, bool(reml))
    except Exception as exc:
        raise MixedModelError(f"lmer failed for {formula}: {' '.join(str(exc).split())}") from exc
    get = {k: list(r.rx2(k)) for k in r.names}
    coefs = _coefs(get, "t")
    rfx = []
    for g, v1, v2, sd in zip(get["vc_group"], get["vc_var1"], get["vc_var2"], get["vc_sdcor"], strict=False):
        name = "sd__Observation" if g == "Residual" else (f"sd__{v1}" if not v2 else f"cor__{v1}.{v2}")
        rfx.append({"group": g, "term": name, "estimate": _f(sd), "var1": str(v1), "var2": str(v2)})
    singular = bool(get["singular"][0])
    messages = list(dict.fromkeys(" ".join(str(m).split()) for m in get["messages"]))
    if singular and not any("singular" in m for m in messages):
        messages.append("boundary (singular) fit: see help('isSingular')")
    reasons = boundary_reasons(singular, rfx)
    messages += boundary_messages(singular, reasons)
    if not bool(get["satterthwaite"][0]):
        messages.append("lmerTest is not installed: p from the normal approximation, no Satterthwaite df")
    checks = convergence_failures(get["check_messages"])
    # lmerTest's Satterthwaite step re-derives the Hessian of the variance parameters; "Model failed to converge
    # with 1 negative eigenvalue" there means the optimum is not a proper minimum: reported as not converged
    failed = [m for m in messages if "failed to converge" in m]
    converged = int(get["opt_code"][0]) == 0 and not checks and not failed
    return MixedFit(formula=formula, n_obs=int(get["nobs"][0]), n_groups=int(d[group].nunique()) if group in d else 0,
                    coefficients=coefs, random_effects=rfx, aic=float(get["aic"][0]), bic=float(get["bic"][0]),
                    loglik=float(get["loglik"][0]), n_params=int(get["npar"][0]), singular=singular,
                    messages=messages, converged=converged, optimizer=str(get["optimizer"][0]),
                    status=fit_status(converged, singular, False, bool(reasons)), boundary=bool(reasons),
                    boundary_reasons=reasons)


def fit_fixed(data: pd.DataFrame, formula: str, binomial: bool) -> MixedFit:
    """glm (binomial, logit) or lm: no random effects; diagnostics: converged, boundary, aliased terms."""
    _, fit_r = _extra()
    d, rd = _frame(data, formula)
    try:
        r = fit_r(formula, rd, bool(binomial))
    except Exception as exc:
        raise MixedModelError(f"{'glm' if binomial else 'lm'} failed for {formula}: "
                              f"{' '.join(str(exc).split())}") from exc
    get = {k: list(r.rx2(k)) for k in r.names}
    coefs = _coefs(get, "z" if binomial else "t")
    if binomial:
        for c in coefs:
            c["df"] = float("nan")
    messages = list(dict.fromkeys(" ".join(str(m).split()) for m in get["messages"]))
    if get["aliased"]:
        messages.append(f"aliased (not estimable) terms: {', '.join(map(str, get['aliased']))}")
    converged = bool(get["converged"][0])
    if bool(get["boundary"][0]):
        messages.append("glm: fitted probabilities at the boundary (0 or 1)")
    degenerate = degenerate_warnings(coefs, []) if binomial else []
    return MixedFit(formula=formula, n_obs=int(get["nobs"][0]), n_groups=0, coefficients=coefs, random_effects=[],
                    aic=float(get["aic"][0]), bic=float(get["bic"][0]), loglik=float(get["loglik"][0]),
                    n_params=int(get["npar"][0]), singular=False, messages=messages + degenerate, converged=converged,
                    optimizer="IRLS" if binomial else "QR", status=fit_status(converged, False, bool(degenerate)))
