"""seeds/002 (Hu & Frank 2024): auxiliary task demands across model sizes; the demand gap.

This module is the agreement-items mode of `reproduce hu-frank2024` (a substitute task on twinlab's own items).
The paper itself: `--authors-outputs DIR` (its analysis from the released outputs, reproductions/hu_frank/
authors.py) and `--data DIR` (its four domains on the user's models, reproductions/hu_frank/lab.py).

Two contrasts per model, each a low-demand against a high-demand evaluation of the same items:

  production vs forced choice (agreement items, as sessions through model_subjects.Runner):
      forced_choice           log P(correct verb form) vs log P(flipped form) after the sentence prefix
      production:completion   the model writes the word at the critical position (greedy); strict
                              parsing against the two forms (lenient parsing is stored beside it)
  metalinguistic judgment vs direct (agreement pairs as sessions; --pairs BLiMP JSONL files scored
  through the same protocols):
      sentence_comparison:Direct               log P(grammatical sentence) vs log P(ungrammatical one)
      sentence_comparison:MetaQuestionSimple   "Which sentence is a better English sentence? 1) .. 2) .."
                              in both answer orders (the closest of the existing prompts to the paper's
                              prompt (2), "Which of the following two sentences is more grammatically
                              correct in English?"; the exact template is in provenance.json)

Demand gap (analysis.measures.model_measures.demand_gap): logit(accuracy, low demand) - logit(accuracy, high
demand), per model, contrast and dataset, with a bootstrap CI. Mixed model (analysis.stats.mixed.fit_glmer,
R lme4): correct ~ high_demand * log10_size + (1 | item), per contrast, over all models (the paper:
`correct ~ size * evalMethod + (size * evalMethod | modelFamily)`; with one model family here, items
are the grouping factor). Sizes are read from the models (parameter count), never typed in.
"""
from __future__ import annotations

import dataclasses
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.measures.model_measures import SMOOTHING, demand_gap
from analysis.report.figures import demand_gap_plot
from analysis.stats.bootstrap import bootstrap_mean
from analysis.stats.mixed import MixedModelError, fit_glmer, significance_mark
from model_subjects import ModelLoadError, get_protocol, load_backend
from reproductions import lampinen2024 as lp
from reproductions.common import (
    Arm,
    Report,
    ReproError,
    RunOptions,
    backend_suffix,
    cells_study,
    load_arms,
    progress_bar,
    run_arm,
    sha256_text,
    slug,
    write_provenance,
    write_spec,
)
from reproductions.figures import accuracy_bars
from reproductions.pairs import ScoreCache, load_blimp_jsonl, pair_trials, score_protocols

PAPER = "seeds/002: Hu & Frank (2024), Auxiliary task demands mask the capabilities of smaller language models"
CONTRASTS = {
    "production vs forced choice": ("forced_choice", "production:completion"),
    "metalinguistic vs direct": ("sentence_comparison:Direct", "sentence_comparison:MetaQuestionSimple"),
}
PAPER_NUMBERS = (
    ("analogical reasoning", "size x method interaction", "z = 2.631, p = 0.009"),
    ("grammaticality judgment", "size x method interaction", "z = 1.995, p = 0.0461"),
    ("word prediction", "size x method interaction", "t = 7.654, p = 0.005"),
    ("reflective reasoning", "size x method interaction", "not significant"),
)


@dataclass
class Options(RunOptions):
    items_per_condition: int | None = 8
    pairs: list[Path] = field(default_factory=list)
    mixed: bool = True
    max_new_tokens: int = 4


def _subtasks(opt: Options, out: Path):
    lopt = lp.Options(models=opt.models, out=out, items=opt.items, items_per_condition=opt.items_per_condition,
                      prompts=["none"], dependency=opt.dependency, seed=opt.seed)
    subs = lp.plan_subtasks(lopt)
    if not opt.items:  # the generated set: the paper's long-nested agreement, both verbs
        subs = [s for s in subs if s.structure == cells_study().KEY_STRUCTURE]
    return subs, lp.spec_for


