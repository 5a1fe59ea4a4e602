"""The Lakretz cells' sections with more than a table each: signal detection, the exposure models (Tables
C2, C3, joint models), training (Figures C3, C4), moved from analysis/report/sections.py (the core quotes no
paper). Each takes the prepared trials and the `Results` collector, and adds its tables, figures and text."""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pandas as pd

from analysis.learning import exposures as ex_mod
from analysis.learning import general as ln
from analysis.load.prepare import scored_rows
from analysis.load.rows import select_blocks
from analysis.measures import detection as det_mod
from analysis.options import Options
from analysis.report import figures as fig
from analysis.report.results_folder import Results
from analysis.report.sections import with_progress
from analysis.report.tables import ordered_groups, slug
from analysis.stats.mixed import status_of
from studies.lakretz2021 import appendix_c as ac
from studies.lakretz2021.learning import LAKRETZ
from studies.lakretz2021.tables import ordered_structures, wide_detection, wide_training


def exposure_models_section(res: Results, od: pd.DataFrame, focus: dict[str, str], opt: Options, group_fits: dict, log,
                            out: Path, od_other: pd.DataFrame | None = None, other_rule: str = "strict") -> list[str]:
    """Tables C2/C3 on the focus cell per group, the LR test, joint human + model fits; Figure 6c (the general
    learning analyses of analysis/learning/general.py on the Lakretz cells, post-training trials)."""
    skipped: list[str] = []
    test = select_blocks(od, "test")
    pts = ln.cell_points(test, LAKRETZ)
    glm = ln.cell_fits(test, LAKRETZ)
    data = ln.focus_data(test, LAKRETZ, focus)
    ftext = ln.focus_path_text(focus)
    tabs: list[str | None] = []
    items: list[dict] = []
    if opt.mixed:
        fgroups = ordered_groups(data)
        no_history = [g for g in fgroups if not ln.sees_history(od, g)]
        fgroups = [g for g in fgroups if g not in no_history]
        todo = len(fgroups) + (len([g for g in fgroups if g != "human"]) if "human" in fgroups else 0)
        log(f"fitting the exposure models on {ftext} for {len(fgroups)} group(s)")
        fits, joint = with_progress(opt, "glmer fits (Tables C2, C3)", max(1, todo),
                                    lambda advance: ex_mod.fit_groups(data, fgroups, ftext, advance))
        for g, m in fits.items():
            group_fits[g] = asdict(m)
            skipped.extend(m.skipped)
        skipped += [f"joint model human + {j['model_group']}: {j['skipped']}" for j in joint if "skipped" in j]
        for g, m in group_fits.items():
            for kind in ("base", "extended"):
                if m.get(kind) and status_of(m[kind]) != "ok":
                    skipped.append(f"{g}: the {kind} mixed model is {status_of(m[kind])} (see its warnings)")
                if m.get(kind):
                    tabs.append(res.table(f"mixed_{kind}_{slug(g)}", pd.DataFrame(m[kind]["coefficients"]),
                                          f"{g}: {m[kind]['formula']}", show=False))
            if m.get("comparison"):
                tabs.append(res.table(f"mixed_comparison_{slug(g)}", pd.DataFrame([m["comparison"]]),
                                      f"{g}: base vs extended model (AIC, BIC, likelihood ratio)", show=False))
        for j in joint:
            if j.get("fit"):
                tabs.append(res.table(f"mixed_joint_{slug(j['model_group'])}", pd.DataFrame(j["fit"]["coefficients"]),
                                      f"human + {j['model_group']}: {j['formula']}", show=False))
        items = [{"kind": "mixed", "group": g, **{k: m.get(k) for k in ("base", "extended", "comparison", "n_rows",
                                                                       "n_subjects", "focus")}}
                 for g, m in group_fits.items()] + [{"kind": "joint", **j} for j in joint]
        if "human" in group_fits and focus == ac.PSP_FOCUS:
            items.insert(0, {"kind": "paper", "text": "seeds/000 Table C2 / Figure 6c (55 subjects): exposures "
                             f"beta = {ac.PSP_SLOPE_PAPER['estimate']}, z = {ac.PSP_SLOPE_PAPER['z']}, "
                             f"p = {ac.PSP_SLOPE_PAPER['p']}; the paper reports that AIC and BIC favour this base "
                             "model over the extended one (Table C3). This data: "
                             + _slope_text(group_fits["human"].get("base"), opt.rejected_rule) + "; "
                             + _slope_text(_other_rule_fit(od_other, focus), other_rule) + "."})
    if opt.mixed and no_history:
        items.append({"kind": "text", "text": "Not fitted for " + ", ".join(no_history) + ": their context shows "
                      "no earlier trial (context none or a fixed few-shot prompt), so a trial cannot depend on "
                      "earlier exposures and an exposure slope would only fit noise; the exposure models are fitted "
                      "for humans and for model subjects with a running context (trial history with feedback) "
                      "or whose weights learn after trials (context_mode `...+weights:...`)."})
    figs = [res.figure("exposures_focus",
                       fig.exposure_focus(pts, group_fits, glm, focus, out / "figures" / "exposures_focus.png"),
                       f"Error on {ftext} by the number of earlier exposures to it (seeds/000 Fig. 6c). Points: mean "
                       "over "
                       "subjects (size: n); solid: glmer fixed-effect prediction; dashed: plain logistic fit.")]
    res.section("exposure_models", f"Exposure models on {ftext} (Tables C2, C3)",
                "Definition: " + ac.DEFINITIONS["exposures"] + f" Rows: the answered post-training trials of {ftext}. "
                f"Base model (Table C2): `{ex_mod.BASE_FORMULA}`; extended model (Table C3): `error ~ exposures + "
                "factor(session) + total_trials + (1 + exposures|subject)` (total_trials = trials completed before it, "
                "all sessions, / 100; session a factor with session 1 as reference -- as the number 1/2 the fit on the "
                "full release did not converge -- and dropped when there is only one). Every fit shows its diagnostics "
                "(converged, singular, optimiser, fallback refit); a fit that is not interpretable is marked so and "
                "gets no significance stars. Both binomial glmer (lme4, Laplace) through "
                "rpy2 on the same rows, compared by AIC, BIC and a likelihood-ratio test (chi-square, df = the extra "
                "parameters); Wald CIs. Joint models add subject_kind (human vs one model group) and its interaction "
                "with exposures.", tabs, figs, items)
    return skipped



