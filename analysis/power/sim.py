"""Simulate studies and refit them inside R, one call per batch, in parallel over the cores.

Why inside R: simr's speed problem is one full model build and refit per simulation, one after another.
Here a size's model structure (fixed-effects matrix X, random-effects Zt and Lambdat from lme4::glFormula or
lFormula) is built once; each simulation draws u ~ N(0, I), b = sigma * Lambda u, eta = X beta + Z b and the
response (Bernoulli(logit^-1 eta) for binomial, eta + N(0, sigma^2) for gaussian), exactly lme4's
simulate.merMod, then refits the same formula with lme4, the fixed effects started at the true ones
(`start = list(fixef =)`) and the random-effect parameters at lme4's own default start (1 on the diagonal, 0
off it), optimiser bobyqa for every stage. Why not the true variances too: a start at a true SD of (nearly) 0
sits on the boundary and leaves more fits singular than glmer's own start does (39 against 20 of 60 in issue
48), so the boundary counts would not be those of the analysis the study will run. A batch of simulations is
one R call (parallel::mclapply over the cores), so Python is crossed once per batch, not once per fit.

Reproducible: simulation i of a size draws its response from the i-th L'Ecuyer-CMRG stream of that size's seed
(parallel::nextRNGStream) and nothing else, and its fit reads only that response (the same start, no random
numbers), so within one run its numbers do not depend on the batch size, the cores or early stopping; the R
session's RNG kind and seed are put back after every draw. Across two runs (two processes) lme4's compiled
code can differ in the last bits (a lottery on the process's address-space layout, gone under `setarch -R`),
which the optimiser carries to about 1e-7 in an estimate (docs/analysis/power.md says what that means).

What each simulation returns: the term's estimate, SE, statistic and p (Wald z for one coefficient, a Wald
chi-square for several; or the likelihood-ratio chi-square against the fit without the term), whether the fit
failed (R error, or a binomial response with one value), converged (optimiser code 0 and no lme4 convergence
message besides singularity), isSingular, the random-effect SDs/correlations (the boundary rule of
analysis/stats/mixed.py is applied to them in Python: one rule, one place), and the smallest ratio of a tested
coefficient's SE to the SE the design allows (analysis/power/stats.py flags a broken fit from it).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.power.stats import IMPLAUSIBLE_SE
from analysis.stats.mixed import MixedModelError, boundary_reasons, r_fitter, r_frame

R_SETUP = r"""
function(design, fixed_rhs, random_text, family, beta_names, beta, vc_grp, vc_var1, vc_var2, vc_sdcor, sigma) {
  X <- stats::model.matrix(stats::as.formula(paste("~", fixed_rhs)), design)
  miss <- setdiff(colnames(X), beta_names)
  if (length(miss)) stop("no coefficient for ", paste(miss, collapse = ", "), " in the pilot fit")
  b <- unname(beta[match(colnames(X), beta_names)])
  xn <- sprintf("X__%d", seq_len(ncol(X)))
  d <- design
  for (k in seq_along(xn)) d[[xn[k]]] <- X[, k]
  d$y__ <- if (family == "binomial") rep(c(0, 1), length.out = nrow(d)) else stats::rnorm(nrow(d))
  rhs <- paste(c(paste("0 +", paste(xn, collapse = " + ")), if (nzchar(random_text)) random_text), collapse = " + ")
  f <- stats::as.formula(paste("y__ ~", rhs))
  # the structure is built with lme4's data checks off: a size where the model cannot be fitted (fewer observations
  # than random effects) then fails in every simulation's own fit, counted and reported, instead of stopping here
  off <- list(check.nobs.vs.nlev = "ignore", check.nobs.vs.rankZ = "ignore", check.nobs.vs.nRE = "ignore",
              check.nlev.gtreq.5 = "ignore", check.nlev.gtr.1 = "ignore")
  rt <- if (!nzchar(random_text)) list(cnms = list(), Lambdat = NULL, Zt = NULL) else
    if (family == "binomial") lme4::glFormula(f, d, family = stats::binomial,
                                              control = do.call(lme4::glmerControl, off))$reTrms else
    lme4::lFormula(f, d, control = do.call(lme4::lmerControl, off))$reTrms
  cnms <- rt$cnms
  gname <- make.unique(as.character(names(cnms)))
  semichol <- function(S) {
    k <- nrow(S); L <- matrix(0, k, k)
    for (i in seq_len(k)) for (j in seq_len(i)) {
      s <- S[i, j] - sum(L[i, seq_len(j - 1)] * L[j, seq_len(j - 1)])
      if (i == j) L[i, i] <- if (s > 0) sqrt(s) else 0 else L[i, j] <- if (L[j, j] > 0) s / L[j, j] else 0
    }
    L
  }
  theta <- numeric(0)
  for (k in seq_along(cnms)) {
    nm <- cnms[[k]]; g <- gname[k]; S <- matrix(0, length(nm), length(nm))
    sdv <- function(v) { i <- which(vc_grp == g & vc_var1 == v & vc_var2 == "")
      if (!length(i)) stop("the pilot fit has no SD for ", v, " by ", g); vc_sdcor[i[1]] }
    for (i in seq_along(nm)) for (j in seq_along(nm)) {
      if (i == j) { S[i, i] <- sdv(nm[i])^2; next }
      r <- which(vc_grp == g & ((vc_var1 == nm[i] & vc_var2 == nm[j]) | (vc_var1 == nm[j] & vc_var2 == nm[i])))
      S[i, j] <- (if (length(r)) vc_sdcor[r[1]] else 0) * sdv(nm[i]) * sdv(nm[j])
    }
    L <- semichol(S) / sigma
    theta <- c(theta, L[lower.tri(L, diag = TRUE)])
  }
  Lt <- rt$Lambdat
  if (length(theta)) Lt@x <- theta[rt$Lind]
  list(d = d, X = X, beta = b, xn = xn, random_text = random_text, family = family, sigma = sigma,
       Zt = rt$Zt, Lambdat = Lt, theta = theta, q = if (is.null(rt$Zt)) 0L else nrow(rt$Zt), n = nrow(d))
}
"""

# the body's first lines in R_STREAMS and R_DRAW: the session's RNG kind and seed are saved and put back when the
# function returns, and the simulations' own generator (L'Ecuyer-CMRG, parallel's streams) is switched on
R_KEEP_SESSION_RNG = r"""
  has_seed <- exists(".Random.seed", envir = globalenv())
  old_seed <- if (has_seed) get(".Random.seed", envir = globalenv()) else NULL
  old_kind <- RNGkind()
  on.exit({ RNGkind(old_kind[1], old_kind[2], old_kind[3])
            if (has_seed) assign(".Random.seed", old_seed, envir = globalenv()) else
              if (exists(".Random.seed", envir = globalenv())) rm(".Random.seed", envir = globalenv()) })
  RNGkind("L'Ecuyer-CMRG", "Inversion", "Rejection")
