"""The report sections of a general design (docs/general_model.md): chosen from the data, not the Lakretz
skeleton. Data and design, rates by the factors (F1/F2), acceptance and d', the analyst's formula, and one
section per task present (choice, rating, completion, self-paced reading, surprisal), then the demand gap
between protocols. Every fitted model goes into results.json with its diagnostics."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable

import pandas as pd

from analysis.kind_sections import SectionArgs, kind_closing_sections, kind_sections
from analysis.load.frames import model_frame
from analysis.load.rows import block_kind, scope_text, select_blocks
from analysis.load.subjects import RULE as COPIES_RULE
from analysis.measures.demand_gap import demand_gaps
from analysis.measures.design_rates import (
    acceptance_rates,
    add_accepted,
    answer_confounded,
    design_rows,
    dprime_table,
    item_key,
    rates,
)
from analysis.measures.judgments import RULE, answer_label, judged_rows
from analysis.measures.reading import plain, reading_rules, target_rows
from analysis.measures.sections import logprob_section, rt_section
from analysis.report import design_figures as dfig
from analysis.report.results_folder import Results
from analysis.report.tables import fmt_ci
from analysis.stats.formula import parse
from analysis.stats.formula_fit import CONTRASTS_NOTE, fit_groups, fit_table
from analysis.twins.answers import is_replay
from analysis.twins.report import twins_section

if TYPE_CHECKING:
    from analysis.options import Options

F1F2 = ("`rate` pools the cell's trials (errors or hits / trials) with a 95% percentile bootstrap CI resampling "
        "subjects with all their trials; `by_subject_mean` is the mean of the subjects' own rates (F1) with its CI "
        "over subjects, `by_item_mean` the mean of the items' own rates (F2) with its CI over items")


def shown_rates(t: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """The rates table as the report shows it: counts and 'estimate [CI]' per unit."""
    if t.empty:
        return t
    return pd.DataFrame({**{c: t[c] for c in ["group"] + by},
                         "subjects": t["n_subjects"], "items": t["n_items"], "trials": t["n_trials"],
                         "rate [CI subjects]": [fmt_ci(*r) for r in zip(t["rate"], t["rate_ci_low"], t["rate_ci_high"],
                                                                        strict=False)],
                         # one subject (a person, or merged model copies): the rate's CI resamples items
                         **({"rate CI over": t["ci_unit"].map({"subject": "subjects", "item": "items (one subject)"})}
                            if "ci_unit" in t.columns and (t["ci_unit"] == "item").any() else {}),
                         "F1: by-subject mean "
                         "[CI]": [fmt_ci(*r) for r in zip(t["by_subject_mean"], t["by_subject_ci_low"],
                                                                                t["by_subject_ci_high"], strict=False)],
                         "F2: by-item mean [CI]": [fmt_ci(*r) for r in zip(t["by_item_mean"], t["by_item_ci_low"],
                                                                             t["by_item_ci_high"], strict=False)]})


from analysis.stats.fit_items import fit_item  # noqa: E402 (shared with reading_report)


def sample_table(d: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for g, x in d.groupby("group", sort=True):
        test = design_rows(x)
        kind = block_kind(x)
        rows.append({"group": g, "subjects": x["subject_key"].nunique(), "trials": len(x),
                     "test_trials": len(test), "training_trials": int(kind.eq("training").sum()),
                     "test_items": test["item"].nunique(),
                     "lists": ", ".join(str(v) for v in sorted(set(x["list"].dropna()))) if "list" in x else "",
                     "tasks": ", ".join(sorted(set(x["task"].dropna().astype(str)))) if "task" in x else "",
                     "protocols": ", ".join(sorted(set(x["protocol"].dropna().astype(str)))),
                     "answered": int(x["correct"].notna().sum()),
                     "log-probabilities": int(x["sentence_logprob"].notna().sum()) if "sentence_logprob" in x else 0})
    return pd.DataFrame(rows)


def design_table(d: pd.DataFrame, factors: dict[str, list[str]]) -> pd.DataFrame:
    """Trials per design cell and group (the counterbalancing as it was run)."""
    fs = [f for f in factors if f in d.columns]
    t = design_rows(d)
    if not fs or t.empty:
        return pd.DataFrame()
    return (t.groupby(fs + ["group"], dropna=False, observed=True).agg(trials=("item_id", "size"),
                                                                        items=("item", "nunique"),
                                                                        subjects=("subject_key", "nunique"))
            .reset_index())


def design_sections(res: Results, d: pd.DataFrame, factors: dict[str, list[str]], opt: Options, out: Path,
                    log: Callable[[str], None], notes: list[str], skipped: list[str], general: bool = True,
                    copies: pd.DataFrame | None = None) -> None:
    """Add the sections of a general design (or, for a Lakretz design, only those --by / --formula ask for)."""
    if "item" not in d.columns or d["item"].isna().any():
        d = d.assign(item=item_key(d))
    if "signal" not in d.columns:
        d = add_accepted(d)
    everything, d = d, d[~is_replay(d)]
    by = list(opt.by) or [f for f in factors if f in d.columns]
    t = select_blocks(d, opt.blocks)  # --blocks (default test: the design's test trials)
    if general:
        data_sections(res, d, factors, copies)
    rates_section(res, t, by, factors, opt, out, log)
    acceptance_section(res, t, by, factors, opt, out)
    if general:
        task_sections(res, d, factors, opt, out, log, skipped)
    fits = formula_section(res, d, factors, opt, log, skipped) if opt.formula else None
    if general and (d["subject_kind"] == "model").any():
        demand_gap_section(res, t, opt)
    if general:
        twins_section(res, everything, opt, out, fits, factors)


def data_sections(res: Results, d: pd.DataFrame, factors: dict[str, list[str]], copies: pd.DataFrame | None) -> None:
    """Data (sample sizes, deterministic model copies) and Design (factors, trials per cell)."""
    has_copies = copies is not None and len(copies) > 0
    res.section("data", "Data", "Sample sizes per group (a group is 'human', or one model with its context mode "
                "and protocol). Test trials: not practice, not fillers. Subjects: " + COPIES_RULE + "."
                + (" Deterministic copies recognised: see the table." if has_copies else ""),
                [res.table("sample_sizes", sample_table(d), "Sample sizes", transpose=d["group"].nunique() <= 6),
                 res.table("model_copies", copies, "Deterministic model copies") if has_copies else None])
    levels = "; ".join(f"`{f}`: {', '.join(v) if v else '(levels from the data)'}" for f, v in factors.items())
    dt = design_table(d, factors)
    res.section("design", "Design", f"Factors (from the sessions' sidecars): {levels or 'none declared'}. The table "
                "counts the test trials of each cell as they were run (a Latin square gives every cell the same "
                "count per subject).", [res.table("design_cells", dt, "Trials per design cell") if len(dt) else None])


def rates_section(res: Results, t: pd.DataFrame, by: list[str], factors: dict, opt: Options, out: Path, log) -> None:
    """Accuracy by the factors of --by, F1/F2, with the interaction plot."""
    answered = t[t["correct"].notna()]
    if not (by and len(answered)):
        return
    log(f"rates by {', '.join(by)} (bootstrap over subjects and items)")
    r = rates(t, by, "correct", opt.seed, opt.n_boot)
    res.section("rates", f"Accuracy by {' x '.join(by)}",
                "Accuracy = correct answers / answered trials. " + F1F2 + f"; {opt.n_boot} resamples, seed {opt.seed}. "
                + scope_text(t, opt.blocks),
                [res.table("rates_by_factor", shown_rates(r, by), f"Accuracy by {', '.join(by)}"),
                 res.table("rates_by_factor_long", r, "Accuracy by factor (long format, all columns)", show=False)],
                [res.figure("interaction_accuracy", dfig.interaction_plot(
                    r, by, "rate", "rate_ci_low", "rate_ci_high", "accuracy",
                    out / "figures" / "interaction_accuracy.png", levels=factors),
                    f"Interaction plot: accuracy by {' x '.join(by)} per group; bars: 95% bootstrap CIs over "
                    "subjects.")])


def acceptance_section(res: Results, t: pd.DataFrame, by: list[str], factors: dict, opt: Options, out: Path) -> None:
    """Acceptance and d' whenever the task is judgment-like and the items give both answers."""
    judged = judged_rows(t)
    if judged.empty or judged["signal"].nunique() < 2:
        return
    by_j = [b for b in by if b in judged.columns]
    acc = acceptance_rates(judged, by_j, opt.seed, opt.n_boot)
    dp = dprime_table(judged, by_j, opt.seed, opt.n_boot)
    pooled = answer_confounded(judged, by_j)
    levels = {**factors, "answer": sorted(set(answer_label(judged)))}
    res.section("acceptance", "Acceptance and signal detection (d', c)",
                "Acceptance: " + RULE + ". Per cell of the design's factors and the item's answer (`answer`). "
                + F1F2.replace("rate", "acceptance rate", 1) + " (a cell with one subject, such as merged model "
                "copies, resamples items: `ci_unit`). Signal detection: log-linear correction (Hautus 1995), "
                "d' = z(H) - z(F), c = -(z(H) + z(F)) / 2 (c > 0: leans to the accepting label); counts pooled over "
                "subjects, CIs resampling subjects; `bias` names a group that gave one label on every trial. "
                + scope_text(judged, opt.blocks)
                + (f" d' pools over {', '.join(pooled)} (each level has one answer, so no signal or no noise "
                   "within it)." if pooled else ""),
                [res.table("acceptance", shown_rates(acc, by_j + ["answer"]), "Acceptance rates"),
                 res.table("acceptance_long", acc, "Acceptance rates (long format)", show=False),
                 res.table("dprime", dp, "d' and criterion c")],
                [res.figure("interaction_acceptance", dfig.interaction_plot(
                    acc, (by_j[:1] + ["answer"] + by_j[1:]) if by_j else ["answer"], "rate", "rate_ci_low",
                    "rate_ci_high", "acceptance rate", out / "figures" / "interaction_acceptance.png", levels=levels),
                    "Acceptance rates by the design's factors, on items whose answer accepts and on those whose "
                    "answer rejects; 95% bootstrap CIs.")])