def _other_rule_fit(od_other: pd.DataFrame | None, focus: dict[str, str]) -> dict | None:
    """The humans' base model under the other scoring rule (shown beside the paper's slope)."""
    if od_other is None:
        return None
    data = ln.focus_data(select_blocks(od_other, "test"), LAKRETZ, focus, ["human"]).reset_index(drop=True)
    return ex_mod.fit_models_on(data, "human", ln.focus_path_text(focus), extended=False).base



def _slope_text(fit: dict | None, rule: str) -> str:
    if not fit:
        return f"{rule} rule: not fitted"
    c = next(c for c in fit["coefficients"] if c["term"] == "exposures")
    status = status_of(fit)
    return (f"{rule} rule beta = {c['estimate']:.3f}, z = {c['z']:.2f}, p = {c['p']:.3f} "
            f"({fit['n_obs']} trials, {fit['n_groups']} subjects{'' if status == 'ok' else '; ' + status})")



def detection_section(res: Results, d: pd.DataFrame, er: pd.DataFrame, opt: Options, out: Path) -> None:
    """Hits, false alarms, d' and c for every group that answered violation / no violation."""

    pooled = det_mod.detection_table(d, seed=opt.seed, n_boot=opt.n_boot, pooled=True)
    if pooled.empty:
        return
    per_cell = det_mod.detection_table(d, seed=opt.seed, n_boot=opt.n_boot)
    res.section("detection", "Violation detection as signal detection (hits, false alarms, d', c)",
                "Every group that answered 'violation' / 'no violation' (humans; model protocols such as "
                "violation_judgment or direct; forced choice is not a detection task). Signal trials: post-training "
                "trials with a violation at the dependency (a hit = 'violation'); noise trials: the grammatical "
                "post-training trials of the same structure and condition (a false alarm = 'violation'); unanswered "
                "trials are left out. Rates with the " + det_mod.CORRECTION + "; d' = z(H) - z(F), c = -(z(H) + "
                "z(F)) / 2 (c < 0: leans to answering 'violation', c > 0: to 'no violation'). Counts pooled over "
                f"subjects; 95% percentile bootstrap CIs, {opt.n_boot} resamples of subjects with all their trials "
                "(one subject: its trials). The miss rate is the error rate of the section above: read it beside the "
                "false alarms, d' and c. Per condition: the CSV.",
                [res.table("detection", wide_detection(pooled), "Signal detection, conditions pooled"),
                 res.table("detection_pooled", pooled, "Signal detection, conditions pooled (long format)", show=False),
                 res.table("detection_by_condition", per_cell, "Signal detection per condition (long format)",
                           show=False)],
                [res.figure("detection", fig.dprime_criterion_plot(pooled, out / "figures" / "detection.png"),
                            "d' against the criterion c per group and violated dependency (filled: inner, open: "
                            "outer), "
                            "conditions pooled; bars: 95% bootstrap CIs. A subject answering 'violation' to everything "
                            "sits far left at d' near 0; one answering 'no violation' to everything far right.")])



