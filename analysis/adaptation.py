"""The adaptation effect in reading: surprisal of a region by exposure to its structure, frozen vs adapted.

van Schijndel & Linzen (2018) adapt a language model to each sentence of a reading experiment and find that its
surprisal at the critical region falls with exposure to the structure, as people's reading times do (Fine et al.
2013). Here, for a self-paced-reading design run with a model that learns in its weights
(`run-model --protocol surprisal --learning weights --update-on read`) and the same model frozen:

- per trial of a weight learner: the region's surprisal (bits, the sum of its words', analysis/measures/reading.py
  `region_rows`) as the adapted model read it, and the frozen model's surprisal of the *same sentence* (the
  frozen group's mean over its rows of that item and sentence: a frozen model without a running context scores
  a sentence the same way every time), so the difference is the adaptation alone, never the order of items;
- `exposures`: the trials of the same cell of the design's factors (the structure) the subject read before this
  one in the same block (0 on the block's first), and `earlier_blocks_exposures`, those of earlier blocks (an
  adaptation block's, before the test block); a table row is one group x list x block x region x cell x exposure
  count (two lists, i.e. two adaptation groups, are never pooled):
  trials, subjects, mean frozen, mean adapted and mean adapted - frozen (`adaptation_bits`) over the trials;
- beside it, the people's reading time of the same region on their trials with the same cell and exposure count
  (mean over trials, each person giving one trial per exposure count; the reading rules of the reading
  sections applied: a region with a removed word has no time).

The frozen group of a learner: a model group of the same model and protocol that learns in no way
(`--learning context`, context none or few-shot), the one with the learner's own context where there are
several. Refused, saying why (AdaptationError): no weight-learning model group, no reading task (a kind read word
by word: each declares `word_by_word`, analysis/kind_sections.py; self-paced reading), no per-word surprisal in the
learners' rows, no frozen group to compare with.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.kind_sections import kinds_where
from analysis.load.prepare import WEIGHTS_MARK, learning_mode
from analysis.load.rows import add_order_columns
from analysis.measures.reading import ReadingRules, apply_rules, find_region, reading_rules, region_rows, word_rows
from analysis.report.figures import PALETTE, pyplot, save_figure
from analysis.twins.answers import is_replay

KEYS = ["subject_key", "item_id", "words"]


class AdaptationError(ValueError):
    """The adaptation effect cannot be computed from these rows; the message says why."""


@dataclass
class Adaptation:
    """The table (one row per group x region x cell x exposures), the cell's factors, and what was left out."""

    table: pd.DataFrame
    factors: list[str]
    regions: list[str]
    frozen_of: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    trials: pd.DataFrame = field(default_factory=pd.DataFrame)  # the learners' trial x region rows the means use
    split: list[str] = field(default_factory=list)  # list, block: what the table's rows keep apart


def _mode_of(d: pd.DataFrame) -> dict[str, str]:
    """group -> learning mode (analysis/load/prepare.py `learning_mode`) of the model groups (replays left out)."""

    m = d[(d["subject_kind"] == "model") & ~is_replay(d)]
    if "context_mode" not in m.columns:
        return {str(g): "context" for g in m["group"].unique()}
    return {str(g): learning_mode(str(x["context_mode"].dropna().iloc[0]) if x["context_mode"].notna().any() else "")
            for g, x in m.groupby("group", sort=True, observed=True)}


def learner_groups(d: pd.DataFrame) -> list[str]:
    """The model groups whose weights learn (`--learning weights|both`)."""
    return [g for g, mode in _mode_of(d).items() if mode in ("weights", "both")]


def reading_kinds() -> tuple[str, ...]:
    """The kinds whose trials are read word by word (each declares `word_by_word`), in listing order."""
    return kinds_where("word_by_word")


def check_rows(d: pd.DataFrame) -> list[str]:
    """The learner groups, or AdaptationError saying which of the three things is missing."""
    learners = learner_groups(d)
    if not learners:
        raise AdaptationError("no model group learns in its weights (context_mode `...+weights:...`): run the model "
                              "with `--learning weights --update-on read` beside a frozen run")
    rows = d[d["group"].astype(str).isin(learners)]
    tasks = set(rows["task"].dropna().astype(str)) if "task" in rows.columns else set()
    reading = reading_kinds()
    if not tasks & set(reading):
        raise AdaptationError(f"the weight learners' trials are no reading task (task {' or '.join(reading)}: a "
                              "sentence "
                              f"read in regions); their tasks: {', '.join(sorted(tasks)) or 'none recorded'}")
    if "word_surprisal_bits" not in rows.columns or not rows["word_surprisal_bits"].notna().any():
        raise AdaptationError("the weight learners' rows have no per-word surprisal (word_surprisal_bits): run them "
                              "with `--protocol surprisal`")
    return learners


