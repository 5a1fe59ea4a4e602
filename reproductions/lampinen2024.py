"""seeds/000 (Lampinen 2024): the model experiments, in the paper's layout.

What runs (forced choice at the critical verb: the model is correct when it gives the correct form
a higher log-probability than its number-flipped form after the prompt and the sentence prefix;
a tie counts as an error):

  subtask (paper's name)                                     structure, dependency      prompts
  long_nested_inner_english                                  long_nested, inner         none, twoshot, eightshot,
                                                                                        recombined, interp
  long_nested_outer_english                                  long_nested, outer         none, twoshot, eightshot
  long_nested_inner_english_harder_more_center_distractors   long_nested_more_distractors, inner   eightshot
  long_nested_inner_english_harder_more_depth                long_nested_deeper, inner  eightshot

A prompt group runs one model subject per prompt set (twoshot: twoshot_a/b/c, ...); Table B1 pools
the three prompts of a group as the paper does, Figure B1 breaks them down, Figure 5 is the
interp group (0..8 nested examples). Error rates are the share of wrong items with 95% percentile
bootstrap CIs over items (the paper: "across task examples, and three different prompts").
"""
from __future__ import annotations

import dataclasses
import html
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.load import LoadError, load
from analysis.load.prepare import condition_order, prepare
from analysis.measures.error_rates import error_rates
from analysis.report.figures import error_rate_bars
from analysis.stats.bootstrap import bootstrap_mean
from model_subjects import ModelLoadError, load_backend
from reproductions.common import (
    Arm,
    ArmResult,
    Report,
    ReproError,
    RunOptions,
    backend_suffix,
    cells_study,
    load_arms,
    progress_bar,
    prompt_provenance,
    run_arm,
    sha256_file,
    slug,
    write_provenance,
    write_spec,
)
from reproductions.figures import interpolation_lines
from stimuli.files import StimulusFileError, load_items, save_items
from stimuli.prompts import PROMPT_GROUPS, PROMPT_SETS

PAPER = "seeds/000: Lampinen (2024), Can language models handle recursively nested grammatical structures?"
# the paper's subtasks (structure, critical verb), its harder variants and Table B1's column order: the cells
# of the study it re-used, named by that study (reproductions/common.py `cells_study`)
SUBTASKS: dict[str, tuple[str, str]] = cells_study().SUBTASKS
DEFAULT_PROMPTS: dict[str, tuple[str, ...]] = {
    "long_nested_inner_english": ("none", "twoshot", "eightshot", "recombined", "interp"),
    "long_nested_outer_english": ("none", "twoshot", "eightshot"),
    "long_nested_inner_english_harder_more_center_distractors": ("eightshot",),
    "long_nested_inner_english_harder_more_depth": ("eightshot",),
}
OTHER_PROMPTS = ("none", "twoshot", "eightshot")  # structures of an --items file that the paper did not run
PROMPT_LABELS = {"none": "No prompt", "twoshot": "Two shots", "eightshot": "Eight shots",
                 "recombined": "Recombined eight shots", "interp": "Nested/successive interpolation"}
HARDER: dict[str, str] = cells_study().HARDER
CONDITIONS: tuple[str, ...] = cells_study().TABLE_B1_CONDITIONS

