"""An analytic first pass beside the simulation, for a two-level contrast in a crossed subjects x items design.

Why: a closed form answers in a millisecond and shows whether the simulation is in the right region (Westfall,
Kenny & Judd 2014, PANGEA, for the LMM). The approximation treats the coefficient's estimate as the weighted
contrast b = sum(c_r y_r) with c_r = w_r x_r / sum(w x^2) (x the +-1 column, w the working weights), and adds
what each random effect contributes to its variance on the design's own rows:

    Var(b) = sum(c_r^2 / w_r) + sum over subjects and items l of a_l' Sigma_g a_l,   a_l = sum_{r in l} c_r z_r

(z_r the random-effect columns of row r, Sigma_g that grouping's covariance). In a Latin square the intercepts
cancel (sum of c_r over a subject's or an item's rows is 0) and slopes do not; a between-item factor keeps
the item intercepts, as it should. gaussian: w = 1 / sigma^2. binomial: the normal approximation on the logit
scale, w_r = E[mu (1 - mu)] over the random effects' normal distribution at the row's fixed part
(Gauss-Hermite). Power = Phi(|beta|/SE - z) + Phi(-|beta|/SE - z), z the two-sided critical value. Other
fixed effects are taken as orthogonal to the tested one (sum-coded, balanced designs): an approximation,
labelled so, never a replacement for the simulation.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
from scipy import stats

from analysis.stats.formula import summands

GROUPS = ("subject_id", "item")


def _column(design: pd.DataFrame, name: str) -> np.ndarray | None:
    """A coefficient's column: the product of its parts' columns (None when a part is not a column)."""
    if name == "(Intercept)":
        return np.ones(len(design))
    out = np.ones(len(design))
    for part in name.split(":"):
        if part not in design.columns or not pd.api.types.is_numeric_dtype(design[part]):
            return None
        out = out * design[part].to_numpy(float)
    return out


def _why_not(design: pd.DataFrame, pilot) -> str:
    if len(pilot.coefficients) != 1:
        return f"the term has {len(pilot.coefficients)} coefficients (one two-level contrast is needed)"
    two = {c for cod in pilot.fit.contrasts if len(cod["levels"]) == 2 for c in [cod["factor"]]}
    parts = pilot.coefficients[0].split(":")
    if not all(p in two for p in parts):
        return "the term is not a contrast of two-level factors"
    if any(r.group not in GROUPS for r in pilot.coded.random):
        return "random effects by a grouping other than subject and item"
    for r in pilot.coded.random:
        for _, n in summands(r.expr):
            if not (getattr(n, "text", None) in ("0", "1") or getattr(n, "name", None) in design.columns):
                return f"a random term's column {n.r()} is not a plain column"
    return ""


def _covariances(truth) -> dict[str, tuple[list[str], np.ndarray]]:
    blocks: dict[str, dict] = {}
    for r in truth.random_effects:
        g = re.sub(r"\.\d+$", "", str(r["group"]))  # lme4 names a (x || g) term's second block g.1
        b = blocks.setdefault(g, {"sd": {}, "cor": {}})
        if r["term"].startswith("sd__"):
            b["sd"][r["var1"] or r["term"][4:]] = float(r["estimate"])
        else:
            b["cor"][(r["var1"], r["var2"])] = float(r["estimate"])
    out = {}
    for g, b in blocks.items():
        names = list(b["sd"])
        cov = np.array([[b["sd"][a] * b["sd"][c] * (1.0 if a == c else b["cor"].get((a, c), b["cor"].get((c, a), 0.0)))
                         for c in names] for a in names])
        out[g] = (names, cov)
    return out


def analytic_power(design: pd.DataFrame, pilot, alpha: float) -> dict:
    """{'power', 'se', 'note'} of the approximation (module docstring), or {'note': why not}."""
    why = _why_not(design, pilot)
    if why:
        return {"note": f"no analytic pass: {why}"}
    truth = pilot.truth
    coef = pilot.coefficients[0]
    cols = {c: _column(design, c) for c in truth.beta}
    if any(v is None for v in cols.values()):
        return {"note": "no analytic pass: a fixed effect is not a product of plain columns"}
    eta = sum(truth.beta[c] * v for c, v in cols.items())
    x = cols[coef]
    cov = _covariances(truth)
    zcols = {g: np.column_stack([np.ones(len(design)) if n == "(Intercept)" else design[n].to_numpy(float)
                                 for n in names]) for g, (names, _) in cov.items() if g in design.columns}
    if truth.family == "binomial":
        var_re = sum(np.einsum("ij,jk,ik->i", zcols[g], cov[g][1], zcols[g]) for g in zcols) if zcols else 0 * eta
        nodes, weights = np.polynomial.hermite_e.hermegauss(30)
        mu = 1 / (1 + np.exp(-(eta[:, None] + np.sqrt(var_re)[:, None] * nodes[None, :])))
        w = (mu * (1 - mu)) @ (weights / weights.sum())
    else:
        w = np.full(len(design), 1 / truth.sigma ** 2)
    c = w * x / np.sum(w * x * x)
    var = float(np.sum(c * c / w))
    for g, z in zcols.items():
        a = pd.DataFrame(c[:, None] * z).groupby(design[g].to_numpy()).sum().to_numpy()
        var += float(np.einsum("lj,jk,lk->", a, cov[g][1], a))
    se = np.sqrt(var)
    zc = stats.norm.ppf(1 - alpha / 2)
    ncp = abs(truth.beta[coef]) / se
    power = float(stats.norm.cdf(ncp - zc) + stats.norm.cdf(-ncp - zc))
    kind = "normal approximation on the logit scale" if truth.family == "binomial" else "PANGEA-style (z)"
    return {"power": power, "se": float(se), "note": f"analytic ({kind}; approximate, beside the simulation)"}
