"""The Lakretz cells' sections (seeds/000: error rates, first encounters, exposures; seeds/002-003:
model-side measures), one function per section, in the paper's layout; the numbers come from the general
learning analyses (analysis/learning/general.py, configured `LAKRETZ`: studies/lakretz2021/learning.py). The
plan `LAKRETZ_CELLS` (studies/lakretz2021/plan.py) runs them in order."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from analysis.learning import general as ln
from analysis.load.prepare import SIMULATED_HUMANS, order_known_rows, prepare, scored_rows
from analysis.load.rows import select_blocks
from analysis.measures import error_rates as er_mod
from analysis.measures import model_measures as mm
from analysis.measures import scoring
from analysis.measures.error_rates import sort_conditions
from analysis.options import Options
from analysis.report import figures as fig
from analysis.report.data_section import drop_training_only_sessions, order_statement, outlier_text, sample_sizes
from analysis.report.results_folder import Results
from analysis.report.sections import method_summary, with_progress
from analysis.report.tables import fmt_rate, ordered_groups, slug
from studies.lakretz2021 import appendix_c as ac
from studies.lakretz2021.learning import LAKRETZ
from studies.lakretz2021.tables import (
    _drawable,
    ordered_structures,
    rule_differences,
    rule_text,
    wide_error_rates,
    wide_slopes,
    wide_table_c1,
)


@dataclass
class LakretzRows:
    """The rows each section reads: all, analysed, order known (strict), scored by the chosen rule and the other."""

    d_all: pd.DataFrame
    d: pd.DataFrame
    od_strict: pd.DataFrame
    od: pd.DataFrame
    od_other: pd.DataFrame
    other_rule: str
    has_order: bool
    focus: dict[str, str]
    notes: list[str] = field(default_factory=list)


def lakretz_rows(df: pd.DataFrame, info, opt: Options) -> LakretzRows:
    """Prepare the rows; subjects outside an imported release's results table and training-only sessions out."""
    focus = ln.parse_focus_path(opt.focus or LAKRETZ.default_focus, LAKRETZ)  # the pipeline applied it already
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
    notes = list(info.notes)
    if (d["group"] == SIMULATED_HUMANS).any():
        n_sim = d.loc[d["group"] == SIMULATED_HUMANS, "subject_key"].nunique()
        notes.insert(0, f"SIMULATED HUMANS: the group '{SIMULATED_HUMANS}' ({n_sim} subjects) holds answers generated "
                        "by "
                     "analysis/simulate.py (a logistic error model with known parameters; scripts/demo.sh states "
                     "them), not data from people; it is analysed as its own group and never pooled with "
                     "real participants.")
    if not d["training"].any():
        notes.append("no training block in the data: every trial counts as post-training")
    return LakretzRows(d_all, d, od_strict, od, od_other, other_rule, has_order, focus, notes)


def data_section(res: Results, d: pd.DataFrame, info, log) -> str:
    """Sample sizes, exclusions, and what needs the trial order; returns the order statement."""
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
    return statement


