"""Equations (1)-(4) of seeds/002, fitted by lme4 exactly as the authors' analysis/lmers.R fits them, and the
sensitivity fits a reviewer asks for when a fit is singular.

    (1) response_correct ~ model_n_params_log * eval_method + (model_n_params_log * eval_method | model_family)
        glmer, binomial logit (analogical, reflective, grammaticality)
    (2) logprob ~ (the same), lmer (REML, lmerTest's Satterthwaite t test; word prediction)
    (3) response_correct ~ training_step_log * eval_method, glm binomial (analogical, OLMo-7B checkpoints)
    (4) logprob ~ training_step_log * eval_method, lm (word prediction, OLMo-7B checkpoints)

model_n_params_log = log10(parameters in billions), training_step_log = log10(step); eval_method is a factor
with R's alphabetical reference level (generated < mc; direct < meta), so the interaction term is
model_n_params_log:eval_methodmc (or ...meta). The paper prints |z| or |t|; its sign follows the coding.

Sensitivity, for the size models: (a) the same fixed effects with simpler by-family random effects, tried
from the richest down until a fit is neither singular nor unconverged; (b) the family as a fixed effect
(glm/lm); (c) the family as a fixed effect with random intercepts for items (each item is seen by all 13
models, the repeated unit the paper's model leaves out).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.stats.lme4_fits import fit_fixed, fit_lmer
from analysis.stats.mixed import MixedModelError, fit_glmer, row_order_sensitivity, significance_mark
from reproductions.hu_frank.released import BINARY, LABEL

LEVEL = {"digit_mat": "mc", "crt": "mc", "lambada": "meta", "syntax": "meta"}  # R's non-reference level
# domain, analysis, the paper's statistic and its printed value (seeds/002 sections 4.1-4.2)
PRINTED = (
    ("digit_mat", "size", "(1)", "z", 2.631, "p = 0.009"),
    ("crt", "size", "(1)", "z", None, "not significant (no statistic printed)"),
    ("syntax", "size", "(1)", "z", 1.995, "p = 0.0461"),
    ("lambada", "size", "(2)", "t", 7.654, "p = 0.005"),
    ("digit_mat", "training", "(3)", "z", 2.639, "p = 0.008"),
    ("lambada", "training", "(4)", "t", 24.41, "p < 0.0001"),
)


# what the authors' own R summaries (jennhu/lm-task-demands analysis/lmers/*.txt) say about each fit
AUTHORS_FIT = {("digit_mat", "size"): "boundary (singular) fit", ("crt", "size"): "boundary (singular) fit",
               ("syntax", "size"): "boundary (singular) fit", ("lambada", "size"): "boundary (singular) fit",
               ("digit_mat", "training"): "glm (no random effects)", ("lambada", "training"): "lm (no random effects)"}


# the fixed effects the authors' own summaries print (jennhu/lm-task-demands analysis/lmers/<domain>_lmer_size.txt):
# estimate, SE, statistic, as printed
AUTHORS_FIXED = {
    "digit_mat": {"(Intercept)": (-0.001911, 0.030022, -0.064), "model_n_params_log": (0.643993, 0.102658, 6.273),
                  "eval_methodmc": (0.657189, 0.051557, 12.747),
                  "model_n_params_log:eval_methodmc": (-0.279979, 0.106403, -2.631)},
    "crt": {"(Intercept)": (-3.9373, 0.3063, -12.855), "model_n_params_log": (1.4848, 0.6046, 2.456),
            "eval_methodmc": (2.4528, 0.6089, 4.029), "model_n_params_log:eval_methodmc": (-1.0015, 0.6127, -1.635)},
    "syntax": {"(Intercept)": (1.67469, 0.09067, 18.471), "model_n_params_log": (0.14072, 0.11178, 1.259),
               "eval_methodmeta": (-2.17708, 0.30528, -7.132),
               "model_n_params_log:eval_methodmeta": (1.09493, 0.54889, 1.995)},
    "lambada": {"(Intercept)": (-1.8430, 0.1119, -16.470), "model_n_params_log": (0.6539, 0.1214, 5.387),
                "eval_methodmeta": (-4.9230, 0.5721, -8.605),
                "model_n_params_log:eval_methodmeta": (1.8368, 0.2400, 7.654)},
}


def authors_fixed_table(fits: list) -> pd.DataFrame:
    """Every fixed effect of the paper's four size models beside the authors' printed one."""

    by = {f.domain: f for f in fits if f.analysis == "size" and f.label.startswith("paper") and f.fit is not None}
    rows = []
    for domain, terms in AUTHORS_FIXED.items():
        f = by.get(domain)
        if f is None:
            continue
        for term, (est, se, stat) in terms.items():
            c = f.fit.coef(term)
            digits = decimals(est)
            rows.append({"domain": LABEL[domain], "term": term, "authors_estimate": est,
                         "twinlab_estimate": c["estimate"], "difference": c["estimate"] - est,
                         "matches_printed_digits": "yes" if round(c["estimate"], digits) == est else "no",
                         "authors_se": se, "twinlab_se": c["se"],
                         "twinlab_se_hessian_free": c.get("se_hessian_free", np.nan),
                         "authors_statistic": stat, "twinlab_statistic": c["z"], "fit_status": f.fit.status})
    return pd.DataFrame(rows)


def outcome(domain: str) -> str:
    return "response_correct" if BINARY[domain] else "logprob"


def interaction(domain: str, x: str) -> str:
    return f"{x}:eval_method{LEVEL[domain]}"


def model_frame(rows: pd.DataFrame, domain: str, training: bool = False) -> pd.DataFrame:
    """The columns of the authors' long CSVs that the models use, built from released.py's rows."""
    d = pd.DataFrame({"model_family": rows["family"].astype(str), "eval_method": rows["method"].astype(str),
                      "item": rows["task"].astype(str) + ":" + rows["item"].astype(str),
                      "model": rows["model"].astype(str)})
    d[outcome(domain)] = rows["correct" if BINARY[domain] else "logprob"].astype(float).to_numpy()
    if training:
        d["training_step_log"] = np.log10(rows["training_step"].astype(float).to_numpy())
    else:
        d["model_n_params_log"] = np.log10(rows["n_params_b"].astype(float).to_numpy())
    d[f"eval_method{LEVEL[domain]}"] = (d["eval_method"] == LEVEL[domain]).astype(float)  # numeric, for `||`
    return d


def formula(domain: str, training: bool = False, random: str | None = "full", fixed_family: bool = False) -> str:
    x = "training_step_log" if training else "model_n_params_log"
    f = f"{outcome(domain)} ~ {x}*eval_method"
    if fixed_family:
        f += " + model_family"
    if random == "full":
        f += f" + ({x}*eval_method | model_family)"
    elif random:
        f += f" + {random}"
    return f


def reduced_structures(domain: str) -> list[str]:
    """By-family random effects from the richest to the simplest (numeric method indicator so `||` removes
    every correlation)."""
    m = f"eval_method{LEVEL[domain]}"
    return [f"(1 + model_n_params_log + {m} + model_n_params_log:{m} || model_family)",
            f"(1 + {m} | model_family)", f"(1 + {m} || model_family)", "(1 | model_family)"]


@dataclass
class Fit:
    domain: str
    analysis: str  # size | training
    label: str  # "paper: equation (1)" | "sensitivity: ..."
    formula: str
    fit: object | None  # analysis.stats.mixed.MixedFit
    error: str = ""
    term: str = ""  # the size x method (or step x method) interaction
    row_order: dict | None = None  # analysis.stats.mixed.row_order_sensitivity of the term (the paper's fits)


def _fit(domain: str, data: pd.DataFrame, f: str, mixed: bool, group: str = "model_family"):
    if mixed:
        return fit_glmer(data, f, group=group) if BINARY[domain] else fit_lmer(data, f, group=group)
    return fit_fixed(data, f, binomial=BINARY[domain])


def run_fit(domain: str, analysis: str, label: str, data: pd.DataFrame, f: str, mixed: bool,
            group: str = "model_family") -> Fit:

    term = interaction(domain, "training_step_log" if analysis == "training" else "model_n_params_log")
    try:
        return Fit(domain, analysis, label, f, _fit(domain, data, f, mixed, group), term=term)
    except MixedModelError as exc:
        return Fit(domain, analysis, label, f, None, str(exc), term)


def paper_fit(domain: str, data: pd.DataFrame, training: bool = False) -> Fit:
    if training:
        eq = "(3)" if BINARY[domain] else "(4)"
        return run_fit(domain, "training", f"paper: equation {eq}", data, formula(domain, True, None), mixed=False)
    eq = "(1)" if BINARY[domain] else "(2)"
    return run_fit(domain, "size", f"paper: equation {eq}", data, formula(domain), mixed=True)


def row_order_seeds(n_orders: int) -> tuple[int, ...]:
    """The shuffle seeds of n_orders row orders (as read, reversed, then shuffles): seeds 1, 2, ... as
    analysis.stats.mixed.ROW_ORDER_SEEDS (1, 2, 3) for the default 5, so a smaller run's orders are a prefix of it."""
    return tuple(range(1, max(n_orders - 2, 0) + 1))