def training_section(res: Results, d: pd.DataFrame, od: pd.DataFrame, od_all: pd.DataFrame, opt: Options, out: Path,
                      notes: list[str]) -> None:
    """Figure C3 (encounters including training) and Figure C4 (errors during training), or why not."""
    tr = od[od["training"]]
    with_training = set(tr["subject_key"])
    with_test = set(scored_rows(od)["subject_key"])
    both = with_training & with_test
    texts, tabs, figs = ["Definition: " + ac.DEFINITIONS["exposures_structure"]], [], []
    if both:
        sub = od[od["subject_key"].isin(both)]
        pts_s = ln.cell_points(sub, LAKRETZ, "exposures_structure").rename(columns={"exposures_structure": "exposures"})
        glm_s = ln.cell_fits(sub, LAKRETZ, "exposures_structure")
        tabs.append(res.table("exposure_points_structure", pts_s, "Figure C3 points (long format)", show=False))
        for s in ordered_structures(sub)[:1]:
            for g in ordered_groups(pts_s[pts_s["structure"] == s]):  # one figure per group, none dropped
                figs.append(res.figure(f"exposures_structure_{slug(g)}_{s}",
                                       fig.grid_by_cell(pts_s, glm_s, g, s, "exposures",
                                                        "earlier encounters with the structure (any violation, incl. "
                                                        "training)",
                                                        "Error by encounters with the structure",
                                                        out / "figures" / f"exposures_structure_{slug(g)}_{s}.png"),
                                       f"{g}: error by earlier encounters with the structure and condition, any "
                                       "violation or "
                                       f"none, training included, {s} (seeds/000 Fig. C3); {len(both)} subject(s) with "
                                       "training and test trials."))
        texts.append(f"Figure C3 uses the {len(both)} subject(s) that have both a training block and test trials.")
    else:
        why = (f"{len(with_training)} subject(s) have training trials but none of them has test trials"
               if with_training else "no subject has training trials")
        texts.append("Figure C3 is not drawn: it counts encounters including the training phase, so it needs the "
                     f"training logs of the analysed subjects, and here {why}. (The public Lakretz et al. release has "
                     "training logs only for pilot subjects 06-09, none for the 55 analysed subjects.)")
    c4 = ac.training_error_rates(od_all, seed=opt.seed, n_boot=opt.n_boot)
    pilots = sorted(set(od_all.loc[od_all["training"] & ~od_all["in_results_table"].fillna(True).astype(bool),
                                   "subject_id"]))
    if len(c4):
        tabs.append(res.table("training_error_rates_wide", wide_training(c4[c4["group"] == ordered_groups(c4)[0]]),
                              "Figure C4: error rates during training (session 1), rate (errors/trials)"))
        tabs.append(res.table("training_error_rates", c4, "Figure C4 (long format)", show=False))
        g4 = ordered_groups(c4)[0]
        figs.append(res.figure("training_error_rates",
                               fig.training_bars(c4[c4["group"] == g4], out / "figures" / "training_error_rates.png"),
                               f"{g4}: error rates on the training trials of the first session by structure and "
                               "violation "
                               f"(none: errors are false alarms), {c4['n_subjects'].max()} subject(s) at most per bar; "
                               "95% bootstrap CIs (seeds/000 Fig. C4)."))
        texts.append("Figure C4: error rates on the training trials of session 1, by structure and violation position "
                     "(none = no violation; an error there is a false alarm, hard to interpret as seeds/000 notes)"
                     + (f"; from subject(s) {', '.join(pilots)}, who have a training log but no row in the results "
                        "table (pilot subjects in the public release), not from the analysed "
                        "subjects." if pilots else "."))
    else:
        texts.append("Figure C4 is not drawn: no training trials with answers in session 1 (it needs training logs).")
    res.section("training", "Training (Figures C3, C4)", " ".join(texts), tabs, figs)
