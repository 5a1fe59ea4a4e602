"""Fit a user's formula: glmer (binomial) for 0/1 outcomes, lmer for continuous ones (response times on a
log scale), glm/lm when the formula has no random effects; every fit with its diagnostics.

Why a fallback sequence: the maximal random-effects structure a design justifies (Barr et al. 2013)
often does not converge or is singular on a lab's sample; the usual remedy (Matuschek et al. 2017) is
to simplify it step by step. Each step is tried only when the one before is not converged or singular;
the report names the structure it shows, and every attempt with its status. R (lme4 through rpy2) is
started on the first fit only (analysis/stats/mixed.py); lmer p-values use lmerTest's Satterthwaite df when
lmerTest is installed, else none are given (lme4 prints none).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from analysis.stats import formula as fm
from analysis.stats.formula import CONTRASTS_NOTE  # noqa: E402,F401 (re-exported: the coding is the formula's)
from analysis.stats.mixed import (
    MixedModelError,
    boundary_messages,
    boundary_reasons,
    degenerate_warnings,
    fit_converged,
    fit_status,
    hessian_free,
    r_fitter,
    r_frame,
)
from analysis.stats.ordinal import OrdinalError, fit_clmm

R_FIT_ANY = r"""
function(formula, d, family, mixed) {
  msgs <- character(0)
  keep <- function(expr) withCallingHandlers(expr,
    warning = function(w) { msgs <<- c(msgs, conditionMessage(w)); invokeRestart("muffleWarning") },
    message = function(w) { msgs <<- c(msgs, conditionMessage(w)); invokeRestart("muffleMessage") })
  f <- stats::as.formula(formula)
  has_lmertest <- requireNamespace("lmerTest", quietly = TRUE)
  if (mixed && family == "binomial") {
    m <- keep(lme4::glmer(f, data = d, family = stats::binomial))
  } else if (mixed) {
    m <- keep(if (has_lmertest) lmerTest::lmer(f, data = d, REML = TRUE) else lme4::lmer(f, data = d, REML = TRUE))
  } else if (family == "binomial") {
    m <- keep(stats::glm(f, data = d, family = stats::binomial))
  } else {
    m <- keep(stats::lm(f, data = d))
  }
  cf <- keep(stats::coef(summary(m)))
  cn <- colnames(cf)
  pcol <- grep("^Pr", cn)
  scol <- grep("value$", cn)[1]
  dfcol <- which(cn == "df")
  ll <- stats::logLik(m)
  # glmer: the SE from vcov(use.hessian = FALSE) beside the Wald SE (steady at a boundary optimum, where the
  # finite-difference Hessian moves with the row order; analysis/stats/mixed.py,
  # docs/analysis/analyses.md "Boundary fits")
  se_hf <- if (mixed && family == "binomial") tryCatch(
    unname(sqrt(diag(as.matrix(suppressWarnings(stats::vcov(m, use.hessian = FALSE)))))),
    error = function(e) rep(NA_real_, nrow(cf))) else rep(NA_real_, nrow(cf))
  if (mixed) {
    vc <- as.data.frame(lme4::VarCorr(m))
    conv <- m@optinfo$conv$lme4$messages
    opt_code <- as.integer(m@optinfo$conv$opt)
    singular <- lme4::isSingular(m)
    optimizer <- paste(m@optinfo$optimizer, collapse = "+")
    opt_warn <- as.character(unlist(m@optinfo$warnings))
    ng <- lme4::ngrps(m)
  } else {
    vc <- data.frame(grp = character(0), var1 = character(0), var2 = character(0), sdcor = numeric(0))
    conv <- NULL
    opt_code <- if (family == "binomial" && !m$converged) 1L else 0L
    singular <- any(is.na(stats::coef(m)))
    optimizer <- if (family == "binomial") "IRLS" else "QR"
    opt_warn <- character(0)
    ng <- integer(0)
  }
  list(term = rownames(cf), estimate = unname(cf[, 1]), se = unname(cf[, 2]), stat = unname(cf[, scol]), se_hf = se_hf,
       stat_name = sub(" value", "", cn[scol]),
       p = if (length(pcol)) unname(cf[, pcol[1]]) else rep(NA_real_, nrow(cf)),
       coef_df = if (length(dfcol)) unname(cf[, dfcol[1]]) else rep(NA_real_, nrow(cf)),
       vc_group = as.character(vc$grp), vc_var1 = as.character(vc$var1),
       vc_var2 = ifelse(is.na(vc$var2), "", as.character(vc$var2)), vc_sdcor = as.numeric(vc$sdcor),
       aic = stats::AIC(m), bic = stats::BIC(m), loglik = as.numeric(ll), df = as.integer(attr(ll, "df")),
       nobs = as.integer(stats::nobs(m)), singular = singular,
       messages = unique(c(msgs, if (is.null(conv)) character(0) else conv)), opt_code = opt_code,
       check_messages = if (is.null(conv)) character(0) else conv, opt_warnings = opt_warn, optimizer = optimizer,
       ngrps_names = as.character(names(ng)), ngrps = as.integer(ng), lmertest = has_lmertest)
}
"""
_FIT = None


def _fit_fn():
    global _FIT
    if _FIT is None:
        r_fitter()  # starts R with lme4 (and says clearly when it cannot)
        import rpy2.robjects as ro  # late: R starts only when a model is fitted

        _FIT = ro.r(R_FIT_ANY)
    return _FIT


@dataclass
class FormulaFit:
    """One reported fit of a user's formula (plain data, JSON-serialisable)."""

    formula: str  # as the user wrote it
    fitted: str  # what R fitted (aliases resolved, factors coded, the random structure of this fit)
    family: str  # binomial | gaussian
    method: str  # glmer | lmer | glm | lm
    response_transform: str  # "" or "log" (response times)
    n_obs: int
    n_groups: dict[str, int]
    coefficients: list[dict]
    random_effects: list[dict]
    aic: float
    bic: float
    loglik: float
    n_params: int
    singular: bool
    converged: bool
    messages: list[str] = field(default_factory=list)
    optimizer: str = ""
    optimizer_warnings: list[str] = field(default_factory=list)
    contrasts: list[dict] = field(default_factory=list)  # factor, levels, coding
    contrasts_note: str = CONTRASTS_NOTE
    random_structure: str = "as given"  # which step of the fallback sequence is reported
    attempts: list[dict] = field(default_factory=list)  # structure, fitted, status, messages
    fallback: str = ""
    rows_dropped: dict[str, int] = field(default_factory=dict)
    status: str = "ok"
    statistic: str = "z"
    # the boundary rule (analysis/stats/mixed.py), [] when none
    boundary_reasons: list[str] = field(default_factory=list)
    # the group of rows fitted (analysis/load/prepare.group_label), "" when all rows were fitted together
    group: str = ""
    opt_code: int = 0  # the optimiser's own return code (0: it converged by its own rule; lme4's checks aside)
    optimizer_check: dict = field(default_factory=dict)  # a near miss refitted with lme4's other optimizers

    def coef(self, term: str) -> dict:
        for c in self.coefficients:
            if c["term"] == term:
                return c
        raise KeyError(f"{term!r} is not a term of {self.fitted}")

    def coef_frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.coefficients)

    def to_dict(self) -> dict:
        return asdict(self)