def frozen_group(d: pd.DataFrame, learner: str, modes: dict[str, str]) -> str | None:
    """The frozen group of the same model and protocol (the learner's own context first), or None."""

    def first(g: str, col: str) -> str:
        x = d.loc[d["group"].astype(str) == g, col] if col in d.columns else pd.Series(dtype=object)
        return str(x.dropna().iloc[0]) if x.notna().any() else ""

    want = (first(learner, "model"), first(learner, "protocol"))
    ctx = first(learner, "context_mode").split(WEIGHTS_MARK)[0]
    found = [g for g, mode in modes.items() if mode == "context" and (first(g, "model"), first(g, "protocol")) == want
             and not first(g, "context_mode").startswith("running")]
    return min(found, key=lambda g: (first(g, "context_mode") != ctx, g)) if found else None


def split_columns(d: pd.DataFrame) -> list[str]:
    """The columns no table row pools over: the subject's list (two adaptation groups, e.g. DO- and PO-adapted
    lists, are never averaged together) and the block (adaptation and test blocks apart), where recorded."""
    return [c for c in ("list", "block") if c in d.columns and d[c].notna().any()]


def block_exposures(d: pd.DataFrame, fs: list[str]) -> pd.DataFrame:
    """`exposures` counted within the trial's block (earlier trials of the same cell in the same block and
    session, 0 on the block's first), and `earlier_blocks_exposures`: those of the same cell in earlier blocks
    (an adaptation block's, before a test block). The two add up to the subject's exposures over the session."""
    d = d.copy()
    d["earlier_blocks_exposures"] = pd.Series(pd.NA, index=d.index, dtype="Int64")
    k = d.dropna(subset=["exposures"]).sort_values(["subject_key", "session", "trial_index"], kind="stable")
    if not len(k) or "block" not in k.columns:
        d.loc[k.index, "earlier_blocks_exposures"] = 0
        return d
    within = k.groupby(["subject_key", "session", "block", *fs], sort=False, observed=True, dropna=False).cumcount()
    d.loc[k.index, "earlier_blocks_exposures"] = (k["exposures"].astype(int) - within).astype("Int64")
    d.loc[k.index, "exposures"] = within.astype("Int64")
    return d


def _regions(d: pd.DataFrame, levels: dict, rules) -> pd.DataFrame:
    """One row per trial x region (people's times through the reading rules), with the trial's `exposures`
    (within its block), `earlier_blocks_exposures` and its list and block."""
    w = word_rows(d, levels)
    kept, _ = apply_rules(w, rules)
    both = pd.concat([kept, w[w["subject_kind"] == "model"]], ignore_index=True)
    both.attrs = dict(w.attrs)
    r = region_rows(both)
    split = [c for c in split_columns(d) if c not in r.columns]
    order = d.dropna(subset=["exposures"])[KEYS + ["exposures", "earlier_blocks_exposures", "trials_before", *split]]
    if order.duplicated(KEYS).any():
        raise AdaptationError("a subject read the same sentence of the same item twice: its trials cannot be told "
                              "apart by item and sentence, so their exposures cannot be joined")
    return r.merge(order, on=KEYS, how="inner")


def _learner_rows(r: pd.DataFrame, learner: str, frozen: str, notes: list[str]) -> pd.DataFrame:
    """The learner's region rows with `frozen_bits` (the frozen group's surprisal of the same sentence)."""
    f = r[r["group"].astype(str) == frozen]
    ref = f.groupby(["item_id", "words", "region"], observed=True)["surprisal_bits"].agg(["mean", "std"])
    if (ref["std"].fillna(0) > 1e-4).any():
        notes.append(f"{frozen}: {int((ref['std'].fillna(0) > 1e-4).sum())} sentence region(s) scored differently by "
                     "its subjects; their mean is the frozen value")
    x = r[r["group"].astype(str) == learner].join(ref["mean"].rename("frozen_bits"), on=["item_id", "words", "region"])
    missing = int(x["frozen_bits"].isna().sum())
    if missing:
        notes.append(f"{learner}: {missing} trial region(s) whose sentence the frozen group {frozen} never read are "
                     "left out")
    return x.dropna(subset=["frozen_bits", "surprisal_bits"]).rename(columns={"surprisal_bits": "adapted_bits"})