def run_model(opt: Options, model: str | None, subtasks, spec_for, pairs, prog) -> tuple[pd.DataFrame, dict, list]:
    try:
        backend = load_backend(model, backend=opt.backend, dtype=opt.dtype, device=opt.device, add_bos=opt.add_bos,
                               batch_size=opt.batch_size, threads=opt.threads, **opt.backend_options)
    except ModelLoadError as exc:
        raise ReproError(str(exc)) from None
    desc = backend.describe()

    mslug = slug(desc.get("name") or model or "model") + backend_suffix(opt.backend)
    arms, results = [], []
    run_opts = {"model": model, "add_bos": opt.add_bos, "dtype": opt.dtype, "device": opt.device,
                "batch_size": opt.batch_size, "threads": opt.threads, "max_new_tokens": opt.max_new_tokens}
    for st in subtasks:
        spec = write_spec(opt.out / "specs" / f"{st.name}.yaml", spec_for(st, opt.seed))
        for low, high in CONTRASTS.values():
            for proto in (low, high):
                arm = Arm(f"{mslug}/{st.name}/{proto}", spec, "none", proto, 1,
                          opt.out / "sessions" / mslug / st.name / st.sha256[:12] / proto.replace(":", "-"),
                          {"subtask": st.name, "dataset": "agreement"})
                task = prog.add_task(arm.name, total=None)

                def advance(n: int, total: int | None, task=task) -> None:
                    if total is not None:
                        prog.update(task, total=max(total, 1))
                    if n:
                        prog.advance(task, n)

                results.append(run_arm(arm, backend, run_opts, advance))
                arms.append(arm)
    df = load_arms(arms)
    df["item"] = df["item_id"].astype(str) + ":" + df["dependency"].astype(str)
    frames = [df[["model", "protocol", "correct", "item", "dataset", "subtask"]]]
    if pairs:
        ident = sha256_text(repr((desc.get("name"), desc.get("revision"), desc.get("dtype"), desc.get("add_bos"))))[:12]
        cache = ScoreCache(opt.out / "cache" / f"{mslug}-{ident}.jsonl")
        protos = [CONTRASTS["metalinguistic vs direct"][0], CONTRASTS["metalinguistic vs direct"][1]]
        jobs, meta = [], []
        for p in pairs:
            g, _ = pair_trials(p)
            for name in protos:
                jobs.append((g, get_protocol(name)))
                meta.append((p, name))
        task = prog.add_task(f"{mslug}: {len(pairs)} pairs", total=None)
        try:
            decisions, _ = score_protocols(backend, cache, jobs, progress=lambda n, t: (
                prog.update(task, total=max(t, 1)) if t is not None else None, prog.advance(task, n)))
        finally:
            cache.close()
        frames.append(pd.DataFrame([{"model": desc.get("name"), "protocol": name, "correct": bool(d.correct),
                                     "item": p.pair_id, "dataset": p.dataset, "subtask": p.category}
                                    for (p, name), d in zip(meta, decisions, strict=False)]))
    del backend
    out = pd.concat(frames, ignore_index=True)
    out["n_parameters"] = int(desc.get("n_parameters") or 0)
    return out, desc, results


def unique_models(models: list[str | None]) -> tuple[list[str | None], list[str]]:
    """The models once each (the same path or name given twice would be counted twice); notes for the rest."""
    seen: dict[str | None, str | None] = {}
    notes = []
    for m in models:
        key = None if m is None else (str(Path(m).expanduser().resolve()) if Path(m).expanduser().exists() else m)
        if key in seen:
            notes.append(f"model {m or 'default (bundled)'} was given more than once: run and counted once")
            continue
        seen[key] = m
    return list(seen.values()), list(dict.fromkeys(notes))


def demand_gaps(rows: pd.DataFrame, n_boot: int, seed: int) -> pd.DataFrame:
    """analysis.measures.model_measures.demand_gap per dataset, restricted to the two contrasts."""


    df = rows.assign(subject_kind="model", context_mode=rows["dataset"])
    with warnings.catch_warnings():  # the unsmoothed gap beside the smoothed one may be infinite
        warnings.simplefilter("ignore", RuntimeWarning)
        g = demand_gap(df, seed=seed, n_boot=n_boot)
    keep = {(lo, hi): name for name, (lo, hi) in CONTRASTS.items()}
    g["contrast"] = [keep.get((lo, hi)) for lo, hi in zip(g["low_demand"], g["high_demand"], strict=False)]
    g = g[g["contrast"].notna()].rename(columns={"context_mode": "dataset"})
    sizes = rows.groupby("model")["n_parameters"].first()
    g.insert(1, "n_parameters", g["model"].map(sizes))
    return g.reset_index(drop=True)


