"""Learning over exposures (seeds/000 Figure 6c, Figure C2/C3, Tables C2/C3).

Base model (Table C2):      error ~ exposures + (1 | subject)
Extended model (Table C3):  error ~ exposures + factor(session) + total_trials + (1 + exposures | subject)
(`total_trials` = trials completed before this one / 100, so its coefficient is per 100 trials;
session is a factor with session 1 as the reference, dropped when the data hold a single session.
With session as a number (1, 2) the intercept sits at an impossible session 0, far from the data,
and on the full Lakretz release that fit does not converge (z = 297); as a factor it is the same
model, centred on session 1, and converges.) Both are fitted on the same rows --
the focus cell's post-training violation trials with an answer -- and compared by AIC, BIC and a
likelihood-ratio test. `exposures` is defined in analysis/load/prepare.py (the Lakretz tables) and
analysis/load/rows.py (any design); the rows come from analysis/learning/general.py (`focus_data`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import pandas as pd

from analysis.stats.mixed import MixedModelError, fit_glmer, likelihood_ratio

BASE_FORMULA = "error ~ exposures + (1|subject)"


def extended_formula(data: pd.DataFrame) -> str:
    terms = ["exposures"] + (["factor(session)"] if data["session"].nunique() > 1 else []) + ["total_trials"]
    return "error ~ " + " + ".join(terms) + " + (1 + exposures|subject)"


@dataclass
class ExposureModels:
    """Base and extended fits for one group (or a joint model over subject kinds)."""

    label: str
    focus: str
    n_rows: int
    n_subjects: int
    base: dict | None = None
    extended: dict | None = None
    comparison: dict | None = None
    joint: dict | None = None
    skipped: list[str] = field(default_factory=list)


def usable(data: pd.DataFrame) -> str | None:
    if data.empty:
        return "no trials in the focus cell"
    if data["subject"].nunique() < 2:
        return "fewer than 2 subjects"
    if data["error"].nunique() < 2:
        return "no variation in the outcome (all correct or all errors)"
    if data["exposures"].nunique() < 2:
        return "every trial has the same number of exposures"
    return None


def fit_models_on(data: pd.DataFrame, group: str, focus: str, extended: bool = True) -> ExposureModels:
    """The base and extended models on one group's rows of a focus cell (`model_rows`; analysis/learning/general.py
    `focus_data` builds them from any design's cells, the Lakretz ones included)."""
    res = ExposureModels(label=group, focus=focus, n_rows=len(data), n_subjects=data["subject"].nunique())
    why = usable(data)
    if why:
        res.skipped.append(f"{group}: mixed model not fitted ({why})")
        return res
    try:
        base = fit_glmer(data, BASE_FORMULA)
        res.base = base.to_dict()
    except MixedModelError as exc:
        res.skipped.append(f"{group}: {exc}")
        return res
    if extended:
        try:
            ext = fit_glmer(data, extended_formula(data))
            res.extended = ext.to_dict()
            res.comparison = likelihood_ratio(base, ext)
        except MixedModelError as exc:
            res.skipped.append(f"{group}: {exc}")
    return res


JOINT_FORMULA = "error ~ exposures * subject_kind + (1|subject)"


def fit_joint_on(data: pd.DataFrame, model_group: str) -> dict:
    """The joint model on people's and one model group's focus rows (`model_rows`)."""
    formula = JOINT_FORMULA
    out = {"model_group": model_group, "formula": formula, "n_rows": len(data)}
    per_kind = data.groupby("subject_kind")["subject"].nunique()
    if len(per_kind) < 2 or per_kind.min() < 2:
        out["skipped"] = "needs at least 2 human and 2 model subjects in the focus cell"
        return out
    why = usable(data)
    if why:
        out["skipped"] = why
        return out
    try:
        out["fit"] = fit_glmer(data, formula).to_dict()
    except MixedModelError as exc:
        out["skipped"] = str(exc)
    return out


def fit_groups(data: pd.DataFrame, groups: list[str], focus: str,
               advance: Callable[[], None] = lambda: None) -> tuple[dict[str, ExposureModels], list[dict]]:
    """The base and extended models of each group on its focus rows (`model_rows`), then, with people among
    the groups, the joint model of people with each model group; `advance` after each fit (progress)."""
    fits = {}
    for g in groups:
        fits[g] = fit_models_on(data[data["group"] == g].reset_index(drop=True), g, focus)
        advance()
    joint = []
    if "human" in groups:
        for g in [g for g in groups if g != "human"]:
            joint.append(fit_joint_on(data[data["group"].isin(["human", g])].reset_index(drop=True), g))
            advance()
    return fits, joint


def model_rows(r: pd.DataFrame) -> pd.DataFrame:
    """The exposure models' columns from scored rows (one shape for the Lakretz and the general focus cells)."""
    return pd.DataFrame({
        "error": r["error"].astype(float).astype(int),
        "exposures": r["exposures"].astype(float),
        "session": r["session"].astype(float),
        "total_trials": r["trials_before"].astype(float) / 100.0,
        "subject": r["subject_key"].astype(str),
        "subject_kind": r["subject_kind"].astype(str),
        "group": r["group"].astype(str),
    }).reset_index(drop=True)