def add_row_order(fit: Fit, data: pd.DataFrame, n_orders: int = 5) -> Fit:
    """The paper's fit refitted in n_orders - 1 more row orders (reversed, then seeded shuffles;
    analysis.stats.mixed.row_order_sensitivity): the range of its statistic and log-likelihood, stored on the Fit."""

    if fit.fit is None or n_orders < 2:
        return fit
    training = fit.analysis == "training"
    mixed = not training
    fit.row_order = row_order_sensitivity(lambda d: _fit(fit.domain, d, fit.formula, mixed), data, fit.term,
                                          original=fit.fit, seeds=row_order_seeds(n_orders))
    return fit


def sensitivity(domain: str, data: pd.DataFrame, progress=None) -> list[Fit]:
    """(a) simpler by-family random effects until one is supported; (b) family fixed; (c) + item intercepts."""
    out = []
    for k, re_ in enumerate(reduced_structures(domain)):
        if progress:
            progress(f"{domain}: random effects {re_}")
        fit = run_fit(domain, "size", f"(a{k + 1}) simpler random effects", data,
                      formula(domain, random=re_), mixed=True)
        out.append(fit)
        if fit.fit is not None and fit.fit.status == "ok":
            fit.label += ": the richest the data support"
            break
    if progress:
        progress(f"{domain}: family as a fixed effect")
    out.append(run_fit(domain, "size", "(b) family as a fixed effect", data,
                       formula(domain, random=None, fixed_family=True), mixed=False))
    if progress:
        progress(f"{domain}: family fixed, items random")
    out.append(run_fit(domain, "size", "(c) family fixed, items random", data,
                       formula(domain, random="(1 | item)", fixed_family=True), mixed=True, group="item"))
    return out