def accuracies(rows: pd.DataFrame, n_boot: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    out = []
    for (model, dataset, proto), g in rows.groupby(["model", "dataset", "protocol"], sort=False):
        ci = bootstrap_mean(g["correct"].astype(float).to_numpy(), rng, n_boot, unit="item")
        contrast = next((n for n, ps in CONTRASTS.items() if proto in ps), "")
        out.append({"model": model, "n_parameters": int(g["n_parameters"].iloc[0]), "dataset": dataset,
                    "contrast": contrast, "method": "high demand" if proto in [h for _, h in CONTRASTS.values()]
                    else "low demand", "protocol": proto, "n_items": len(g), "accuracy": ci.estimate,
                    "ci_low": ci.low, "ci_high": ci.high})
    return pd.DataFrame(out)


def mixed_models(rows: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """correct ~ high_demand * log10_size + (1 | item) per contrast (needs two or more model sizes)."""
    notes: list[str] = []
    sizes = rows["n_parameters"].unique()
    if len(sizes) < 2:
        return pd.DataFrame(), [f"mixed model skipped: it needs models of at least two sizes (got {len(sizes)}: "
                                + ", ".join(f"{int(s):,}" for s in sizes) + " parameters)"]

    out = []
    for name, (low, high) in CONTRASTS.items():
        d = rows[rows["protocol"].isin([low, high])].copy()
        if d.empty:
            continue
        d["high_demand"] = (d["protocol"] == high).astype(int)
        d["log10_size"] = np.log10(d["n_parameters"].astype(float))
        d["log10_size"] -= d["log10_size"].mean()
        d["correct"] = d["correct"].astype(int)
        formula = "correct ~ high_demand * log10_size + (1 | item)"
        try:
            fit = fit_glmer(d, formula, group="item")
        except MixedModelError as exc:
            notes.append(f"{name}: {exc}")
            continue
        for c in fit.coefficients:
            out.append({"contrast": name, "formula": formula, "n_obs": fit.n_obs, "n_items": fit.n_groups, **c,
                        "signif": significance_mark(c["p"], fit.status), "status": fit.status,
                        "converged": fit.converged, "singular": fit.singular, "fallback": fit.fallback,
                        "optimizer_warnings": "; ".join(fit.optimizer_warnings)})
        if fit.status != "ok":
            notes.append(f"{name}: the mixed model is {fit.status}")
        notes += [f"{name}: {m}" for m in fit.messages]
    return pd.DataFrame(out), notes


def _run_models(opt: Options, subtasks: list, spec_for, pairs: list) -> tuple[pd.DataFrame, list[dict], list]:
    """Every model runs every session and pair (one progress display); returns the rows, models and arm results."""
    frames, models, results = [], [], []
    with progress_bar(opt.quiet) as prog:
        for model in opt.models:
            rows, desc, res = run_model(opt, model, subtasks, spec_for, pairs, prog)
            frames.append(rows)
            models.append(desc)
            results += res
    return pd.concat(frames, ignore_index=True), models, results


def _report_intro(rep: Report, opt: Options, rows: pd.DataFrame, subtasks: list, pairs: list,
                  duplicates: list[str]) -> None:
    """The models (smallest first), the items and what each contrast compares, before any number."""
    for d in duplicates:
        rep.note(d)
    names = rows.groupby("model")["n_parameters"].first().sort_values()
    rep.text("Model(s), smallest first: " + ", ".join(f"{m} ({int(n):,} parameters)" for m, n in names.items())
             + f". Agreement items: {', '.join(f'`{s.name}` {s.n_per_condition} per condition' for s in subtasks)}"
             + (f"; {len(pairs)} minimal pairs from {', '.join(str(p) for p in opt.pairs)}" if pairs else "") + ".")
    if any("SmolLM2-135M" in m for m in names.index):
        rep.note("SmolLM2-135M-Instruct is a 135M-parameter model; the paper's models are 1B to 70B (Pythia, OLMo, "
                 "Gemma, Llama-2, Mistral)." + (" With one model there is no size effect to estimate."
                                                if len(names) == 1 else ""))
    rep.text("Contrasts (low vs high demand, same items): production vs forced choice = `forced_choice` (log P of "
             "the correct vs the flipped verb form after the prefix) vs `production:completion` (the model writes the "
             "word at the critical position, greedy, strict parsing); metalinguistic vs direct = "
             "`sentence_comparison:Direct` (log P of the two sentences) vs `sentence_comparison:MetaQuestionSimple` "
             "(which sentence is better, both answer orders). Demand gap = logit(low-demand accuracy) - "
             "logit(high-demand accuracy). Sizes are the models' parameter counts.")


def _accuracy_section(rep: Report, opt: Options, rows: pd.DataFrame) -> None:
    """Accuracy per model, dataset and protocol, and one bar figure per contrast (Figures 2A/C, 3C)."""

    acc = accuracies(rows, opt.n_boot, opt.seed)
    rep.heading("Accuracy by evaluation method (Figures 2A/C, 3C)", anchor="accuracy")
    rep.table("accuracy", acc, "Accuracy per model, dataset and protocol (95% bootstrap CI over items)")
    for contrast in CONTRASTS:
        t = acc[acc["contrast"] == contrast]
        if t.empty:
            continue
        t = t.assign(x=[f"{m} · {d}" for m, d in zip(t["model"], t["dataset"], strict=False)], estimate=t["accuracy"])
        rep.figure(accuracy_bars(t, "x", "method", opt.out / "figures" / f"accuracy_{slug(contrast)}.png", contrast),
                   f"{contrast}: accuracy of the low- and high-demand method per model (smallest model first)")


def _demand_gap_section(rep: Report, opt: Options, rows: pd.DataFrame) -> None:
    """The demand gaps with their CIs; a gap from a method never (or always) right is flagged, not read."""

    gaps = demand_gaps(rows, opt.n_boot, opt.seed)
    rep.heading("Demand gap (Figures 2B/D, 3D)", anchor="demand-gap")
    rep.table("demand_gap", gaps, "logit(low-demand accuracy) - logit(high-demand accuracy), 95% bootstrap CI")

    for r in gaps[gaps["flag"].fillna("") != ""].itertuples():
        rep.note(f"{r.model} · {r.dataset} · {r.contrast}: {r.flag}. The gap is finite (smoothed) but measures the "
                 "task failure, not a difference in capability: do not read it as a result.")
    rep.figure(demand_gap_plot(gaps.rename(columns={"dataset": "context_mode"}),
                               opt.out / "figures" / "demand_gap.png"),
               "Demand gap per model, contrast and dataset: " + SMOOTHING + ". Hatched bars: a method never (or "
               "always) right, flagged as a task failure (or ceiling), not a result.")


def _mixed_section(rep: Report, opt: Options, rows: pd.DataFrame) -> None:
    """The glmer over model size (with --mixed), its notes, and the paper's printed interaction tests."""
    rep.heading("Mixed model: does the gap shrink with size?", anchor="mixed")
    if opt.mixed:
        coefs, notes = mixed_models(rows)
        for n in notes:
            rep.note(n)
        if not coefs.empty:
            rep.table("mixed_model", coefs, "glmer coefficients (Wald CIs); the interaction is high_demand:log10_size")
    else:
        rep.note("mixed model not fitted (--no-mixed)")
    rep.table("paper_numbers", pd.DataFrame(PAPER_NUMBERS, columns=["domain", "test", "paper (seeds/002)"]),
              "The paper's printed interaction tests (its models, 1B-70B)")


def _provenance_section(rep: Report, opt: Options, models: list[dict], subtasks: list, results: list,
                        started: float) -> None:
    """The sessions run, and provenance.json with the prompt templates and every file read."""

    meta = "sentence_comparison:MetaQuestionSimple"  # its template, as the protocol that asks it records it
    templates = {meta: get_protocol(meta).describe()["template"],
                 "paper prompt (2)": "Which of the following two sentences is more grammatically correct in English? "
                                     "Respond with 1 or 2 as your answer.\nSentence 1: [sentence1]\nSentence 2: "
                                     "[sentence2]\nAnswer:",
                 "production:completion": "<sentence words before the critical verb>; greedy, "
                                          f"{opt.max_new_tokens} new tokens at most, first word parsed"}
    rep.heading("Provenance", anchor="provenance")
    rep.table("arms", pd.DataFrame([{"arm": r.arm.name, "trials": r.trials_total, "computed now": r.trials_run,
                                     "seconds": round(r.seconds, 1)} for r in results]), "Sessions run (agreement "
                                                                                         "items)")
    opts = {k: (str(v) if isinstance(v, Path) else [str(x) for x in v] if isinstance(v, list) else v)
            for k, v in dataclasses.asdict(opt).items()}
    write_provenance(opt.out, PAPER, opts, models, {}, templates,
                     {s.name: s.items_path for s in subtasks} | {f"pairs:{Path(f).name}": Path(f) for f in opt.pairs},
                     results, started)


def reproduce(opt: Options) -> Path:
    """Plan the sessions, run every model, then accuracy, demand gap, mixed model and provenance;
    returns report.html."""

    started = time.time()
    opt.out.mkdir(parents=True, exist_ok=True)
    opt.check_selection()
    opt.models, duplicates = unique_models(opt.models)
    subtasks, spec_for = _subtasks(opt, opt.out)
    pairs = [p for path in (opt.pairs or []) for p in load_blimp_jsonl(Path(path))]
    rows, models, results = _run_models(opt, subtasks, spec_for, pairs)
    rep = Report(opt.out, "Reproduction of seeds/002 (Hu & Frank 2024): the demand gap")
    _report_intro(rep, opt, rows, subtasks, pairs, duplicates)
    _accuracy_section(rep, opt, rows)
    _demand_gap_section(rep, opt, rows)
    _mixed_section(rep, opt, rows)
    _provenance_section(rep, opt, models, subtasks, results, started)
    return rep.write()