# seeds/000 Table B1 as printed in the seed text. Each row there has 6 or 7 numbers for 8 condition
# columns (cells were lost in the text), so the numbers cannot be assigned to conditions; they are
# shown as printed, never aligned to columns.
PAPER_TABLE_B1: tuple[tuple[str, str, str, str], ...] = (
    ("7B", "long_nested_inner_english", "Two shots", "0.059 0.129 0.008 0.075 0.006 0.122 0.246"),
    ("7B", "long_nested_inner_english", "Eight shots", "0.047 0.109 0.015 0.098 0.018 0.097 0.216"),
    ("7B", "long_nested_outer_english", "Two shots", "0.080 0.084 0.150 0.148 0.002 0.023 0.023"),
    ("7B", "long_nested_outer_english", "Eight shots", "0.059 0.053 0.078 0.094 0.012 0.006"),
    ("70B", "long_nested_inner_english", "No prompt", "0.253 0.720 0.149 0.086 0.408 0.918"),
    ("70B", "long_nested_inner_english", "Two shots", "0.042 0.076 0.003 0.118 0.002 0.059 0.192"),
    ("70B", "long_nested_inner_english", "Eight shots", "0.044 0.080 0.001 0.036 0.006 0.062 0.158"),
    ("70B", "long_nested_outer_english", "No prompt", "0.264 0.293 0.764 0.746 0.086 0.037"),
    ("70B", "long_nested_outer_english", "Two shots", "0.053 0.059 0.188 0.184 0.068 0.059"),
    ("70B", "long_nested_outer_english", "Eight shots", "0.059 0.049 0.088 0.086 0.172 0.213"),
    ("70B", "long_nested_inner_english_harder_more_center_distractors", "Eight shots",
     "0.046 0.059 0.002 0.011 0.001 0.126 0.195"),
    ("70B", "long_nested_inner_english_harder_more_depth", "Eight shots", "0.047 0.082 0.001 0.088 0.018 0.079 0.387"),
)
PAPER_MODELS = {"7B": "paper: Chinchilla-family 7B", "70B": "paper: Chinchilla 70B"}


@dataclass
class Options(RunOptions):
    """items_per_condition None: 512 generated, or all of an --items file."""

    humans: list[Path] = field(default_factory=list)
    prompts: list[str] | None = None  # None: the paper's plan per subtask


@dataclass
class Subtask:
    name: str
    structure: str
    dependency: str
    items_path: Path
    n_per_condition: int
    conditions: list[str]
    sha256: str
    prompts: tuple[str, ...]
    notes: list[str] = field(default_factory=list)


GENERATED_PER_CONDITION = 512


# ---------------------------------------------------------------------------------- plan
def check_prompts(tokens: list[str]) -> list[str]:
    bad = [t for t in tokens if t != "none" and t not in PROMPT_GROUPS and t not in PROMPT_SETS]
    if bad:
        raise ReproError(f"--prompts: unknown {', '.join(repr(b) for b in bad)}; use none, a group "
                         f"({', '.join(PROMPT_GROUPS)}) or a prompt set ({', '.join(PROMPT_SETS)})")
    if not tokens:
        raise ReproError("--prompts is empty")
    return list(dict.fromkeys(tokens))


def subtask_name(structure: str, dependency: str) -> str:
    for name, (s, d) in SUBTASKS.items():
        if (s, d) == (structure, dependency):
            return name
    return f"{structure}_{dependency}"


def _subsample(items: list, n: int | None, seed: int, key: str) -> tuple[list, int, list[str]]:
    """Equal items per condition: min(n, smallest condition), a seeded sample kept in file order."""
    by_cond: dict[str, list] = {}
    for it in items:
        by_cond.setdefault(it.condition, []).append(it)
    smallest = min(len(v) for v in by_cond.values())
    k = smallest if n is None else min(n, smallest)
    notes = []
    if n is not None and n > smallest:
        notes.append(f"{key}: {n} items per condition asked, the smallest condition has {smallest}; using {k}")
    elif n is None and any(len(v) != smallest for v in by_cond.values()):
        notes.append(f"{key}: conditions hold {', '.join(f'{c} {len(v)}' for c, v in sorted(by_cond.items()))} items; "
                     f"using {k} per condition so that every condition weighs the same")
    keep = []
    for cond, group in by_cond.items():
        chosen = set(id(x) for x in random.Random(f"{seed}:{key}:{cond}").sample(group, k)) if k < len(group) else None
        keep += [x for x in group if chosen is None or id(x) in chosen]
    order = {id(x): i for i, x in enumerate(items)}
    return sorted(keep, key=lambda x: order[id(x)]), k, notes