def adaptation(d: pd.DataFrame, factors: dict, region: str | None = None, rules=None) -> Adaptation:
    """The adaptation table of a design frame (rows with `exposures`: analysis/load/frames.py `design_frame`);
    `region`: a region's name or number (every region when None); AdaptationError when it cannot be computed."""

    learners = check_rows(d)
    modes = _mode_of(d)
    fs = [f for f in factors if f in d.columns]
    d = add_order_columns(d[~is_replay(d)], fs)  # exposures to the cell of the design's factors
    d = d[d["task"].astype("string").isin(reading_kinds())] if "task" in d.columns else d
    d = block_exposures(d, fs)
    r = _regions(d, {f: list(factors[f]) for f in fs}, rules or ReadingRules())
    if region is not None:
        r = r[r["region"] == find_region(r, region)]
    res = Adaptation(pd.DataFrame(), fs, list(dict.fromkeys(r.sort_values("region")["region_name"].astype(str))),
                     split=split_columns(d))
    parts, rows = [], []
    for g in learners:
        frozen = frozen_group(d, g, modes)
        if frozen is None:
            res.notes.append(f"{g}: no frozen group of the same model and protocol (`--learning context`, context "
                             "none or few-shot) to compare with; left out")
            continue
        res.frozen_of[g] = frozen
        rows.append(_learner_rows(r, g, frozen, res.notes))
        parts.append(_summarise(rows[-1], g, frozen, fs, res.split))
    if not parts:
        raise AdaptationError("; ".join(res.notes))
    res.trials = pd.concat(rows, ignore_index=True)
    people = _people(r, fs, res.split)
    res.table = pd.concat(parts, ignore_index=True).merge(people, on=table_keys(fs, res.split), how="left")
    return res


def table_keys(fs: list[str], split: list[str]) -> list[str]:
    """A table row: list x block x region x cell x exposures within the block (`split`: those recorded)."""
    return [*split, "region", "region_name", *fs, "earlier_blocks_exposures", "exposures"]


def _summarise(x: pd.DataFrame, learner: str, frozen: str, fs: list[str], split: list[str]) -> pd.DataFrame:
    keys = table_keys(fs, split)
    x = x.assign(adaptation_bits=x["adapted_bits"] - x["frozen_bits"], exposures=x["exposures"].astype(int),
                 earlier_blocks_exposures=x["earlier_blocks_exposures"].astype(int))
    t = (x.groupby(keys, observed=True, sort=True)
         .agg(trials=("adapted_bits", "size"), subjects=("subject_key", "nunique"), frozen_bits=("frozen_bits", "mean"),
              adapted_bits=("adapted_bits", "mean"), adaptation_bits=("adaptation_bits", "mean")).reset_index())
    t.insert(0, "frozen_group", frozen)
    t.insert(0, "group", learner)
    return t


def _people(r: pd.DataFrame, fs: list[str], split: list[str]) -> pd.DataFrame:
    """People's region time by list x block x region x cell x exposures (mean over their trials; NaN times
    left out)."""
    keys = table_keys(fs, split)
    h = r[(r["subject_kind"] == "human") & r["region_rt_ms"].notna()]
    h = h.assign(exposures=h["exposures"].astype(int),
                 earlier_blocks_exposures=h["earlier_blocks_exposures"].astype(int))
    return (h.groupby(keys, observed=True, sort=True)
            .agg(people_rt_ms=("region_rt_ms", "mean"), people_trials=("region_rt_ms", "size"),
                 people=("subject_key", "nunique")).reset_index())