def _num(v) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return float("nan")
    return x


def infer_family(y: pd.Series) -> str:
    vals = set(pd.to_numeric(y.dropna().astype(float), errors="coerce").unique())
    return "binomial" if vals and vals <= {0.0, 1.0} else "gaussian"


def prepare_data(df: pd.DataFrame, formula: fm.Formula, family: str = "auto",
                 declared: dict[str, list[str]] | None = None, log_rt: bool = True
                 ) -> tuple[pd.DataFrame, fm.Formula, list[fm.Coding], str, str, dict[str, int]]:
    """The rows and columns R fits: used columns only, complete rows, booleans as 0/1, RTs logged,
    factors sum-coded. Returns (data, coded formula, codings, family, transform, rows dropped by reason)."""
    fm.check_columns(formula, list(df.columns))
    cols = formula.variables
    d = df[cols].copy()
    dropped: dict[str, int] = {}
    n0 = len(d)
    empty = [c for c in cols if n0 and d[c].isna().all()]
    if empty:  # the cause named: a column with no value at all (e.g. an imported study without answers)
        raise fm.FormulaError(f"--formula {formula.text!r}: column {empty[0]!r} is empty in all {n0:,} rows"
                              + (f" (and {', '.join(repr(c) for c in empty[1:])})" if len(empty) > 1 else "")
                              + "; nothing to fit")
    d = d.dropna()
    if n0 - len(d):
        dropped["a used column is empty"] = n0 - len(d)
    y = d[formula.response_var]
    if str(y.dtype) in ("boolean", "bool"):
        d[formula.response_var] = y.astype(int).astype(float)
    elif not pd.api.types.is_numeric_dtype(y):
        num = pd.to_numeric(y, errors="coerce")
        if num.isna().any():
            raise fm.FormulaError(f"--formula: the response {formula.response_var!r} is not numeric or 0/1 "
                                  f"(e.g. {y[num.isna()].iloc[0]!r})")
        d[formula.response_var] = num
    fam = infer_family(d[formula.response_var]) if family == "auto" else family
    if fam not in ("binomial", "gaussian"):
        raise fm.FormulaError(f"family must be auto, binomial or gaussian, not {family!r}")
    transform = ""
    if fam == "gaussian" and log_rt and fm.is_rt(formula.response_var) and formula.response == formula.response_var:
        bad = d[formula.response_var] <= 0
        if bad.any():
            dropped["response time not positive (no log)"] = int(bad.sum())
            d = d[~bad]
        formula = formula.with_response(fm.Call("log", (fm.Name(formula.response_var),)))
        transform = "log"
    elif isinstance(formula.lhs, fm.Call) and formula.lhs.fn == "log":
        transform = "log"
    if fam == "binomial" and not set(d[formula.response_var].unique()) <= {0.0, 1.0}:
        raise fm.FormulaError(f"--formula: family binomial needs a 0/1 response; {formula.response_var!r} has other "
                              "values")
    for g in formula.groups:
        d[g] = d[g].astype(str)
    if d.empty:
        missing = ", ".join(f"{c!r} empty in {int(df[c].isna().sum()):,}" for c in cols if df[c].isna().any())
        raise fm.FormulaError(f"--formula {formula.text!r}: no complete rows to fit (of {n0:,} rows: "
                              f"{missing or 'every response time not positive'})")
    d, coded, codings = fm.sum_code(d, formula, declared)
    return d, coded, codings, fam, transform, dropped