def plan_subtasks(opt: Options) -> list[Subtask]:
    """The stimulus files of the run: generated (the paper's four subtasks) or from --items files."""

    generate_items = cells_study().generate_items

    opt.check_selection()
    prompts = check_prompts(opt.prompts) if opt.prompts is not None else None
    groups: dict[tuple[str, str], list] = {}
    if opt.items:
        seen: dict[str, Path] = {}
        for f in opt.items:
            try:
                items = load_items(f)
            except StimulusFileError as exc:
                raise ReproError(str(exc)) from None
            for it in items:
                if it.item_id in seen and seen[it.item_id] != f:
                    raise ReproError(f"item id {it.item_id!r} is in both {seen[it.item_id]} and {f}; item ids must be "
                                     "unique")
                seen[it.item_id] = f
                for dep in it.verbs:
                    if opt.dependency in (None, dep):
                        groups.setdefault((it.structure, dep), []).append(dataclasses.replace(it, lexicon="test"))
        if not groups:
            raise ReproError(f"no items with an {opt.dependency} verb in {', '.join(map(str, opt.items))}")
    else:
        n = opt.items_per_condition or GENERATED_PER_CONDITION
        for _name, (structure, dep) in SUBTASKS.items():
            if opt.dependency in (None, dep):
                groups[(structure, dep)] = generate_items(structure, "test", n, opt.seed)
    out = []
    for (structure, dep), items in groups.items():
        name = subtask_name(structure, dep)
        STRUCTURES = cells_study().STRUCTURES
        if structure not in STRUCTURES:
            raise ReproError(f"structure {structure!r} of the items is unknown; known: {', '.join(STRUCTURES)}")
        keep, k, notes = _subsample(items, opt.items_per_condition, opt.seed, name)
        path = save_items(keep, opt.out / "stimuli" / f"{name}.csv")
        default = DEFAULT_PROMPTS.get(name, OTHER_PROMPTS)
        out.append(Subtask(name, structure, dep, path, k, sorted({i.condition for i in keep}), sha256_file(path),
                           tuple(prompts) if prompts is not None else default, notes))
    return out


def spec_for(st: Subtask, seed: int) -> dict[str, Any]:
    """A forced-choice spec whose one block shows every item once, with the critical verb of the subtask."""
    return {
        "name": f"lampinen2024_{st.name}",
        "description": f"seeds/000 reproduction, {st.name}: {st.structure}, {st.dependency} verb; items sha256 "
                       f"{st.sha256}",
        "seed": seed,
        "stimuli": {"file": str(st.items_path.resolve())},
        "blocks": [{"name": "test", "lexicon": "test", "structures": [st.structure], "conditions": st.conditions,
                    "versions": [st.dependency], "repetitions": st.n_per_condition, "feedback": False,
                    "shuffle": False, "max_consecutive_violations": None, "break_after": False}],
        "task": {"kind": "forced_choice"},
        "texts": {"instructions": ["Forced choice at the critical verb (models only; seeds/000)."]},
    }


def arms_for(opt: Options, model: str | None, subtasks: list[Subtask]) -> list[Arm]:
    mslug = slug(model or "SmolLM2-135M-Instruct") + backend_suffix(opt.backend)
    arms = []
    for st in subtasks:
        spec = write_spec(opt.out / "specs" / f"{st.name}.yaml", spec_for(st, opt.seed))
        for token in st.prompts:
            # one arm per prompt set: a batch then shares one prompt, whose KV cache the backend reuses
            # (a group's prompts are its model subjects m01, m02, ... as with `--context fewshot:<group>`)
            sets = ["none"] if token == "none" else list(PROMPT_GROUPS.get(token, (token,)))
            for k, name in enumerate(sets):
                context = "none" if name == "none" else f"fewshot:{name}"
                arms.append(Arm(f"{mslug}/{st.name}/{name}", spec, context, "forced_choice", 1,
                                opt.out / "sessions" / mslug / st.name / st.sha256[:12] / name,
                                {"subtask": st.name, "prompt": token}, first_subject=k + 1))
    return arms