def fits_table(fits: list[Fit]) -> pd.DataFrame:
    """Every coefficient of every fit, with the fit's diagnostics on each row."""
    rows = []
    for f in fits:
        base = {"domain": f.domain, "analysis": f.analysis, "fit": f.label, "formula": f.formula}
        if f.fit is None:
            rows.append({**base, "status": "failed", "messages": f.error})
            continue
        m = f.fit
        diag = {"n_obs": m.n_obs, "status": m.status, "converged": m.converged, "singular": m.singular,
                "boundary": getattr(m, "boundary", m.singular),
                "boundary_reasons": "; ".join(getattr(m, "boundary_reasons", [])),
                "optimizer": m.optimizer, "aic": m.aic, "bic": m.bic, "loglik": m.loglik,
                "messages": "; ".join(m.messages)}
        for c in m.coefficients:
            rows.append({**base, "term": c["term"], "estimate": c["estimate"], "se": c["se"],
                         "statistic": c.get("statistic", "z"), "value": c["z"], "df": c.get("df", float("nan")),
                         "p": c["p"], "ci_low": c["ci_low"], "ci_high": c["ci_high"],
                         "se_hessian_free": c.get("se_hessian_free", float("nan")),
                         "z_hessian_free": c.get("z_hessian_free", float("nan")), **diag})
    return pd.DataFrame(rows)


