"""Mixed-effects logistic regressions: R's lme4::glmer (Laplace approximation) called through rpy2.

Why rpy2 and lme4 directly rather than through pymer4's model classes: pymer4 0.9 loads the
easystats packages when it starts (~20-35 s on this machine) and computes tidy summaries, fitted
values and residuals on every fit (~2.5 s a fit); the same glmer fit called directly takes ~0.1 s
after a ~2 s start of R with lme4 alone. The Appendix C reanalysis fits ~20 models, so this is
the difference between ~80 s and ~5 s. The numbers are lme4's own (`summary()` Wald z tests,
`logLik`, `AIC`, `BIC`, `VarCorr`, `isSingular`), checked in tests/analysis/test_analysis_mixed.py against
an independent Laplace implementation and against lme4 run by Rscript.

R is started lazily, only when a model is fitted. `R_LIBS_USER` points at the repository's `.rlib`
unless the caller set it already.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
_R = None
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

R_FIT = r"""
function(formula, d, optimizer, maxfun) {
  msgs <- character(0)
  ctrl <- if (optimizer == "default") lme4::glmerControl() else
    lme4::glmerControl(optimizer = optimizer, optCtrl = list(maxfun = maxfun))
  m <- withCallingHandlers(
    lme4::glmer(stats::as.formula(formula), data = d, family = stats::binomial, control = ctrl),
    warning = function(w) { msgs <<- c(msgs, conditionMessage(w)); invokeRestart("muffleWarning") },
    message = function(w) { msgs <<- c(msgs, conditionMessage(w)); invokeRestart("muffleMessage") })
  cf <- withCallingHandlers(stats::coef(summary(m)),  # summary() warns when it falls back to another vcov
    warning = function(w) { msgs <<- c(msgs, conditionMessage(w)); invokeRestart("muffleWarning") })
  vc <- as.data.frame(lme4::VarCorr(m))
  ll <- stats::logLik(m)
  conv <- m@optinfo$conv$lme4$messages
  # the SE from the model's own RX (no Hessian of the deviance): steady where a boundary optimum makes the
  # finite-difference Hessian depend on the row order (lme4 ?vcov.merMod, use.hessian)
  se_hf <- tryCatch(unname(sqrt(diag(as.matrix(suppressWarnings(stats::vcov(m, use.hessian = FALSE)))))),
                    error = function(e) rep(NA_real_, nrow(cf)))
  th <- lme4::getME(m, "theta")
  list(term = rownames(cf), estimate = unname(cf[, 1]), se = unname(cf[, 2]), z = unname(cf[, 3]), se_hf = se_hf,
       theta = unname(th), theta_name = names(th), theta_lower = unname(lme4::getME(m, "lower")),
       p = unname(cf[, 4]), vc_group = as.character(vc$grp), vc_var1 = as.character(vc$var1),
       vc_var2 = ifelse(is.na(vc$var2), "", as.character(vc$var2)), vc_sdcor = vc$sdcor, aic = stats::AIC(m),
       bic = stats::BIC(m),
       loglik = as.numeric(ll), df = as.integer(attr(ll, "df")), nobs = as.integer(stats::nobs(m)),
       singular = lme4::isSingular(m), messages = unique(c(msgs, if (is.null(conv)) character(0) else conv)),
       opt_code = as.integer(m@optinfo$conv$opt), check_messages = if (is.null(conv)) character(0) else conv,
       opt_warnings = as.character(unlist(m@optinfo$warnings)), optimizer = paste(m@optinfo$optimizer, collapse = "+"))
}
"""


class MixedModelError(RuntimeError):
    """R/lme4 missing or a model could not be fitted; the message says which and why."""


def r_fitter():
    """Start R with lme4 once; returns the R fitting function."""
    global _R
    if _R is None:
        rlib = REPO / ".rlib"
        if rlib.is_dir():
            os.environ.setdefault("R_LIBS_USER", str(rlib))
        # rpy2 rewrites LD_LIBRARY_PATH (and a few R variables) when it starts R; a Python child
        # process started later would then load system libraries into this Python and fail
        # (seen: `import ssl` -> undefined symbol). The running process is unaffected by the
        # variable once started, so restore it for children.
        saved = os.environ.get("LD_LIBRARY_PATH")
        # one BLAS thread for R's fits (a threaded BLAS sums in an order that depends on the threads, and the
        # power simulation's forked workers would share them); read when R loads its BLAS, then put back for children
        threads = {k: os.environ.get(k) for k in BLAS_THREADS}
        for k in BLAS_THREADS:
            os.environ[k] = "1"
        try:
            import rpy2.robjects as ro  # late: R starts only when a model is fitted
            from rpy2.rinterface_lib import callbacks  # late: with rpy2

            # R's own echo of an error or warning ("R[write to console]: Error: ...") is not printed: every fit
            # catches its errors and warnings and the caller says them once, by cause (analysis/stats/fit_items.py)
            callbacks.consolewrite_warnerror = _r_console
            ro.r("suppressPackageStartupMessages(library(lme4))")
            fit = ro.r(R_FIT)
        except Exception as exc:  # ImportError, R not found, lme4 missing
            raise MixedModelError(
                f"cannot start R with lme4 (needed for mixed models; run scripts/setup.sh or pass --no-mixed): "
                f"{type(exc).__name__}: {' '.join(str(exc).split())}"
            ) from exc
        finally:
            for k, v in [("LD_LIBRARY_PATH", saved), *threads.items()]:
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        _R = fit
    return _R


R_CONSOLE: list[str] = []  # R's last error and warning echoes (kept for a look, never printed)


def _r_console(text: str) -> None:
    R_CONSOLE.append(text)
    del R_CONSOLE[:-50]


_glmer = r_fitter  # the name earlier callers (tests, doctor) use to start R once


def _f(v) -> float:
    return float("nan") if v is None else float(v)


@dataclass
class MixedFit:
    """What a report needs from one glmer fit (plain data, JSON-serialisable)."""

    formula: str
    n_obs: int
    n_groups: int
    coefficients: list[dict]  # term, estimate, se, z, p, ci_low, ci_high (Wald)
    random_effects: list[dict]  # group, term (sd__X or cor__X.Y), estimate (SD or correlation)
    aic: float
    bic: float
    loglik: float
    n_params: int
    singular: bool
    messages: list[str] = field(default_factory=list)
    converged: bool = True  # optimiser code 0 and no lme4 convergence-check message (singular aside)
    optimizer: str = ""  # lme4's optimiser(s) of the fit that is reported
    optimizer_warnings: list[str] = field(default_factory=list)
    fallback: str = ""  # what was refitted and why ("" = the first fit was kept)
    status: str = "ok"  # ok | not converged, do not interpret | singular, ... | boundary, ... | degenerate, ...
    # added with the boundary rule (records written before lack them: read with .get / status_of)
    boundary: bool = False  # the boundary rule (boundary_reasons) holds, lme4's isSingular included
    boundary_reasons: list[str] = field(default_factory=list)
    theta: list[dict] = field(default_factory=list)  # lme4's theta: name, value, lower bound

    @property
    def interpretable(self) -> bool:
        return self.status == "ok"

    def coef(self, term: str) -> dict:
        for c in self.coefficients:
            if c["term"] == term:
                return c
        raise KeyError(f"{term!r} is not a term of {self.formula}")

    def to_dict(self) -> dict:
        return asdict(self)

    def coef_frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.coefficients)


def r_frame(data: pd.DataFrame):
    """A pandas frame as an R data.frame: numbers as doubles, everything else as character."""
    import rpy2.robjects as ro  # late: R starts only when a model is fitted

    cols = {}
    for c in data.columns:
        s = data[c]
        if pd.api.types.is_bool_dtype(s) or str(s.dtype) == "boolean":
            cols[c] = ro.FloatVector(s.astype(int).astype(float).tolist())
        elif pd.api.types.is_numeric_dtype(s):
            cols[c] = ro.FloatVector(s.astype(float).tolist())
        else:
            cols[c] = ro.StrVector(s.astype(str).tolist())
    return ro.DataFrame(cols)


NOT_CONVERGED = "not converged, do not interpret"
SINGULAR = "singular, do not interpret"
BOUNDARY = "boundary, do not interpret"
DEGENERATE = "degenerate, do not interpret"
# The boundary rule (docs/analysis/analyses.md, "Boundary fits"): a fit is at the boundary of its parameter space when
#   (1) lme4's isSingular says so (a diagonal element of theta below 1e-4), or
#   (2) a random-effect correlation is within BOUNDARY_COR of +1 or -1, or
#   (3) a conditional SD (a diagonal element of the Cholesky factor of one grouping term's covariance matrix,
#       lme4's theta up to the residual scale) is below BOUNDARY_REL_SD times the largest one of the fit.
# Such a fit's Wald SE comes from a Hessian at a flat optimum and moves with the row order: not interpreted.
BOUNDARY_COR = 0.01
BOUNDARY_REL_SD = 1e-3
# lme4's default optimiser for glmer is bobyqa then Nelder-Mead; a fit that fails its convergence
# checks is refitted once with bobyqa alone and a larger evaluation budget (the usual first remedy,
# lme4's ?convergence); the report says which fit it shows.
FALLBACK = ("bobyqa", 100_000)


def fit_status(converged: bool, singular: bool, degenerate: bool, boundary: bool = False) -> str:
    """One label per fit; anything but 'ok' is shown without significance marks. `boundary`: the boundary rule
    (boundary_reasons) beyond lme4's isSingular."""
    if not converged:
        return NOT_CONVERGED
    if singular:
        return SINGULAR
    if boundary:
        return BOUNDARY
    if degenerate:
        return DEGENERATE
    return "ok"