def demand_gap_section(res: Results, t: pd.DataFrame, opt: Options) -> None:
    gp = demand_gaps(t, opt.gap_pairs or None, opt.seed, opt.n_boot)
    if len(gp):
        res.section("demand_gap", "Demand gap between protocols (seeds/002)",
                    "Every pair of protocols of one model and context, on the items both answered (low demand "
                    "first: direct, then metalinguistic, then production). `gap_paper`: the paper's definition, "
                    "log-odds(accuracy low) - log-odds(accuracy high), infinite at an accuracy of 0 or 1; "
                    "`gap_smoothed`: twinlab's, the same difference of smoothed log odds (k + 0.5) / (n - k + 0.5), "
                    "with a 95% bootstrap CI resampling items; `gap_logprob`: mean log P(target) low minus high "
                    "(word prediction). A `flag` marks a task failure, a ceiling, or a protocol that gave one label on "
                    "every trial (a response bias: no gap is a finding there).",
                    [res.table("demand_gap_pairs", gp, "Demand gap")])


def fits_response(formula: str) -> str:
    return parse(formula).response_var


def formula_section(res: Results, d: pd.DataFrame, factors: dict, opt: Options, log, skipped: list[str]):
    log(f"fitting {opt.formula} (R with lme4 starts in a few seconds)")
    m = model_frame(d, opt.blocks)
    if opt.region or opt.word:  # --region NAME / --word N: that region's or word's rows (analysis/measures/reading.py)
        m = plain(target_rows(m, factors, opt.region or None, opt.word or None, reading_rules(opt)))
    kind = "ordinal_fit" if opt.family == "ordinal" else "formula_fit"
    # the fit the user asked for: no group fitted is an error (exit 2, raised from fit_groups); a group not
    # fitted is a failure stated at the top of the report and in the exit status, never only a note
    fits = fit_groups(m, opt.formula, opt.family, factors)
    if fits.status != "ok":
        skipped.append(f"--formula {opt.formula}: {fits.status} (see its diagnostics)")
    resp = fits_response(opt.formula)
    for g, why in fits.skipped.items():
        rows = m[m["group"].astype(str) == g] if "group" in m.columns else m
        if resp in rows.columns and rows[resp].notna().sum() == 0:  # the formula does not apply to this group
            skipped.append(f"--formula {opt.formula}, group {g}: not fitted, its rows have no {resp} (the response)")
        else:
            res.failures.append(f"--formula {opt.formula}, group {g}: not fitted ({why[:400]})")
    tab = pd.concat([fit_table(f) if kind == "formula_fit" else pd.DataFrame(f.coefficients).assign(group=g)
                     for g, f in fits], ignore_index=True)
    items = [fit_item(kind, f"Your model{' — ' + g if g else ''}", f) for g, f in fits]
    res.section("formula", "Your model: " + opt.formula,
                f"Scope: {fits.scope_text()}. {scope_text(m, opt.blocks)} "
                "Fitted by lme4 (glmer binomial for a 0/1 outcome, lmer for a continuous one, response times on a log "
                "scale; glm/lm without random effects; ordinal::clmm with --family ordinal), `subject` = the subject "
                f"(unique across groups), `item` = the item group. Contrasts: {CONTRASTS_NOTE}. "
                + (CLMM_FALLBACK if kind == "ordinal_fit" else "When the random effects as given do not converge or "
                                                               "are "
                   "singular, they are simplified step by step (correlations dropped, then random intercepts only) and "
                   "the report names the structure it shows."),
                [res.table("formula_fit", tab, "Fixed effects", show=False)], [], items)
    return fits


def task_sections(res: Results, d: pd.DataFrame, factors: dict, opt: Options, out: Path, log,
                  skipped: list[str]) -> None:
    """One section per task kind present in the data, on the rows of --blocks (default test: design_rows)."""
    t = select_blocks(d, opt.blocks)
    fs = [f for f in factors if f in d.columns]
    by = list(opt.by) or fs
    tasks = set(t["task"].dropna().astype(str)) if "task" in t.columns else set()
    # each kind's own (its unit registers it)
    kind_sections(SectionArgs(res, t, factors, by, opt, out, log, skipped), tasks)
    logprob_section(res, t, by, opt)
    rt_section(res, t, by, opt)
    # the kinds' closing sections on all rows (self-paced reading: word and region times beside surprisal)
    kind_closing_sections(SectionArgs(res, d, {f: list(factors[f]) for f in fs}, by, opt, out, log, skipped))


CLMM_FALLBACK = ("The cumulative-link model is fitted with its random effects as given (never simplified); when the "
                 "default optimiser (nlminb) does not converge it is refitted once with ucminf (one grouping factor "
                 "only), and the fit names the one it reports.")