def adaptation_figure(t: pd.DataFrame, fs: list[str], region: str, path: Path) -> Path | None:
    """One region: surprisal by exposures (frozen dashed, adapted solid; one colour per cell and learner) and,
    where there are people, their reading time by exposures."""

    t = t[t["region_name"].astype(str) == region]
    if t.empty:
        return None
    has_people = t["people_rt_ms"].notna().any()
    plt = pyplot()
    fig, axes = plt.subplots(1, 2 if has_people else 1, figsize=(11.0 if has_people else 6.2, 3.8), squeeze=False)
    split = [c for c in ("list", "block") if c in t.columns and t[c].nunique() > 1]  # each its own line
    cells = t.groupby(["group", *split, *fs], observed=True, sort=True)
    many = t["group"].nunique() > 1
    for j, (key, g) in enumerate(cells):
        key = key if isinstance(key, tuple) else (key,)
        named = [f"{c} {v}" for c, v in zip(split, key[1:], strict=False)] + [str(k) for k in key[1 + len(split):]]
        name = ", ".join(([str(key[0])] if many else []) + named) or "all trials"
        g = g.sort_values("exposures")
        colour = PALETTE[j % len(PALETTE)]
        axes[0, 0].plot(g["exposures"], g["frozen_bits"], "--", color=colour, marker="o", label=f"{name} (frozen)")
        axes[0, 0].plot(g["exposures"], g["adapted_bits"], "-", color=colour, marker="s", label=f"{name} (adapted)")
    if has_people:  # the people's lines do not depend on the learner: drawn from the first learner's rows
        first = t[t["group"] == t["group"].iloc[0]].dropna(subset=["people_rt_ms"])
        by = [*split, *fs]
        for j, (key, p) in enumerate(first.groupby(by, observed=True, sort=True) if by else [("all trials", first)]):
            key = key if isinstance(key, tuple) else (key,)
            p = p.sort_values("exposures")
            label = [f"{c} {v}" for c, v in zip(split, key, strict=False)] + [str(k) for k in key[len(split):]]
            axes[0, 1].plot(p["exposures"], p["people_rt_ms"], "-", color=PALETTE[j % len(PALETTE)], marker="o",
                            label=", ".join(label))
    xlabel = "earlier trials of the same structure in the block (exposures)"
    axes[0, 0].set(xlabel=xlabel, ylabel="surprisal (bits)",
                   title=f"Model, region {region}")
    if has_people:
        axes[0, 1].set(xlabel=xlabel, ylabel="reading time (ms)",
                       title=f"People, region {region}")
    for ax in axes.flat:
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8, frameon=False)
        ax.xaxis.get_major_locator().set_params(integer=True)
    fig.tight_layout()
    return save_figure(fig, path)


def critical_region(t: pd.DataFrame, fs: list[str]) -> str | None:
    """The region whose frozen surprisal differs most between the design's cells (None without factors)."""
    if not fs or t.empty:
        return None
    spread = t.groupby(["region_name", *fs], observed=True)["frozen_bits"].mean().groupby(level=0).agg(np.ptp)
    return str(spread.idxmax()) if len(spread) and np.isfinite(spread.max()) else None


def adaptation_step(run) -> None:
    """The report's section (analysis/report/plan.py DESIGN): nothing without a weight-learning model group;
    a sentence in `skipped` when the effect cannot be computed; else the table (every region, or the one of
    --region with --formula) and a figure of one region."""
    if not learner_groups(run.d):
        return
    region = run.opt.region or None
    try:
        a = adaptation(run.d, dict(run.info.factors), region, reading_rules(run.opt))
    except AdaptationError as exc:
        run.skipped.append(f"adaptation effect (weights that learn while reading): {exc}")
        return
    res = run.res
    tab = res.table("adaptation_by_exposure", a.table, "Surprisal by exposure to the structure: frozen vs adapted "
                    "model, beside people's reading time", show=len(a.table) <= 60)
    shown = a.regions[0] if region is not None and a.regions else critical_region(a.table, a.factors)
    figs = []
    if shown is not None:
        path = adaptation_figure(a.table, a.factors, shown, run.out / "figures" / "adaptation.png")
        how = ("the region --region names" if region is not None else "the region whose frozen surprisal differs "
               "most between the cells (the model's own effect; --region with --formula names another)")
        figs.append(res.figure("adaptation", path, f"Region {shown} ({how}): surprisal (bits) by exposures, frozen "
                               "(dashed) and adapted (solid), and people's reading time (ms)."))
    pairs = "; ".join(f"{g} against {f}" for g, f in a.frozen_of.items())
    res.section("adaptation", "Adaptation in reading: surprisal by exposure, frozen vs adapted",
                f"Learners against their frozen model: {pairs}. Rows by "
                + (" and ".join(a.split) + " (never pooled: each list is its own adaptation group), then by "
                   if a.split else "")
                + "region and cell. Exposures: earlier trials of the same cell of "
                + f"{' x '.join(a.factors) or 'the design'} "
                "in the same block (0 on the block's first); `earlier_blocks_exposures`: those in earlier blocks "
                "(an adaptation block's before the test). Per trial, the frozen surprisal is that of "
                "the same sentence, so `adaptation_bits` (adapted - frozen) is the adaptation alone; means over "
                "trials, no CIs (one trial per subject per exposure count). People: mean region time over their "
                "trials, the reading rules applied. "
                + ("Regions: all. " if region is None else f"Region: {a.regions[0] if a.regions else region}. ")
                + " ".join(a.notes), [tab], figs)