def _rfx_blocks(random_effects: list[dict]) -> dict[str, tuple[list[str], dict[str, float], dict[tuple, float]]]:
    """Per grouping term: its SD names in order, the SDs and the correlations (as_data_frame(VarCorr) order)."""
    blocks: dict[str, tuple[list[str], dict[str, float], dict[tuple, float]]] = {}
    for r in random_effects:
        g = str(r.get("group", ""))
        if g == "Residual":
            continue
        names, sds, cors = blocks.setdefault(g, ([], {}, {}))
        term = str(r["term"])
        if term.startswith("sd__"):
            names.append(term[4:])
            sds[term[4:]] = float(r["estimate"])
        elif term.startswith("cor__"):
            v1, v2 = r.get("var1"), r.get("var2")
            if not v1 or not v2:  # records written before var1/var2 were kept: split at a known SD name
                body = term[5:]
                v1, v2 = next(((a, body[len(a) + 1:]) for a in names if body.startswith(a + ".")
                               and body[len(a) + 1:] in names), (body, ""))
            cors[(v1, v2)] = float(r["estimate"])
    return blocks


def conditional_sds(random_effects: list[dict]) -> list[tuple[str, str, float]]:
    """(group, term, SD) of each term given the terms before it: the diagonal of the Cholesky factor of each
    grouping term's covariance matrix (lme4's theta, times the residual SD for lmer). A correlation of exactly
    +-1 leaves no Cholesky factor: the terms after it get 0."""
    out = []
    for g, (names, sds, cors) in _rfx_blocks(random_effects).items():
        k = len(names)
        cov = np.zeros((k, k))
        for i, a in enumerate(names):
            for j, b in enumerate(names):
                r = 1.0 if i == j else cors.get((a, b), cors.get((b, a), 0.0))
                cov[i, j] = r * sds[a] * sds[b]
        diag = _semidefinite_chol_diag(cov)
        out += [(g, n, float(v)) for n, v in zip(names, diag, strict=False)]
    return out


