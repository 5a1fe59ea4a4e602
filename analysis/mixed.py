"""Mixed-effects logistic regressions through pymer4 (R lme4::glmer, Laplace approximation).

pymer4 starts R on import (~20-30 s), so it is imported here, lazily, and only when a model is
fitted. `R_LIBS_USER` points at the repository's `.rlib` (pymer4 imports an R package installed
there) unless the caller set it already.
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
_GLMER = None


class MixedModelError(RuntimeError):
    """R/pymer4 missing or a model could not be fitted; the message says which and why."""


def _glmer():
    global _GLMER
    if _GLMER is None:
        rlib = REPO / ".rlib"
        if rlib.is_dir():
            os.environ.setdefault("R_LIBS_USER", str(rlib))
        # rpy2 rewrites LD_LIBRARY_PATH (and a few R variables) when it starts R; a Python child
        # process started later would then load system libraries into this Python and fail
        # (seen: `import ssl` -> undefined symbol). The running process is unaffected by the
        # variable once started, so restore it for children.
        saved = os.environ.get("LD_LIBRARY_PATH")
        try:
            from pymer4.models import glmer
        except Exception as exc:  # ImportError, R not found, R package missing
            raise MixedModelError(
                f"cannot import pymer4 (R + lme4 are needed for mixed models; run scripts/setup.sh or pass "
                f"--no-mixed): {type(exc).__name__}: {exc}"
            ) from exc
        finally:
            if saved is None:
                os.environ.pop("LD_LIBRARY_PATH", None)
            else:
                os.environ["LD_LIBRARY_PATH"] = saved
        import rpy2.robjects as ro

        ro.r("options(warn = 1)")  # print R warnings as they happen, so each fit captures its own
        _GLMER = glmer
    return _GLMER


NOISE = ("the hat matrix may not make sense", "Random effect variances not available", "Warning in ")


def _f(v) -> float:
    return float("nan") if v is None else float(v)


@dataclass
class MixedFit:
    """What a report needs from one glmer fit (plain data, JSON-serialisable)."""

    formula: str
    n_obs: int
    n_groups: int
    coefficients: list[dict]  # term, estimate, se, z, p, ci_low, ci_high (Wald)
    random_effects: list[dict]  # group, term, estimate (SD or correlation)
    aic: float
    bic: float
    loglik: float
    n_params: int
    singular: bool
    messages: list[str] = field(default_factory=list)

    def coef(self, term: str) -> dict:
        for c in self.coefficients:
            if c["term"] == term:
                return c
        raise KeyError(f"{term!r} is not a term of {self.formula}")

    def to_dict(self) -> dict:
        return asdict(self)

    def coef_frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.coefficients)


def fit_glmer(data: pd.DataFrame, formula: str, group: str = "subject") -> MixedFit:
    """Fit a binomial glmer; raise MixedModelError with R's message when it fails."""
    import polars as pl

    glmer = _glmer()
    tokens = set(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", formula))
    cols = [c for c in data.columns if c in tokens]
    d = data[cols].copy()
    for c in d.columns:
        if pd.api.types.is_bool_dtype(d[c]) or str(d[c].dtype) == "boolean":
            d[c] = d[c].astype(int)
        elif str(d[c].dtype) in ("Int64", "Float64"):
            d[c] = d[c].astype(float)
        elif not pd.api.types.is_numeric_dtype(d[c]):
            d[c] = d[c].astype(str)
    try:
        m = glmer(formula, data=pl.from_pandas(d), family="binomial")
        m.fit(verbose=False)
    except Exception as exc:
        detail = " ".join(str(exc).split())
        raise MixedModelError(f"glmer failed for {formula}: {detail}") from exc
    fit = m.result_fit.to_pandas()
    coefs = [
        {"term": r["term"], "estimate": _f(r["estimate"]), "se": _f(r["std_error"]), "z": _f(r["z_stat"]),
         "p": _f(r["p_value"]), "ci_low": _f(r["conf_low"]), "ci_high": _f(r["conf_high"])}
        for _, r in fit.iterrows()
    ]
    stats = m.result_fit_stats.to_dicts()[0]
    rfx = [{"group": r["group"], "term": r["term"], "estimate": _f(r["estimate"])}
           for r in m.ranef_var.to_dicts()]
    messages = list(dict.fromkeys(s.strip() for s in m.r_console
                                  if s and s.strip() and not any(n in s for n in NOISE)))
    status = str(getattr(m, "convergence_status", "") or "")
    if status and "TRUE" not in status:
        messages = [x for x in messages if not x.startswith("Convergence status")]
        messages.append("lme4 convergence check failed: " + " ".join(status.replace("Convergence status", "").split()))
    messages += degenerate_warnings(coefs, rfx)
    return MixedFit(
        formula=formula, n_obs=int(stats["nobs"]), n_groups=int(d[group].nunique()) if group in d else 0,
        coefficients=coefs, random_effects=rfx, aic=float(stats["AIC"]), bic=float(stats["BIC"]),
        loglik=float(stats["logLik"]), n_params=int(stats["nobs"] - stats["df_residual"]),
        singular=any("singular" in s for s in messages), messages=messages,
    )


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
    from scipy.stats import chi2

    if small.n_obs != big.n_obs:
        raise MixedModelError(f"models were fitted on different rows ({small.n_obs} vs {big.n_obs})")
    df = big.n_params - small.n_params
    stat = max(0.0, 2.0 * (big.loglik - small.loglik))
    p = float(chi2.sf(stat, df)) if df > 0 else float("nan")
    return {"chi2": stat, "df": int(df), "p": p,
            "aic_small": small.aic, "aic_big": big.aic, "bic_small": small.bic, "bic_big": big.bic,
            "preferred_by_aic": "base" if small.aic <= big.aic else "extended",
            "preferred_by_bic": "base" if small.bic <= big.bic else "extended"}


def wald_interval(estimate: float, se: float, level: float = 0.95) -> tuple[float, float]:
    from scipy.stats import norm

    z = norm.ppf(0.5 + level / 2)
    return estimate - z * se, estimate + z * se


def predicted_curve(fit: MixedFit, x: np.ndarray, term: str = "exposures") -> np.ndarray:
    """Population-level predicted error (random effects at 0) along `term`, other terms at 0."""
    b0 = fit.coef("(Intercept)")["estimate"]
    b1 = fit.coef(term)["estimate"]
    return 1.0 / (1.0 + np.exp(-(b0 + b1 * np.asarray(x, float))))


def finite(x: float) -> bool:
    return x is not None and not (isinstance(x, float) and (math.isnan(x) or math.isinf(x)))