"""

R_STREAMS = r"""
function(seed, first, n) {
  # the L'Ecuyer-CMRG streams of simulations first+1 .. first+n of a size's seed, computed without touching the
  # session's RNG (its kind and seed are put back)""" + R_KEEP_SESSION_RNG + r"""  set.seed(seed)
  s <- get(".Random.seed", envir = globalenv())
  streams <- vector("list", n)
  for (i in seq_len(first + n)) { s <- parallel::nextRNGStream(s); if (i > first) streams[[i - first]] <- s }
  streams
}
"""

R_DRAW = r"""
function(S, stream) {
  # one simulated response from its own stream alone (simulate.merMod's rule); the session's RNG is put back""" \
    + R_KEEP_SESSION_RNG + r"""  assign(".Random.seed", stream, envir = globalenv())
  u <- stats::rnorm(S$q)
  zb <- if (S$q) as.vector(Matrix::crossprod(S$Zt, Matrix::crossprod(S$Lambdat, u))) * S$sigma else 0
  eta <- as.vector(S$X %*% S$beta) + zb
  if (S$family == "binomial") stats::rbinom(S$n, 1, stats::plogis(eta)) else eta + stats::rnorm(S$n, 0, S$sigma)
}
"""

R_BATCH = r"""
function(S, streams, draw, cols, ref, test, cores, maxfun) {
  n <- length(streams)
  keep <- setdiff(seq_along(S$xn), cols)
  form <- function(idx) stats::as.formula(paste("y__ ~", paste(c(paste("0 +", paste(S$xn[idx], collapse = " + ")),
                                                                  if (nzchar(S$random_text)) S$random_text),
                                                                collapse = " + ")))
  f_full <- form(seq_along(S$xn)); f_red <- if (length(keep)) form(keep) else NULL
  fit <- function(d, f, fixef, reml) {
    msgs <- character(0)
    m <- withCallingHandlers(
      if (S$family == "binomial") {
        if (length(S$theta)) lme4::glmer(f, d, family = stats::binomial, start = list(fixef = fixef),
          control = lme4::glmerControl(optimizer = "bobyqa", optCtrl = list(maxfun = maxfun)))
        else stats::glm(f, d, family = stats::binomial, start = fixef)
      } else {
        if (length(S$theta)) lme4::lmer(f, d, REML = reml,
          control = lme4::lmerControl(optimizer = "bobyqa", optCtrl = list(maxfun = maxfun)))
        else stats::lm(f, d)
      },
      warning = function(w) { msgs <<- c(msgs, conditionMessage(w)); invokeRestart("muffleWarning") },
      message = function(w) { msgs <<- c(msgs, conditionMessage(w)); invokeRestart("muffleMessage") })
    mixed <- length(S$theta) > 0
    conv <- if (mixed) m@optinfo$conv$lme4$messages else NULL
    # a boundary fit is counted apart; "Hessian is numerically singular" is a failed convergence check
    checks <- conv[!grepl("^boundary \\(singular\\)", conv)]
    code <- if (mixed) as.integer(m@optinfo$conv$opt) else if (S$family == "binomial" && !m$converged) 1L else 0L
    list(m = m, converged = code == 0L && !length(checks), singular = mixed && lme4::isSingular(m),
         msgs = unique(c(msgs, conv)))
  }
  one <- function(k) tryCatch({
    y <- draw(S, streams[[k]])
    if (length(unique(y)) < 2) stop("the simulated response has one value (all ", y[1], "): nothing to fit")
    d <- S$d; d$y__ <- y
    a <- fit(d, f_full, S$beta, test != "lrt")
    m <- a$m; mixed <- length(S$theta) > 0
    b <- if (mixed) lme4::fixef(m) else stats::coef(m)
    V <- as.matrix(stats::vcov(m))
    vc <- if (mixed) as.data.frame(lme4::VarCorr(m)) else data.frame(grp = character(0), var1 = character(0),
                                                                       var2 = character(0), sdcor = numeric(0))
    conv <- a$converged; sing <- a$singular; msgs <- a$msgs
    if (test == "lrt") {
      r <- if (is.null(f_red)) NULL else fit(d, f_red, S$beta[keep], FALSE)
      if (!is.null(r)) { conv <- conv && r$converged; sing <- sing || r$singular; msgs <- unique(c(msgs, r$msgs)) }
      ll1 <- as.numeric(stats::logLik(m)); ll0 <- if (is.null(r)) NA_real_ else as.numeric(stats::logLik(r$m))
      stat <- max(0, 2 * (ll1 - ll0)); p <- stats::pchisq(stat, length(cols), lower.tail = FALSE)
      est <- if (length(cols) == 1) unname(b[cols]) else NA_real_
      se <- if (length(cols) == 1) sqrt(V[cols, cols]) else NA_real_
    } else if (length(cols) == 1) {
      est <- unname(b[cols]); se <- sqrt(V[cols, cols]); stat <- est / se; p <- 2 * stats::pnorm(-abs(stat))
    } else {
      bb <- b[cols]; stat <- as.numeric(t(bb) %*% solve(V[cols, cols], bb)); est <- NA_real_; se <- NA_real_
      p <- stats::pchisq(stat, length(cols), lower.tail = FALSE)
    }
    # the tested coefficients' SEs against the SEs the design allows (ref): the smallest ratio
    se_ratio <- min(sqrt(pmax(diag(V)[cols], 0)) / ref)
    list(num = c(est, se, stat, p, 0, as.numeric(conv), as.numeric(sing), se_ratio),
         msg = paste(msgs, collapse = " | "),
         grp = as.character(vc$grp), var1 = as.character(vc$var1),
         var2 = ifelse(is.na(vc$var2), "", as.character(vc$var2)), sdcor = as.numeric(vc$sdcor))
  }, error = function(e) list(num = c(NA, NA, NA, NA, 1, 0, 0, NA), msg = conditionMessage(e),
                              grp = character(0), var1 = character(0), var2 = character(0), sdcor = numeric(0)))
  res <- if (cores > 1) parallel::mclapply(seq_len(n), one, mc.cores = cores, mc.preschedule = TRUE)
         else lapply(seq_len(n), one)
  res <- lapply(res, function(r) if (inherits(r, "try-error") || is.null(r$num))
    list(num = c(NA, NA, NA, NA, 1, 0, 0, NA), msg = paste("worker failed:", as.character(r)), grp = character(0),
         var1 = character(0), var2 = character(0), sdcor = numeric(0)) else r)
  num <- do.call(rbind, lapply(res, `[[`, "num"))
  vcs <- vapply(res, function(r) paste(r$grp, r$var1, r$var2, format(r$sdcor, digits = 17),
                                       sep = "\t", collapse = "\n"),
                character(1))
  list(num = as.vector(t(num)), msg = vapply(res, `[[`, character(1), "msg"), vc = vcs)
}
"""

_FNS: dict = {}
COLUMNS = ("estimate", "se", "statistic", "p", "failed", "converged", "singular", "se_ratio")


def _fns():
    """The two R functions (R started once with lme4, analysis/stats/mixed.py)."""
    if not _FNS:
        r_fitter()
        import rpy2.robjects as ro  # late: R starts only when a model is fitted

        _FNS["setup"] = ro.r(R_SETUP)
        _FNS["streams"] = ro.r(R_STREAMS)
        _FNS["draw"] = ro.r(R_DRAW)
        _FNS["batch"] = ro.r(R_BATCH)
    return _FNS


@dataclass
class Truth:
    """The parameters simulated from: coefficients by name, the random effects as VarCorr records, sigma."""

    family: str  # binomial | gaussian
    beta: dict[str, float]
    random_effects: list[dict]  # group, var1, var2, estimate (SD or correlation), as analysis.stats.formula_fit._rfx
    sigma: float = 1.0


class SizeModel:
    """One study size's model structure in R (built once, used by every batch of that size)."""

    def __init__(self, design: pd.DataFrame, fixed_rhs: str, random_text: str, truth: Truth):
        import rpy2.robjects as ro  # late: R starts only when a model is fitted

        fns = _fns()
        rfx = [r for r in truth.random_effects if r.get("group") != "Residual"]
        try:
            self.r = fns["setup"](r_frame(design), fixed_rhs, random_text, truth.family,
                                  ro.StrVector(list(truth.beta)), ro.FloatVector(list(truth.beta.values())),
                                  ro.StrVector([str(r["group"]) for r in rfx]),
                                  ro.StrVector([str(r.get("var1") or "") for r in rfx]),
                                  ro.StrVector([str(r.get("var2") or "") for r in rfx]),
                                  ro.FloatVector([float(r["estimate"]) for r in rfx]), float(truth.sigma))
        except Exception as exc:  # an R error: the structure cannot be built from these parameters
            raise MixedModelError(f"cannot set up the simulated design: {' '.join(str(exc).split())}") from exc
        self.columns = [str(c) for c in self.r.rx2("X").colnames]
        self.family = truth.family
        self.mixed = len(self.r.rx2("theta")) > 0

    def batch(self, seed: int, first: int, n: int, cols: list[int], ref: list[float], test: str, cores: int,
              maxfun: int = 10_000) -> pd.DataFrame:
        """Simulations first+1 .. first+n of this size: one row each (module docstring); `ref`: the SE each
        tested coefficient's design allows (analysis/power/stats.reference_se)."""
        import rpy2.robjects as ro  # late: R starts only when a model is fitted


        fns = _fns()
        try:
            out = fns["batch"](self.r, fns["streams"](int(seed), int(first), int(n)), fns["draw"],
                               ro.IntVector([c + 1 for c in cols]), ro.FloatVector([float(r) for r in ref]), test,
                               int(cores), float(maxfun))
        except Exception as exc:
            raise MixedModelError(f"the simulation batch failed in R: {' '.join(str(exc).split())}") from exc
        num = np.array(list(out.rx2("num")), dtype=float).reshape(n, len(COLUMNS))
        d = pd.DataFrame(num, columns=list(COLUMNS))
        d.insert(0, "sim", np.arange(first + 1, first + n + 1))
        for c in ("failed", "converged", "singular"):
            d[c] = d[c].fillna(0).astype(bool)
        d["message"] = [str(m) for m in out.rx2("msg")]
        # quasi-separation in a binomial fit: the tested coefficient's |estimate| or SE above 8 on the log-odds scale
        # (analysis/stats/mixed.degenerate_warnings' rule); its Wald test barely rejects (Hauck-Donner), so it is
        # counted
        d["degenerate"] = (~d["failed"] & (self.family == "binomial")
                           & ((d["estimate"].abs() > 8) | (d["se"] > 8))).astype(bool)
        # a broken fit: an SE far below what the design allows (analysis/power/stats.py), never a test
        d["implausible_se"] = (~d["failed"] & (d["se_ratio"] < IMPLAUSIBLE_SE)).astype(bool)
        d["boundary"] = [not f and bool(boundary_reasons(s, _records(v)) if self.mixed else False)
                         for f, s, v in zip(d["failed"], d["singular"], out.rx2("vc"), strict=False)]
        return d

    def responses(self, seed: int, sims: list[int]) -> list[np.ndarray]:
        """The simulated responses of simulations `sims` (1-based) of this size, drawn as `batch` draws them: any
        one simulation can be rebuilt and refitted elsewhere (tests/analysis/test_power_fits.py does)."""
        fns = _fns()
        out = []
        for k in sims:
            stream = fns["streams"](int(seed), int(k) - 1, 1)[0]
            out.append(np.array(list(fns["draw"](self.r, stream)), dtype=float))
        return out

    def data(self):
        """The simulated design's rows in R (the columns X__1.. and the groupings), for a refit elsewhere."""
        return self.r.rx2("d")


def _records(text: str) -> list[dict]:
    """The VarCorr records a batch returns (tab-separated lines) as analysis.stats.mixed reads them."""
    out = []
    for line in str(text).splitlines():
        g, v1, v2, sd = line.split("\t")
        if g == "Residual":
            continue
        out.append({"group": g, "term": f"sd__{v1}" if not v2 else f"cor__{v1}.{v2}", "estimate": float(sd),
                    "var1": v1, "var2": v2})
    return out