def error_rates_section(res: Results, d: pd.DataFrame, opt: Options, out: Path) -> pd.DataFrame:
    """Error rates by condition x dependency (Figure 2), false alarms beside them."""
    er = er_mod.error_rates(d, seed=opt.seed, n_boot=opt.n_boot, show_progress=opt.show_progress)
    figs, tabs = [], [res.table("error_rates", er, "Error rates, all cells (long format)", show=False)]
    one_group = er["group"].nunique() == 1
    for s in ordered_structures(d):
        tabs.append(res.table(f"error_rates_wide_{s}", wide_error_rates(er, s),
                              f"Error rates, {s}: error rate [95% CI] by condition"))
        if not one_group:
            figs.append(res.figure(f"error_rates_{s}",
                                   fig.error_rate_bars(er, s, out / "figures" / f"error_rates_{s}.png"),
                                   f"Error rates by condition and dependency, {s}. Bars: errors / trials with 95% "
                                   "bootstrap "
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
                "Definition: "
                "" + ac.DEFINITIONS["error"] + " Models: an error is the wrong choice. The rate of a cell is "
                "errors / trials over all its subjects (`mean_subject_rate` in the CSV is the mean of the subjects' "
                "own "
                f"rates). 95% percentile bootstrap CIs, {opt.n_boot} resamples of subjects with all their trials, seed "
                f"{opt.seed} (a group with one subject resamples its trials; see ci_unit). A subject that reports a "
                "violation on every trial makes no errors here: check the false alarms on grammatical trials. "
                "These need no trial order.", tabs, figs)
    return er


def first_encounter_section(res: Results, r: LakretzRows, opt: Options, out: Path) -> dict | None:
    """Table C1, Figures 6a and C1; returns the differences between the two REJECTED rules (or None)."""
    od, od_strict, od_other, other_rule, has_order = r.od, r.od_strict, r.od_other, r.other_rule, r.has_order
    fe = sort_conditions(ln.first_encounter_table(od, LAKRETZ, seed=opt.seed, n_boot=opt.n_boot))
    rule_diff = None
    if has_order:
        fe_fits = sort_conditions(ln.first_encounter_fits(od, LAKRETZ))
        fe_pts = ln.first_encounter_points(od, LAKRETZ)
        tabs, figs = [], []
        if "human" in set(fe["group"]) and (fe["structure"] == "long_nested").any():
            fe_other = sort_conditions(ln.first_encounter_table(od_other, LAKRETZ, seed=opt.seed, n_boot=opt.n_boot))
            rule_diff = rule_differences(od_strict, {opt.rejected_rule: fe, other_rule: fe_other})
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
                c1 = ac.table_c1(fe, g, s)
                if not c1.empty:
                    tabs.append(res.table(f"table_c1_{slug(g)}_{s}", c1.map(fmt_rate).reset_index(),
                                          f"First-encounter error rates: {g}, {s}"))
            if fe["group"].nunique() > 1:
                figs.append(res.figure(f"first_encounter_{s}",
                                       fig.first_encounter_bars(fe, s, out / "figures" / f"first_encounter_{s}.png"),
                                       f"Error on the first post-training encounter of each condition, {s} (seeds/000 "
                                       "Fig. 6a); "
                                       "95% bootstrap CIs over subjects; dotted line: chance (0.5)."))
        if fe["group"].nunique() == 1:
            g1 = fe["group"].iloc[0]
            figs.insert(0, res.figure("first_encounter", fig.rates_by_structure(
                fe, "violation_position", f"First encounter after training, {g1} (95% bootstrap CI over subjects)",
                "error on first encounter", out / "figures" / "first_encounter.png"),
                f"{g1}: error on the first post-training encounter of each condition and violation (seeds/000 Fig. 6a "
                "shows the inner row; red: inner, blue: outer); 95% bootstrap CIs over subjects; dotted line: chance."))
        tabs += [res.table("first_encounter", fe, "First-encounter error rates, all cells (long format)", show=False),
                 res.table("first_encounter_fits", fe_fits, "Logistic fits: first-encounter error ~ trial "
                                                            "number", show=False)]
        for s in ordered_structures(od)[:1]:  # Figure C1 is about the long-nested sentences
            for g in ordered_groups(fe_pts[fe_pts["structure"] == s]):  # one figure per group, none dropped
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
    return rule_diff


def exposures_section(res: Results, r: LakretzRows, opt: Options, out: Path, log, skipped: list[str]) -> None:
    """Figure C2 and its glmer slopes."""
    od, has_order = r.od, r.has_order
    if has_order:
        test = select_blocks(od, "test")
        pts = ln.cell_points(test, LAKRETZ)
        glm = ln.cell_fits(test, LAKRETZ)
        slopes = pd.DataFrame()
        tabs = []
        if (opt.mixed and "human" in set(scored_rows(od)["group"])
                and (scored_rows(od)["structure"] == "long_nested").any()):
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
            for g in ordered_groups(pts[pts["structure"] == s]):  # one figure per group, none dropped
                curves = _drawable(slopes) if (g == "human" and not slopes.empty) else glm
                kind = "glmer fixed effects (subject effect 0)" if curves is not glm else "plain logistic regression"
                figs.append(res.figure(f"exposures_grid_{slug(g)}_{s}",
                                       fig.grid_by_cell(pts, curves, g, s, "exposures", "earlier exposures to the same "
                                                                                        "violation",
                                                        "Error by exposures",
                                                        out / "figures" / f"exposures_grid_{slug(g)}_{s}.png",
                                                        annotate=curves is not glm),
                                       f"{g}: error by earlier post-training encounters of the same violation in the "
                                       "same "
                                       f"structure and condition, {s} (seeds/000 Fig. C2). Points: mean over subjects "
                                       "(size: n); "
                                       f"curves: {kind}."))
        res.section("exposures", "Learning over exposures (Figure C2)",
                    "Definition: " + ac.DEFINITIONS["exposures"] + " Slopes: binomial glmer (lme4, Laplace) "
                    "`error ~ exposures + (1|subject)` fitted separately in every long-nested condition x violation "
                    "position on its answered post-training trials; 'all' pools the 8 conditions of a violation "
                    "position. The PSP inner slope is the paper's Table C2 / Figure 6c model; its printed values "
                    "are beside it.", tabs, figs)


def model_measures_section(res: Results, d: pd.DataFrame, opt: Options, out: Path, notes: list[str]) -> None:
    """Demand gap (seeds/002) and internal consistency (seeds/003)."""
    if (d["subject_kind"] == "model").any():
        dg = mm.demand_gap(d, seed=opt.seed, n_boot=opt.n_boot)
        ic = mm.internal_consistency(d)
        pairs = mm.paired_differentials(d)
        res.section("model_measures", "Model-side measures",
                    "Demand gap (seeds/002): logit(accuracy, low-demand method) - logit(accuracy, high-demand method), "
                    "95% bootstrap CI over trials; "
                    "" + mm.SMOOTHING + ". A method never (or always) right is flagged in "
                    "the `flag` column as a task failure (or ceiling): its gap is not a result. Internal consistency "
                    "(seeds/003): Pearson r between item-level "
                    "differentials (margins) of the direct method and each metalinguistic protocol, 95% CI by Fisher "
                    "z. "
                    "Methods from the protocol: " + method_summary(d),
                    [res.table("demand_gap", dg, "Demand gap") if len(dg) else None,
                     res.table("internal_consistency", ic, "Internal consistency") if len(ic) else None],
                    [res.figure("demand_gap", fig.demand_gap_plot(dg, out / "figures" / "demand_gap.png"),
                                "Demand gap per model and context (error bars: 95% bootstrap CI)."),
                     res.figure("internal_consistency",
                                fig.consistency_scatter(pairs, ic, out / "figures" / "internal_consistency.png"),
                                "Item-level differentials: direct (x) vs metalinguistic (y).")])
        if dg.empty:
            notes.append("demand gap: no model has both a direct and a metalinguistic (or production) protocol")
        if ic.empty:
            notes.append("internal consistency: no items scored by both a direct and a metalinguistic protocol")