# ---------------------------------------------------------------------------------- analysis
def rates(df: pd.DataFrame, keys: list[str], n_boot: int, seed: int) -> pd.DataFrame:
    """Error rate per cell with a 95% percentile bootstrap CI over the cell's trials (items x prompts)."""

    rng = np.random.default_rng(seed)
    rows = []
    for key, g in df.groupby(keys, sort=True, dropna=False):
        err = 1.0 - g["correct"].astype(float).to_numpy()
        ci = bootstrap_mean(err, rng, n_boot, unit="trial")
        rows.append(dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=False))
                    | {"n_trials": len(g), "n_errors": int(err.sum()), "error_rate": ci.estimate,
                       "ci_low": ci.low, "ci_high": ci.high})
    return pd.DataFrame(rows, columns=keys + ["n_trials", "n_errors", "error_rate", "ci_low", "ci_high"])


def column_condition(structure: str, condition: str) -> str:
    """Table B1 puts the deeper variant under the condition after its fixed plural prefix (PPSP -> PSP)."""
    STRUCTURES = cells_study().STRUCTURES
    prefix = STRUCTURES[structure].fixed_prefix if structure in STRUCTURES else ""
    return condition[len(prefix):] if prefix and condition.startswith(prefix) else condition


def wide(t: pd.DataFrame, index: list[str], with_ci: bool) -> pd.DataFrame:
    t = t.copy()
    t["cell"] = ([f"{e:.3f} [{lo:.3f}, {hi:.3f}]" if pd.notna(lo) else f"{e:.3f}"
                  for e, lo, hi in zip(t["error_rate"], t["ci_low"], t["ci_high"], strict=False)]
                 if with_ci else t["error_rate"])
    w = t.pivot_table(index=index, columns="column", values="cell", aggfunc="first", sort=False)
    cols = [c for c in CONDITIONS if c in w.columns] + [c for c in condition_order(w.columns) if c not in CONDITIONS]
    return w[cols].reset_index().rename_axis(columns=None)


def human_rates(paths: list[Path], n_boot: int, seed: int) -> pd.DataFrame:
    """Error rates of the human sessions (analysis.measures.error_rates: post-training violations, CI over subjects)."""

    try:
        df, _ = load(paths)
    except LoadError as exc:
        raise ReproError(f"--humans: {exc}") from None
    # an imported release: only the subjects of its results table (not log-only or pilot subjects)
    df = df[df["in_results_table"].fillna(True).astype(bool)]
    er = error_rates(prepare(df), seed=seed, n_boot=n_boot, show_progress=False)
    h = er[er["group"] == "human"]
    if h.empty:
        raise ReproError(f"--humans {', '.join(map(str, paths))}: no human sessions with scored violation trials")
    return h.reset_index(drop=True)


def human_for(h: pd.DataFrame | None, structure: str) -> pd.DataFrame:
    """Human dashed lines for a structure: the humans' own, else long_nested (the paper's reference for
    the harder variants, which humans were not tested on), with the deeper variant's prefix added."""
    STRUCTURES = cells_study().STRUCTURES
    if h is None or h.empty:
        return pd.DataFrame()
    own = h[h["structure"] == structure]
    if not own.empty:
        return own
    base = h[h["structure"] == cells_study().KEY_STRUCTURE].copy()
    prefix = STRUCTURES[structure].fixed_prefix if structure in STRUCTURES else ""
    base["condition"] = prefix + base["condition"]
    base["structure"] = structure
    return base