def random_effects_table(fits: list[Fit]) -> pd.DataFrame:
    rows = []
    for f in fits:
        if f.fit is None:
            continue
        for r in f.fit.random_effects:
            rows.append({"domain": f.domain, "fit": f.label, **r})
    return pd.DataFrame(rows)


def decimals(value: float) -> int:
    s = repr(float(value))
    return len(s.split(".")[1]) if "." in s else 0


def paper_table(fits: list[Fit]) -> pd.DataFrame:
    """The paper's printed statistic beside twinlab's, whether it matches to the printed digits, and the fit's
    diagnostics next to it."""

    by = {(f.domain, f.analysis): f for f in fits if f.label.startswith("paper")}
    rows = []
    for domain, analysis, eq, stat, printed, ptext in PRINTED:
        f = by.get((domain, analysis))
        row = {"domain": LABEL[domain], "analysis": "model size" if analysis == "size" else "training time (OLMo-7B)",
               "equation": eq, "paper": (f"{stat} = {printed}, {ptext}" if printed is not None else ptext),
               "authors_fit": AUTHORS_FIT.get((domain, analysis), "")}
        if f is None or f.fit is None:
            rows.append({**row, "twinlab": f.error if f else "not fitted (no data)", "matches_printed_digits": "",
                         "fit_status": "failed" if f else ""})
            continue
        c = f.fit.coef(f.term)
        match = "" if printed is None else ("yes" if round(abs(c["z"]), decimals(printed)) == printed else "NO")
        p = c["p"]
        ptxt = f"p = {p:.3g}" if p >= 1e-4 else "p < 0.0001"
        df = (f", df = {c['df']:.2f}"
              if np.isfinite(c.get("df", np.nan)) and not BINARY[domain] and analysis == "size" else "")
        ro = f.row_order or {}
        rows.append({**row, "twinlab": f"{c.get('statistic', 'z')} = {c['z']:.4g}{df}, "
                                       f"{ptxt}", "estimate": c["estimate"],
                     "se": c["se"], "term": f.term, "matches_printed_digits": match,
                     "se_hessian_free": c.get("se_hessian_free", np.nan),
                     "z_hessian_free": c.get("z_hessian_free", np.nan),
                     "row_order_z": _range(ro, "z", 3), "row_order_z_min": ro.get("z_min", np.nan),
                     "row_order_z_max": ro.get("z_max", np.nan),
                     "row_order_z_hessian_free": _range(ro, "z_hessian_free", 3),
                     "row_order_loglik": _range(ro, "loglik", 1), "row_order_loglik_min": ro.get("loglik_min", np.nan),
                     "row_order_loglik_max": ro.get("loglik_max", np.nan), "row_orders": ro.get("n_orders", 0),
                     "fit_status": f.fit.status, "singular": f.fit.singular, "converged": f.fit.converged,
                     "boundary": getattr(f.fit, "boundary", f.fit.singular),
                     "boundary_reasons": "; ".join(getattr(f.fit, "boundary_reasons", [])),
                     "verdict": verdict(stat, printed, c, f.fit, ro), "messages": "; ".join(f.fit.messages)})
    return pd.DataFrame(rows)


