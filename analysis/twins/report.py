"""The report's "Twins" section: the model as a model of the people (analysis/twins/answers.py computes it)."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from analysis.load.prepare import is_human_group
from analysis.report.figures import PALETTE, pyplot, save_figure
from analysis.report.results_folder import Results
from analysis.twins.answers import is_replay, likelihood
from analysis.twins.effects import default_formula, twin_long, twin_wide
from analysis.twins.items import DOC, agreement, calibration, calibration_figure, item_shares
from analysis.twins.reading_dll import DOC as DLL_DOC
from analysis.twins.reading_dll import delta_ll, dll_figure, joined_words

if TYPE_CHECKING:
    from analysis.options import Options

TEXT = ("For every model group, log P(each person's answer): the model's scores of the task's options on the same "
        "item and condition (context `none` / few-shot: the group's own sessions, several subjects averaged as "
        "probabilities; `replay`: the model reading that person's own session, with the person's answers and "
        "feedback in its history), renormalised over the options. `loglik` sums over trials; `loglik_per_trial` "
        "has a 95% percentile bootstrap CI resampling people with all their trials; chance = 1/n options per "
        "trial; pseudo-R² = 1 − LL_model / LL_chance (0: no better than guessing; negative: worse). `people`, "
        "`trials`, `items` say what each number rests on; `trials_used`: all, the training (practice) blocks or "
        "the test blocks. Typed answers (completion): log P(the person's word) itself, with no chance level and so no "
        "pseudo-R² (empty cells).")


def ll_figure(s: pd.DataFrame, path: Path) -> Path | None:
    """Mean log-likelihood per trial per group (test and all trials), CIs over people, chance marked."""
    s = s[s["trials_used"] == "all"]
    if s.empty:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(4.5, 2.0 * len(s) + 1.5), 3.8))
    x = np.arange(len(s))
    y = s["loglik_per_trial"].to_numpy(float)
    err = np.vstack([(y - s["ci_low"].to_numpy(float)), (s["ci_high"].to_numpy(float) - y)])
    ax.bar(x, y, color=[PALETTE[i % len(PALETTE)] for i in range(len(s))], yerr=np.nan_to_num(err).clip(0), capsize=4)
    chance = (s["loglik_chance"] / s["trials"]).to_numpy(float)
    ax.scatter(x, chance, marker="_", s=900, color="black", zorder=3, label="chance (1/n options)")
    ax.set_xticks(x, [str(g).replace(" · ", "\n") for g in s["group"]], fontsize=7)
    ax.set_ylabel("log P(person's answer) per trial")
    ax.axhline(0, color="grey", lw=0.5)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("How well each model predicts the people's answers", fontsize=9)
    return save_figure(fig, path)


def items_section(res: Results, d: pd.DataFrame, opt: Options, out: Path) -> None:
    """Item by item (analysis/twins/items.py): shares beside probabilities, r, JSD, calibration."""
    shares = item_shares(d)
    if shares.empty:
        return
    agree, per_item = agreement(shares, opt.seed, min(int(opt.n_boot), 2000))
    cal = calibration(shares)
    res.section("twins_items", "Twins: item by item", DOC,
                [res.table("twins_item_agreement", agree.round(4), "Agreement over items"),
                 res.table("twins_item_shares", shares, "People's shares and the model's probabilities", show=False),
                 res.table("twins_items_jsd", per_item, "Per item: Jensen-Shannon divergence (and scale means)",
                           show=False),
                 res.table("twins_calibration", cal, "Calibration bins", show=False)],
                [res.figure("twins_calibration", calibration_figure(cal, out / "figures" / "twins_calibration.png"),
                            "The model's probability of an answer (ten bins) against the share of people who gave "
                            "it; dotted: perfect calibration; numbers: the people's answers in the bin.")])


def reading_section(res: Results, d: pd.DataFrame, opt: Options, out: Path, factors: dict) -> None:
    """ΔLL of surprisal over a baseline of people's word RTs (analysis/twins/reading_dll.py), per model group."""
    joined = joined_words(d[~is_replay(d)], factors)
    if not joined:
        return
    t = delta_ll(joined, opt.seed, min(int(opt.n_boot), 2000))
    res.section("twins_reading", "Twins: what surprisal adds to people's reading times (ΔLL)", DLL_DOC,
                [res.table("twins_delta_ll", t.round(6), "ΔLL per word, held-out folds")],
                [res.figure("twins_delta_ll", dll_figure(t, out / "figures" / "twins_delta_ll.png"),
                            "ΔLL per word (nats) of surprisal and its spillover over the baseline, held-out folds by "
                            "people and by items; bars: 95% CIs resampling the fold unit.")])


