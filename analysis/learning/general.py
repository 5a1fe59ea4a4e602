"""Learning from training with feedback, for any design (seeds/000 appendix C, generalised).

Three analyses, each a function of a prepared trial frame and a `LearningConfig` (which factors make a
cell, which trials are scored, how an unanswered trial counts); the Lakretz sections are the
configuration a study's report plan declares (`plan_config`; e.g. the Lakretz cells and the paper's
rules, studies/lakretz2021/learning.py), a general design's is `general_config(factors)`:

- `first_encounter_table`: error on each subject's first test trial of each cell (Table C1 for the
  Lakretz cells), pooled errors / subjects with a 95% bootstrap CI resampling subjects;
- `learning_curve`: error (and mean RT where there are RTs) by exposures or by trial position, per group
  and block kind (training, test), CIs resampling subjects;
- `focus_data` + `analysis.learning.exposures.fit_models_on` / `fit_joint_on`: the base model
  `error ~ exposures + (1|subject)`, the extended model (session, trials before, random slope) and the
  joint `error ~ exposures * subject_kind` on the answered rows of a focus cell (`--focus a=x,b=y`).

A model group whose context shows no earlier trial (context `none`, a fixed few-shot prompt) cannot learn
from feedback: it gets no learning fit (`sees_history`), and the report says why.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.learning.exposures import model_rows
from analysis.load.prepare import is_human_group, learning_mode
from analysis.load.rows import block_kind
from analysis.measures.levels import level_series, same_level
from analysis.stats.bootstrap import N_BOOT, bootstrap_mean, error_rate_ci
from analysis.stats.logistic import logistic_fit
from experiments.studies import declared


@dataclass(frozen=True)
class LearningConfig:
    """What a cell is and which trials are scored.

    cell: the factors whose combination is a cell; positions: when given, only trials whose
    `violation_position` is one of them are scored (the Lakretz violation trials); the others are any
    answered trial of a cell. The exposures and first-encounter columns are read from the frame
    (analysis/load/prepare.py for the Lakretz tables, analysis/load/rows.add_order_columns otherwise)."""

    name: str
    cell: tuple[str, ...]
    positions: tuple[str, ...] | None = None
    default_focus: str | None = None


def plan_config(plan: dict) -> LearningConfig:
    """The learning cell of a study's report plan as its `__init__` declares it (`REPORT_PLANS`: name, cell,
    positions, default_focus; e.g. the Lakretz cells, studies/lakretz2021/learning.py)."""
    positions = tuple(plan.get("positions") or ()) or None
    return LearningConfig(plan["name"], tuple(plan["cell"]), positions, plan.get("default_focus") or None)


def declared_plan_configs() -> list[LearningConfig]:
    """The learning cells of the registered studies' report plans (read from their declarations, no study
    module imported): the short --focus forms (A:B:C) a study's design reads."""
    return [plan_config(p) for plans in declared("REPORT_PLANS").values() for p in plans if p.get("cell")]


def general_config(cell: list[str]) -> LearningConfig:
    return LearningConfig("general", tuple(cell))


def scored(d: pd.DataFrame, cfg: LearningConfig) -> pd.DataFrame:
    """The trials a learning analysis scores: a usable answer (`error` known; the paper rule of
    analysis/measures/scoring.py has already scored REJECTED trials from their code), levels for every factor of
    the cell, not a filler; with `positions`, only those violation positions."""
    keep = d["error"].notna()
    if cfg.positions is not None:
        keep &= d["violation_position"].isin(cfg.positions)
        if "scored" in d.columns:
            keep &= d["scored"].astype(bool)
    for c in cfg.cell:
        keep &= d[c].notna()
    if "role" in d.columns:
        keep &= ~d["role"].fillna("").astype(str).eq("filler")
    return d[keep]


def _keys(cfg: LearningConfig) -> list[str]:
    return ["group", "subject_kind"] + list(cfg.cell)


def first_encounter_table(d: pd.DataFrame, cfg: LearningConfig, seed: int = 0, n_boot: int = N_BOOT) -> pd.DataFrame:
    """Error on the first test trial of each cell per group: subjects, errors, rate, 95% CI over subjects,
    mean trials before. A subject whose first test trial of a cell has no usable answer leaves the cell
    (the next trial is not promoted: it is not a first encounter)."""
    rows = first_rows(d, cfg)
    keys = _keys(cfg)
    rng = np.random.default_rng(seed)
    out = []
    for key, g in rows.groupby(keys, sort=True, observed=True):
        ci = error_rate_ci(g, rng, n_boot)
        out.append(dict(zip(keys, key, strict=False)) | {
            "n_subjects": g["subject_key"].nunique(), "n_errors": int(g["error"].sum()),
            "error_rate": ci.estimate, "ci_low": ci.low, "ci_high": ci.high,
            "mean_trial": float(g["trials_before"].astype(float).mean())})
    cols = keys + ["n_subjects", "n_errors", "error_rate", "ci_low", "ci_high", "mean_trial"]
    return pd.DataFrame(out, columns=cols)


