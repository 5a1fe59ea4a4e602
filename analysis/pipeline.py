"""The whole analysis: load -> prepare -> tables, figures, models -> results dir (+ report.html).

Output layout::

    OUT/tables/*.csv      every table the report shows
    OUT/figures/*.png     every figure
    OUT/results.json      options, inputs, sample sizes, exclusions, model fits, section layout
    OUT/report.html       rendered from the three above (`twinlab report OUT` re-renders it)
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
import pandas as pd

from analysis import error_rates as er_mod
from analysis import exposures as ex_mod
from analysis import figures as fig
from analysis import first_encounter as fe_mod
from analysis import model_measures as mm
from analysis.exposures import Focus
from analysis.load import load
from analysis.prepare import prepare, scored_rows

MAX_GROUP_FIGURES = 8


@dataclass
class Options:
    seed: int = 0
    n_boot: int = 2000
    mixed: bool = True
    focus: str = "long_nested:PSP:inner"
    fmt: str = "auto"
    training_blocks: list[str] = field(default_factory=list)
    keep_outliers: bool = False
    show_progress: bool = True


class Results:
    """Collects tables, figures and sections while the analysis runs, then writes results.json."""

    def __init__(self, out: Path):
        self.out = out
        self.tables: dict[str, dict] = {}
        self.figures: dict[str, dict] = {}
        self.sections: list[dict] = []
        (out / "tables").mkdir(parents=True, exist_ok=True)
        (out / "figures").mkdir(parents=True, exist_ok=True)

    def table(self, name: str, df: pd.DataFrame, title: str, index: bool = False) -> str:
        f = f"tables/{name}.csv"
        df.to_csv(self.out / f, index=index)
        self.tables[name] = {"file": f, "title": title, "rows": int(len(df)), "index": index}
        return name

    def figure(self, name: str, path: Path | None, caption: str) -> str | None:
        if path is None:
            return None
        self.figures[name] = {"file": str(path.relative_to(self.out)), "caption": caption}
        return name

    def section(self, sid: str, title: str, text: str, tables: Iterable[str | None] = (),
                figures: Iterable[str | None] = (), items: list[dict] | None = None) -> None:
        self.sections.append({"id": sid, "title": title, "text": text,
                              "tables": [t for t in tables if t], "figures": [f for f in figures if f],
                              "items": items or []})


def _json_default(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, (np.bool_,)):
        return bool(o)
    if o is pd.NA:
        return None
    return str(o)


def _clean(o):
    """JSON has no NaN/inf: write them as strings a reader recognises."""
    if isinstance(o, float):
        if math.isnan(o):
            return None
        if math.isinf(o):
            return "inf" if o > 0 else "-inf"
    if isinstance(o, dict):
        return {k: _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    return o


def drop_training_only_sessions(d: pd.DataFrame, info) -> pd.DataFrame:
    """Sessions that never got past training (a set-up check such as `run-human --trials 5`) have nothing
    to score; they are skipped with a note, and the rest is analysed. None left: a LoadError."""
    from analysis.load import LoadError

    keys = ["source_file", "subject_key", "session"]
    only = d.groupby(keys, dropna=False, sort=False)["training"].transform("all")
    if only.any():
        for (src, subj, sess), g in d[only].groupby(keys, dropna=False, sort=False):
            what = f"{Path(str(src)).name} (subject {g['subject_id'].iloc[0]}, session {sess})"
            info.notes.append(f"{what}: skipped, it holds only training trials ({len(g)}); nothing is scored "
                              "before the training block ends")
            info.exclude(what, len(g), "training trials only (session ended during training)")
        d = d[~only].copy()
    if d.empty:
        raise LoadError("no trials to analyse: " + "; ".join(info.notes))
    return d


def sample_sizes(d: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for g, x in d.groupby("group", sort=True):
        post = x[~x["training"]]
        rows.append({
            "group": g, "subject_kind": x["subject_kind"].iloc[0], "subjects": x["subject_key"].nunique(),
            "sessions": x[["subject_key", "session"]].drop_duplicates().shape[0], "trials": len(x),
            "training_trials": int(x["training"].sum()),
            "post_training_violation_trials_scored": int(scored_rows(x).shape[0]),
            "post_training_grammatical_trials": int((post["violation_position"] == "none").sum()),
            "other_or_filler_trials": int((x["violation_position"] == "other").sum()),
            "trials_without_answer": int(x["correct"].isna().sum()),
        })
    return pd.DataFrame(rows)


def run_analysis(data: Iterable[str | Path], out: str | Path, options: Options | None = None,
                 log: Callable[[str], None] | None = None) -> dict:
    """Run every analysis on the data and write the results folder; returns the results dict."""
    opt = options or Options()
    log = log or (lambda s: None)
    t0 = time.time()
    out = Path(out)
    focus = Focus.parse(opt.focus)
    lak = {"training_blocks": opt.training_blocks, "keep_outliers": opt.keep_outliers}
    df, info = load(data, opt.fmt, **lak)
    d = drop_training_only_sessions(prepare(df), info)
    res = Results(out)
    notes = list(info.notes)
    if not d["training"].any():
        notes.append("no training block in the data: every trial counts as post-training")

    # ---- data ------------------------------------------------------------------------------
    log(f"loaded {len(d)} trials of {d['subject_key'].nunique()} subject(s) from {len(info.files)} file(s)")
    ss = sample_sizes(d)
    excl = pd.DataFrame(info.exclusions, columns=["what", "rows", "reason"])
    res.section("data", "Data", "Sample sizes per group (a group is 'human', or one model with its context mode "
                "and protocol) and what was excluded before the analyses.",
                [res.table("sample_sizes", ss, "Sample sizes"),
                 res.table("exclusions", excl, "Exclusions") if len(excl) else None])

    # ---- error rates -------------------------------------------------------------------------
    er = er_mod.error_rates(d, seed=opt.seed, n_boot=opt.n_boot, show_progress=opt.show_progress)
    figs = []
    for s in _structures(d):
        figs.append(res.figure(f"error_rates_{s}", fig.error_rate_bars(er, s, out / "figures" / f"error_rates_{s}.png"),
                               f"Error rates by condition and dependency, {s}. Bars: error rate (mean of subjects' "
                               "rates) with 95% bootstrap CIs over subjects; dashed lines: humans (seeds/000 Fig. 2)."))
    fa = er_mod.false_alarms(d)
    res.section("error_rates", "Error rates by condition x dependency",
                "Post-training violation trials with an answer; an error is a missed violation (humans) or the "
                f"wrong choice (models). 95% percentile bootstrap CIs, {opt.n_boot} resamples of subjects, seed "
                f"{opt.seed} (a group with one subject resamples its trials; see ci_unit). A subject that reports a "
                "violation on every trial makes no errors here: check the false alarms on grammatical trials.",
                [res.table("error_rates", er, "Error rates"),
                 res.table("false_alarms", fa, "False alarms on grammatical trials") if len(fa) else None], figs)

    # ---- first encounter ---------------------------------------------------------------------
    fe = fe_mod.first_encounter_table(d, seed=opt.seed, n_boot=opt.n_boot)
    fe_fits = fe_mod.first_encounter_fits(d)
    fe_pts = fe_mod.first_encounter_points(d)
    tabs = [res.table("first_encounter", fe, "First-encounter error rates (long format)"),
            res.table("first_encounter_fits", fe_fits, "Logistic fits: first-encounter error ~ trial number")]
    figs = []
    for s in _structures(d):
        for g in _groups(fe[fe["structure"] == s]):
            c1 = fe_mod.table_c1(fe, g, s)
            if not c1.empty:
                tabs.append(res.table(f"table_c1_{_slug(g)}_{s}", c1, f"Table C1 layout: {g}, {s}", index=True))
        figs.append(res.figure(f"first_encounter_{s}", fig.first_encounter_bars(fe, s, out / "figures" / f"first_encounter_{s}.png"),
                               f"Error on the first post-training encounter of each condition, {s} (seeds/000 Fig. 6a); "
                               "95% bootstrap CIs over subjects; dotted line 0.5."))
    for s in _structures(d)[:1]:  # Figure C1 is about the long-nested sentences
        for g in _groups(fe_pts[fe_pts["structure"] == s])[:MAX_GROUP_FIGURES]:
            figs.append(res.figure(
                f"first_encounter_trial_{_slug(g)}_{s}",
                fig.grid_by_cell(fe_pts, fe_fits, g, s, "trials_before", "trial number of first encounter",
                                 "First encounter vs trial number",
                                 out / "figures" / f"first_encounter_trial_{_slug(g)}_{s}.png"),
                f"{g}: first-encounter error against the trial number at which it happened, {s} (seeds/000 Fig. C1/6b). "
                "Points: mean of the subjects who first met the cell at that trial (size: n); curves: logistic regression."))
    res.section("first_encounter", "First encounter after training",
                "For each subject, the first post-training trial of each structure x condition x violation position. "
                "Trial number = trials completed before it (training included).", tabs, figs)

    # ---- exposures -------------------------------------------------------------------------------
    pts = ex_mod.exposure_points(d, "cell")
    glm = ex_mod.exposure_fits(d, "cell")
    pts_s = ex_mod.exposure_points(d, "structure")
    glm_s = ex_mod.exposure_fits(d, "structure")
    tabs = [res.table("exposure_points", pts, "Error by exposures (same structure, condition and violation)"),
            res.table("exposure_fits", glm, "Logistic fits per cell: error ~ exposures (no random effects)"),
            res.table("exposure_points_structure", pts_s, "Error by exposures to the structure (any violation, training included)")]
    group_fits: dict[str, dict] = {}
    items: list[dict] = []
    skipped: list[str] = []
    joint: list[dict] = []
    if opt.mixed:
        fgroups = _groups(ex_mod.focus_rows(d, focus))
        todo = len(fgroups) + (len([g for g in fgroups if g != "human"]) if "human" in fgroups else 0)
        log(f"fitting mixed models on {focus} for {len(fgroups)} group(s) (R start-up takes ~20 s)")
        from analysis.bootstrap import make_progress

        prog = make_progress() if opt.show_progress else None
        task = prog.add_task("glmer fits", total=max(1, todo)) if prog else None
        if prog:
            prog.start()
        try:
            for g in fgroups:
                m = ex_mod.fit_exposure_models(d, focus, g)
                group_fits[g] = asdict(m)
                skipped += m.skipped
                if prog:
                    prog.advance(task)
            if "human" in fgroups:
                for g in [g for g in fgroups if g != "human"]:
                    j = ex_mod.fit_joint_model(d, focus, g)
                    joint.append(j)
                    if "skipped" in j:
                        skipped.append(f"joint model human + {g}: {j['skipped']}")
                    if prog:
                        prog.advance(task)
        finally:
            if prog:
                prog.stop()
        for g, m in group_fits.items():
            for kind in ("base", "extended"):
                if m.get(kind) and any("degenerate" in x for x in m[kind]["messages"]):
                    skipped.append(f"{g}: the {kind} mixed model is degenerate (see its warnings); do not interpret it")
                if m.get(kind):
                    name = f"mixed_{kind}_{_slug(g)}"
                    tabs.append(res.table(name, pd.DataFrame(m[kind]["coefficients"]),
                                          f"{g}: {m[kind]['formula']}"))
            if m.get("comparison"):
                tabs.append(res.table(f"mixed_comparison_{_slug(g)}", pd.DataFrame([m["comparison"]]),
                                      f"{g}: base vs extended model (AIC, BIC, likelihood ratio)"))
        for j in joint:
            if j.get("fit"):
                tabs.append(res.table(f"mixed_joint_{_slug(j['model_group'])}", pd.DataFrame(j["fit"]["coefficients"]),
                                      f"human + {j['model_group']}: {j['formula']}"))
        items = [{"kind": "mixed", "group": g, **{k: m.get(k) for k in ("base", "extended", "comparison", "n_rows",
                                                                       "n_subjects", "focus")}}
                 for g, m in group_fits.items()] + [{"kind": "joint", **j} for j in joint]
    else:
        skipped.append("mixed models not fitted (--no-mixed)")
    figs = [res.figure("exposures_focus", fig.exposure_focus(pts, group_fits, glm, focus, out / "figures" / "exposures_focus.png"),
                       f"Error on {focus} by the number of earlier exposures to it (seeds/000 Fig. 6c). Points: mean over "
                       "subjects (size: n); solid: glmer fixed-effect prediction; dashed: plain logistic fit.")]
    for s in _structures(d)[:1]:
        for g in _groups(pts[pts["structure"] == s])[:MAX_GROUP_FIGURES]:
            figs.append(res.figure(f"exposures_grid_{_slug(g)}_{s}",
                                   fig.grid_by_cell(pts, glm, g, s, "exposures", "earlier exposures", "Error by exposures",
                                                    out / "figures" / f"exposures_grid_{_slug(g)}_{s}.png"),
                                   f"{g}: error by earlier post-training exposures to the same condition and violation, {s} (seeds/000 Fig. C2)."))
            figs.append(res.figure(f"exposures_structure_{_slug(g)}_{s}",
                                   fig.grid_by_cell(pts_s, glm_s, g, s, "exposures", "earlier encounters (any violation, incl. training)",
                                                    "Error by encounters with the structure",
                                                    out / "figures" / f"exposures_structure_{_slug(g)}_{s}.png"),
                                   f"{g}: error by earlier encounters with the structure and condition, any violation, training included, {s} (seeds/000 Fig. C3)."))
    res.section("exposures", "Learning over exposures",
                f"Focus cell {focus}. exposures = earlier post-training trials of the same structure, condition and "
                "violation position (0 at the first encounter). Base model (Table C2): "
                f"`{ex_mod.BASE_FORMULA}`; extended model (Table C3): `error ~ exposures + session + total_trials + "
                "(1 + exposures|subject)` (total_trials = trials before / 100; session dropped when there is only one). "
                "Binomial glmer (lme4, Laplace) through pymer4; Wald CIs. Joint models add subject_kind "
                "(human vs one model group) and its interaction with exposures.", tabs, figs, items)

    # ---- model-side measures ------------------------------------------------------------------
    if (d["subject_kind"] == "model").any():
        dg = mm.demand_gap(d, seed=opt.seed, n_boot=opt.n_boot)
        ic = mm.internal_consistency(d)
        pairs = mm.paired_differentials(d)
        res.section("model_measures", "Model-side measures",
                    "Demand gap (seeds/002): logit(accuracy, low-demand method) - logit(accuracy, high-demand method), "
                    "95% bootstrap CI over trials. Internal consistency (seeds/003): Pearson r between item-level "
                    "differentials (margins) of the direct method and each metalinguistic protocol, 95% CI by Fisher z. "
                    "Methods from the protocol: " + _method_summary(d),
                    [res.table("demand_gap", dg, "Demand gap") if len(dg) else None,
                     res.table("internal_consistency", ic, "Internal consistency") if len(ic) else None],
                    [res.figure("demand_gap", fig.demand_gap_plot(dg, out / "figures" / "demand_gap.png"),
                                "Demand gap per model and context (error bars: 95% bootstrap CI)."),
                     res.figure("internal_consistency", fig.consistency_scatter(pairs, ic, out / "figures" / "internal_consistency.png"),
                                "Item-level differentials: direct (x) vs metalinguistic (y).")])
        if dg.empty:
            notes.append("demand gap: no model has both a direct and a metalinguistic (or production) protocol")
        if ic.empty:
            notes.append("internal consistency: no items scored by both a direct and a metalinguistic protocol")

    results = {
        "title": "twinlab analysis",
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "runtime_s": round(time.time() - t0, 1),
        "options": asdict(opt),
        "inputs": {"files": info.files, "formats": info.formats},
        "notes": notes, "skipped": skipped, "exclusions": info.exclusions,
        "tables": res.tables, "figures": res.figures, "sections": res.sections,
    }
    (out / "results.json").write_text(json.dumps(_clean(results), indent=1, default=_json_default), encoding="utf-8")
    from analysis.report import render_report

    render_report(out)
    return results


def _structures(d: pd.DataFrame) -> list[str]:
    present = list(dict.fromkeys(scored_rows(d)["structure"].dropna()))
    pref = ["long_nested", "short_nested", "long_successive", "short_successive"]
    return [s for s in pref if s in present] + sorted(s for s in present if s not in pref)


def _groups(t: pd.DataFrame) -> list[str]:
    gs = list(dict.fromkeys(t["group"])) if "group" in t and len(t) else []
    return (["human"] if "human" in gs else []) + sorted(g for g in gs if g != "human")


def _slug(s: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9]+", "-", s).strip("-").lower()[:60] or "group"


def _method_summary(d: pd.DataFrame) -> str:
    m = d[d["subject_kind"] == "model"]
    protos = sorted(set(m["protocol"].dropna()))
    return ", ".join(f"{p} = {mm.evaluation_method(p)}" for p in protos) or "(no protocol recorded)"