def _semidefinite_chol_diag(cov: np.ndarray) -> np.ndarray:
    """The Cholesky diagonal of a positive semidefinite matrix (0 where a term is a combination of earlier ones)."""
    k = len(cov)
    low = np.zeros((k, k))
    for i in range(k):
        for j in range(i + 1):
            s = cov[i, j] - low[i, :j] @ low[j, :j]
            if i == j:
                low[i, i] = math.sqrt(s) if s > 0 else 0.0
            else:
                low[i, j] = s / low[j, j] if low[j, j] > 0 else 0.0
    return np.diag(low).copy()


def boundary_reasons(singular: bool, random_effects: list[dict], cor_tol: float = BOUNDARY_COR,
                     rel_sd: float = BOUNDARY_REL_SD) -> list[str]:
    """The boundary rule (docs/analysis/analyses.md): why a fit sits on the boundary of its parameter space; [] when
    it does not. Reads only the fit's summary (lme4's isSingular and VarCorr), so every fit record can be
    checked, old ones included."""
    out = []
    if singular:
        out.append("lme4: boundary (singular) fit (isSingular)")
    for r in random_effects:
        if str(r.get("term", "")).startswith("cor__") and abs(float(r["estimate"])) >= 1 - cor_tol:
            out.append(f"random-effect correlation {r['term'][5:]} ({r.get('group', '')}) = {float(r['estimate']):.4f},"
                       f" within {cor_tol:g} of {'+1' if float(r['estimate']) > 0 else '-1'}")
    cond = conditional_sds(random_effects)
    top = max((v for _, _, v in cond), default=0.0)
    if top > 0 and len(cond) > 1:
        for g, n, v in cond:
            if v < rel_sd * top:
                out.append(f"variance component near zero: the SD of {n} ({g}) given the terms before it is "
                           f"{v:.3g}, below {rel_sd:g} x the largest ({top:.3g})")
    return out