def _analysis_frame(arms: list[Arm], subtasks: list[Subtask]) -> pd.DataFrame:
    """All trials of the run, with the columns the tables group by (structure, prompt set, model name)."""
    df = load_arms(arms)
    structure_of = {st.name: st.structure for st in subtasks}
    df["structure"] = df["subtask"].map(structure_of)
    df["prompt_set"] = df["context_mode"].astype(str).str.replace("fewshot:", "", regex=False)
    df["model"] = df["model"].astype(str)
    return df


def _report_intro(rep: Report, opt: Options, subtasks: list[Subtask], arms: list[Arm], results: list[ArmResult],
                  model_names: list[str]) -> None:
    """What ran and how the error rates are counted, before any table (and a warning for the bundled model)."""
    bundled = any("SmolLM2-135M" in m for m in model_names)
    n_trials, n_run = sum(r.trials_total for r in results), sum(r.trials_run for r in results)
    secs = sum(r.seconds for r in results)
    rep.text(f"Model(s): {', '.join(model_names)}. Forced choice at the critical verb (log P(correct form) vs "
             f"log P(number-flipped form) after the prompt and the sentence prefix). {n_trials} trials in "
             f"{len(arms)} arm(s); {n_run} computed in this run ({secs:.0f} s), {n_trials - n_run} reused from "
             f"finished sessions. Items: " + "; ".join(f"`{st.name}` {st.n_per_condition} per condition "
                                                       f"({len(st.conditions)} conditions)" for st in subtasks) + ".")
    if bundled:
        rep.note("The bundled model is SmolLM2-135M-Instruct, a 135M-parameter model: these are not the paper's "
                 "models (Chinchilla 70B and a 7B model); its numbers show the pipeline, not the paper's result.")
    for st in subtasks:
        for n in st.notes:
            rep.note(n)
    rep.text("Error rate: the share of items on which the model did not give the correct form the higher "
             "log-probability (a tie is an error). 95% CIs: percentile bootstrap over the cell's trials "
             f"({opt.n_boot} resamples, seed {opt.seed}); a prompt group pools its prompts' trials. Conditions "
             "name the noun numbers (outer subject, inner subject, distractor), in the paper's column order.")


def _table_b1(rep: Report, opt: Options, main: pd.DataFrame, subtasks: list[Subtask]) -> pd.DataFrame:
    """Table B1 (this run's, then the paper's as printed); returns the long table the figures draw from."""
    b1 = rates(main, ["model", "subtask", "structure", "prompt", "condition"], opt.n_boot, opt.seed)
    b1["column"] = [column_condition(s, c) for s, c in zip(b1["structure"], b1["condition"], strict=False)]
    b1["prompt_label"] = b1["prompt"].map(lambda p: PROMPT_LABELS.get(p, p))
    order = {n: i for i, n in enumerate(list(SUBTASKS) + [st.name for st in subtasks])}
    porder = {p: i for i, p in enumerate(PROMPT_LABELS)}
    b1 = b1.sort_values(["model", "subtask", "prompt"], key=lambda s: s.map(order) if s.name == "subtask" else (
        s.map(lambda p: porder.get(p, 99)) if s.name == "prompt" else s), kind="stable")
    rep.heading("Table B1: error rates by model, subtask, prompt and condition", anchor="table-b1")
    idx = ["model", "subtask", "prompt_label"]
    rep.table("table_b1", wide(b1, idx, with_ci=False).rename(columns={"prompt_label": "prompt"}),
              "This run (error rate; CIs in table_b1_long.csv)",
              shown=wide(b1, idx, with_ci=True).rename(columns={"prompt_label": "prompt"}))
    rep.table("table_b1_long", b1.drop(columns=["column"]), "Every cell with its CI and counts (long format)",
              show=False)
    paper = pd.DataFrame([{"model": PAPER_MODELS[m], "subtask": s, "prompt": p, "values as printed": v,
                           "numbers": len(v.split())} for m, s, p, v in PAPER_TABLE_B1])
    rep.table("paper_table_b1", paper, "The paper's printed Table B1 (seeds/000), its models")
    rep.note("The seed text of Table B1 has 6 or 7 numbers per row for its 8 condition columns (SSS SSP SPP SPS "
             "PPP PPS PSS PSP): cells were lost in the text, so which number belongs to which condition cannot be "
             "told. They are shown as printed, beside this run's rows, and are not aligned to columns.")
    return b1