def _run(fit_fn, rd, text: str, family: str, mixed: bool) -> dict:
    try:
        r = fit_fn(text, rd, family, mixed)
    except Exception as exc:
        raise MixedModelError(f"{'glmer' if mixed and family == 'binomial' else 'lmer' if mixed else 'glm'} failed "
                              f"for {text}: {' '.join(str(exc).split())}") from exc
    import rpy2.rinterface as ri  # late: R starts only when a model is fitted

    return {k: ([] if r.rx2(k) is ri.NULL else list(r.rx2(k))) for k in r.names}


def fit_formula(df: pd.DataFrame, formula: str | fm.Formula, family: str = "auto",
                declared: dict[str, list[str]] | None = None, fallback: bool = True, log_rt: bool = True) -> FormulaFit:
    """Fit `formula` to `df` (columns checked first); with random effects, simplify them step by step while
    the fit is not converged or singular, and report which structure is shown."""
    from scipy.stats import norm  # scipy.stats (~0.5 s) loads with the first test statistic

    f = fm.parse(formula) if isinstance(formula, str) else formula
    d, coded, codings, fam, transform, dropped = prepare_data(df, f, family, declared, log_rt)
    fm.check_groups(d, coded.groups)  # one participant (or item): said before R is asked, once per column
    mixed = bool(coded.random)
    fit_fn = _fit_fn()

    used = [c for c in d.columns if c in set(coded.variables)]
    rd = r_frame(d[used])
    steps = [("as given (maximal)" if any(r.has_slopes for r in coded.random) else "as given", coded)]
    if mixed and fallback:
        steps += fm.simpler_structures(coded)
    attempts, get, chosen = [], None, None
    for name, step in steps:
        g = _run(fit_fn, rd, step.r_text(), fam, mixed)
        conv, sing = fit_converged(g), bool(g["singular"][0])
        edge = bool(mixed and boundary_reasons(sing, _rfx(g)))
        attempts.append({"structure": name, "fitted": step.r_text(), "converged": conv, "singular": sing,
                         "boundary": edge, "status": fit_status(conv, sing, False, edge),
                         "messages": list(dict.fromkeys(" ".join(str(m).split()) for m in g["messages"]))})
        get, chosen = g, (name, step)
        if conv and not sing and not edge:
            break
    assert get is not None and chosen is not None
    if len(attempts) > 1:
        why = "; ".join(f"{a['structure']}: {a['status']}" for a in attempts[:-1])
        last = attempts[-1]
        fallback_note = (f"reported: {chosen[0]} ({why})" if last["status"] == "ok" else
                         f"no structure converged without a singular fit ({why}; {last['structure']}: "
                         f"{last['status']}); the simplest is reported")
    else:
        fallback_note = ""
    zq = norm.ppf(0.975)
    coefs = []
    glmer = mixed and fam == "binomial"
    for t, e, se, st, p, cdf, shf in zip(get["term"], get["estimate"], get["se"], get["stat"], get["p"], get["coef_df"],
                                         get["se_hf"], strict=False):
        e, se = _num(e), _num(se)
        coefs.append({"term": t, "estimate": e, "se": se, "z": _num(st), "p": _num(p), "df": _num(cdf),
                      "ci_low": e - zq * se, "ci_high": e + zq * se, **(hessian_free(e, _num(shf)) if glmer else {})})
    rfx = _rfx(get)
    singular = bool(get["singular"][0])
    reasons = boundary_reasons(singular, rfx) if mixed else []
    converged = fit_converged(get)
    messages = list(dict.fromkeys(" ".join(str(m).split()) for m in get["messages"]))
    if singular and mixed and not any("singular" in m for m in messages):
        messages.append("boundary (singular) fit: see help('isSingular')")
    if not converged and not any("converge" in m for m in messages):
        messages.append(f"optimiser returned code {int(get['opt_code'][0])} (not converged)")
    messages += boundary_messages(singular, reasons)
    degenerate = degenerate_warnings(coefs, [r for r in rfx if r["group"] != "Residual"]) if fam == "binomial" else []
    messages += degenerate
    stat = str(get["stat_name"][0]) if get["stat_name"] else "z"
    if mixed and fam == "gaussian" and not bool(get["lmertest"][0]):
        messages.append("lmerTest is not installed: no p-values (lme4 gives none for lmer)")
    return FormulaFit(
        formula=f.text, fitted=chosen[1].r_text(), family=fam,
        method=("glmer" if fam == "binomial" else "lmer") if mixed else ("glm" if fam == "binomial" else "lm"),
        response_transform=transform, n_obs=int(get["nobs"][0]),
        n_groups={str(n): int(v) for n, v in zip(get["ngrps_names"], get["ngrps"], strict=False)},
        coefficients=coefs, random_effects=rfx, aic=_num(get["aic"][0]), bic=_num(get["bic"][0]),
        loglik=_num(get["loglik"][0]), n_params=int(get["df"][0]), singular=singular, converged=converged,
        messages=messages, optimizer=str(get["optimizer"][0]) if get["optimizer"] else "",
        optimizer_warnings=[" ".join(str(w).split()) for w in get["opt_warnings"]],
        contrasts=[{"factor": c.factor, "levels": c.levels, "coding": c.text()} for c in codings],
        random_structure=chosen[0], attempts=attempts, fallback=fallback_note, rows_dropped=dropped,
        status=fit_status(converged, singular and mixed, bool(degenerate), bool(reasons)), statistic=stat,
        boundary_reasons=reasons, opt_code=int(get["opt_code"][0]) if get["opt_code"] else 0,
    )