def convergence_failures(messages) -> list[str]:
    """lme4's convergence check messages that say the fit did not converge: every one but the boundary note
    ("boundary (singular) fit", reported as singular on its own). "Hessian is numerically singular:
    parameters are not uniquely determined" is a failed check, never dropped for the word "singular"."""
    return [str(m) for m in messages if not str(m).startswith("boundary (singular)")]


def fit_converged(get: dict) -> bool:
    return int(get["opt_code"][0]) == 0 and not convergence_failures(get["check_messages"])


def needs_fallback(get: dict) -> bool:
    """The fallback optimiser's trigger, as it has always been (a Hessian note does not trigger a refit, so the
    estimates of every earlier analysis stay the same; the note still marks the fit as not converged)."""
    checks = [m for m in get["check_messages"] if "singular" not in str(m)]
    return int(get["opt_code"][0]) != 0 or bool(checks)


def fit_glmer(data: pd.DataFrame, formula: str, group: str = "subject", optimizer: str = "default",
              maxfun: int = 10_000, fallback: bool = True) -> MixedFit:
    """Fit a binomial glmer and record its diagnostics (converged, singular, optimiser warnings, the
    fallback refit if one was needed); raise MixedModelError with R's message when it fails."""
    from scipy.stats import norm  # scipy.stats (~0.5 s) loads with the first test statistic

    fit_r = r_fitter()
    tokens = set(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", formula))
    d = data[[c for c in data.columns if c in tokens]]
    if d.isna().any().any():
        d = d.dropna()
    rd = r_frame(d)

    def run(opt: str, mf: int) -> dict:
        try:
            r = fit_r(formula, rd, opt, float(mf))
        except Exception as exc:
            detail = " ".join(str(exc).split())
            raise MixedModelError(f"glmer failed for {formula}: {detail}") from exc
        return {k: list(r.rx2(k)) for k in r.names}

    get = run(optimizer, maxfun)
    fallback_note = ""
    if fallback and needs_fallback(get):
        first = "; ".join(str(m) for m in get["check_messages"] if "singular" not in str(m)) or \
            f"optimiser code {int(get['opt_code'][0])}"
        second = run(*FALLBACK)
        if not needs_fallback(second):
            get = second
            fallback_note = (f"refitted with optimizer={FALLBACK[0]}, maxfun={FALLBACK[1]} after the default fit "
                             f"did not converge ({first}); the refit converged and is reported")
        else:
            fallback_note = (f"refit with optimizer={FALLBACK[0]}, maxfun={FALLBACK[1]} did not converge either "
                             f"(first fit: {first}); the first fit is reported")
    zq = norm.ppf(0.975)
    se_hf = get.get("se_hf") or [None] * len(get["term"])
    coefs = [{"term": t, "estimate": _f(e), "se": _f(se), "z": _f(z), "p": _f(p),
              "ci_low": _f(e) - zq * _f(se), "ci_high": _f(e) + zq * _f(se), **hessian_free(_f(e), _f(hf))}
             for t, e, se, z, p, hf in zip(get["term"], get["estimate"], get["se"], get["z"], get["p"], se_hf,
                                           strict=False)]
    rfx = random_effect_rows(get)
    singular = bool(get["singular"][0])
    messages = list(dict.fromkeys(" ".join(str(m).split()) for m in get["messages"]))
    if singular and not any("singular" in m for m in messages):
        messages.append("boundary (singular) fit: see help('isSingular')")
    reasons = boundary_reasons(singular, rfx)
    messages += boundary_messages(singular, reasons)
    degenerate = degenerate_warnings(coefs, rfx)
    messages += degenerate
    converged = fit_converged(get)
    if not converged and not any("converge" in m for m in messages):
        messages.append(f"optimiser returned code {int(get['opt_code'][0])} (not converged)")
    return MixedFit(
        formula=formula, n_obs=int(get["nobs"][0]), n_groups=int(d[group].nunique()) if group in d else 0,
        coefficients=coefs, random_effects=rfx, aic=float(get["aic"][0]), bic=float(get["bic"][0]),
        loglik=float(get["loglik"][0]), n_params=int(get["df"][0]), singular=singular, messages=messages,
        converged=converged, optimizer=str(get["optimizer"][0]) if get["optimizer"] else "",
        optimizer_warnings=[" ".join(str(w).split()) for w in get["opt_warnings"]], fallback=fallback_note,
        status=fit_status(converged, singular, bool(degenerate), bool(reasons)), boundary=bool(reasons),
        boundary_reasons=reasons, theta=theta_rows(get),
    )


def boundary_messages(singular: bool, reasons: list[str]) -> list[str]:
    """The boundary rule in the fit's messages: one line, and none when lme4 already said singular (the
    full list is in the record's boundary_reasons)."""
    own = [r for r in reasons if not r.startswith("lme4:")]
    if singular or not own:
        return []
    return [f"boundary fit: {own[0]}" + (f" (and {len(own) - 1} more: see boundary_reasons)" if len(own) > 1 else "")]


def hessian_free(estimate: float, se: float) -> dict:
    """The coefficient's SE from vcov(use.hessian = FALSE) and its Wald z (NaN where lme4 gave none)."""
    z = estimate / se if se and math.isfinite(se) and se > 0 else float("nan")
    return {"se_hessian_free": se, "z_hessian_free": z}


def random_effect_rows(get: dict) -> list[dict]:
    """as.data.frame(VarCorr) as records: group, term (sd__X or cor__X.Y), estimate, var1, var2."""
    rfx = []
    for g, v1, v2, sd in zip(get["vc_group"], get["vc_var1"], get["vc_var2"], get["vc_sdcor"], strict=False):
        if g == "Residual":
            continue
        rfx.append({"group": g, "term": f"sd__{v1}" if not v2 else f"cor__{v1}.{v2}", "estimate": _f(sd),
                    "var1": str(v1), "var2": str(v2)})
    return rfx


def theta_rows(get: dict) -> list[dict]:
    return [{"name": str(n), "value": _f(v), "lower": _f(lo)}
            for n, v, lo in zip(get.get("theta_name", []), get.get("theta", []), get.get("theta_lower", []),
                                strict=False)]


def significance_mark(p: float, status: str) -> str:
    """Conventional stars (* p < .05, ** < .01, *** < .001), only for a fit that is interpretable."""
    if status != "ok" or p is None or not finite(p):
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else ""


def status_of(fit: dict | None) -> str:
    """The status of a fit stored as a dict (results.json), for fits written before statuses existed too."""
    if not fit:
        return ""
    if "status" in fit:
        if fit["status"] == "ok" and boundary_reasons(False, fit.get("random_effects") or []):
            return BOUNDARY  # a record written before the boundary rule: the rule applies to it too
        return fit["status"]
    msgs = " ".join(fit.get("messages", []))
    boundary = bool(boundary_reasons(False, fit.get("random_effects") or []))
    return fit_status("failed to converge" not in msgs, bool(fit.get("singular")), "degenerate" in msgs, boundary)


def degenerate_warnings(coefs: list[dict], rfx: list[dict]) -> list[str]:
    """Flag fits that lme4 returns without complaint but that cannot be trusted (quasi-separation)."""
    out = []
    big = [c["term"] for c in coefs if abs(c["estimate"]) > 8 or c["se"] > 8]
    if big:
        out.append(f"degenerate fit: |estimate| or SE above 8 on the log-odds scale for {', '.join(big)} "
                   "(quasi-separation: too few trials per subject or an outcome that barely varies)")
    sds = [r for r in rfx if r["term"].startswith("sd__") and r["estimate"] > 8]
    if sds:
        out.append(f"degenerate fit: random-effect SD {sds[0]['estimate']:.1f} (subjects almost perfectly separated)")
    return out


def likelihood_ratio(small: MixedFit, big: MixedFit) -> dict:
    """LR test of nested fits on the same rows: chi2 = 2 (logLik_big - logLik_small), df = extra parameters."""
    from scipy.stats import chi2  # scipy.stats (~0.5 s) loads with the first test statistic

    if small.n_obs != big.n_obs:
        raise MixedModelError(f"models were fitted on different rows ({small.n_obs} vs {big.n_obs})")
    df = big.n_params - small.n_params
    stat = max(0.0, 2.0 * (big.loglik - small.loglik))
    p = float(chi2.sf(stat, df)) if df > 0 else float("nan")
    return {"chi2": stat, "df": int(df), "p": p,
            "aic_small": small.aic, "aic_big": big.aic, "bic_small": small.bic, "bic_big": big.bic,
            "preferred_by_aic": "base" if small.aic <= big.aic else "extended",
            "preferred_by_bic": "base" if small.bic <= big.bic else "extended"}


def finite(x: float) -> bool:
    return x is not None and not (isinstance(x, float) and (math.isnan(x) or math.isinf(x)))


ROW_ORDER_SEEDS = (1, 2, 3)


def row_order_sensitivity(fit_fn, data: pd.DataFrame, term: str, original: MixedFit | None = None,
                          seeds: tuple[int, ...] = ROW_ORDER_SEEDS) -> dict:
    """The same model refitted with the rows in their order, reversed and in `seeds` shuffles
    (numpy default_rng(seed).permutation): the range of the term's Wald statistic (and of its Hessian-free z
    and the log-likelihood) over the orders. At an interior optimum every order gives the same numbers to
    optimiser precision; at a boundary optimum the Hessian-based SE moves with the order.

    fit_fn(data) -> MixedFit; `original` is the fit on `data` as given, when already made."""
    orders = [("original", data), ("reversed", data.iloc[::-1])]
    orders += [(f"shuffle (seed {s})", data.iloc[np.random.default_rng(s).permutation(len(data))]) for s in seeds]
    rows = []
    for name, d in orders:
        try:
            f = original if (name == "original" and original is not None) else fit_fn(d.reset_index(drop=True))
        except MixedModelError as exc:
            rows.append({"order": name, "status": "failed", "error": str(exc)})
            continue
        c = f.coef(term)
        rows.append({"order": name, "estimate": c["estimate"], "se": c["se"], "z": c["z"],
                     "se_hessian_free": c.get("se_hessian_free", float("nan")),
                     "z_hessian_free": c.get("z_hessian_free", float("nan")), "loglik": f.loglik, "status": f.status})
    out: dict = {"term": term, "orders": rows, "n_orders": len(orders)}
    for key in ("z", "z_hessian_free", "loglik", "estimate"):
        vals = [r[key] for r in rows if key in r and finite(r[key])]
        out[f"{key}_min"] = min(vals) if vals else float("nan")
        out[f"{key}_max"] = max(vals) if vals else float("nan")
    out["failed"] = sum(r["status"] == "failed" for r in rows)
    return out
