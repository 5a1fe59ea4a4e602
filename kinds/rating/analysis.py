"""Rating tasks (a k-point scale): distributions, mean ratings with subject and item CIs, and the people's
cumulative-link mixed model (R `ordinal::clmm`: the core's ordinal family, analysis/stats/ordinal.py, where
why an ordinal model and its diagnostics are written down).
"""
from __future__ import annotations

import json

import pandas as pd

from analysis.kind_sections import AnalysisKind, SectionArgs
from analysis.load.frames import model_frame
from analysis.measures.design_rates import rates
from analysis.report import design_figures as dfig
from analysis.report.design import CLMM_FALLBACK, F1F2, shown_rates
from analysis.stats.fit_items import fit_item
from analysis.stats.fit_items import fit_or_note as _fit_or_note
from analysis.stats.ordinal import fit_clmm

KIND = "rating"


def rating_rows(df: pd.DataFrame) -> pd.DataFrame:
    if "task" not in df.columns or "rating" not in df.columns:
        return df.iloc[0:0]
    return df[(df["task"] == KIND) & df["rating"].notna()].copy()


def distribution(d: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Counts and shares of each scale point per group x cell (wide: one column per point)."""
    if d.empty:
        return pd.DataFrame(columns=["group"] + by)
    keys = ["group"] + by
    t = d.groupby(keys + ["rating"], sort=True, observed=True, dropna=False).size().rename("n").reset_index()
    t["share"] = t["n"] / t.groupby(keys, dropna=False)["n"].transform("sum")
    wide = t.pivot_table(index=keys, columns="rating", values="share", fill_value=0.0, dropna=False)
    wide.columns = [f"share_{int(c) if float(c).is_integer() else c}" for c in wide.columns]
    n = d.groupby(keys, sort=True, observed=True, dropna=False).size().rename("n_trials")
    return wide.join(n).reset_index()


def rating_distribution(d: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """analysis.api.rating_distribution on the design's frame: the distribution of its rating trials."""
    return distribution(rating_rows(d), by)


# ---- ratings ---------------------------------------------------------------------------------
def rating_measures(r: pd.DataFrame) -> pd.DataFrame:
    """One row per rating trial and measure: humans `chosen point`; models `expected value` (the default)
    and `argmax`. Column `value` holds the number, `measure` names it."""
    parts = []
    hum = r[r["subject_kind"] != "model"]
    if len(hum):
        parts.append(hum.assign(measure="chosen point", value=hum["rating"].astype(float)))
    mod = r[r["subject_kind"] == "model"]
    if len(mod):
        if "rating_expected" in mod.columns and mod["rating_expected"].notna().any():
            e = mod[mod["rating_expected"].notna()]
            parts.append(e.assign(measure="expected value (default)", value=e["rating_expected"].astype(float)))
        parts.append(mod.assign(measure="argmax", value=mod["rating"].astype(float)))
    if not parts:
        return r.iloc[0:0].assign(measure=[], value=[])
    out = pd.concat(parts, ignore_index=True)
    out["measure"] = pd.Categorical(out["measure"], categories=list(MEASURES), ordered=True)
    return out


MEASURES = ("chosen point", "expected value (default)", "argmax")  # the order of the tables


def unused_points(r: pd.DataFrame, points: int | None = None) -> list[int]:
    """Scale points never chosen (a cumulative-link model has no threshold between two unused points)."""
    used = sorted({int(v) for v in r["rating"].dropna()})
    if not used:
        return []
    top = points or max(used)
    return [p for p in range(1, top + 1) if p not in used]


# ---- the report's section (was analysis/tasks_rating_report.py) --------------------------------------------
def rating_section(a: SectionArgs) -> None:
    """The report's rating section: distribution, means (people: the chosen point; models: expected value, the
    default, and argmax, both named) and, for people, a cumulative-link mixed model, or why none was fitted."""

    res, by, opt, out = a.res, a.by, a.opt, a.out
    r = rating_rows(a.rows)
    dist = distribution(r, by)
    rm = rating_measures(r)
    means = rates(rm, ["measure"] + by, "value", opt.seed, opt.n_boot).drop(columns=["n_outcome"])
    tabs = [res.table("rating_distribution", dist, "Rating distribution (share of each scale point; models: the "
                                                   "argmax)"),
            res.table("rating_means", shown_rates(means, ["measure"] + by).rename(
                columns={"rate [CI subjects]": "mean [CI subjects]"}), "Mean rating"),
            res.table("rating_means_long", means, "Mean rating (long format)", show=False)]
    items, why = rating_clmm(res, r, by, a.factors, opt, a.log, a.skipped, tabs)
    res.section("task_rating", "Ratings: distributions, "
                               "means" + (" and a cumulative-link mixed model" if items else ""),
                "Share of each scale point per cell, and the mean rating (" + F1F2.replace("rate", "mean", 1) + "). "
                "`measure`: people's chosen point; a model's rating is a distribution over the scale, reported as its "
                "expected value (sum of point x probability, the default measure) and its argmax (the most probable "
                "point), both named. " + why, tabs,
                [res.figure("rating_distribution",
                            dfig.rating_distribution(dist, out / "figures" / "rating_distribution.png"),
                            "Share of each rating per group and cell.")], items)


def _scale_points(r: pd.DataFrame) -> int | None:
    for s in (r["task_settings"].dropna().unique() if "task_settings" in r.columns else []):
        try:
            pts = (json.loads(s).get("scale") or {}).get("points")
        except (ValueError, AttributeError):
            continue
        if isinstance(pts, int):
            return pts
    return None


def rating_clmm(res, r: pd.DataFrame, by: list[str], factors: dict, opt, log, skipped: list[str],
                tabs: list) -> tuple[list[dict], str]:
    """The people's cumulative-link mixed model; returns (fit items, the text saying what was fitted or why not)."""

    humans = r[r["subject_kind"] == "human"]
    varying = [f for f in by if f in humans.columns and humans[f].nunique() > 1]
    if humans.empty:
        return [], ("No cumulative-link mixed model: it is fitted to people's ratings and there are none here "
                    "(a model's ratings are its distribution, summarised above).")
    if not opt.mixed:
        return [], "No cumulative-link mixed model: mixed models are off (--no-mixed)."
    if not varying or humans["rating"].nunique() < 2:
        return [], ("No cumulative-link mixed model: " + ("no factor varies among the people's trials." if not varying
                                                          else "the people used a single scale point."))
    formula = f"rating ~ {' * '.join(varying)} + (1 | subject_id) + (1 | item)"
    log(f"fitting the cumulative-link mixed model {formula} (ordinal::clmm)")
    f = _fit_or_note(lambda: fit_clmm(model_frame(humans), formula, factors, _scale_points(humans)),
                     "rating clmm (humans)", skipped)
    text = ("The cumulative-link mixed model of the people's ratings (R ordinal::clmm, logit link, flexible "
            "thresholds, "
            f"factors sum-coded) `{formula}` treats the scale as ordered categories; a positive effect shifts ratings "
            "up. " + CLMM_FALLBACK + " Diagnostics: optimiser convergence, the scaled gradient (lme4's check, < "
                                     "0.002), "
            "max.grad, cond.H (> 1e4: ill-defined), and scale points never used (no threshold between them).")
    if f is None:
        return [], text + " The fit failed: see the notes."
    tabs.append(res.table("rating_clmm", pd.DataFrame(f.coefficients), "clmm coefficients", show=False))
    return [fit_item("ordinal_fit", "Humans: cumulative-link mixed model", f)], text


# the kind on the analysis side; its section: distributions, means (a model's expected value and argmax,
# named), the people's cumulative-link mixed model
ANALYSIS = AnalysisKind(KIND, section=rating_section, api={"rating_distribution": rating_distribution})