def _rfx(get) -> list[dict]:
    """as.data.frame(VarCorr) as records (var1/var2 kept: the boundary rule reads correlations by them)."""
    return [{"group": g, "term": f"sd__{v1}" if not v2 else f"cor__{v1}.{v2}", "estimate": _num(sd),
             "var1": str(v1), "var2": str(v2)}
            for g, v1, v2, sd in zip(get["vc_group"], get["vc_var1"], get["vc_var2"], get["vc_sdcor"], strict=False)]


GROUP = "group"  # the column naming who a row belongs to: 'human', or 'model · context · protocol'
PER_GROUP = "per group"
POOLED = "pooled with group in the formula"
ONE_GROUP = "one group"


@dataclass
class GroupFits:
    """The fits of one formula over a table's groups (people, each model · context · protocol).

    Why one fit per group by default: a pooled fit without a group term compares nothing that should be
    compared (people and two model protocols in one glmer came back "ok" with stars on a factor while
    the groups disagreed). With `group` in the formula the user asks for one fit of all groups, its
    group effects estimated; `scope` says which was done."""

    formula: str
    scope: str  # PER_GROUP | POOLED | ONE_GROUP
    fits: dict = field(default_factory=dict)  # group label ("" for a pooled fit) -> FormulaFit | OrdinalFit
    skipped: dict = field(default_factory=dict)  # group label -> why it was not fitted

    def __getitem__(self, group: str):
        return self.fits[group]

    def __iter__(self):
        return iter(self.fits.items())

    def __len__(self) -> int:
        return len(self.fits)

    @property
    def statuses(self) -> dict[str, str]:
        return {g: f.status for g, f in self.fits.items()}

    @property
    def status(self) -> str:
        """'ok' when every fit is; else each other fit's status, named by its group."""
        bad = [f"{g or 'all groups'}: {s}" for g, s in self.statuses.items() if s != "ok"]
        return "; ".join(bad) or "ok"

    def scope_text(self) -> str:
        groups = list(self.fits) + list(self.skipped)
        if self.scope == PER_GROUP:
            return (f"fitted separately for each of the {len(groups)} groups ({', '.join(groups)}): the formula has no "
                    "`group` term, and people and each model protocol are not pooled into one fit; write `group` in "
                    "the formula to fit them together with group effects")
        if self.scope == POOLED:
            return "one fit of all groups together: the formula names `group` (its effects are estimated in the fit)"
        return f"one fit: the data hold one group ({groups[0] if groups else 'none'})"

    def coef_frame(self) -> pd.DataFrame:
        parts = [pd.DataFrame(f.coefficients).assign(group=g, status=f.status) for g, f in self.fits.items()]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["group", "term", "estimate"])