@dataclass
class _Bars:
    """What every bar figure needs beside its rows: the model names (a bar group names its model only
    when several ran), each subtask's dependency (the figure's panel row) and the human rates (dashed)."""

    model_names: list[str]
    subtasks: list[Subtask]
    human: pd.DataFrame | None

    def bars(self, t: pd.DataFrame, group_col: str) -> pd.DataFrame:
        """Rows of a rates table labelled for error_rate_bars (group and dependency columns)."""
        t = t.copy()
        t["group"] = [f"{m} · {g}" if len(self.model_names) > 1 else str(g)
                      for m, g in zip(t["model"], t[group_col], strict=False)]
        t["dependency"] = t["subtask"].map(
            lambda s: next((st.dependency for st in self.subtasks if st.name == s), "inner"))
        return t

    def with_humans(self, t: pd.DataFrame, structure: str) -> pd.DataFrame:
        """The rows plus the human rates of the structure, for the dependencies that ran."""
        h = human_for(self.human, structure)
        if not h.empty:
            h = h[h["dependency"].isin(set(t["dependency"]))]  # no empty panels for a dependency not run
        return pd.concat([t, h.assign(group="human")], ignore_index=True) if not h.empty else t


def _figures_2_and_4(rep: Report, b1: pd.DataFrame, plot: _Bars, figs: Path) -> None:
    """Figure 2/B3 (long nested by prompt) and Figure 4 (the harder variants, when they ran)."""

    human, key = plot.human, cells_study().KEY_STRUCTURE
    rep.heading("Figure 2 and B3: error rates by prompt (long nested, inner and outer dependency)", anchor="figure-2")
    t = plot.bars(b1[(b1["structure"] == key) & b1["prompt"].isin(["none", "twoshot", "eightshot"])
                     & b1["subtask"].isin(list(SUBTASKS))], "prompt_label")
    rep.figure(error_rate_bars(plot.with_humans(t, key), key, figs / f"figure2_{key}.png"),
               "Error rate by condition, one panel per prompt group (rows: inner, outer dependency); bars: 95% "
               "bootstrap CI over items and prompts" + ("; dashed: human error rates" if human is not None else ""))

    harder = [st for st in plot.subtasks if st.structure in HARDER]
    if harder:
        rep.heading("Figure 4: harder variants (eight-shot prompts)", anchor="figure-4")
        for st in harder:
            t = plot.bars(b1[b1["subtask"] == st.name], "prompt_label")
            rep.figure(error_rate_bars(plot.with_humans(t, st.structure), st.structure,
                                       figs / f"figure4_{st.structure}.png"),
                       f"{st.name}: {HARDER[st.structure]}" + ("; dashed: human long-nested error rates (humans were "
                                                              "not tested on the harder "
                                                              "variants)" if human is not None else ""))