def first_rows(d: pd.DataFrame, cfg: LearningConfig) -> pd.DataFrame:
    """The scored first test trials of each cell (the rows of the first-encounter table and curves)."""
    return scored(d[d["first_encounter"].astype(bool)], cfg)


def first_encounter_fits(d: pd.DataFrame, cfg: LearningConfig, x: str = "trials_before") -> pd.DataFrame:
    """Per cell and group: a plain logistic regression of first-encounter error on `x` (Figure C1's curves)."""
    keys = _keys(cfg)
    out = [dict(zip(keys, key, strict=False)) | {"x": x} | logistic_fit(g[x].astype(float), g["error"].astype(float))
           for key, g in first_rows(d, cfg).groupby(keys, sort=True, observed=True)]
    return pd.DataFrame(out, columns=keys + ["x", "n", "intercept", "slope", "slope_se", "slope_p", "status", "note"])


def first_encounter_points(d: pd.DataFrame, cfg: LearningConfig, x: str = "trials_before") -> pd.DataFrame:
    """Per cell, group and value of `x`: the mean first-encounter error of the subjects met there (Figure C1)."""
    rows = first_rows(d, cfg)
    keys = _keys(cfg)
    if rows.empty:
        return pd.DataFrame(columns=keys + [x, "n", "error_rate"])
    return rows.groupby(keys + [x], observed=True)["error"].agg(n="size", error_rate="mean").reset_index()


def unanswered_first(d: pd.DataFrame, cfg: LearningConfig) -> pd.DataFrame:
    """First test trials of a cell without a usable answer, per group (they leave the cell)."""
    first = d[d["first_encounter"].astype(bool)]
    for c in cfg.cell:
        first = first[first[c].notna()]
    miss = first[first["error"].isna()]
    return miss.groupby("group", observed=True).size().rename("unanswered_first_trials").reset_index()


def learning_curve(d: pd.DataFrame, cfg: LearningConfig, x: str, seed: int = 0, n_boot: int = N_BOOT) -> pd.DataFrame:
    """Per group x block kind x value of `x` (exposures, trial_position, ...): subjects, trials, error
    rate with a CI over subjects, and the mean RT (ms, answered trials with an RT) with its CI over
    subjects' means."""
    rows = scored(d, cfg)
    rows = rows[rows[x].notna()].assign(block_kind=block_kind(rows) if "block_kind" not in rows else rows["block_kind"])
    rng = np.random.default_rng(seed)
    out = []
    keys = ["group", "subject_kind", "block_kind", x]
    for key, g in rows.groupby(keys, sort=True, observed=True):
        ci = error_rate_ci(g, rng, n_boot)
        row = dict(zip(keys, key, strict=False)) | {"n_subjects": g["subject_key"].nunique(), "n_trials": len(g),
                                      "n_errors": int(g["error"].sum()), "error_rate": ci.estimate,
                                      "ci_low": ci.low, "ci_high": ci.high,
                                      "rt_mean": np.nan, "rt_ci_low": np.nan, "rt_ci_high": np.nan}
        rt = g["rt_ms"].astype(float).dropna() if "rt_ms" in g.columns else pd.Series(dtype=float)
        if len(rt):
            per_subject = rt.groupby(g.loc[rt.index, "subject_key"]).mean().to_numpy()
            m = bootstrap_mean(per_subject, rng, n_boot, unit="subject")
            row.update(rt_mean=float(rt.mean()), rt_ci_low=m.low, rt_ci_high=m.high)
        out.append(row)
    cols = keys + ["n_subjects", "n_trials", "n_errors", "error_rate", "ci_low", "ci_high", "rt_mean", "rt_ci_low",
                   "rt_ci_high"]
    return pd.DataFrame(out, columns=cols).rename(columns={x: "x"}).assign(x_name=x)


def cell_points(rows: pd.DataFrame, cfg: LearningConfig, x: str = "exposures") -> pd.DataFrame:
    """Per cell, group and value of `x`: trials and mean error of the scored `rows` (the caller picks the
    blocks; the points of Figures 6c, C2 and C3 on the Lakretz cells)."""
    keys = _keys(cfg)
    r = scored(rows, cfg)
    if r.empty:
        return pd.DataFrame(columns=keys + [x, "n", "error_rate"])
    return r.groupby(keys + [x], observed=True)["error"].agg(n="size", error_rate="mean").reset_index()


def cell_fits(rows: pd.DataFrame, cfg: LearningConfig, x: str = "exposures") -> pd.DataFrame:
    """Per cell and group: a plain logistic regression (no random effects) of error on `x`, for the grids."""
    keys = _keys(cfg)
    return pd.DataFrame([dict(zip(keys, k, strict=False)) | logistic_fit(g[x].astype(float), g["error"].astype(float))
                         for k, g in scored(rows, cfg).groupby(keys, observed=True)])


# ---------------------------------------------------------------------------------- focus cell
class FocusError(ValueError):
    """A --focus that names no factor or level of the data (the message lists them)."""