def effects_section(res: Results, d: pd.DataFrame, fits, factors: dict) -> None:
    """The same effects in both (analysis/twins/effects.py): the --formula fits lined up, or a sentence."""
    people = d["group"].astype(str).map(is_human_group).any()
    if fits is None:
        f = default_formula(d[~is_replay(d)], factors)
        res.section("twins_effects", "Twins: the same effects in people and models",
                    "Not fitted: give `--formula` to line up its effects for the people and each model group"
                    + (f" (the design's default: `{f}`; the API: `api.twin_effects(df)`)." if f else "."))
        return
    long = twin_long(fits)
    text = ("Each term of `" + fits.formula + "` fitted separately to the people and to each model group (the fits "
            "of 'Your model', their diagnostics there): estimate [95% Wald CI]; `differs from 0`: the CI excludes 0; "
            "`sign as people's`: the model group's estimate has the people's sign. A fit that is not ok (unconverged, "
            "singular, boundary) is named and never read as a finding (—).")
    if not people:
        text += " No people in the data: nothing to compare the model groups with."
    res.section("twins_effects", "Twins: the same effects in people and models", text,
                [res.table("twins_effects", twin_wide(long), "Effects side by side"),
                 res.table("twins_effects_long", long, "Effects side by side (long)", show=False)])


def twins_section(res: Results, d: pd.DataFrame, opt: Options, out: Path, fits=None,
                  factors: dict | None = None) -> None:
    """Add the Twins sections when the data hold at least one model group."""
    if not (d["subject_kind"] == "model").any():
        return
    lk = likelihood(d, opt.seed, min(int(opt.n_boot), 2000))
    notes = " ".join(lk.notes)
    tables, figs = [], []
    if len(lk.summary):
        shown = lk.summary.round({c: 4 for c in lk.summary.columns if lk.summary[c].dtype.kind == "f"})
        tables.append(res.table("twins_likelihood", shown, "Likelihood of the people's answers"))
        tables.append(res.table("twins_likelihood_items", lk.by_item, "Per item", show=False))
        tables.append(res.table("twins_likelihood_conditions", lk.by_condition, "Per condition"))
        tables.append(res.table("twins_likelihood_trials", lk.trials, "Per person and trial", show=False))
        figs.append(res.figure("twins_likelihood", ll_figure(lk.summary, out / "figures" / "twins_likelihood.png"),
                               "Mean log P(person's answer) per trial, all trials; bars: 95% bootstrap CIs over "
                               "people; black marks: chance."))
    if len(lk.missing):
        tables.append(res.table("twins_unscored", lk.missing, "People's answers not scored (and why)"))
    if not tables and not notes:
        notes = "No model group gave probabilities of the people's answers."
    n_replay = int(is_replay(d).sum())
    res.section("twins", "Twins: the model as a model of the people",
                TEXT + (f" Replay rows: {n_replay} (never counted as people or as ordinary model subjects)."
                        if n_replay else "") + (" " + notes if notes else ""), tables, figs)
    items_section(res, d, opt, out)
    reading_section(res, d, opt, out, factors or {})
    effects_section(res, d, fits, factors or {})