def fit_groups(df: pd.DataFrame, formula: str | fm.Formula, family: str = "auto",
               declared: dict[str, list[str]] | None = None, fallback: bool = True, log_rt: bool = True,
               group_column: str = GROUP) -> GroupFits:
    """Fit `formula` once per group of rows (the `group` column), or once over all rows when the formula
    names `group` or the data hold one group. A group whose rows cannot be fitted (a factor with one
    level there, too few rows) is named in `skipped` with the reason; when no group can be fitted the
    first reason is raised. `family='ordinal'` fits ordinal::clmm (analysis/stats/ordinal.py)."""
    f = fm.parse(formula) if isinstance(formula, str) else formula
    fm.check_columns(f, list(df.columns))

    def one(rows: pd.DataFrame):
        ff, dropped = _without_one_level_groups(f, rows)
        if family == "ordinal":
            fit = fit_clmm(rows, ff.r_text() if dropped else f.text, declared)
        else:
            fit = fit_formula(rows, ff, family, declared, fallback, log_rt)
        if dropped and isinstance(fit, FormulaFit):
            fit.messages.append(ONE_LEVEL_NOTE.format(terms=", ".join(dropped)))
            fit.random_structure = f"{fit.random_structure}; without {', '.join(dropped)}"
        return fit

    groups = (sorted(set(df[group_column].dropna().astype(str))) if group_column in df.columns else [])
    if group_column in f.variables or len(groups) <= 1:
        scope = POOLED if group_column in f.variables and len(groups) > 1 else ONE_GROUP
        label = "" if scope == POOLED else (groups[0] if groups else "")
        fit = one(df)
        if isinstance(fit, FormulaFit):
            fit.group = label
        return GroupFits(f.text, scope, {label: fit})
    out = GroupFits(f.text, PER_GROUP)
    errors: tuple = (fm.FormulaError, MixedModelError)
    if family == "ordinal":
        errors += (OrdinalError,)
    first_error: Exception | None = None
    for g in groups:
        rows = df[df[group_column].astype(str) == g]
        try:
            fit = one(rows)
        except errors as exc:
            out.skipped[g] = " ".join(str(exc).split())
            first_error = first_error or exc
            continue
        if isinstance(fit, FormulaFit):
            fit.group = g
        out.fits[g] = fit
    if not out.fits:
        assert first_error is not None
        raise type(first_error)("no group could be fitted: " + "; ".join(f"{g}: {w}" for g, w in out.skipped.items()))
    return out


ONE_LEVEL_NOTE = ("random term(s) {terms} left out: their grouping column has one level in this group's rows (e.g. "
                  "a deterministic model's copies analysed as one subject, "
                  "docs/analysis/general-designs.md 'Subjects'); a variance over one level is not estimable")


def _without_one_level_groups(f: fm.Formula, rows: pd.DataFrame) -> tuple[fm.Formula, list[str]]:
    """The formula without random terms whose grouping column has fewer than two levels in `rows`, and
    those terms' texts (lme4 refuses such a term: 'grouping factors must have > 1 sampled level')."""
    keep, dropped = [], []
    for r in f.random:
        col = fm.ALIASES.get(r.group, r.group)
        if col in rows.columns and rows[col].dropna().nunique() < 2:
            dropped.append(r.text())
        else:
            keep.append(r)
    return (f.with_random(keep) if dropped else f), dropped


def fit_table(fit: FormulaFit) -> pd.DataFrame:
    """The coefficient table as the report shows it (with the fit's group and status on every row)."""
    t = fit.coef_frame()
    t.insert(0, "formula", fit.formula)
    t.insert(0, "group", fit.group)
    t["statistic"] = fit.statistic
    t["status"] = fit.status
    return t


def finite(x) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x) and not np.isnan(x)
