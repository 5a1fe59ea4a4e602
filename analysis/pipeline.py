"""The whole analysis: load -> prepare -> tables, figures, models -> results dir (+ report.html).

Output layout::

    OUT/tables/*.csv      every table the report shows
    OUT/figures/*.png     every figure
    OUT/results.json      options, inputs, sample sizes, exclusions, model fits, section layout
    OUT/report.html       rendered from the three above (`twinlab report OUT` re-renders it)

This module runs the analyses in order and writes results.json; the pieces live beside it:
`results_folder` (the collector), `data_section` (sample sizes, order, outliers), `report_tables`
(the shown tables), `sections` (detection, exposure models, training).
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable

import pandas as pd

from analysis import appendix_c as ac
from analysis import error_rates as er_mod
from analysis import exposures as ex_mod
from analysis import figures as fig
from analysis import first_encounter as fe_mod
from analysis import model_measures as mm
from analysis import scoring
from analysis.data_section import (drop_training_only_sessions, order_statement, outlier_text,  # noqa: F401
                                   sample_sizes)
from analysis.exposures import Focus
from analysis.load import load
from analysis.prepare import SIMULATED_HUMANS, order_known_rows, prepare, scored_rows
from analysis.report_tables import (ordered_groups, ordered_structures, rule_text, slug, wide_error_rates,  # noqa: F401
                                    wide_slopes, wide_table_c1, _drawable, _fmt_rate)
from analysis.results_folder import Results, clean_json, json_default
from experiments.atomic import atomic_write_text
from analysis.sections import (MAX_GROUP_FIGURES, detection_section, exposure_models_section, training_section,
                               method_summary, with_progress)


@dataclass
class Options:
    seed: int = 0
    n_boot: int = 2000
    mixed: bool = True
    focus: str = "long_nested:PSP:inner"
    fmt: str = "auto"
    training_blocks: list[str] = field(default_factory=list)
    keep_outliers: bool = False
    rejected_rule: str = "paper"  # analysis/scoring.py: how REJECTED trials count in first encounters and exposures
    show_progress: bool = True
    by: list[str] = field(default_factory=list)  # --by: the factors of the rates tables (default: the design's)
    formula: str = ""  # --formula: the analyst's lme4 formula
    family: str = "auto"  # --family: auto | binomial | gaussian | ordinal
    gap_pairs: list[tuple[str, str]] = field(default_factory=list)  # --gap LOW:HIGH (default: every pair)
    region: str = ""  # --region NAME: --formula fitted on that region's rows (analysis/tasks_reading.py)
    word: int = 0  # --word N: --formula fitted on the N-th word's rows
    word_rt_range: tuple[float, float] = (100.0, 5000.0)  # --word-rt-range: self-paced reading's `rt_range` rule
    exclude_wrong_answers: bool = False  # --exclude-wrong-answers: self-paced reading's `wrong_answer` rule


def run_analysis(data: Iterable[str | Path], out: str | Path, options: Options | None = None,
                 log: Callable[[str], None] | None = None) -> dict:
    """Run every analysis on the data and write the results folder; returns the results dict."""
    opt = options or Options()
    df, info = load(data, opt.fmt, keep_outliers=opt.keep_outliers, training_blocks=opt.training_blocks)
    return run_loaded(df, info, out, opt, log)


def run_loaded(df: pd.DataFrame, info, out: str | Path, options: Options | None = None,
               log: Callable[[str], None] | None = None) -> dict:
    """The analysis of trials already loaded (analysis.load.load or analysis.api.load_sessions): the
    sections follow the design (a general design's own, or the Lakretz sections)."""
    from analysis.design_report import is_general_design

    opt = options or Options()
    log = log or (lambda s: None)
    t0 = time.time()
    out = Path(out)
    check_by_and_formula(df, opt)
    if is_general_design(df, info.factors):
        return run_general(df, info, out, opt, log, t0)
    focus = Focus.parse(opt.focus)
    d_all = prepare(df)
    # Imported release: subjects with logs but no row in the results table (pilots with training logs
    # only, an incomplete participant) are not among the analysed subjects; only Figure C4 (training)
    # uses their training trials.
    outside = ~d_all["in_results_table"].fillna(True).astype(bool)
    if outside.any():
        ids = sorted(set(d_all.loc[outside, "subject_id"]))
        info.exclude(f"subject(s) {', '.join(ids)}: logs but no row in the results table", int(outside.sum()),
                     "not among the subjects the release analysed; left out of every analysis except the training "
                     "figure (C4)")
    d = drop_training_only_sessions(d_all[~outside].reset_index(drop=True), info)
    od_strict = order_known_rows(d)
    has_order = bool(scored_rows(od_strict).shape[0])
    # first encounters and exposures score REJECTED trials by the chosen rule; error rates never do
    od = scoring.apply_rule(od_strict, opt.rejected_rule)
    other_rule = next(r for r in scoring.RULES if r != opt.rejected_rule)
    od_other = scoring.apply_rule(od_strict, other_rule)
    res = Results(out)
    notes = list(info.notes)
    if (d["group"] == SIMULATED_HUMANS).any():
        n_sim = d.loc[d["group"] == SIMULATED_HUMANS, "subject_key"].nunique()
        notes.insert(0, f"SIMULATED HUMANS: the group '{SIMULATED_HUMANS}' ({n_sim} subjects) holds answers generated by "
                     "analysis/simulate.py (a logistic error model with known parameters; scripts/demo.sh states "
                     "them), not data from people; it is analysed as its own group and never pooled with "
                     "real participants.")
    skipped: list[str] = []
    if not d["training"].any():
        notes.append("no training block in the data: every trial counts as post-training")

    # ---- data ------------------------------------------------------------------------------
    log(f"loaded {len(d)} trials of {d['subject_key'].nunique()} subject(s) from {len(info.files)} file(s)")
    ss = sample_sizes(d)
    excl = pd.DataFrame(info.exclusions, columns=["what", "rows", "reason"])
    res.section("data", "Data", "Sample sizes per group (a group is 'human', or one model with its context mode "
                "and protocol) and what was excluded before the analyses. " + outlier_text(info.outliers),
                [res.table("sample_sizes", ss, "Sample sizes", transpose=len(ss) <= 6),
                 res.table("exclusions", excl, "Exclusions") if len(excl) else None])
    statement = order_statement(d, info.files)
    if statement:
        res.section("trial_order", "Trial order: what needs the session logs", statement)

    # ---- error rates -------------------------------------------------------------------------
    er = er_mod.error_rates(d, seed=opt.seed, n_boot=opt.n_boot, show_progress=opt.show_progress)
    figs, tabs = [], [res.table("error_rates", er, "Error rates, all cells (long format)", show=False)]
    one_group = er["group"].nunique() == 1
    for s in ordered_structures(d):
        tabs.append(res.table(f"error_rates_wide_{s}", wide_error_rates(er, s),
                              f"Error rates, {s}: error rate [95% CI] by condition"))
        if not one_group:
            figs.append(res.figure(f"error_rates_{s}", fig.error_rate_bars(er, s, out / "figures" / f"error_rates_{s}.png"),
                                   f"Error rates by condition and dependency, {s}. Bars: errors / trials with 95% bootstrap "
                                   "CIs over subjects; dashed lines: humans (seeds/000 Fig. 2)."))
    if one_group:
        g1 = er["group"].iloc[0]
        figs.append(res.figure("error_rates", fig.rates_by_structure(
            er, "dependency", f"Error rates, {g1} (95% bootstrap CI over subjects)", "error rate",
            out / "figures" / "error_rates.png"),
            f"{g1}: error rates (errors / trials) by structure, condition and violated dependency (red: inner = "
            "embedded verb, blue: outer = main verb), 95% bootstrap CIs over subjects; dotted line 0.5."))
    fa = er_mod.false_alarms(d)
    if len(fa):
        tabs.append(res.table("false_alarms", fa, "False alarms on grammatical trials", show=False))
    res.section("error_rates", "Error rates by condition x dependency",
                "Definition: " + ac.DEFINITIONS["error"] + " Models: an error is the wrong choice. The rate of a cell is "
                "errors / trials over all its subjects (`mean_subject_rate` in the CSV is the mean of the subjects' own "
                f"rates). 95% percentile bootstrap CIs, {opt.n_boot} resamples of subjects with all their trials, seed "
                f"{opt.seed} (a group with one subject resamples its trials; see ci_unit). A subject that reports a "
                "violation on every trial makes no errors here: check the false alarms on grammatical trials. "
                "These need no trial order.", tabs, figs)

    detection_section(res, d, er, opt, out)

    # ---- first encounter ---------------------------------------------------------------------
    fe = fe_mod.first_encounter_table(od, seed=opt.seed, n_boot=opt.n_boot)
    rule_diff = None
    if has_order:
        fe_fits = fe_mod.first_encounter_fits(od)
        fe_pts = fe_mod.first_encounter_points(od)
        tabs, figs = [], []
        if "human" in set(fe["group"]) and (fe["structure"] == "long_nested").any():
            fe_other = fe_mod.first_encounter_table(od_other, seed=opt.seed, n_boot=opt.n_boot)
            rule_diff = scoring.rule_differences(od_strict, {opt.rejected_rule: fe, other_rule: fe_other})
            beside = ac.table_c1_beside_paper(fe, "human", other=fe_other, rule=opt.rejected_rule,
                                              other_rule=other_rule)
            tabs.append(res.table("table_c1", wide_table_c1(beside, opt.rejected_rule, other_rule),
                                  f"Table C1: error on the first post-training encounter, humans, long-nested "
                                  f"({opt.rejected_rule} rule; the {other_rule} rule beside)"))
            tabs.append(res.table("table_c1_long", beside, "Table C1 beside the paper (long format)", show=False))
        for s in ordered_structures(od):
            for g in ordered_groups(fe[fe["structure"] == s]):
                if g == "human" and s == "long_nested":
                    continue
                c1 = fe_mod.table_c1(fe, g, s)
                if not c1.empty:
                    tabs.append(res.table(f"table_c1_{slug(g)}_{s}", c1.map(_fmt_rate).reset_index(),
                                          f"First-encounter error rates: {g}, {s}"))
            if fe["group"].nunique() > 1:
                figs.append(res.figure(f"first_encounter_{s}", fig.first_encounter_bars(fe, s, out / "figures" / f"first_encounter_{s}.png"),
                                       f"Error on the first post-training encounter of each condition, {s} (seeds/000 Fig. 6a); "
                                       "95% bootstrap CIs over subjects; dotted line: chance (0.5)."))
        if fe["group"].nunique() == 1:
            g1 = fe["group"].iloc[0]
            figs.insert(0, res.figure("first_encounter", fig.rates_by_structure(
                fe, "violation_position", f"First encounter after training, {g1} (95% bootstrap CI over subjects)",
                "error on first encounter", out / "figures" / "first_encounter.png"),
                f"{g1}: error on the first post-training encounter of each condition and violation (seeds/000 Fig. 6a "
                "shows the inner row; red: inner, blue: outer); 95% bootstrap CIs over subjects; dotted line: chance."))
        tabs += [res.table("first_encounter", fe, "First-encounter error rates, all cells (long format)", show=False),
                 res.table("first_encounter_fits", fe_fits, "Logistic fits: first-encounter error ~ trial number", show=False)]
        for s in ordered_structures(od)[:1]:  # Figure C1 is about the long-nested sentences
            for g in ordered_groups(fe_pts[fe_pts["structure"] == s])[:MAX_GROUP_FIGURES]:
                figs.append(res.figure(
                    f"first_encounter_trial_{slug(g)}_{s}",
                    fig.grid_by_cell(fe_pts, fe_fits, g, s, "trials_before", "trial number of the first encounter",
                                     "First encounter vs trial number",
                                     out / "figures" / f"first_encounter_trial_{slug(g)}_{s}.png"),
                    f"{g}: first-encounter error against the trial number at which it happened, {s} (seeds/000 "
                    "Fig. C1/6b). Points: mean of the subjects who first met the cell at that trial (size: n); curves: "
                    "logistic regression (error ~ trial number)."))
        res.section("first_encounter", "First encounter after training (Table C1, Figures 6a and C1)",
                    "Definition: " + ac.DEFINITIONS["first_encounter"] + " " + ac.DEFINITIONS["trial_number"]
                    + f" Rule used here: `--rejected-rule {opt.rejected_rule}`."
                    + ("" if rule_diff is None else " The other rule's values are in Table C1 beside it. "
                       + rule_text(rule_diff, opt.rejected_rule, other_rule)
                       + " The paper's Table C1 has 55 subjects (Lakretz et al.'s outlier kept: .618 = 34/55)."),
                    tabs, figs)

    # ---- exposures (Figure C2 and its slopes) ------------------------------------------------
    group_fits: dict[str, dict] = {}
    if has_order:
        pts = ex_mod.exposure_points(od, "cell")
        glm = ex_mod.exposure_fits(od, "cell")
        slopes = pd.DataFrame()
        tabs = []
        if opt.mixed and "human" in set(scored_rows(od)["group"]) and (scored_rows(od)["structure"] == "long_nested").any():
            log("fitting the Figure C2 slopes: error ~ exposures + (1|subject) per condition x violation "
                "(R with lme4 starts in a few seconds)")
            slopes = with_progress(opt, "glmer slopes (Figure C2)", 18,
                                    lambda adv: ac.fit_cell_slopes(od, "human", "long_nested", progress=adv)[0])
            tabs.append(res.table("exposure_slopes", wide_slopes(slopes),
                                  "Figure C2 slopes (humans, long-nested): error ~ exposures + (1|subject) per cell"))
            tabs.append(res.table("exposure_slopes_long", slopes, "Figure C2 slopes (long format)", show=False))
            for r in slopes.itertuples():
                if r.status not in ("ok", "") and not str(r.note).startswith("not fitted"):
                    skipped.append(f"Figure C2 slope {r.violation_type} {r.condition}: {r.status} ({r.note})")
        elif not opt.mixed:
            skipped.append("mixed models not fitted (--no-mixed)")
        tabs += [res.table("exposure_points", pts, "Error by exposures (long format)", show=False),
                 res.table("exposure_fits", glm, "Plain logistic fits per cell: error ~ exposures", show=False)]
        figs = []
        for s in ordered_structures(od)[:1]:
            for g in ordered_groups(pts[pts["structure"] == s])[:MAX_GROUP_FIGURES]:
                curves = _drawable(slopes) if (g == "human" and not slopes.empty) else glm
                kind = "glmer fixed effects (subject effect 0)" if curves is not glm else "plain logistic regression"
                figs.append(res.figure(f"exposures_grid_{slug(g)}_{s}",
                                       fig.grid_by_cell(pts, curves, g, s, "exposures", "earlier exposures to the same violation",
                                                        "Error by exposures",
                                                        out / "figures" / f"exposures_grid_{slug(g)}_{s}.png",
                                                        annotate=curves is not glm),
                                       f"{g}: error by earlier post-training encounters of the same violation in the same "
                                       f"structure and condition, {s} (seeds/000 Fig. C2). Points: mean over subjects (size: n); "
                                       f"curves: {kind}."))
        res.section("exposures", "Learning over exposures (Figure C2)",
                    "Definition: " + ac.DEFINITIONS["exposures"] + " Slopes: binomial glmer (lme4, Laplace) "
                    "`error ~ exposures + (1|subject)` fitted separately in every long-nested condition x violation "
                    "position on its answered post-training trials; 'all' pools the 8 conditions of a violation "
                    "position. The PSP inner slope is the paper's Table C2 / Figure 6c model; its printed values "
                    "are beside it.", tabs, figs)

    # ---- exposure models on the focus cell (Tables C2, C3) -----------------------------------
    if has_order:
        skipped += exposure_models_section(res, od, focus, opt, group_fits, log, out, od_other, other_rule)

    # ---- training: Figures C3, C4 ------------------------------------------------------------
    if has_order or d_all["training"].any():
        training_section(res, d, od, order_known_rows(d_all), opt, out, notes)

    # ---- model-side measures ------------------------------------------------------------------
    if (d["subject_kind"] == "model").any():
        dg = mm.demand_gap(d, seed=opt.seed, n_boot=opt.n_boot)
        ic = mm.internal_consistency(d)
        pairs = mm.paired_differentials(d)
        res.section("model_measures", "Model-side measures",
                    "Demand gap (seeds/002): logit(accuracy, low-demand method) - logit(accuracy, high-demand method), "
                    "95% bootstrap CI over trials; " + mm.SMOOTHING + ". A method never (or always) right is flagged in "
                    "the `flag` column as a task failure (or ceiling): its gap is not a result. Internal consistency (seeds/003): Pearson r between item-level "
                    "differentials (margins) of the direct method and each metalinguistic protocol, 95% CI by Fisher z. "
                    "Methods from the protocol: " + method_summary(d),
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

    if opt.by or opt.formula:
        from analysis.design_report import design_sections

        design_sections(res, d, {}, opt, out, log, notes, skipped, general=False)

    results = {
        "title": "twinlab analysis",
        "design": "lakretz",
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "runtime_s": round(time.time() - t0, 1),
        "options": asdict(opt),
        "inputs": {"files": info.files, "formats": info.formats},
        "outliers": info.outliers,
        "order_statement": statement,
        "rejected_rule": {"rule": opt.rejected_rule, "text": scoring.RULE_TEXT[opt.rejected_rule],
                          "differences": rule_diff if has_order else None},
        "notes": notes, "skipped": skipped, "exclusions": info.exclusions,
        "tables": res.tables, "figures": res.figures, "sections": res.sections,
    }
    atomic_write_text(out / "results.json", json.dumps(clean_json(results), indent=1, default=json_default))
    from analysis.report import render_report

    render_report(out)
    return results


def check_by_and_formula(df: pd.DataFrame, opt: Options) -> None:
    """--by and --formula name columns of the table: checked before any work (FormulaError names the column)."""
    from analysis import formula as fm

    cols = set(df.columns) | {"group", "subject_key", "error", "accepted", "training", "item"}
    missing = [b for b in opt.by if b not in cols]
    if missing:
        import difflib

        guess = difflib.get_close_matches(missing[0], sorted(cols), n=1)
        raise fm.FormulaError(f"--by: unknown column {missing[0]!r}" + (f" (did you mean {guess[0]!r}?)" if guess else "")
                              + "; the design's factors and columns are named in `twinlab analyze --help`")
    if opt.region or opt.word:  # the reading rows' columns; an unknown region or word is refused here
        from analysis.tasks_reading import check_target

        cols |= check_target(df, opt.region or None, opt.word or None)
    if opt.formula:
        fm.check_columns(fm.parse(opt.formula), sorted(cols))
    if opt.family not in ("auto", "binomial", "gaussian", "ordinal"):
        raise fm.FormulaError(f"--family must be auto, binomial, gaussian or ordinal, not {opt.family!r}")


def run_general(df: pd.DataFrame, info, out: Path, opt: Options, log: Callable[[str], None], t0: float) -> dict:
    """A general design (docs/general_model.md): its own sections (analysis/design_report.py)."""
    from analysis.design_rates import add_accepted, item_key
    from analysis.design_report import design_sections

    d = prepare(df)
    d["item"] = item_key(d)
    d = add_accepted(d)
    res = Results(out)
    notes, skipped = list(info.notes), []
    log(f"loaded {len(d)} trials of {d['subject_key'].nunique()} subject(s) from {len(info.files)} file(s); "
        f"design factors: {', '.join(info.factors) or 'none'}")
    design_sections(res, d, dict(info.factors), opt, out, log, notes, skipped, general=True)
    excl = pd.DataFrame(info.exclusions, columns=["what", "rows", "reason"])
    if len(excl):
        res.section("exclusions", "Exclusions", "What was left out before the analyses.",
                    [res.table("exclusions", excl, "Exclusions")])
    results = {
        "title": "twinlab analysis",
        "design": "general",
        "factors": dict(info.factors),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "runtime_s": round(time.time() - t0, 1),
        "options": asdict(opt),
        "inputs": {"files": info.files, "formats": info.formats},
        "outliers": info.outliers,
        "notes": notes, "skipped": skipped, "exclusions": info.exclusions,
        "tables": res.tables, "figures": res.figures, "sections": res.sections,
    }
    atomic_write_text(out / "results.json", json.dumps(clean_json(results), indent=1, default=json_default))
    from analysis.report import render_report

    render_report(out)
    return results