def parse_focus(text: str, d: pd.DataFrame | None = None, cell: list[str] | None = None,
                levels: dict[str, list[str]] | None = None) -> dict[str, str]:
    """'factor=level,factor=level' -> {factor: level}. Each factor once (a second value is refused, both
    named, never the last one taken); with `cell` each a factor of it (`correct=True` names a column, not a
    factor), with `levels` (the declared ones) or `d` (the data's) each level one of the factor's."""
    out: dict[str, str] = {}
    for part in [p for p in (text or "").split(",") if p.strip()]:
        if "=" not in part:
            raise FocusError(f"--focus {text!r}: write FACTOR=LEVEL[,FACTOR=LEVEL...] for a general design "
                             "(e.g. --focus attractor=mismatch,agreement=broken)")
        k, v = (s.strip() for s in part.split("=", 1))
        if k in out:
            raise FocusError(f"--focus {text!r} names factor {k!r} twice ({k}={out[k]} and {k}={v}); give each "
                             "factor once")
        out[k] = v
    for k, v in out.items():
        if cell is not None and k not in cell:
            raise FocusError(f"--focus: {k!r} is not a factor of the design; the focus cell is FACTOR=LEVEL of its "
                             f"factors: {', '.join(cell) or 'none (the design declares no factors)'}")
        if d is not None and k not in d.columns:
            raise FocusError(f"--focus: unknown factor {k!r}; the cell's factors are {', '.join(cell or []) or 'none'}")
        known = list((levels or {}).get(k) or ([] if d is None else sorted(set(level_series(d[k].dropna())))))
        if same_level(known, v) not in (None, v):
            out[k] = v = same_level(known, v)  # a boolean-like level in another case: the declared form
        if (levels or d is not None) and v not in known:
            raise FocusError(f"--focus: {k} has no level {v!r}; its levels are {', '.join(known)}")
    return out


def parse_focus_path(text: str, cfg: LearningConfig) -> dict[str, str]:
    """'long_nested:PSP:inner' -> {factor: level} in the order of the cell's factors (the short form of a
    configuration whose cell is known, e.g. a study's plan); a factor limited to `positions` takes one of them."""
    parts = (text or "").split(":")
    last = cfg.cell[-1] if cfg.positions else None
    if len(parts) != len(cfg.cell) or (last and parts[-1] not in cfg.positions):
        form = ":".join("|".join(cfg.positions) if c == last else c.upper() for c in cfg.cell)
        example = f", e.g. {cfg.default_focus}" if cfg.default_focus else ""
        raise ValueError(f"focus {text!r} must be {form}{example}")
    return dict(zip(cfg.cell, parts, strict=False))


def check_focus_path(text: str) -> None:
    """A --focus in the short form (no '='): the cell of a registered study's report plan. ValueError naming
    the form (or the forms) otherwise; which study's design the data are is known only once they are loaded."""
    errors = []
    for cfg in declared_plan_configs():
        try:
            parse_focus_path(text, cfg)
            return
        except ValueError as exc:
            errors.append(str(exc))
    raise ValueError(" or ".join(errors) or f"focus {text!r}: write FACTOR=LEVEL[,FACTOR=LEVEL...] (no registered "
                     "study's design reads a short form)")


def focus_path_text(focus: dict[str, str]) -> str:
    return ":".join(focus.values())


def focus_text(focus: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in focus.items()) or "every cell"


def focus_source(d: pd.DataFrame, cfg: LearningConfig, focus: dict[str, str],
                 groups: list[str] | None = None) -> pd.DataFrame:
    """The trial rows of the focus cell that the exposure models use (scored, in `d`'s blocks)."""
    r = scored(d, cfg)
    for k, v in focus.items():
        r = r[level_series(r[k]) == v]
    return r if groups is None else r[r["group"].isin(groups)]


def focus_data(d: pd.DataFrame, cfg: LearningConfig, focus: dict[str, str],
               groups: list[str] | None = None) -> pd.DataFrame:
    """Model rows (analysis.learning.exposures.model_rows) of the focus cell: the scored rows of `d`
    (the caller selects the blocks) whose factors take the focus levels; no focus: every cell."""
    r = focus_source(d, cfg, focus, groups)
    return model_rows(r)


def sees_history(d: pd.DataFrame, group: str) -> bool:
    """Can earlier trials (and their feedback) influence this group's answers? People: yes; models: in a
    running context (the trial history in the prompt) or when their weights learn after trials."""
    if is_human_group(group):
        return True
    ctx = set(d.loc[d["group"] == group, "context_mode"].dropna().astype(str)) if "context_mode" in d else set()
    return any(c.startswith("running") or learning_mode(c) != "context" for c in ctx)


NO_HISTORY = ("its context shows no earlier trial (context none or a fixed few-shot prompt) and its weights are "
              "frozen, "
              "so no answer can depend on earlier trials or their feedback: a learning slope would only fit noise")


def has_learning_data(d: pd.DataFrame) -> bool:
    """Chosen by what the data hold, never by the design's name: a training block, or feedback on
    trials whose order is known."""
    known = d["order_known"].astype(bool) if "order_known" in d.columns else pd.Series(True, index=d.index)
    fb = d["feedback"].astype(str).str.lower().isin(("true", "1")) if "feedback" in d.columns else False
    return bool((block_kind(d).eq("training") & known).any() or (fb & known).any())
