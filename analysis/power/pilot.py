"""The pilot of a power simulation: loaded as `analyze` loads it, one group's rows fitted, the parameters read.

Why refuse some pilot fits: an unconverged or degenerate fit's estimates are not parameters of anything, so
simulating from them would give a number that means nothing. A boundary (singular) fit is used with a
warning: its zero variance is simulated as zero (state one with --sd GROUP=SD). Every check that needs only
the data (the term's coefficients, subjects against lists, --effect on a many-level factor) runs before R.
"""
from __future__ import annotations

import itertools
from typing import Callable

import pandas as pd

from analysis.power.design import DesignError, study_rows, template
from analysis.power.settings import (
    MAX_ROWS,
    MODEL_LABEL,
    OBSERVED_POWER,
    Pilot,
    PowerInputError,
    PowerSettings,
    pilot_rows,
)
from analysis.power.sim import Truth
from analysis.power.terms import TermError, check_effect, resolve
from analysis.stats import formula as fm
from analysis.stats.formula_fit import _without_one_level_groups, fit_formula, prepare_data
from analysis.stats.mixed import BOUNDARY_REL_SD, NOT_CONVERGED, MixedModelError, conditional_sds, degenerate_warnings
from analysis.stats.optimizer_check import check_optimizers


def _coded(f: fm.Formula, rows: pd.DataFrame, s: PowerSettings, declared: dict):
    try:
        return prepare_data(rows, f, s.family, declared)
    except fm.FormulaError as exc:
        raise PowerInputError(str(exc)) from None


def _coefficient_names(coded: fm.Formula) -> list[str]:
    """The fixed-effect coefficients R will name (main effects and interactions of the coded columns), read
    without R: the formula's fixed part expanded by the grammar's operators."""
    def terms(node) -> list[tuple[str, ...]]:
        if node is None:
            return []
        if isinstance(node, fm.Paren):
            return terms(node.inner)
        if isinstance(node, fm.BinOp) and node.op in "+-" and len(node.op) == 1:
            right = terms(node.right)
            return terms(node.left) + ([] if node.op == "-" else right)
        if isinstance(node, fm.BinOp) and node.op == "*":
            a, b = terms(node.left), terms(node.right)
            return a + b + [x + y for x, y in itertools.product(a, b)]
        if isinstance(node, fm.BinOp) and node.op == ":":
            return [x + y for x, y in itertools.product(terms(node.left), terms(node.right))]
        if isinstance(node, fm.Name):
            return [(node.name,)]
        if isinstance(node, fm.Num):
            return []
        return [(node.r(),)]

    seen = dict.fromkeys(":".join(t) for t in terms(coded.fixed_tree))
    return ["(Intercept)"] + list(seen)


def build_pilot(s: PowerSettings, f: fm.Formula, df: pd.DataFrame, declared: dict,
                log: Callable[[str], None]) -> Pilot:
    """Check against the data, fit the pilot, read the truth (module docstring); `declared`: the design's
    factors and their levels (api.factors)."""
    rows, group, kind = pilot_rows(df, s.group)
    try:
        fm.check_columns(f, list(rows.columns))
    except fm.FormulaError as exc:
        raise PowerInputError(str(exc)) from None
    other = [g for g in f.groups if g not in ("subject_id", "item")]
    if other:
        raise PowerInputError(f"--formula: random effects by {other[0]!r}; a power simulation extends subjects "
                              "(subject) and items (item) and can simulate only those grouping columns")
    _, coded, codings, family, _, _ = _coded(f, rows, s, declared)
    expandable = not any(isinstance(n, fm.BinOp) and n.op in ("^", "/", "%in%") for n in fm.walk(coded.fixed_tree)) \
        if coded.fixed_tree is not None else True
    if expandable:  # before R; otherwise after the pilot fit, against R's own coefficient names
        _tested(s, _coefficient_names(coded), codings)
    try:
        used_rows = rows.dropna(subset=[v for v in f.predictors if v in rows.columns])  # the rows a fit can use
        tpl = template(used_rows, list(f.predictors))
    except DesignError as exc:
        raise PowerInputError(str(exc)) from None
    _check_rows(s, tpl)
    if min(s.subjects) < len(tpl.lists) and tpl.list_source == "the list column":
        raise PowerInputError(f"--subjects {min(s.subjects)}: fewer subjects than the design's {len(tpl.lists)} lists "
                              f"(read from {tpl.list_source}); every list must be run at least once")
    log(f"pilot: {len(rows)} trials of {rows['subject_id'].nunique()} subject(s), {len(tpl.items)} items, "
        f"{len(tpl.lists)} list(s), group {group or '(one group)'}; fitting {f.text}")
    fit, used, coded_fit = _fit(rows, f, s, declared)
    used, coded_fit = _stated_groups(s, used, coded_fit)
    tested = _tested(s, [c["term"] for c in fit.coefficients], codings)
    truth, warnings = _truth(fit, family, tested, s, rows)
    zero = zero_sd_sentences([r for r in fit.random_effects if r["group"] != "Residual"], s.sd)
    warnings += zero + tpl.notes
    if kind == "model":
        warnings.insert(0, f"the pilot is model subjects ({group}): {MODEL_LABEL}")
    return Pilot(fit, coded_fit, used, truth, tested, tpl, declared, group, kind, warnings, zero)


