"""seeds/003 (Hu & Levy 2023): Direct against the three metalinguistic prompts, on minimal pairs.

Experiments 3a (sentence judgment) and 3b (sentence comparison), with the protocols of
`model_subjects.protocols` (`sentence_judgment:<PromptType>`, `sentence_comparison:<PromptType>`;
the templates of the paper's Tables 4a/4b), on the agreement pairs (a sentence and its version with
the critical verb flipped) and on BLiMP-format JSONL files (`--pairs`).

Definitions (as in the paper):
  accuracy, Direct (3a and 3b): share of pairs whose grammatical sentence gets the higher log-probability
  accuracy, Meta judgment (3a): balanced accuracy = mean of the true positive rate (P(Yes) > P(No) for the
      grammatical sentence) and the true negative rate (P(No) > P(Yes) for the ungrammatical one)
  accuracy, Meta comparison (3b): share of pairs whose grammatical sentence's answer option (1 or 2) gets
      the higher log-probability, averaged over the two answer orders (each order also reported)
  internal consistency: Pearson r over pairs between the direct differential (log P(grammatical) -
      log P(ungrammatical)) and the metalinguistic one: 3a log P(Yes | grammatical prompt) - log P(Yes |
      ungrammatical prompt); 3b log P(grammatical's option) - log P(other option), mean of both orders
CIs: 95% percentile bootstrap over pairs (accuracy), Fisher z (r).
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from reproductions.common import ReproError, Report, RunOptions, progress_bar, sha256_text, slug, write_provenance
from reproductions.pairs import Pair, ScoreCache, load_blimp_jsonl, pair_trials, pairs_from_items, score_protocols

PAPER = "seeds/003: Hu & Levy (2023), Prompting is not a substitute for probability measurements in LLMs"
PROMPT_TYPES = ("Direct", "MetaQuestionSimple", "MetaInstruct", "MetaQuestionComplex")
META = PROMPT_TYPES[1:]
DEFINITIONS = (
    "Accuracy, Direct (3a and 3b): share of pairs whose grammatical sentence gets the higher log-probability. "
    "Meta judgment (3a): balanced accuracy, the mean of the true positive rate (P(Yes) > P(No) for the grammatical "
    "sentence) and the true negative rate (P(No) > P(Yes) for the ungrammatical one). Meta comparison (3b): share of "
    "pairs whose grammatical sentence's answer option (1 or 2) gets the higher log-probability, averaged over the two "
    "answer orders. Internal consistency: Pearson r over pairs between the direct differential (log P(grammatical) - "
    "log P(ungrammatical)) and the metalinguistic one (3a: log P(Yes | grammatical prompt) - log P(Yes | ungrammatical "
    "prompt); 3b: log P(grammatical's option) - log P(other option), mean of both orders). CIs: 95% percentile "
    "bootstrap over pairs (accuracy), Fisher z (r)."
)
PAPER_RESULTS = (
    "Result 1: metalinguistic judgments are not the same as direct measurements (Figure 2).",
    "Result 2: direct measurements generally perform better than or as well as metalinguistic prompting (Figure 2).",
    "Result 3: minimal pairs help: meta accuracy rises from isolated judgments (3a, Figure 2c) to comparisons "
    "(3b, Figure 2d) for models above chance.",
    "Result 4: the less similar a prompt is to a direct probability measurement, the weaker the item-level "
    "correlation with the direct differentials (Figure 3).",
)


@dataclass
class Options(RunOptions):
    items_per_condition: int | None = 16
    pairs: list[Path] = field(default_factory=list)
    no_agreement: bool = False


def collect_pairs(opt: Options) -> list[Pair]:
    """Agreement pairs (generated long_nested, or --items files) and the --pairs JSONL files."""
    from stimuli.files import StimulusFileError, load_items
    from stimuli.generate import generate_items

    opt.check_selection()
    pairs: list[Pair] = []
    if not opt.no_agreement:
        if opt.items:
            for f in opt.items:
                try:
                    items = load_items(f)
                except StimulusFileError as exc:
                    raise ReproError(str(exc)) from None
                pairs += pairs_from_items(_per_condition(items, opt.items_per_condition), opt.dependency)
        else:
            pairs += pairs_from_items(generate_items("long_nested", "test", opt.items_per_condition, opt.seed),
                                      opt.dependency)
    for f in opt.pairs:
        pairs += load_blimp_jsonl(f)
    if not pairs:
        raise ReproError("no pairs: give --pairs files or leave the agreement pairs on")
    ids = [p.pair_id for p in pairs]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise ReproError(f"pair id {dup!r} appears twice (the same file given twice?)")
    return pairs


def _per_condition(items: list, n: int) -> list:
    seen: dict[tuple, int] = {}
    out = []
    for it in items:
        k = (it.structure, it.condition)
        if seen.get(k, 0) < n:
            out.append(it)
            seen[k] = seen.get(k, 0) + 1
    return out


def run_model(opt: Options, model: str | None, pairs: list[Pair], prog) -> tuple[pd.DataFrame, dict[str, Any], int, float]:
    from model_subjects import ModelLoadError, get_protocol, load_backend

    t0 = time.perf_counter()
    try:
        backend = load_backend(model, dtype=opt.dtype, device=opt.device, add_bos=opt.add_bos,
                               batch_size=opt.batch_size, threads=opt.threads)
    except ModelLoadError as exc:
        raise ReproError(str(exc)) from None
    desc = backend.describe()
    ident = sha256_text(repr((desc.get("name"), desc.get("revision"), desc.get("dtype"), desc.get("add_bos"))))[:12]
    cache = ScoreCache(opt.out / "cache" / f"{slug(desc.get('name') or model or 'model')}-{ident}.jsonl")
    jobs, meta = [], []
    for p in pairs:
        g, b = pair_trials(p)
        for pt in PROMPT_TYPES:
            jobs += [(g, get_protocol(f"sentence_judgment:{pt}")), (b, get_protocol(f"sentence_judgment:{pt}")),
                     (g, get_protocol(f"sentence_comparison:{pt}"))]
            meta += [(p, "judgment", pt, "grammatical"), (p, "judgment", pt, "ungrammatical"),
                     (p, "comparison", pt, "pair")]
    task = prog.add_task(f"{desc.get('name')}: {len(pairs)} pairs", total=None)

    def advance(n: int, total: int | None) -> None:
        if total is not None:
            prog.update(task, total=max(total, 1))
        if n:
            prog.advance(task, n)

    try:
        decisions, n_now = score_protocols(backend, cache, jobs, chunk=max(64, 8 * opt.batch_size), progress=advance)
    finally:
        cache.close()
    rows = []
    for (p, taskname, pt, shown), d in zip(meta, decisions):
        row = {"model": desc.get("name"), "dataset": p.dataset, "category": p.category, "pair_id": p.pair_id,
               "task": taskname, "prompt_type": pt, "sentence": shown, "correct": bool(d.correct),
               "response": d.response if taskname == "judgment" else ("grammatical" if d.correct else "ungrammatical"),
               "margin": d.margin, "logprob_first": d.option_logprobs[0], "logprob_second": d.option_logprobs[1],
               "rescored_alone": bool(d.extra.get("rescored_alone"))}
        if "margin_grammatical_first" in d.extra:
            row.update(correct_grammatical_first=d.extra["correct_grammatical_first"],
                       correct_grammatical_second=d.extra["correct_grammatical_second"],
                       margin_grammatical_first=d.extra["margin_grammatical_first"],
                       margin_grammatical_second=d.extra["margin_grammatical_second"])
        rows.append(row)
    del backend
    return pd.DataFrame(rows), desc, n_now, time.perf_counter() - t0


# ---------------------------------------------------------------------------------- measures
def accuracy(rows: pd.DataFrame, n_boot: int, seed: int) -> pd.DataFrame:
    """Accuracy per model x task x dataset x prompt type (see the module doc), bootstrap CI over pairs."""
    rng = np.random.default_rng(seed)
    out = []
    for (model, task, dataset, pt), g in rows.groupby(["model", "task", "dataset", "prompt_type"], sort=False):
        if task == "judgment" and pt != "Direct":
            good = g[g["sentence"] == "grammatical"].set_index("pair_id")["correct"].astype(float)
            bad = g[g["sentence"] == "ungrammatical"].set_index("pair_id")["correct"].astype(float).reindex(good.index)
            tpr, tnr = good.to_numpy(), bad.to_numpy()
            est = (tpr.mean() + tnr.mean()) / 2
            idx = rng.integers(0, len(tpr), (n_boot, len(tpr)))
            boots = (tpr[idx].mean(1) + tnr[idx].mean(1)) / 2
            measure, extra = "balanced accuracy", {"true_positive_rate": tpr.mean(), "true_negative_rate": tnr.mean()}
        else:
            g1 = g[g["sentence"] != "ungrammatical"]
            v = g1["correct"].astype(float).to_numpy()
            est = v.mean()
            boots = v[rng.integers(0, len(v), (n_boot, len(v)))].mean(1)
            measure, extra = "accuracy", {}
            if "correct_grammatical_first" in g1 and g1["correct_grammatical_first"].notna().any():
                extra = {"accuracy_grammatical_first": g1["correct_grammatical_first"].astype(float).mean(),
                         "accuracy_grammatical_second": g1["correct_grammatical_second"].astype(float).mean()}
        lo, hi = np.quantile(boots, [0.025, 0.975])
        out.append({"model": model, "task": task, "dataset": dataset, "prompt_type": pt, "measure": measure,
                    "n_pairs": int(g["pair_id"].nunique()), "estimate": float(est), "ci_low": float(lo),
                    "ci_high": float(hi), **extra})
    return pd.DataFrame(out)


def differentials(rows: pd.DataFrame) -> pd.DataFrame:
    """Item-level direct and metalinguistic differentials (module doc), one row per pair x meta prompt type."""
    out = []
    for (model, task, dataset), g in rows.groupby(["model", "task", "dataset"], sort=False):
        d = g[(g["prompt_type"] == "Direct") & (g["sentence"] != "ungrammatical")].set_index("pair_id")
        direct = d["logprob_first"] - d["logprob_second"]  # log P(grammatical) - log P(ungrammatical)
        for pt in META:
            m = g[g["prompt_type"] == pt]
            if task == "judgment":
                yes_g = m[m["sentence"] == "grammatical"].set_index("pair_id")["logprob_first"]
                yes_b = m[m["sentence"] == "ungrammatical"].set_index("pair_id")["logprob_first"]
                meta = yes_g - yes_b.reindex(yes_g.index)
            else:
                meta = m.set_index("pair_id")["margin"]
            both = pd.concat([direct.rename("direct"), meta.rename("meta")], axis=1, join="inner").reset_index()
            out.append(both.assign(model=model, task=task, dataset=dataset, prompt_type=pt))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()


def consistency(diffs: pd.DataFrame) -> pd.DataFrame:
    from scipy.stats import pearsonr

    out = []
    for (model, task, dataset, pt), g in diffs.groupby(["model", "task", "dataset", "prompt_type"], sort=False):
        row = {"model": model, "task": task, "dataset": dataset, "prompt_type": pt, "n_pairs": len(g),
               "pearson_r": np.nan, "ci_low": np.nan, "ci_high": np.nan, "p": np.nan}
        if len(g) >= 4 and g["direct"].std() > 0 and g["meta"].std() > 0:
            res = pearsonr(g["direct"], g["meta"])
            ci = res.confidence_interval(0.95)
            row.update(pearson_r=float(res.statistic), ci_low=float(ci.low), ci_high=float(ci.high), p=float(res.pvalue))
        out.append(row)
    return pd.DataFrame(out)


def layout(t: pd.DataFrame, value_cols: list[str], est: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Paper layout: rows model x task x dataset, columns the prompt types; (numbers, numbers with CIs)."""
    t = t.copy()
    t["cell"] = [f"{e:.3f} [{lo:.3f}, {hi:.3f}]" if pd.notna(e) and pd.notna(lo) else ("" if pd.isna(e) else f"{e:.3f}")
                 for e, lo, hi in zip(t[est], t["ci_low"], t["ci_high"])]
    idx = ["model", "task", "dataset"]
    num = t.pivot_table(index=idx, columns="prompt_type", values=est, aggfunc="first", sort=False)
    txt = t.pivot_table(index=idx, columns="prompt_type", values="cell", aggfunc="first", sort=False)
    cols = [c for c in value_cols if c in num.columns]
    return num[cols].reset_index().rename_axis(columns=None), txt[cols].reset_index().rename_axis(columns=None)


