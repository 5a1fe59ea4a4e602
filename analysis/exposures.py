"""Learning over exposures (seeds/000 Figure 6c, Figure C2/C3, Tables C2/C3).

Base model (Table C2):      error ~ exposures + (1 | subject)
Extended model (Table C3):  error ~ exposures + factor(session) + total_trials + (1 + exposures | subject)
(`total_trials` = trials completed before this one / 100, so its coefficient is per 100 trials;
session is a factor with session 1 as the reference, dropped when the data hold a single session.
With session as a number (1, 2) the intercept sits at an impossible session 0, far from the data,
and on the full Lakretz release that fit does not converge (z = 297); as a factor it is the same
model, centred on session 1, and converges.) Both are fitted on the same rows --
the focus cell's post-training violation trials with an answer -- and compared by AIC, BIC and a
likelihood-ratio test. `exposures` is defined in analysis/prepare.py.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from analysis.logistic import logistic_fit
from analysis.prepare import scored_rows

BASE_FORMULA = "error ~ exposures + (1|subject)"
CELL = ["group", "subject_kind", "structure", "condition", "violation_position"]


@dataclass(frozen=True)
class Focus:
    """The design cell a mixed model is fitted on (seeds/000: long-nested PSP, inner violation)."""

    structure: str = "long_nested"
    condition: str = "PSP"
    violation_position: str = "inner"

    @classmethod
    def parse(cls, text: str) -> "Focus":
        parts = text.split(":")
        if len(parts) != 3 or parts[2] not in ("inner", "outer"):
            raise ValueError(f"focus {text!r} must be STRUCTURE:CONDITION:inner|outer, e.g. long_nested:PSP:inner")
        return cls(*parts)

    def __str__(self) -> str:
        return f"{self.structure}:{self.condition}:{self.violation_position}"


def focus_rows(df: pd.DataFrame, focus: Focus, groups: list[str] | None = None) -> pd.DataFrame:
    """Model data: one row per answered post-training trial of the focus cell."""
    r = scored_rows(df)
    r = r[(r["structure"] == focus.structure) & (r["condition"] == focus.condition)
          & (r["violation_position"] == focus.violation_position)]
    if groups is not None:
        r = r[r["group"].isin(groups)]
    return model_rows(r)


def extended_formula(data: pd.DataFrame) -> str:
    terms = ["exposures"] + (["factor(session)"] if data["session"].nunique() > 1 else []) + ["total_trials"]
    return "error ~ " + " + ".join(terms) + " + (1 + exposures|subject)"


def exposure_points(df: pd.DataFrame, scope: str = "cell") -> pd.DataFrame:
    """Figure 6c/C2 (scope 'cell') or C3 (scope 'structure'): mean error by number of earlier exposures."""
    col = "exposures" if scope == "cell" else "exposures_structure"
    rows = scored_rows(df, post_training=(scope == "cell"))
    if rows.empty:
        return pd.DataFrame(columns=CELL + ["exposures", "n", "error_rate"])
    t = rows.groupby(CELL + [col], observed=True)["error"].agg(n="size", error_rate="mean").reset_index()
    return t.rename(columns={col: "exposures"})


def exposure_fits(df: pd.DataFrame, scope: str = "cell") -> pd.DataFrame:
    """Per-cell logistic curves (no random effects) for the grid figure: error ~ exposures."""
    col = "exposures" if scope == "cell" else "exposures_structure"
    rows = scored_rows(df, post_training=(scope == "cell"))
    out = [dict(zip(CELL, k)) | logistic_fit(g[col].astype(float), g["error"].astype(float))
           for k, g in rows.groupby(CELL, observed=True)]
    return pd.DataFrame(out)


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


def _usable(data: pd.DataFrame) -> str | None:
    if data.empty:
        return "no trials in the focus cell"
    if data["subject"].nunique() < 2:
        return "fewer than 2 subjects"
    if data["error"].nunique() < 2:
        return "no variation in the outcome (all correct or all errors)"
    if data["exposures"].nunique() < 2:
        return "every trial has the same number of exposures"
    return None


def fit_exposure_models(df: pd.DataFrame, focus: Focus, group: str, extended: bool = True) -> ExposureModels:
    """Table C2 and C3 models for one group, with AIC/BIC and the likelihood-ratio test."""
    return fit_models_on(focus_rows(df, focus, [group]), group, str(focus), extended)


def fit_models_on(data: pd.DataFrame, group: str, focus: str, extended: bool = True) -> ExposureModels:
    """The base and extended models on rows shaped as `focus_rows` makes them (any design's focus cell:
    analysis/learning.py builds them from a general design's cells)."""
    from analysis.mixed import MixedModelError, fit_glmer, likelihood_ratio

    res = ExposureModels(label=group, focus=focus, n_rows=len(data), n_subjects=data["subject"].nunique())
    why = _usable(data)
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


def fit_joint_model(df: pd.DataFrame, focus: Focus, model_group: str) -> dict:
    """Humans and one model group together: error ~ exposures * subject_kind + (1|subject)."""
    return fit_joint_on(focus_rows(df, focus, ["human", model_group]), model_group)


def fit_joint_on(data: pd.DataFrame, model_group: str) -> dict:
    """The joint model on people's and one model group's focus rows (as `focus_rows` shapes them)."""
    from analysis.mixed import MixedModelError, fit_glmer

    formula = JOINT_FORMULA
    out = {"model_group": model_group, "formula": formula, "n_rows": len(data)}
    per_kind = data.groupby("subject_kind")["subject"].nunique()
    if len(per_kind) < 2 or per_kind.min() < 2:
        out["skipped"] = "needs at least 2 human and 2 model subjects in the focus cell"
        return out
    why = _usable(data)
    if why:
        out["skipped"] = why
        return out
    try:
        out["fit"] = fit_glmer(data, formula).to_dict()
    except MixedModelError as exc:
        out["skipped"] = str(exc)
    return out


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
