"""The report's self-paced-reading sections (the core's reading measures, analysis/measures/reading.py, do the
numbers; self-paced reading shows them as its closing sections, kinds/self_paced_reading/analysis.py): reading times and
surprisal by region and by word with CIs for people and models, one figure, log-RT mixed models per
region with length and spillover, and surprisal beside reading times (humans' RTs on models' surprisals).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from analysis.load.rows import select_blocks
from analysis.measures.reading import (
    add_spillover,
    apply_rules,
    has_people_times,
    humans_beside_models,
    join_region_surprisal,
    join_surprisal,
    plain,
    reading_rules,
    region_fit_rows,
    region_formula,
    region_means,
    region_order,
    region_rows,
    region_surprisal,
    removed_text,
    surprisal_beside_rt,
    surprisal_formula,
    surprisal_region_formula,
    word_means,
    word_rows,
    word_surprisal,
)
from analysis.report import design_figures as dfig
from analysis.report.reading_figures import reading_by_region
from analysis.report.results_folder import Results
from analysis.report.tables import slug
from analysis.stats.fit_items import fit_item
from analysis.stats.fit_items import fit_or_note as _fit_or_note
from analysis.stats.formula_fit import fit_formula

if TYPE_CHECKING:
    from analysis.options import Options

MAX_REGION_FITS = 12


def _reading_tables(res: Results, h: pd.DataFrame, w: pd.DataFrame, rm: pd.DataFrame, rs: pd.DataFrame,
                    cell: list[str], opt: "Options", has_rt: bool, has_s: bool) -> list[str]:
    """The tables by region and by word (people's reading times, models' surprisals, the two side by
    side), written in the order the section lists them."""
    tabs = []
    if has_rt:
        tabs.append(res.table("reading_region_means", rm, "People: reading time by region (ms), CI over subjects"))
        if h["word_rt_ms"].notna().any():  # people who read region by region have no word times
            tabs.append(res.table("reading_word_means", word_means(h, cell, opt.seed, opt.n_boot),
                                  "People: reading time by word position (ms), CI over subjects", show=False))
    if has_s:
        tabs.append(res.table("surprisal_by_region", rs, "Models: surprisal by region (bits), CI over items"))
        tabs.append(res.table("surprisal_by_word", word_surprisal(w, cell, opt.seed, opt.n_boot),
                              "Models: surprisal by word position (bits), CI over items", show=False))
    if has_rt and has_s:
        side = humans_beside_models(rm, rs, cell)
        if len(side):
            tabs.append(res.table("reading_humans_beside_models", side,
                                  "Region by region: people's reading time (ms) beside each model's surprisal (bits)"))
    return tabs


def _model_region_fits(w: pd.DataFrame, cell: list[str], declared: list[str], skipped: list[str],
                       items: list[dict]) -> str:
    """One fit of the models' surprisal per group and region (the first MAX_REGION_FITS regions, the rest
    named in `skipped`); appends the fits to `items` and returns the sentence that says how they were fitted."""
    ms = w[(w["subject_kind"] == "model") & w["surprisal_bits"].notna()].copy()
    ms.attrs = dict(w.attrs)
    r_mod = region_rows(ms)
    if r_mod["region"].nunique() > MAX_REGION_FITS:
        skipped.append(f"model surprisal: regions beyond the first {MAX_REGION_FITS} are not fitted (of "
                       f"{r_mod['region'].nunique()}); fit one with --formula and --region NAME")
    pairs = [(g, region, r) for g, rg in r_mod.groupby("group", sort=True, observed=True)
             for region, r in list(rg.groupby("region", sort=True))[:MAX_REGION_FITS]]
    for g, _region, r in pairs:
        name = str(r["region_name"].iloc[0])
        # items are the unit: one value per item and cell (the mean over the group's subjects, so copies of a
        # deterministic model count once)
        r = r.groupby(["item"] + cell, observed=True, dropna=False)["surprisal_bits"].mean().reset_index()
        formula, dropped, why = surprisal_region_formula(cell, r)
        if formula is None:
            skipped.append(f"surprisal of region {name} ({g}): no fit, {why}")
            continue
        f = _fit_or_note(lambda r=r, formula=formula: fit_formula(plain(r), formula, "gaussian", declared,
                                                                  log_rt=False),
                         f"surprisal of region {name} ({g})", skipped)
        if f is not None:
            items.append(fit_item("formula_fit", f"{g}, region {name}: surprisal (bits)" + (
                f" (dropped, constant in these rows: {', '.join(dropped)})" if dropped else ""), f))
    return (" Models per region: the region's surprisal (one value per item and cell, the mean over the "
            "group's subjects: items are the unit) on the design's factors (sum-coded), an item intercept "
            "where an item appears in several conditions.")


def _people_region_fits(res: Results, h: pd.DataFrame, cell: list[str], declared: list[str], log,
                        skipped: list[str], items: list[dict], tabs: list[str]) -> str:
    """One lmer of log reading time per region (the first MAX_REGION_FITS, the rest named in `skipped`);
    appends the fits to `items` and their fixed effects' table to `tabs`, and returns the sentence that
    says how they were fitted."""
    r_all = region_rows(h)
    coefs = []
    if r_all["region"].nunique() > MAX_REGION_FITS:
        skipped.append(f"reading times: regions beyond the first {MAX_REGION_FITS} are not fitted (of "
                       f"{r_all['region'].nunique()}); fit one with --formula and --region NAME")
    for region, r in list(r_all.groupby("region", sort=True))[:MAX_REGION_FITS]:
        formula, dropped = region_formula(cell, r)
        rows = plain(region_fit_rows(r, formula))
        name = str(r["region_name"].iloc[0])
        log(f"fitting reading times of region {name}")
        f = _fit_or_note(lambda rows=rows, formula=formula: fit_formula(rows, formula, "gaussian", declared),
                         f"reading region {name}", skipped)
        if f is not None:
            title = f"Region {name}: log reading time" + (f" (dropped, constant in these rows: "
                                                          f"{', '.join(dropped)})" if dropped else "")
            items.append(fit_item("formula_fit", title, f))
            coefs.append(f.coef_frame().assign(region=region, region_name=name, formula=f.fitted, status=f.status,
                                               dropped_predictors=", ".join(dropped)))
    if coefs:
        tabs.append(res.table("reading_region_fits", pd.concat(coefs, ignore_index=True),
                              "Log reading time by region: fixed effects", show=False))
    return (" People per region (lmer on one row per trial: log of the region's time; factors sum-coded in the "
            "spec's level order; the region's length in characters and the previous region's length, the "
            "spillover; random intercepts of subjects and items). A predictor constant in a region's rows is "
            "dropped and named (a one-word region with the same word in every item; the first region has no "
            "previous one).")


def _surprisal_rt_section(res: Results, h: pd.DataFrame, w: pd.DataFrame, declared: list[str], opt: "Options",
                          out: Path, log, skipped: list[str], rule_text: str) -> None:
    """The section of people's reading times on each model's surprisal (word by word, same sentences),
    or a note in `skipped` when no model scored the sentences the people read."""
    both = pd.concat([h, w[w["subject_kind"] == "model"]], ignore_index=True)
    both.attrs = dict(w.attrs)
    joined = {g: add_spillover(j, ["surprisal", "length", "log_frequency"]) for g, j in join_surprisal(both).items()}
    # people who read region by region (no word times): the same on regions (the region's time and surprisal)
    by_region = not joined and bool(joined := join_region_surprisal(both))
    unit = "region" if by_region else "word"
    tabs, items, points = [], [], {}
    for g, j in joined.items():
        formula = surprisal_formula(j)
        if opt.mixed:
            log(f"fitting the surprisal model for {g}")
            f = _fit_or_note(lambda j=j, formula=formula: fit_formula(plain(j), formula, "gaussian", declared,
                                                                      log_rt=False),
                             f"surprisal model ({g})", skipped)
            if f is not None:
                items.append(fit_item("formula_fit", f"People's reading times and {g}'s surprisal", f))
        points[g] = surprisal_beside_rt(j)
        tabs.append(res.table(f"surprisal_rt_{slug(g)}", points[g], f"Per {unit}: people's mean RT beside {g}'s "
                              "surprisal", show=False))
    if joined:
        res.section("surprisal_rt", "Surprisal and reading time (people's times on models' surprisal)",
                    f"People's {unit} reading times joined {unit} by {unit} to each model's surprisal (bits) of the "
                    "same sentence (same item and words)" + (
                        " (the people read region by region: a press showed a region, so a region's time is one "
                        "press's and its surprisal the sum of its words'; `position` is the region's number, `word` "
                        "its text)" if by_region else "") + ". Model (lmer, RT in ms: surprisal theory's linear "
                    f"link): surprisal and the previous {unit}'s surprisal (spillover), length and the previous "
                    f"{unit}'s length, log frequency where the items give it, random intercepts of subjects and items. "
                    "Rules: " + rule_text + ".",
                    tabs, [res.figure("surprisal_rt",
                                      dfig.surprisal_scatter(points, out / "figures" / "surprisal_rt.png"),
                                      f"Per {unit}: people's mean reading time against the model's surprisal.")], items)
    else:
        skipped.append("surprisal and reading time: no model surprisals of the sentences the people read")


def reading_sections(res: Results, d: pd.DataFrame, factors: dict, opt: "Options", out: Path, log,
                     skipped: list[str]) -> None:
    """The self-paced-reading sections (nothing when the rows have neither reading times nor surprisals)."""
    from analysis.load.frames import model_frame  # late: frames imports the report's sections (a circle at import)
    m = select_blocks(model_frame(d), opt.blocks)  # --blocks (default test: design_rows)
    has_rt = has_people_times(m)  # per word, or per region where a press showed a region
    has_s = "word_surprisal_bits" in m.columns and m["word_surprisal_bits"].notna().any()
    if not (has_rt or has_s):
        return
    levels = {f: list(lv) for f, lv in factors.items() if f in m.columns}
    w = word_rows(m, levels)
    declared = w.attrs["factors"]
    rules = reading_rules(opt)
    h, counts = apply_rules(w, rules)
    cell = [f for f in declared if f != "grammatical"]
    order = region_order(w)
    rm = region_means(h, cell, opt.seed, opt.n_boot) if has_rt else pd.DataFrame()
    rs = region_surprisal(w, cell, opt.seed, opt.n_boot) if has_s else pd.DataFrame()
    items: list[dict] = []
    rule_text = "; ".join(f"`{k}`: {v} ({removed_text(counts, k, w)})" if k in counts else f"`{k}`: {v}"
                          for k, v in rules.describe().items())
    tabs = _reading_tables(res, h, w, rm, rs, cell, opt, has_rt, has_s)
    fig = reading_by_region(rm, rs, cell, order, out / "figures" / "reading_regions.png")
    figs = [res.figure("reading_regions", fig, "By region (x, in reading order): people's mean reading time (ms; a "
                       "region's time is the sum of its words') and each model's mean surprisal (bits; the sum of its "
                       "words'), one line per design cell; bars: 95% bootstrap CIs (people: over subjects; models: "
                       "over "
                       "items).")]
    fit_text = ""
    if has_s and opt.mixed:
        fit_text = _model_region_fits(w, cell, declared, skipped, items)
    if has_rt and opt.mixed and len(h):
        fit_text += _people_region_fits(res, h, cell, declared, log, skipped, items, tabs)
    res.section("task_reading", "Self-paced reading: reading times and surprisal by region",
                "One row per word, regions named by the spec's `task.region_names` or as R<k> (the region's words in "
                f"the first item). Rules: {rule_text}. People's region time: the sum of the region's word times per "
                "trial (a region with a removed word has none), the mean over subjects' means with a 95% bootstrap CI "
                "over subjects. Models' region surprisal: the sum of its words' surprisals, the mean over items with a "
                "CI over items (a deterministic model scores an item the same way every time)." + fit_text,
                tabs, figs, items)
    if has_rt and has_s:
        _surprisal_rt_section(res, h, w, declared, opt, out, log, skipped, rule_text)