def reproduce(opt: Options) -> Path:
    from analysis.figures import consistency_scatter
    from reproductions.figures import accuracy_bars

    started = time.time()
    opt.out.mkdir(parents=True, exist_ok=True)
    pairs = collect_pairs(opt)
    frames, models, timings = [], [], []
    with progress_bar(opt.quiet) as prog:
        for model in opt.models:
            rows, desc, n_now, secs = run_model(opt, model, pairs, prog)
            frames.append(rows)
            models.append(desc)
            timings.append({"model": desc.get("name"), "requests_computed_now": n_now, "seconds": round(secs, 1)})
    rows = pd.concat(frames, ignore_index=True)
    rep = Report(opt.out, "Reproduction of seeds/003 (Hu & Levy 2023): direct vs metalinguistic evaluation")
    names = sorted(rows["model"].unique())
    rep.text(f"Model(s): {', '.join(names)}. {len(pairs)} minimal pairs: "
             + ", ".join(f"{d} {n}" for d, n in pd.Series([p.dataset for p in pairs]).value_counts().items())
             + ". " + "; ".join(f"{t['model']}: {t['requests_computed_now']} request(s) scored now, {t['seconds']} s"
                               for t in timings) + " (the rest reused from the score cache).")
    if any("SmolLM2-135M" in n for n in names):
        rep.note("SmolLM2-135M-Instruct is a 135M-parameter model, not one of the paper's models (Flan-T5, GPT-3/3.5).")
    rep.text(DEFINITIONS)
    rows.to_csv(opt.out / "tables" / "trials.csv", index=False)
    acc = accuracy(rows, opt.n_boot, opt.seed)
    rep.heading("Task performance (Figure 2c: sentence judgment, 2d: sentence comparison)", anchor="accuracy")
    num, txt = layout(acc, list(PROMPT_TYPES), "estimate")
    rep.table("accuracy", num, "Accuracy (balanced for Meta judgments) by model, task, dataset and prompt type", shown=txt)
    rep.table("accuracy_long", acc, "With counts, per-order accuracies and TPR/TNR", show=False)
    for task in ("judgment", "comparison"):
        t = acc[acc["task"] == task]
        t = t.assign(x=[f"{m} · {d}" if len(names) > 1 else d for m, d in zip(t["model"], t["dataset"])])
        rep.figure(accuracy_bars(t, "x", "prompt_type", opt.out / "figures" / f"accuracy_{task}.png",
                                 f"Sentence {task} (seeds/003 Figure 2{'c' if task == 'judgment' else 'd'})"),
                   f"Sentence {task}: accuracy by prompt type (bars: 95% bootstrap CI over pairs; dotted: chance)")
    diffs = differentials(rows)
    ic = consistency(diffs)
    rep.heading("Internal consistency (Figure 3)", anchor="consistency")
    num, txt = layout(ic, list(META), "pearson_r")
    rep.table("internal_consistency", num, "Pearson r between direct and metalinguistic differentials", shown=txt)
    rep.table("internal_consistency_long", ic, "With n, CI and p", show=False)
    diffs.to_csv(opt.out / "tables" / "differentials.csv", index=False)
    sc = diffs.rename(columns={"model": "model_label"}).assign(context=diffs["task"] + " · " + diffs["dataset"],
                                                                protocol_direct="Direct", protocol_meta=diffs["prompt_type"])
    icf = ic.rename(columns={"prompt_type": "meta_protocol"}).assign(
        context_mode=ic["task"] + " · " + ic["dataset"], direct_protocol="Direct")
    rep.figure(consistency_scatter(sc, icf, opt.out / "figures" / "internal_consistency.png"),
               "Item-level differentials: direct (x) against each metalinguistic prompt (y), first 12 panels")
    rep.heading("The paper's results (seeds/003 reports them as figures only; no printed numbers)", anchor="paper")
    for r in PAPER_RESULTS:
        rep.text(r)
    from model_subjects.protocols import COMPARISON_TEMPLATES, JUDGMENT_TEMPLATES

    templates = {f"judgment:{k}": v for k, v in JUDGMENT_TEMPLATES.items()}
    templates |= {f"comparison:{k}": v for k, v in COMPARISON_TEMPLATES.items()}
    templates["Direct"] = "log P(sentence) from the start token; the continuation is the whole sentence"
    rep.heading("Provenance", anchor="provenance")
    rep.details("prompt templates", "".join(f"<h3>{k}</h3><pre>{v}</pre>" for k, v in templates.items()))
    opts = {k: (str(v) if isinstance(v, Path) else [str(x) for x in v] if isinstance(v, list) else v)
            for k, v in dataclasses.asdict(opt).items()}
    write_provenance(opt.out, PAPER, opts, models, {}, templates, {f"pairs:{Path(f).name}": Path(f) for f in opt.pairs}
                     | {f"items:{Path(f).name}": Path(f) for f in opt.items}, [], started,
                     extra={"timings": timings, "n_pairs": len(pairs)})
    return rep.write()