def _figures_per_prompt(rep: Report, opt: Options, main: pd.DataFrame, plot: _Bars, figs: Path) -> None:
    """Figure B1 (each hand-written prompt) and B2 (each recombined prompt), with their table."""

    per = rates(main[main["prompt"] != "none"], ["model", "subtask", "structure", "prompt", "prompt_set", "condition"],
                opt.n_boot, opt.seed)
    if per.empty:
        return
    per["column"] = [column_condition(s, c) for s, c in zip(per["structure"], per["condition"], strict=False)]
    rep.heading("Figure B1 and B2: error rates per prompt (long nested, inner dependency)", anchor="figure-b1")
    rep.table("per_prompt", wide(per, ["model", "subtask", "prompt_set"], with_ci=False),
              "Per prompt set (every subtask)", shown=wide(per, ["model", "subtask", "prompt_set"], with_ci=True))
    inner = per[(per["subtask"] == "long_nested_inner_english")]
    for fig_name, prompts_, cap in (("figureB1a_twoshot", ("twoshot",), "Figure B1a: each two-shot prompt"),
                                    ("figureB1b_eightshot", ("eightshot",), "Figure B1b: each eight-shot prompt"),
                                    ("figureB2_recombined", ("recombined",), "Figure B2: each recombined "
                                     "eight-shot prompt")):
        t = inner[inner["prompt"].isin(prompts_)]
        if t.empty:
            continue
        t = plot.bars(t, "prompt_set")
        key = cells_study().KEY_STRUCTURE
        rep.figure(error_rate_bars(plot.with_humans(t, key), key, figs / f"{fig_name}.png"), cap)


def _figure_5(rep: Report, opt: Options, df: pd.DataFrame, human: pd.DataFrame | None, figs: Path) -> None:
    """Figure 5 (the interp prompts: 0..8 nested examples), its table and one figure per model and subtask."""

    interp = df[df["prompt"] == "interp"]
    if interp.empty:
        return
    it = rates(interp, ["model", "subtask", "structure", "prompt_set", "condition"], opt.n_boot, opt.seed)
    it["n_nested"] = it["prompt_set"].str.replace("interp_", "", regex=False).astype(int)
    it = it.sort_values(["model", "subtask", "n_nested"], kind="stable")
    rep.heading("Figure 5: from successive to nested examples in the eight-shot prompt", anchor="figure-5")
    it["column"] = it["condition"]
    rep.table("interpolation", wide(it, ["model", "subtask", "n_nested"], with_ci=False),
              "Error rate by the number of nested examples (rows) and condition",
              shown=wide(it, ["model", "subtask", "n_nested"], with_ci=True))
    for (m, s), t in it.groupby(["model", "subtask"], sort=False):
        h = human_for(human, cells_study().KEY_STRUCTURE)
        h = h[h["dependency"] == "inner"] if not h.empty else h
        rep.figure(interpolation_lines(t, h, figs / f"figure5_{slug(m)}_{s}.png", f"{m}: {s}"),
                   f"Figure 5 ({m}, {s}): prompts swap successive for nested examples in the paper's order "
                   "(5, 2, 3, 7, 1, 0, 6, 4); PSP thick with its 95% bootstrap CI"
                   + ("; dashed: human PSP error rate" if human is not None and not h.empty else ""))


def _provenance_section(rep: Report, opt: Options, df: pd.DataFrame, subtasks: list[Subtask],
                        results: list[ArmResult], models: list[dict[str, Any]], started: float) -> None:
    """The arms, the prompt texts with their hashes, and provenance.json."""
    used_sets = sorted({s for s in df["prompt_set"].unique() if s != "none"})
    prompts = prompt_provenance(used_sets)
    rep.heading("Provenance", anchor="provenance")
    arm_table = pd.DataFrame([{"arm": r.arm.name, "context": r.arm.context, "subjects": r.arm.subjects,
                               "trials": r.trials_total, "computed now": r.trials_run, "seconds": round(r.seconds, 1),
                               "CPU seconds": round(r.cpu_seconds, 1)}
                              for r in results])
    rep.table("arms", arm_table, "Arms (one model_subjects run each; sessions under sessions/)")
    rep.details(f"{len(prompts)} prompt text(s) with SHA-256", "".join(
        f"<h3>{n}</h3><p class=small>sha256 {p['sha256']} ({p['source']})</p><pre>{_esc(p['text'])}</pre>"
        for n, p in prompts.items()))
    rep.text("The context of a trial is the prompt text above (each sentence on its own line, then a newline) "
             "followed by the sentence up to the critical verb; `none` is the prefix alone. Full record: "
             "`provenance.json` (models with weight hashes, dtype, BOS, device, package versions, command line, "
             "seeds).")
    files = {st.name: st.items_path for st in subtasks}
    write_provenance(opt.out, PAPER, _jsonable(opt), models, prompts,
                     {"context": "<prompt text + '\\n'><sentence words before the critical verb, space-joined>",
                      "options": "' ' + correct form | ' ' + number-flipped form"}, files, results, started)