ZERO_SD = 1e-4  # an SD below this is a variance estimated at the boundary (0), as lme4's isSingular reads theta
ROUNDING = ("the pilot's estimates as fitted (the fixed effects also start each refit, so they are not rounded: the "
            "command fixes the process's layout, rules.layout, so they are the same bits in every run), except an SD "
            f"at the boundary (below {ZERO_SD:g}, or below {BOUNDARY_REL_SD:g} x the largest SD of the fit: the "
            "boundary rule), simulated as 0; stated values (--effect, --sd) as given")


def near_zero_sds(rfx: list[dict]) -> set[tuple[str, str]]:
    """(group, variable) of each random-effect SD of the pilot at the boundary: below ZERO_SD, or, given the terms
    before it, below BOUNDARY_REL_SD times the fit's largest (analysis/stats/mixed.conditional_sds, the boundary
    rule's third clause). Such an SD is 0 up to the optimiser's last bits (0 in one process, 8e-05 in another)."""
    out = {(str(r["group"]), str(r.get("var1") or r["term"][4:])) for r in rfx
           if str(r["term"]).startswith("sd__") and float(r["estimate"]) < ZERO_SD}
    cond = conditional_sds(rfx)
    top = max((v for _, _, v in cond), default=0.0)
    if top > 0 and len(cond) > 1:
        out |= {(g, n) for g, n, v in cond if v < BOUNDARY_REL_SD * top}
    return out


def zero_sd_sentences(rfx: list[dict], stated: dict) -> list[str]:
    """What is true of each SD the simulation takes as 0 from the pilot (a boundary fit, near_zero_sds): the
    pilot is the cause of the simulated studies' boundary fits, not their size, and --sd states one; an SD given
    with --sd is never among them."""
    stated_cols = {fm.ALIASES.get(g, g) for g in stated}
    near = near_zero_sds(rfx)
    out = []
    for r in rfx:
        col, var = str(r["group"]), str(r.get("var1") or r["term"][4:])
        if not str(r["term"]).startswith("sd__") or (col, var) not in near:
            continue
        name = next((a for a, c in fm.ALIASES.items() if c == col), col)
        if var == "(Intercept)" and col not in stated_cols:
            out.append(f"the pilot's {name} SD is {float(r['estimate']):.3g} (a boundary fit), simulated as 0: "
                       f"simulated {name}s have no random intercept, so their fits sit at the boundary whatever the "
                       "size; give "
                       f"--sd {name}=X to simulate one")
        elif var != "(Intercept)":
            out.append(f"the pilot's SD of the {var} slope by {name} is {float(r['estimate']):.3g} (a boundary fit), "
                       f"simulated as 0: simulated {name}s all have the same {var} effect "
                       "(--sd states intercepts only)")
    return out


def _check_rows(s: PowerSettings, tpl) -> None:
    """The largest simulated study within MAX_ROWS trials (analysis/power/settings.py), before the pilot is fitted."""
    n_items = max(s.items) if s.items else None
    rows = study_rows(tpl, max(s.subjects), n_items)
    if rows > MAX_ROWS:
        raise PowerInputError(f"--subjects {max(s.subjects)} x --items {n_items or len(tpl.items)}: one simulated "
                              "study "
                              f"would have {rows:,} trials; at most {MAX_ROWS:,} (fewer subjects or items)")


def _stated_groups(s: PowerSettings, used: fm.Formula, coded: fm.Formula) -> tuple[fm.Formula, fm.Formula]:
    """A grouping whose random intercept is stated (--sd) but was not in the fitted structure (one level in the
    pilot, e.g. merged model copies; or simplified away) is simulated and refitted with that intercept."""
    for g in s.sd:
        col = fm.ALIASES.get(g, g)
        if col not in {r.group for r in coded.random}:
            used = used.with_random(used.random + [fm.RandomTerm(fm.Num("1"), col)])
            coded = coded.with_random(coded.random + [fm.RandomTerm(fm.Num("1"), col)])
    return used, coded


def _tested(s: PowerSettings, names: list[str], codings: list) -> list[str]:
    try:
        tested = resolve(s.term, names, codings)
        if s.effect is not None:
            check_effect(s.term, tested, codings)
    except TermError as exc:
        raise PowerInputError(str(exc)) from None
    return tested