def _range(ro: dict, key: str, digits: int) -> str:
    lo, hi = ro.get(f"{key}_min", np.nan), ro.get(f"{key}_max", np.nan)
    if not ro or not (np.isfinite(lo) and np.isfinite(hi)):
        return ""
    return f"{lo:.{digits}f}" if round(lo, digits) == round(hi, digits) else f"{lo:.{digits}f} to {hi:.{digits}f}"


def verdict(stat: str, printed: float | None, c: dict, fit, ro: dict) -> str:
    """The paper's printed statistic against twinlab's, in words: reproduced or not, interpretable or not,
    and whether it depends on the row order."""
    value = abs(c["z"])
    parts = []
    if printed is None:
        parts.append(f"the paper prints no statistic; twinlab's |{stat}| = {value:.3f}")
    elif round(value, decimals(printed)) == printed:
        parts.append(f"the printed {stat} = {printed} is reproduced ({value:.4g})")
    else:
        parts.append(f"the printed {stat} = {printed} is not reproduced in this row order ({stat} = {c['z']:.4g})")
    if ro and np.isfinite(ro.get("z_min", np.nan)):
        lo, hi = sorted((abs(ro["z_min"]), abs(ro["z_max"])))
        if round(hi - lo, 3) == 0:
            parts.append(f"the same in all {ro['n_orders']} row orders")
        else:
            within = printed is not None and round(lo, 3) <= printed <= round(hi, 3)
            parts.append(f"|{stat}| moves from {lo:.3f} to {hi:.3f} over {ro['n_orders']} row orders"
                         f" (log-likelihood {_range(ro, 'loglik', 2)})"
                         + (f"; the printed {printed} lies in that range" if within else
                            f"; the printed {printed} is outside it (a Wald SE at a boundary optimum belongs to one "
                            "row order)"
                            if printed is not None else ""))
    hf = c.get("z_hessian_free", np.nan)
    if np.isfinite(hf):
        hf_range = _range(ro, "z_hessian_free", 3) if ro else ""
        parts.append("Hessian-free z = "
                     f"{hf:.3f}" + (f" (row orders: {hf_range})" if hf_range and " to " in hf_range else
                                                       " in every row order" if hf_range else ""))
    if fit.status != "ok":
        why = "; ".join(getattr(fit, "boundary_reasons", [])) or fit.status
        parts.append(f"do not interpret: the fit is {fit.status.split(',')[0]} ({why})")
    else:
        parts.append("the fit is interpretable (converged, not at the boundary)")
    return "; ".join(parts) + "."


def sensitivity_summary(fits: list[Fit]) -> pd.DataFrame:
    """One row per size fit: the interaction under the paper's model and each sensitivity model."""
    rows = []
    for f in fits:
        if f.analysis != "size":
            continue

        row = {"domain": LABEL[f.domain], "fit": f.label, "formula": f.formula}
        if f.fit is None:
            rows.append({**row, "status": "failed", "messages": f.error})
            continue
        c = f.fit.coef(f.term)
        rows.append({**row, "estimate": c["estimate"], "se": c["se"], "statistic": c.get("statistic", "z"),
                     "value": c["z"], "p": c["p"], "z_hessian_free": c.get("z_hessian_free", float("nan")),
                     "status": f.fit.status, "aic": f.fit.aic, "loglik": f.fit.loglik,
                     "messages": "; ".join(f.fit.messages)})
    return pd.DataFrame(rows)