def analyse(opt: Options, subtasks: list[Subtask], arms: list[Arm], results: list[ArmResult],
            models: list[dict[str, Any]], started: float) -> Path:
    """The report in the paper's order: intro, Table B1, Figures 2/B3, 4, B1/B2, 5, humans, provenance."""
    out = opt.out
    df = _analysis_frame(arms, subtasks)
    human = human_rates(opt.humans, opt.n_boot, opt.seed) if opt.humans else None

    rep = Report(out, "Reproduction of seeds/000 (Lampinen 2024): model experiments")
    model_names = sorted(df["model"].unique())
    _report_intro(rep, opt, subtasks, arms, results, model_names)

    main = df[df["prompt"] != "interp"]
    b1 = _table_b1(rep, opt, main, subtasks)
    plot = _Bars(model_names, subtasks, human)
    figs = out / "figures"
    _figures_2_and_4(rep, b1, plot, figs)
    _figures_per_prompt(rep, opt, main, plot, figs)
    _figure_5(rep, opt, df, human, figs)

    if human is not None:
        rep.heading("Human error rates (dashed lines)", anchor="humans")
        rep.table("human_error_rates", human, "Humans: post-training violation trials, 95% bootstrap CI over subjects "
                  "(analysis.measures.error_rates)")

    _provenance_section(rep, opt, df, subtasks, results, models, started)
    return rep.write()


def _esc(s: str) -> str:
    return html.escape(s)


def _jsonable(opt: Options) -> dict[str, Any]:
    d = dataclasses.asdict(opt)
    return {k: (str(v) if isinstance(v, Path) else [str(x) if isinstance(x, Path) else x for x in v]
                if isinstance(v, list) else v) for k, v in d.items()}


# ---------------------------------------------------------------------------------- run
def reproduce(opt: Options, log=print) -> Path:
    """Plan, run every arm of every model (reusing finished sessions), analyse; returns report.html."""

    started = time.time()
    if opt.humans:  # bad human data fails before hours of model runs, and before anything is written
        human_rates(opt.humans, 10, opt.seed)
    opt.out.mkdir(parents=True, exist_ok=True)
    subtasks = plan_subtasks(opt)
    all_arms: list[Arm] = []
    results: list[ArmResult] = []
    models: list[dict[str, Any]] = []
    for model in opt.models:
        arms = arms_for(opt, model, subtasks)
        try:
            backend = load_backend(model, backend=opt.backend, dtype=opt.dtype, device=opt.device,
                                   add_bos=opt.add_bos, batch_size=opt.batch_size, threads=opt.threads,
                                   **opt.backend_options)
        except ModelLoadError as exc:
            raise ReproError(str(exc)) from None
        models.append(backend.describe())
        run_opts = {"model": model, "add_bos": opt.add_bos, "dtype": opt.dtype, "device": opt.device,
                    "batch_size": opt.batch_size, "threads": opt.threads}
        with progress_bar(opt.quiet) as prog:
            for arm in arms:
                task = prog.add_task(arm.name, total=None)

                def advance(n: int, total: int | None, task=task) -> None:
                    if total is not None:
                        prog.update(task, total=total)
                    if n:
                        prog.advance(task, n)

                r = run_arm(arm, backend, run_opts, advance)
                prog.update(task, total=max(1, r.trials_run), completed=max(1, r.trials_run),
                            description=f"{arm.name} ({r.trials_total} trials, {r.trials_run} now)")
                results.append(r)
        all_arms += arms
        del backend
    return analyse(opt, subtasks, all_arms, results, models, started)