def _fit(rows: pd.DataFrame, f: fm.Formula, s: PowerSettings, declared: dict):
    """fit_formula on the pilot rows; refuse a fit whose estimates are not parameters (module docstring)."""
    used, dropped = _without_one_level_groups(f, rows)
    try:
        fit = fit_formula(rows, used, s.family, declared)
    except (fm.FormulaError, MixedModelError) as exc:
        raise PowerInputError(f"the pilot fit failed: {exc}") from None
    degenerate = degenerate_warnings(fit.coefficients, fit.random_effects) if fit.family == "binomial" else []
    d, coded, _, _, _, _ = prepare_data(rows, used, s.family, declared)
    check = None
    if fit.status == NOT_CONVERGED and not degenerate:  # a near miss of lme4's gradient check: lme4's allFit advice
        try:
            check = check_optimizers(fit, d[[c for c in d.columns if c in set(coded.variables)]])
        except MixedModelError as exc:
            raise PowerInputError(f"the pilot fit failed: {exc}") from None
        if check is not None and not check.agreed:
            raise PowerInputError(f"the pilot fit of {f.text} is {fit.status}: {check.reason}; its estimates are not "
                                  "parameters to simulate from (simplify the formula, or a larger pilot)")
    if (fit.status == NOT_CONVERGED and check is None) or degenerate:  # degenerate whatever the status shows first
        why = "; ".join(degenerate) or "; ".join(fit.messages) or "no message"
        raise PowerInputError(f"the pilot fit of {f.text} is {'degenerate' if degenerate else fit.status} ({why}): its "
                              "estimates are not parameters to simulate from (simplify the formula; a pilot whose "
                              "answers "
                              "follow the condition exactly gives no effect size)")
    if check is not None:
        fit.messages.append(f"optimizer check: {check.reason}")
        fit.optimizer_check = check.to_dict()
    steps = [coded] + [st for _, st in fm.simpler_structures(coded)]
    chosen = next((st for st in steps if st.r_text() == fit.fitted), coded)
    keep = {r.group for r in chosen.random}
    uncoded = used.with_random([r for r in used.random if r.group in keep]) if chosen is not coded else used
    if dropped:
        fit.messages.append(f"random term(s) {', '.join(dropped)} left out: one level in the pilot")
    return fit, uncoded, chosen


def _truth(fit, family: str, tested: list[str], s: PowerSettings, rows: pd.DataFrame):
    """The parameters simulated from, and the warnings they need (observed power, zero variances)."""
    warnings = []
    beta = {c["term"]: float(c["estimate"]) for c in fit.coefficients}
    if s.effect is not None:
        beta[tested[0]] = float(s.effect)
    else:
        warnings.append(OBSERVED_POWER)
    rfx = [dict(r) for r in fit.random_effects if r["group"] != "Residual"]
    for g, v in s.sd.items():
        col = fm.ALIASES.get(g, g)
        hit = [r for r in rfx if r["group"] == col and r["term"] == "sd__(Intercept)"]
        if hit:
            hit[0]["estimate"] = float(v)
        else:
            rfx.append({"group": col, "term": "sd__(Intercept)", "estimate": float(v), "var1": "(Intercept)",
                        "var2": ""})
    sigma = next((float(r["estimate"]) for r in fit.random_effects if r["group"] == "Residual"), 1.0)
    near = near_zero_sds([r for r in fit.random_effects if r["group"] != "Residual"])
    stated_cols = {fm.ALIASES.get(g, g) for g in s.sd}
    for r in rfx:  # ROUNDING: an SD at the boundary is 0 up to the optimiser's last bits
        at_boundary = (str(r["group"]), str(r.get("var1") or r["term"][4:])) in near
        stated = r["term"] == "sd__(Intercept)" and r["group"] in stated_cols
        if not stated and r["term"].startswith("sd__") and at_boundary:
            r["estimate"] = 0.0
    check = getattr(fit, "optimizer_check", None)
    if check:  # a near miss of lme4's gradient check, refitted with its other optimizers: they agree
        warnings.append(f"the pilot fit missed lme4's gradient tolerance: {check['reason']}")
    elif fit.status != "ok":  # what is simulated of it is said by zero_sd_sentences, the stated SDs here
        stated = ", ".join(f"{g}={v:g}" for g, v in s.sd.items())
        warnings.append(f"the pilot fit is {fit.status}: {'; '.join(fit.boundary_reasons or fit.messages)}"
                        + (f"; simulated with the stated --sd {stated}" if stated else ""))
    if "subject_id" not in {r["group"] for r in rfx} and rows["subject_id"].nunique() < 2:
        warnings.append("the pilot has one subject (e.g. deterministic model copies merged): no subject variance is "
                        "simulated unless stated with --sd subject=SD")
    if fit.fallback:
        warnings.append(f"pilot fit: {fit.fallback}; the simulation fits that structure")
    return Truth(family, beta, rfx, sigma), warnings