def sensitivity_verdicts(sens: pd.DataFrame) -> list[str]:
    """Per domain: does the interaction keep its sign under every fit, and what does the richest supported
    random-effects structure say."""
    out = []
    if sens.empty or "estimate" not in sens:
        return out
    for dom, g in sens[sens["estimate"].notna()].groupby("domain", sort=False):
        signs = set(np.sign(g["estimate"].astype(float)))
        best = g[g["fit"].astype(str).str.contains("richest the data support")]
        line = (f"{dom}: the interaction has {'the same sign' if len(signs) == 1 else 'different signs'} "
                f"under all {len(g)} fits")
        if best.empty:
            line += "; no simpler random-effects structure gave a fit that is neither singular nor unconverged"
        else:
            b = best.iloc[0]
            line += (f"; under the richest random effects the data support, {b['statistic']} = "
                     f"{float(b['value']):.3f}, "
                     f"p = {float(b['p']):.3g}")
        out.append(line + ".")
    return out


def refusal(domain: str, data: pd.DataFrame, training: bool = False) -> str:
    """Why equation (1)-(4) cannot be fitted meaningfully on these rows ('' when it can): the size (or step)
    axis needs two values, the by-family random effects of (1)-(2) two families, and the outcome must vary.
    A refusal names what is missing, so that no number is printed for a model that cannot estimate it."""
    x = "training_step_log" if training else "model_n_params_log"
    what = "training steps" if training else "model sizes"
    if data.empty:
        return "no rows"
    xs = sorted(set(np.round(data[x].astype(float), 9)))
    if len(xs) < 2:
        got = (f"step {10 ** xs[0]:.0f}" if training else f"{10 ** xs[0] * 1e9:,.0f} parameters") if xs else "none"
        return (f"needs {'checkpoints' if training else 'models'} of at least 2 {what} (got 1: {got}) to estimate "
                f"the {what[:-1]} x method interaction")
    methods = sorted(data["eval_method"].unique())
    if len(methods) < 2:
        return f"needs both evaluation methods (got {', '.join(methods)})"
    if not training:
        fams = sorted(data["model_family"].unique())
        if len(fams) < 2:
            return (f"its random effects are by model family: needs models of at least 2 families (got 1: {fams[0]}); "
                    "name each model's family in a --models file")
    y = data[outcome(domain)].astype(float)
    if y.nunique() < 2:
        return f"the outcome does not vary (every {outcome(domain)} is {y.iloc[0]:g})"
    return ""


def checked_fit(domain: str, data: pd.DataFrame, training: bool, label: str) -> Fit:
    """paper_fit, or a Fit with no fit and the refusal as its error."""
    why = refusal(domain, data, training)
    if why:
        eq = ("(3)" if BINARY[domain] else "(4)") if training else ("(1)" if BINARY[domain] else "(2)")
        x = "training_step_log" if training else "model_n_params_log"
        return Fit(domain, "training" if training else "size", label,
                   formula(domain, training, None if training else "full"),
                   None, f"not fitted: equation {eq} {why}", interaction(domain, x))
    f = paper_fit(domain, data, training)
    f.label = label
    return f


def lab_fits_table(fits: list[Fit]) -> pd.DataFrame:
    """One row per fit of the user's models: the interaction with its diagnostics, or the refusal."""

    rows = []
    for f in fits:
        row = {"domain": LABEL[f.domain], "analysis": f.analysis, "models": f.label, "formula": f.formula}
        if f.fit is None:
            rows.append({**row, "status": "refused" if f.error.startswith("not fitted") else "failed",
                         "messages": f.error})
            continue
        c = f.fit.coef(f.term)
        rows.append({**row, "term": f.term, "estimate": c["estimate"], "se": c["se"],
                     "statistic": c.get("statistic", "z"),
                     "value": c["z"], "p": c["p"], "signif": significance_mark(c["p"], f.fit.status),
                     "z_hessian_free": c.get("z_hessian_free", np.nan), "n_obs": f.fit.n_obs, "status": f.fit.status,
                     "converged": f.fit.converged, "singular": f.fit.singular,
                     "boundary_reasons": "; ".join(getattr(f.fit, "boundary_reasons", [])),
                     "messages": "; ".join(f.fit.messages)})
    return pd.DataFrame(rows)
