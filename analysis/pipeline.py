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
from analysis.mixed import significance_mark, status_of
from analysis import appendix_c as ac
from analysis import scoring
from analysis.prepare import SIMULATED_HUMANS, condition_order, is_human_group, order_known_rows, prepare, scored_rows

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
    rejected_rule: str = "paper"  # analysis/scoring.py: how REJECTED trials count in first encounters and exposures
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

    def table(self, name: str, df: pd.DataFrame, title: str, index: bool = False, show: bool = True,
              transpose: bool = False) -> str:
        """Write tables/NAME.csv; `show` False lists it as a CSV link only (long tables); `transpose`
        shows the CSV's rows as columns (a few groups with many measures)."""
        f = f"tables/{name}.csv"
        df.to_csv(self.out / f, index=index)
        self.tables[name] = {"file": f, "title": title, "rows": int(len(df)), "index": index, "show": show,
                             "transpose": transpose}
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
        d = d[~only].reset_index(drop=True)
    if d.empty:
        raise LoadError("no trials to analyse: " + "; ".join(info.notes))
    return d


def sample_sizes(d: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for g, x in d.groupby("group", sort=True):
        post = x[~x["training"]]
        known = x["order_known"]
        rows.append({
            "group": g, "subject_kind": x["subject_kind"].iloc[0], "subjects": x["subject_key"].nunique(),
            "subjects_with_trial_order": x.loc[known, "subject_key"].nunique(),
            "sessions": x.loc[known, ["subject_key", "session"]].drop_duplicates().shape[0], "trials": len(x),
            "training_trials": int(x["training"].sum()),
            "post_training_violation_trials_scored": int(scored_rows(x).shape[0]),
            "post_training_grammatical_trials": int((post["violation_position"] == "none").sum()),
            "other_or_filler_trials": int((x["violation_position"] == "other").sum()),
            "trials_without_answer": int(x["correct"].isna().sum()),
        })
    return pd.DataFrame(rows)


ORDER_ANALYSES = ("first-encounter error rates (Table C1, Figure 6a)",
                  "first encounter against trial number (Figure C1, 6b)",
                  "learning over exposures (Figure 6c, Figure C2 with its glmer slopes)",
                  "the exposure models `error ~ exposures + (1|subject)` and the extended model (Tables C2, C3)",
                  "Figures C3 and C4 (these also need training logs)")
HOW_TO_ORDER = ("`twinlab import lakretz2021 --results dataframe_results_all_trials.csv --logs LOG_FOLDER --out "
                "imported`, then `twinlab analyze imported --out REPORT`")


def order_statement(d: pd.DataFrame, info_files: list[str]) -> str | None:
    """The one paragraph that says what could not run without the trial order, and how to get it."""
    unknown_rows = ~d["order_known"]
    if not unknown_rows.any():
        return None
    by_subject = d.groupby("subject_key")["order_known"].agg(["any", "all"])
    none_known = by_subject.index[~by_subject["any"]]
    partly = by_subject.index[by_subject["any"] & ~by_subject["all"]]
    n_all = d["subject_key"].nunique()
    files = sorted(set(d.loc[unknown_rows, "source_file"].map(lambda f: Path(str(f)).name)))
    shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    if len(none_known) == n_all:
        what, ran = f"for all {n_all} subject(s)", "They were not run."
    else:
        parts = []
        if len(none_known):
            parts.append(f"for {len(none_known)} of {n_all} subject(s)")
        if len(partly):
            parts.append(f"for some rows of {len(partly)} more subject(s) (rows without a log trial)")
        what = " and ".join(parts)
        ran = (f"They were run on the {int((~unknown_rows).sum())} row(s) whose order is known; the "
               f"{int(unknown_rows.sum())} row(s) of unknown order are left out of them (and of the trial and "
               "exposure counts).")
    return (f"The trial order is unknown {what} ({shown}): a results table without session logs (the public "
            "Lakretz et al. 2021 table merges each subject's two sessions and restarts trial_num in each), or "
            "rows imported from the table alone. Error rates, false alarms and the model-side measures need no "
            "order and are reported below. These analyses need each subject's trials in time order, which only "
            "the raw session logs hold: " + "; ".join(ORDER_ANALYSES) + ". " + ran + " To supply the order, "
            "import the table together with the logs: " + HOW_TO_ORDER + ".")


def _fmt_rate(v: float) -> str:
    return "" if pd.isna(v) else f"{v:.3f}"


def _rate_ci(r: pd.Series) -> str:
    if pd.isna(r["error_rate"]):
        return ""
    ci = "" if pd.isna(r["ci_low"]) else f" [{r['ci_low']:.2f}, {r['ci_high']:.2f}]"
    return f"{r['error_rate']:.3f}{ci}"


def wide_error_rates(er: pd.DataFrame, structure: str) -> pd.DataFrame:
    """Paper layout: rows group x dependency, columns the conditions; cells 'rate [CI]'."""
    t = er[er["structure"] == structure]
    conds = condition_order(t["condition"])
    rows = []
    for g in _groups(t):
        for dep in ("inner", "outer"):
            x = t[(t["group"] == g) & (t["dependency"] == dep)].set_index("condition")
            if x.empty:
                continue
            row = {"group": g, "dependency": dep}
            for c in conds:
                row[c] = _rate_ci(x.loc[c]) if c in x.index else ""
            row["trials"] = int(x["n_trials"].sum())
            rows.append(row)
    return pd.DataFrame(rows)


def wide_table_c1(beside: pd.DataFrame, rule: str = "paper", other_rule: str = "strict") -> pd.DataFrame:
    """Table C1 as printed (rows violation_type, conditions as columns): this data under the chosen
    rule, its difference from the paper, the other rule's values, and the paper's printed row."""
    def kn(rate, k, n) -> str:
        return "" if n == 0 else f"{rate:.3f} ({int(k)}/{int(n)})"

    rows = []
    for pos in ("inner", "outer"):
        x = beside[beside["violation_type"] == pos].set_index("condition")
        ours = {"violation_type": pos, "source": f"this data, {rule} rule (k/n)"}
        diff = {"violation_type": pos, "source": "difference (this data - paper)"}
        other = {"violation_type": pos, "source": f"this data, {other_rule} rule (k/n)"}
        paper = {"violation_type": pos, "source": "seeds/000 Table C1"}
        for c in ac.LONG_NESTED_ORDER:
            r = x.loc[c]
            ours[c] = kn(r["error_rate"], r["n_errors"], r["n_subjects"])
            diff[c] = "" if r["n_subjects"] == 0 else f"{r['difference']:+.3f}"
            if "other_error_rate" in r:
                other[c] = kn(r["other_error_rate"], r["other_n_errors"], r["other_n_subjects"])
            paper[c] = f"{r['paper_error_rate']:.3f}"
        rows += [ours, diff] + ([other] if "other_error_rate" in x.columns else []) + [paper]
    return pd.DataFrame(rows)


def rule_text(diff: dict | None, rule: str, other_rule: str) -> str:
    """One sentence: how many trials and Table C1 cells the choice of rule changes."""
    if diff is None:
        return ""
    cells = ", ".join(f"{c['group']} {c['structure']} {c['violation_position']} {c['condition']}"
                      for c in diff["cells"]) or "none"
    return (f"The rules differ on {diff['trials_scored_from_code']} post-training violation trial(s) without an "
            f"answer that carry a release code ({diff['first_encounter_trials_scored_from_code']} of them first "
            f"encounters); first-encounter cells whose k/n differ between the {rule} and the {other_rule} rule: "
            f"{diff['first_encounter_cells_that_differ']} ({cells}), {diff['table_c1_cells_that_differ']} of them "
            "in Table C1 (humans, long-nested).")


def _drawable(slopes: pd.DataFrame) -> pd.DataFrame:
    """Slopes as figure curves; a fit that is not interpretable (not converged, singular, degenerate)
    gets no curve and carries its status, which the figure writes into the panel instead."""
    c = slopes.rename(columns={"estimate": "slope", "violation_type": "violation_position"}).copy()
    bad = c["status"].fillna("").ne("ok")
    c.loc[bad, ["slope", "intercept"]] = float("nan")
    return c


def wide_training(c4: pd.DataFrame) -> pd.DataFrame:
    """Figure C4 as a table: rows structure, columns the violation position, cells 'rate (k/n)'."""
    rows = []
    for st, x in c4.groupby("structure", sort=False):
        row = {"group": x["group"].iloc[0], "structure": st}
        x = x.set_index("violation_type")
        for v in ("none", "inner", "outer", "other"):
            row[v] = f"{x.loc[v, 'error_rate']:.3f} ({x.loc[v, 'n_errors']}/{x.loc[v, 'n_trials']})" if v in x.index else ""
        rows.append(row)
    return pd.DataFrame(rows)


def _p(v: float) -> str:
    return "" if pd.isna(v) else ("<0.001" if v < 0.001 else f"{v:.3f}")


def wide_slopes(sl: pd.DataFrame) -> pd.DataFrame:
    """Figure C2 slopes: rows violation_type x statistic, columns the conditions (and 'all' pooled);
    the paper's PSP inner values in a column beside PSP."""
    conds = [c for c in dict.fromkeys(sl["condition"])]
    pp = ac.PSP_SLOPE_PAPER
    paper_col = "PSP, seeds/000"
    rows = []
    for pos in ("inner", "outer"):
        x = sl[sl["violation_type"] == pos].set_index("condition")
        if x.empty:
            continue
        for stat, col in (("beta (exposures)", "estimate"), ("SE", "se"), ("z", "z"), ("p", "p"),
                          ("trials / subjects", None), ("fit", "status")):
            row = {"violation_type": pos, "statistic": stat}
            for c in conds:
                r = x.loc[c]
                if col is None:
                    row[c] = f"{r['n_trials']} / {r['n_subjects']}"
                elif col == "status":
                    row[c] = "" if pd.isna(r.get("status")) else str(r.get("status"))
                elif pd.isna(r["estimate"]) and str(r["note"]).startswith("not fitted"):
                    row[c] = "not fitted" if col == "estimate" else ""
                elif r.get("status") not in ("ok", None, "") and col == "estimate":
                    row[c] = f"{r[col]:.2f} ({r['status']})"
                elif col == "p":
                    row[c] = _p(r[col]) + significance_mark(r[col], r.get("status", "ok"))
                else:
                    row[c] = "" if pd.isna(r[col]) else f"{r[col]:.2f}"
                if c == "PSP":
                    paper = {"estimate": f"{pp['estimate']:.2f}", "z": f"{pp['z']:.2f}", "p": f"{pp['p']:.3f}",
                             None: "- / 55", "status": "as printed"}.get(col, "")
                    row[paper_col] = paper if pos == "inner" else ""
            rows.append(row)
    return pd.DataFrame(rows)


def run_analysis(data: Iterable[str | Path], out: str | Path, options: Options | None = None,
                 log: Callable[[str], None] | None = None) -> dict:
    """Run every analysis on the data and write the results folder; returns the results dict."""
    opt = options or Options()
    log = log or (lambda s: None)
    t0 = time.time()
    out = Path(out)
    focus = Focus.parse(opt.focus)
    df, info = load(data, opt.fmt, keep_outliers=opt.keep_outliers, training_blocks=opt.training_blocks)
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
    for s in _structures(d):
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

    _detection_section(res, d, er, opt, out)

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
        for s in _structures(od):
            for g in _groups(fe[fe["structure"] == s]):
                if g == "human" and s == "long_nested":
                    continue
                c1 = fe_mod.table_c1(fe, g, s)
                if not c1.empty:
                    tabs.append(res.table(f"table_c1_{_slug(g)}_{s}", c1.map(_fmt_rate).reset_index(),
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
        for s in _structures(od)[:1]:  # Figure C1 is about the long-nested sentences
            for g in _groups(fe_pts[fe_pts["structure"] == s])[:MAX_GROUP_FIGURES]:
                figs.append(res.figure(
                    f"first_encounter_trial_{_slug(g)}_{s}",
                    fig.grid_by_cell(fe_pts, fe_fits, g, s, "trials_before", "trial number of the first encounter",
                                     "First encounter vs trial number",
                                     out / "figures" / f"first_encounter_trial_{_slug(g)}_{s}.png"),
                    f"{g}: first-encounter error against the trial number at which it happened, {s} (seeds/000 "
                    "Fig. C1/6b). Points: mean of the subjects who first met the cell at that trial (size: n); curves: "
                    "logistic regression (error ~ trial number)."))
        res.section("first_encounter", "First encounter after training (Table C1, Figures 6a and C1)",
                    "Definition: " + ac.DEFINITIONS["first_encounter"] + " " + ac.DEFINITIONS["trial_number"]
                    + " Scoring: " + scoring.RULE_TEXT[opt.rejected_rule] + " (`--rejected-rule "
                    + opt.rejected_rule + "`; the other rule's values are in the table beside it). "
                    + rule_text(rule_diff, opt.rejected_rule, other_rule)
                    + " The paper's Table C1 has 55 subjects (Lakretz et al.'s outlier kept: .618 = 34/55).",
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
            slopes = _with_progress(opt, "glmer slopes (Figure C2)", 18,
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
        for s in _structures(od)[:1]:
            for g in _groups(pts[pts["structure"] == s])[:MAX_GROUP_FIGURES]:
                curves = _drawable(slopes) if (g == "human" and not slopes.empty) else glm
                kind = "glmer fixed effects (subject effect 0)" if curves is not glm else "plain logistic regression"
                figs.append(res.figure(f"exposures_grid_{_slug(g)}_{s}",
                                       fig.grid_by_cell(pts, curves, g, s, "exposures", "earlier exposures to the same violation",
                                                        "Error by exposures",
                                                        out / "figures" / f"exposures_grid_{_slug(g)}_{s}.png",
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
        skipped += _exposure_models(res, od, focus, opt, group_fits, log, out, od_other, other_rule)

    # ---- training: Figures C3, C4 ------------------------------------------------------------
    if has_order or d_all["training"].any():
        _training_section(res, d, od, order_known_rows(d_all), opt, out, notes)

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
        "outliers": info.outliers,
        "order_statement": statement,
        "rejected_rule": {"rule": opt.rejected_rule, "text": scoring.RULE_TEXT[opt.rejected_rule],
                          "differences": rule_diff if has_order else None},
        "notes": notes, "skipped": skipped, "exclusions": info.exclusions,
        "tables": res.tables, "figures": res.figures, "sections": res.sections,
    }
    (out / "results.json").write_text(json.dumps(_clean(results), indent=1, default=_json_default), encoding="utf-8")
    from analysis.report import render_report

    render_report(out)
    return results


def outlier_text(outliers: dict) -> str:
    """Outlier handling as the report records it (seeds/000 kept what Lakretz et al. excluded)."""
    base = ("Outliers: Lakretz et al. (2021) exclude the subject they flag as an outlier (subject 68 of the "
            "release); seeds/000's Table C1 kept it (its denominators are 55, e.g. .618 = 34/55). ")
    if outliers.get("excluded"):
        return base + (f"Excluded here (the default, as the data's authors did): {', '.join(outliers['excluded'])}; "
                       "run with --keep-outliers to analyse all subjects as seeds/000 did.")
    if outliers.get("kept"):
        return base + f"Kept here (--keep-outliers, as seeds/000 did): {', '.join(outliers['kept'])}."
    policy = "kept (--keep-outliers)" if outliers.get("policy") == "keep" else "excluded (the default)"
    return f"Outliers: no subject in the data is flagged as an outlier (flagged subjects would be {policy})."


def _with_progress(opt: Options, label: str, total: int, work: Callable[[Callable[[], None]], object]):
    from analysis.bootstrap import make_progress

    prog = make_progress() if opt.show_progress else None
    task = prog.add_task(label, total=total) if prog else None
    if prog:
        prog.start()
    try:
        return work((lambda: prog.advance(task)) if prog else (lambda: None))
    finally:
        if prog:
            prog.stop()


def _exposure_models(res: Results, od: pd.DataFrame, focus: Focus, opt: Options, group_fits: dict, log, out: Path,
                     od_other: pd.DataFrame | None = None, other_rule: str = "strict") -> list[str]:
    """Tables C2/C3 on the focus cell per group, the LR test, joint human + model fits; Figure 6c."""
    skipped: list[str] = []
    pts = ex_mod.exposure_points(od, "cell")
    glm = ex_mod.exposure_fits(od, "cell")
    tabs: list[str | None] = []
    joint: list[dict] = []
    items: list[dict] = []
    if opt.mixed:
        fgroups = _groups(ex_mod.focus_rows(od, focus))
        no_history = [g for g in fgroups if not _sees_history(od, g)]
        fgroups = [g for g in fgroups if g not in no_history]
        todo = len(fgroups) + (len([g for g in fgroups if g != "human"]) if "human" in fgroups else 0)
        log(f"fitting the exposure models on {focus} for {len(fgroups)} group(s)")

        def work(advance):
            for g in fgroups:
                m = ex_mod.fit_exposure_models(od, focus, g)
                group_fits[g] = asdict(m)
                skipped.extend(m.skipped)
                advance()
            if "human" in fgroups:
                for g in [g for g in fgroups if g != "human"]:
                    j = ex_mod.fit_joint_model(od, focus, g)
                    joint.append(j)
                    if "skipped" in j:
                        skipped.append(f"joint model human + {g}: {j['skipped']}")
                    advance()

        _with_progress(opt, "glmer fits (Tables C2, C3)", max(1, todo), work)
        for g, m in group_fits.items():
            for kind in ("base", "extended"):
                if m.get(kind) and status_of(m[kind]) != "ok":
                    skipped.append(f"{g}: the {kind} mixed model is {status_of(m[kind])} (see its warnings)")
                if m.get(kind):
                    tabs.append(res.table(f"mixed_{kind}_{_slug(g)}", pd.DataFrame(m[kind]["coefficients"]),
                                          f"{g}: {m[kind]['formula']}", show=False))
            if m.get("comparison"):
                tabs.append(res.table(f"mixed_comparison_{_slug(g)}", pd.DataFrame([m["comparison"]]),
                                      f"{g}: base vs extended model (AIC, BIC, likelihood ratio)", show=False))
        for j in joint:
            if j.get("fit"):
                tabs.append(res.table(f"mixed_joint_{_slug(j['model_group'])}", pd.DataFrame(j["fit"]["coefficients"]),
                                      f"human + {j['model_group']}: {j['formula']}", show=False))
        items = [{"kind": "mixed", "group": g, **{k: m.get(k) for k in ("base", "extended", "comparison", "n_rows",
                                                                       "n_subjects", "focus")}}
                 for g, m in group_fits.items()] + [{"kind": "joint", **j} for j in joint]
        if "human" in group_fits and str(focus) == "long_nested:PSP:inner":
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
                      "for humans and for model subjects with a running context (trial history with feedback)."})
    figs = [res.figure("exposures_focus", fig.exposure_focus(pts, group_fits, glm, focus, out / "figures" / "exposures_focus.png"),
                       f"Error on {focus} by the number of earlier exposures to it (seeds/000 Fig. 6c). Points: mean over "
                       "subjects (size: n); solid: glmer fixed-effect prediction; dashed: plain logistic fit.")]
    res.section("exposure_models", f"Exposure models on {focus} (Tables C2, C3)",
                "Definition: " + ac.DEFINITIONS["exposures"] + f" Rows: the answered post-training trials of {focus}. "
                f"Base model (Table C2): `{ex_mod.BASE_FORMULA}`; extended model (Table C3): `error ~ exposures + "
                "session + total_trials + (1 + exposures|subject)` (total_trials = trials completed before it, all "
                "sessions, / 100; session dropped when there is only one). Both binomial glmer (lme4, Laplace) through "
                "rpy2 on the same rows, compared by AIC, BIC and a likelihood-ratio test (chi-square, df = the extra "
                "parameters); Wald CIs. Joint models add subject_kind (human vs one model group) and its interaction "
                "with exposures.", tabs, figs, items)
    return skipped


def wide_detection(pooled: pd.DataFrame) -> pd.DataFrame:
    """The shown signal-detection table: per group x structure x dependency (conditions pooled), the
    counts, the miss rate (the error rate) beside d' and c with their CIs, and the bias in words."""
    from analysis.detection import bias_label

    rows = []
    for r in pooled.itertuples():
        rows.append({"group": r.group, "structure": r.structure, "dependency": r.dependency,
                     "subjects": r.n_subjects, "hits / signal": f"{r.hits}/{r.signal_trials}",
                     "false alarms / noise": f"{r.false_alarms}/{r.noise_trials}",
                     "miss rate (= error rate)": f"{r.miss_rate:.3f}",
                     "false-alarm rate": f"{r.false_alarm_rate:.3f}",
                     "d'": f"{r.dprime:.2f} [{r.dprime_ci_low:.2f}, {r.dprime_ci_high:.2f}]",
                     "c": f"{r.criterion_c:.2f} [{r.c_ci_low:.2f}, {r.c_ci_high:.2f}]",
                     "bias": bias_label(r.criterion_c, r.c_ci_low, r.c_ci_high)})
    return pd.DataFrame(rows)


def _detection_section(res: Results, d: pd.DataFrame, er: pd.DataFrame, opt: Options, out: Path) -> None:
    """Hits, false alarms, d' and c for every group that answered violation / no violation."""
    from analysis import detection as det_mod

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
                            "d' against the criterion c per group and violated dependency (filled: inner, open: outer), "
                            "conditions pooled; bars: 95% bootstrap CIs. A subject answering 'violation' to everything "
                            "sits far left at d' near 0; one answering 'no violation' to everything far right.")])


def _sees_history(d: pd.DataFrame, group: str) -> bool:
    """Can earlier trials influence this group's answers? Humans: yes; models: only in a running context."""
    if is_human_group(group):
        return True
    ctx = set(d.loc[d["group"] == group, "context_mode"].dropna().astype(str))
    return any(c.startswith("running") for c in ctx)


def _other_rule_fit(od_other: pd.DataFrame | None, focus: Focus) -> dict | None:
    """The humans' base model under the other scoring rule (shown beside the paper's slope)."""
    if od_other is None:
        return None
    return ex_mod.fit_exposure_models(od_other, focus, "human", extended=False).base


def _slope_text(fit: dict | None, rule: str) -> str:
    if not fit:
        return f"{rule} rule: not fitted"
    c = next(c for c in fit["coefficients"] if c["term"] == "exposures")
    status = status_of(fit)
    return (f"{rule} rule beta = {c['estimate']:.3f}, z = {c['z']:.2f}, p = {c['p']:.3f} "
            f"({fit['n_obs']} trials, {fit['n_groups']} subjects{'' if status == 'ok' else '; ' + status})")


def _training_section(res: Results, d: pd.DataFrame, od: pd.DataFrame, od_all: pd.DataFrame, opt: Options, out: Path,
                      notes: list[str]) -> None:
    """Figure C3 (encounters including training) and Figure C4 (errors during training), or why not."""
    tr = od[od["training"]]
    with_training = set(tr["subject_key"])
    with_test = set(scored_rows(od)["subject_key"])
    both = with_training & with_test
    texts, tabs, figs = ["Definition: " + ac.DEFINITIONS["exposures_structure"]], [], []
    if both:
        sub = od[od["subject_key"].isin(both)]
        pts_s = ex_mod.exposure_points(sub, "structure")
        glm_s = ex_mod.exposure_fits(sub, "structure")
        tabs.append(res.table("exposure_points_structure", pts_s, "Figure C3 points (long format)", show=False))
        for s in _structures(sub)[:1]:
            for g in _groups(pts_s[pts_s["structure"] == s])[:MAX_GROUP_FIGURES]:
                figs.append(res.figure(f"exposures_structure_{_slug(g)}_{s}",
                                       fig.grid_by_cell(pts_s, glm_s, g, s, "exposures",
                                                        "earlier encounters with the structure (any violation, incl. training)",
                                                        "Error by encounters with the structure",
                                                        out / "figures" / f"exposures_structure_{_slug(g)}_{s}.png"),
                                       f"{g}: error by earlier encounters with the structure and condition, any violation or "
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
    pilots = sorted(set(od_all.loc[od_all["training"] & ~od_all["in_results_table"].fillna(True).astype(bool), "subject_id"]))
    if len(c4):
        tabs.append(res.table("training_error_rates_wide", wide_training(c4[c4["group"] == _groups(c4)[0]]),
                              "Figure C4: error rates during training (session 1), rate (errors/trials)"))
        tabs.append(res.table("training_error_rates", c4, "Figure C4 (long format)", show=False))
        g4 = _groups(c4)[0]
        figs.append(res.figure("training_error_rates", fig.training_bars(c4[c4["group"] == g4], out / "figures" / "training_error_rates.png"),
                               f"{g4}: error rates on the training trials of the first session by structure and violation "
                               f"(none: errors are false alarms), {c4['n_subjects'].max()} subject(s) at most per bar; "
                               "95% bootstrap CIs (seeds/000 Fig. C4)."))
        texts.append("Figure C4: error rates on the training trials of session 1, by structure and violation position "
                     "(none = no violation; an error there is a false alarm, hard to interpret as seeds/000 notes)"
                     + (f"; from subject(s) {', '.join(pilots)}, who have a training log but no row in the results "
                        "table (pilot subjects in the public release), not from the analysed subjects." if pilots else "."))
    else:
        texts.append("Figure C4 is not drawn: no training trials with answers in session 1 (it needs training logs).")
    res.section("training", "Training (Figures C3, C4)", " ".join(texts), tabs, figs)


def _structures(d: pd.DataFrame) -> list[str]:
    present = list(dict.fromkeys(scored_rows(d)["structure"].dropna()))
    pref = ["long_nested", "short_nested", "long_successive", "short_successive"]
    return [s for s in pref if s in present] + sorted(s for s in present if s not in pref)


def _groups(t: pd.DataFrame) -> list[str]:
    gs = list(dict.fromkeys(t["group"])) if "group" in t and len(t) else []
    return [g for g in ("human", SIMULATED_HUMANS) if g in gs] + sorted(g for g in gs if not is_human_group(g))


def _slug(s: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9]+", "-", s).strip("-").lower()[:60] or "group"


def _method_summary(d: pd.DataFrame) -> str:
    m = d[d["subject_kind"] == "model"]
    protos = sorted(set(m["protocol"].dropna()))
    return ", ".join(f"{p} = {mm.evaluation_method(p)}" for p in protos) or "(no protocol recorded)"
