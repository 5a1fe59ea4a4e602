"""A fit that misses lme4's gradient tolerance by a hair, checked as lme4 advises: refitted with its other
optimizers (lme4's `allFit`), used when their estimates agree, refused naming the disagreement when not.

Why: lme4's convergence check ("Model failed to converge with max|grad| = 0.00214 (tol = 0.002)") is a
heuristic on a finite-difference gradient; lme4's ?convergence says such warnings are often false positives
and advises refitting with several optimizers: when they reach practically the same estimates, the fit can be
trusted. A near miss here is a fit whose optimiser returned code 0 and whose only failed check is the gradient,
at most NEAR_MISS times lme4's tolerance; anything else is not converged and stays refused.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import pandas as pd

from analysis.stats.mixed import MixedModelError, r_fitter, r_frame

NEAR_MISS = 5.0  # a gradient up to this many times lme4's tolerance is checked; above it the fit is refused
AGREE_TOL = 1e-3  # every estimate within this of the fit's, relative to max(1, |estimate|), for each optimizer
MIN_AGREEING = 2  # optimizers besides the fit's own that must run and agree
OPTIMIZERS = ("bobyqa", "Nelder_Mead", "nlminbwrap", "nloptwrap.NLOPT_LN_NELDERMEAD", "nloptwrap.NLOPT_LN_BOBYQA")
GRADIENT = re.compile(r"max\|grad\| = ([0-9.eE+-]+) \(tol = ([0-9.eE+-]+)")

R_REFIT = r"""
function(formula, d, family, optimizers) {
  out <- list()
  for (o in optimizers) {
    parts <- strsplit(o, ".", fixed = TRUE)[[1]]
    if (parts[1] == "nloptwrap" && !requireNamespace("nloptr", quietly = TRUE)) {
      out[[o]] <- list(ok = FALSE, error = "the nloptr package is not installed"); next }
    args <- list(optimizer = parts[1])
    if (length(parts) > 1) args$optCtrl <- list(algorithm = parts[2])
    msgs <- character(0)
    out[[o]] <- tryCatch({
      m <- withCallingHandlers(
        if (family == "binomial") lme4::glmer(stats::as.formula(formula), data = d, family = stats::binomial,
                                              control = do.call(lme4::glmerControl, args))
        else lme4::lmer(stats::as.formula(formula), data = d, REML = TRUE, control = do.call(lme4::lmerControl, args)),
        warning = function(w) { msgs <<- c(msgs, conditionMessage(w)); invokeRestart("muffleWarning") },
        message = function(w) { msgs <<- c(msgs, conditionMessage(w)); invokeRestart("muffleMessage") })
      vc <- as.data.frame(lme4::VarCorr(m))
      fe <- lme4::fixef(m)
      list(ok = TRUE, error = "", names = c(names(fe), paste(vc$grp, vc$var1, ifelse(is.na(vc$var2), "", vc$var2))),
           values = c(unname(fe), vc$sdcor), loglik = as.numeric(stats::logLik(m)),
           code = as.integer(m@optinfo$conv$opt), messages = unique(c(msgs, m@optinfo$conv$lme4$messages)))
    }, error = function(e) list(ok = FALSE, error = conditionMessage(e)))
  }
  out
}
"""
_REFIT = None


@dataclass
class OptimizerCheck:
    """What the refits found: agreed (the fit is used) or not (the reason names the disagreement)."""

    gradient: float
    tolerance: float
    agreed: bool
    reason: str  # one sentence: the check and its result
    refits: list[dict] = field(default_factory=list)  # optimizer, ran, largest_difference, parameter, error

    def to_dict(self) -> dict:
        return {"gradient": self.gradient, "tolerance": self.tolerance, "agreed": self.agreed, "reason": self.reason,
                "rule": f"refitted with lme4's other optimizers (allFit's advice); used when at least {MIN_AGREEING} "
                        f"ran and every estimate is within {AGREE_TOL:g} x max(1, |estimate|) of the fit's",
                "refits": self.refits}


def near_miss(fit) -> tuple[float, float] | None:
    """(max|grad|, tol) when the fit's only failed check is lme4's gradient, at most NEAR_MISS x tol, and its
    optimiser returned code 0; else None (module docstring)."""
    if fit.converged or int(getattr(fit, "opt_code", 0)) != 0 or fit.method not in ("glmer", "lmer"):
        return None
    failures = [m for m in fit.messages if "converge" in m or "Hessian" in m or "eigenvalue" in m]
    found = [GRADIENT.search(m) for m in failures]
    if not failures or not all(found):
        return None
    grad, tol = max((float(g.group(1)), float(g.group(2))) for g in found if g)
    return (grad, tol) if tol > 0 and grad <= NEAR_MISS * tol else None


def check_optimizers(fit, data: pd.DataFrame) -> OptimizerCheck | None:
    """Refit a near miss (near_miss) on `data` (the rows and coded columns the fit used) with OPTIMIZERS and
    compare every fixed effect, SD and correlation with the fit's; None when the fit is not a near miss."""
    miss = near_miss(fit)
    if miss is None:
        return None
    import rpy2.robjects as ro  # late: R starts only when a model is fitted

    global _REFIT
    if _REFIT is None:
        r_fitter()
        _REFIT = ro.r(R_REFIT)
    try:
        out = _REFIT(fit.fitted, r_frame(data), fit.family, ro.StrVector(list(OPTIMIZERS)))
    except Exception as exc:
        raise MixedModelError(f"the refits with lme4's other optimizers failed: {' '.join(str(exc).split())}") from exc
    mine = _estimates(fit)
    refits, worst = [], None
    for name in OPTIMIZERS:
        r = out.rx2(name)
        if not bool(r.rx2("ok")[0]) or int(r.rx2("code")[0]) != 0:
            err = str(r.rx2("error")[0]) if not bool(r.rx2("ok")[0]) else f"optimiser code {int(r.rx2('code')[0])}"
            refits.append({"optimizer": name, "ran": False, "error": " ".join(err.split())})
            continue
        theirs = dict(zip([str(n) for n in r.rx2("names")], [float(v) for v in r.rx2("values")], strict=False))
        diff, par = 0.0, ""
        for key, value in mine.items():
            other = theirs.get(key)
            d = float("inf") if other is None else abs(other - value) / max(1.0, abs(value))
            if d > diff:
                diff, par = d, key
        refits.append({"optimizer": name, "ran": True, "largest_difference": diff, "parameter": par,
                       "estimate": theirs.get(par), "fit_estimate": mine.get(par), "loglik": float(r.rx2("loglik")[0])})
        if worst is None or diff > worst["largest_difference"]:
            worst = refits[-1]
    ran = [r for r in refits if r["ran"]]
    grad, tol = miss
    head = (f"max|grad| {grad:.3g} is above lme4's tolerance {tol:g}; refitted with {len(ran)} of lme4's other "
            f"optimizers ({', '.join(r['optimizer'] for r in ran) or 'none ran'})")
    if len(ran) < MIN_AGREEING:
        failed = "; ".join(f"{r['optimizer']}: {r['error']}" for r in refits if not r["ran"])
        return OptimizerCheck(grad, tol, False, f"{head}: fewer than {MIN_AGREEING} ran ({failed})", refits)
    assert worst is not None
    if worst["largest_difference"] > AGREE_TOL:
        return OptimizerCheck(grad, tol, False,
                              f"{head}: they disagree: {worst['optimizer']} gives {worst['parameter']} = "
                              f"{_num(worst['estimate'])} where the fit has {_num(worst['fit_estimate'])} (relative "
                              f"difference {worst['largest_difference']:.2g}, above {AGREE_TOL:g})", refits)
    return OptimizerCheck(grad, tol, True,
                          f"{head}: every estimate agrees within {AGREE_TOL:g} (largest relative difference "
                          f"{worst['largest_difference']:.2g}, {worst['parameter']} by {worst['optimizer']}), so the "
                          "fit is used as converged (lme4's allFit advice)", refits)


def _estimates(fit) -> dict[str, float]:
    """The fit's fixed effects and VarCorr SDs/correlations by the names the R refit gives them."""
    out = {c["term"]: float(c["estimate"]) for c in fit.coefficients}
    for r in fit.random_effects:
        var1 = r.get("var1") or ""
        var2 = r.get("var2") or ""
        if r["group"] == "Residual":  # R pastes its missing var1 as "NA" (rpy2 may say NA_character_)
            var1, var2 = "NA", ""
        out[f"{r['group']} {var1} {var2}"] = float(r["estimate"])
    return out


def _num(x: float | None) -> str:
    return "no such parameter" if x is None else f"{x:.6g}"
