"""The learning sections of any design's report (analysis/learning/general.py): first encounter per cell, learning
curves (training and test), exposure models on a focus cell. Added when the data hold a training block or
feedback (`learning.has_learning_data`), whatever the design is called."""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from analysis.learning import general as ln
from analysis.learning.exposures import BASE_FORMULA, fit_groups
from analysis.load.rows import scope_text, select_blocks
from analysis.measures import scoring
from analysis.report import design_figures as dfig
from analysis.report.results_folder import Results
from analysis.report.tables import fmt_ci, slug
from analysis.stats.mixed import status_of
from analysis.twins.answers import is_replay

if TYPE_CHECKING:
    from analysis.options import Options

CELL_TEXT = ("A cell is one combination of {cell}; `exposures` counts the subject's earlier trials of the same "
             "cell (training included), `trial_position` the trial's place in its block (1 = first), "
             "`trials_before` all trials before it (analysis/load/rows.py).")


def replay_note(d: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The rows without replays (a replay is neither a person nor an ordinary model subject, and its
    answers are the person's, so it would count the person's learning twice) and the sentence saying so."""
    rep = is_replay(d)
    n = int(rep.sum())
    if not n:
        return d, ""
    subjects = d.loc[rep, "subject_key"].nunique() if "subject_key" in d.columns else 0
    return d[~rep], (f" Replays ({subjects} subject(s), {n} row(s)) are left out here: their answers are the people's; "
                     "they are in the Twins sections.")


def learning_sections(res: Results, d: pd.DataFrame, cell: list[str], opt: Options, out: Path, log,
                      skipped: list[str]) -> None:
    """First encounter, learning curves and exposure models of a design whose data hold training or feedback
    (people and model groups; replays left out, with a sentence saying so)."""
    d, note = replay_note(d)
    if d.empty or not ln.has_learning_data(d):
        return
    cfg = ln.general_config(cell)
    by_rule = {r: scoring.apply_rule(d, r) for r in scoring.RULES}
    first_encounter_section(res, by_rule, cfg, opt, note)
    curves_section(res, by_rule[opt.rejected_rule], cfg, opt, out, note)
    if opt.mixed:
        exposure_models_section(res, by_rule[opt.rejected_rule], cfg, opt, log, skipped, note)


def first_encounter_section(res: Results, by_rule: dict[str, pd.DataFrame], cfg: ln.LearningConfig, opt: Options,
                            note: str = "") -> None:
    keys = ["group", "subject_kind"] + list(cfg.cell)
    tabs = {r: ln.first_encounter_table(x, cfg, opt.seed, opt.n_boot) for r, x in by_rule.items()}
    main, other = opt.rejected_rule, next(r for r in scoring.RULES if r != opt.rejected_rule)
    both = tabs[main].merge(tabs[other], on=keys, how="outer", suffixes=("", f"_{other}"))
    shown = both[keys].copy()
    shown["subjects"] = both["n_subjects"]
    shown["errors"] = both["n_errors"]
    shown[f"error [CI] ({main} "
          "rule)"] = [fmt_ci(*r) for r in zip(both["error_rate"], both["ci_low"], both["ci_high"], strict=False)]
    shown[f"error [CI] ({other} rule)"] = [fmt_ci(*r) for r in zip(both[f"error_rate_{other}"], both[f"ci_low_{other}"],
                                                                   both[f"ci_high_{other}"], strict=False)]
    shown["mean trials before"] = both["mean_trial"].round(1)
    miss = ln.unanswered_first(by_rule["strict"], cfg)
    n_miss = int(miss["unanswered_first_trials"].sum()) if len(miss) else 0
    coded = int(by_rule["paper"]["rescored"].sum()) if "rescored" in by_rule["paper"] else 0
    same = ("" if coded else " No trial here carries a release outcome code (twinlab's own sessions never do), so "
            "the two rules give the same table.")
    res.section("learning_first_encounter", "Learning: first encounter of each cell",
                "Error on each subject's first test trial of each cell (what the training taught before any test "
                "trial of that cell): errors / subjects, 95% bootstrap CI resampling subjects; people beside each "
                "model group. " + CELL_TEXT.format(cell=" x ".join(cfg.cell) or "(no factors)") + " "
                + scoring.RULE_TEXT[main] + "; beside it the " + scoring.RULE_TEXT[other] + "." + same + " "
                + (f"{n_miss} first test trial(s) had no answer: their subjects leave those cells (the next trial "
                   "is not promoted)" + ("; the paper rule scores those with a release code from it." if coded else ".")
                   if n_miss else "Every first test trial was answered.")
                + " Rows: the first test trial of each cell (training trials before it count only as exposures)."
                + note,
                [res.table("learning_first_encounter", shown, "First encounter per cell"),
                 res.table("learning_first_encounter_long", both, "First encounter (long format, both "
                                                                  "rules)", show=False),
                 res.table("learning_unanswered_first", miss, "Unanswered first trials") if n_miss else None])


def curves_section(res: Results, d: pd.DataFrame, cfg: ln.LearningConfig, opt: Options, out: Path,
                   note: str = "") -> None:
    blocks = "all" if opt.blocks == "all" else "training,test"  # the curves show training beside test
    rows = select_blocks(d, blocks)
    curves = pd.concat([ln.learning_curve(rows, cfg, x, opt.seed, opt.n_boot) for x in ("exposures", "trial_position")],
                       ignore_index=True)
    has_rt = curves["rt_mean"].notna().any()
    res.section("learning_curves", "Learning curves: training and test",
                "Error" + (" and mean response time" if has_rt else "") + " by the number of earlier trials of the "
                "same cell (`exposures`) and by the trial's position in its block (`trial_position`), per group and "
                "block kind (training: dashed; test: solid), people and every model group in one figure; 95% "
                "bootstrap CIs resampling subjects (one subject: its trials). " + scope_text(rows, blocks, opt.blocks)
                + " " + CELL_TEXT.format(cell=" x ".join(cfg.cell) or "(no factors)") + note,
                [res.table("learning_curves", curves, "Learning curves (long format: x_name, x, group, block_kind)")],
                [res.figure("learning_curves", dfig.learning_curves(curves, out / "figures" / "learning_curves.png"),
                            "Error" + (" and RT" if has_rt else "") + " by exposures and by trial position; dashed: "
                            "training, solid: test; shaded: 95% bootstrap CIs over subjects.")])


def focus_of(opt: Options, d: pd.DataFrame, cfg: ln.LearningConfig) -> dict[str, str]:
    """--focus FACTOR=LEVEL,... (checked); the Lakretz form (or none) on a general design: every cell."""
    return ln.parse_focus(opt.focus, d, list(cfg.cell)) if "=" in (opt.focus or "") else {}


def exposure_models_section(res: Results, d: pd.DataFrame, cfg: ln.LearningConfig, opt: Options, log,
                            skipped: list[str], note: str = "") -> None:
    rows = select_blocks(d, opt.blocks)
    focus = focus_of(opt, d, cfg)
    ftext = ln.focus_text(focus)
    data = ln.focus_data(rows, cfg, focus)
    groups = sorted(set(data["group"]), key=lambda g: (g != "human", g))
    no_history = [g for g in groups if not ln.sees_history(d, g)]
    fit_groups_ = [g for g in groups if g not in no_history]
    log(f"fitting the exposure models on {ftext} for {len(fit_groups_)} group(s)")
    items, tabs, slopes = [], [], []
    fits, joint = fit_groups(data, fit_groups_, ftext)
    for g, m in fits.items():
        skipped.extend(m.skipped)
        items.append({"kind": "mixed", "group": g, "paper_tables": False,
                      **{k: v for k, v in asdict(m).items() if k != "label"}})
        slopes.append(_slope_row(g, m.base, m.n_rows, m.n_subjects, "; ".join(m.skipped)))
        if m.comparison:
            tabs.append(res.table(f"learning_comparison_{slug(g)}", pd.DataFrame([m.comparison]),
                                  f"{g}: base vs extended model (AIC, BIC, likelihood ratio)", show=False))
    for j in joint:
        items.append({"kind": "joint", **j})
        if "skipped" in j:
            skipped.append(f"joint learning model human + {j['model_group']}: {j['skipped']}")
    for g in no_history:
        items.append({"kind": "text", "text": f"{g}: no learning fit: {ln.NO_HISTORY}."})
    res.section("learning_exposure_models", f"Learning: exposure models on {ftext}",
                f"Rows: the answered trials of {ftext}. {scope_text(ln.focus_source(rows, cfg, focus), opt.blocks)} "
                f"Base model: `{BASE_FORMULA}`; "
                "extended model: `error ~ exposures + factor(session) + total_trials + (1 + exposures|subject)` "
                "(session dropped with one session; total_trials = trials before / 100), compared by AIC, BIC and a "
                "likelihood-ratio test; the joint model `error ~ exposures * subject_kind + (1|subject)` compares "
                "people's learning with each model group's (the interaction: how much the slopes differ). Binomial "
                "glmer (lme4); every fit shows its diagnostics, and a fit that did not converge, is singular or has a "
                "variance at its boundary is marked so and never given significance stars." + note,
                ([res.table("learning_exposure_slopes", pd.DataFrame(slopes), "Exposure slope per group (base model)")]
                 if slopes else []) + tabs, [], items)


def _slope_row(group: str, fit: dict | None, n_rows: int, n_subjects: int, note: str) -> dict:
    row = {"group": group, "trials": n_rows, "subjects": n_subjects, "estimate": None, "se": None, "z": None,
           "p": None, "status": "not fitted", "note": note}
    if fit:
        c = next(c for c in fit["coefficients"] if c["term"] == "exposures")
        row.update(estimate=c["estimate"], se=c["se"], z=c["z"], p=c["p"], status=status_of(fit))
    return row
