"""seeds/003 (Hu & Levy 2023) whole: four experiments x four methods on the authors' released materials.

    twinlab reproduce hu-levy2023 --data .../datasets --out OUT [--items 20] [--model M ...]
                                  [--backend openai -B url=...] [--prompt-text authors|paper]
                                  [--scoring authors|exact|openai-last-token]

Experiments (the release's `datasets/` folder, read and checked by `reproductions.hu_levy.data`):
  1  word prediction: P18 (384), News (222); measure: log P(ground-truth final word)
  2  word comparison: DTFit (395); accuracy (plausible word more probable), both answer orders
  3a sentence judgment: SyntaxGym (345), BLiMP (390); Direct accuracy, Meta balanced accuracy
  3b sentence comparison: the same pairs; accuracy, both answer orders
Methods: Direct, MetaQuestionSimple, MetaInstruct, MetaQuestionComplex (`reproductions.hu_levy.prompts`).
Measures, averaging and consistency as the authors' notebook computes them (`reproductions.hu_levy.measures`).
Conventions (prompt text, scoring) follow the authors' code by default (`reproductions.hu_levy.conventions`).
Table 5 (the phenomena of Experiment 3) is produced from the files read (`reproductions.hu_levy.phenomena`).
Appendix D (Mandarin Chinese, Figure 11): `--language zh --data` the chinese branch's datasets/ folder runs
Experiments 1, 3a and 3b with the authors' Chinese prompts (`reproductions.hu_levy.prompts_zh`) on any model;
`--authors-outputs results_zh.zip` recomputes Figure 11 from the authors' outputs (`reproductions.hu_levy.authors_zh`).
Extra minimal pairs for Experiment 3 (`--pairs` BLiMP JSONL, `--agreement`: twinlab's own agreement
pairs) are added only when asked; they are datasets of their own in every table.

Outputs (OUT/): tables/items_scores.csv (every prompt, option and log-probability),
tables/items.csv (per item x method x order: correct, differential, ...), tables/performance.csv
(Figure 2), tables/consistency.csv (per dataset) and consistency_by_model.csv / consistency_mean.csv
(Figures 6 and 3), tables/paper_comparison.csv, figures/figure2*.png, figure3.png, figure6.png,
figure7-10.png, report.html, provenance.json (accumulating over re-runs), cache/ (request scores).
"""
from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from experiments.atomic import atomic_write_text
from model_subjects import ModelLoadError
from model_subjects.backends.registry import load_backend
from reproductions.common import (
    Report,
    ReproError,
    RunOptions,
    cells_study,
    progress_bar,
    sha256_file,
    sha256_text,
    slug,
    write_provenance,
)
from reproductions.hu_levy import conventions
from reproductions.hu_levy import figures as F
from reproductions.hu_levy.authors_zh import statements
from reproductions.hu_levy.data import EXPERIMENTS, Dataset, DatasetSpec, Item, data_files, load_datasets
from reproductions.hu_levy.measures import consistency, consistency_means, differentials, item_table, performance
from reproductions.hu_levy.phenomena import table5
from reproductions.hu_levy.prompts import LANGUAGES, META, METHODS, TASK_LABELS, all_queries, templates_text
from reproductions.hu_levy.prompts_zh import EXPERIMENTS_ZH, SOURCE
from reproductions.hu_levy.score import score_queries, unscorable
from reproductions.pairs import ScoreCache, load_blimp_jsonl, pairs_from_items
from stimuli.files import StimulusFileError, load_items
from stimuli.input_rules import spreadsheet_safe_frame

PAPER = "seeds/003: Hu & Levy (2023), Prompting is not a substitute for probability measurements in LLMs"
PAPER_MODELS = "Flan-T5 small/large/XL, text-curie-001, text-davinci-002, text-davinci-003"
PAPER_RESULTS = (
    ("1", "Metalinguistic judgments are not the same as direct measurements (Figure 2)."),
    ("2", "Direct measurements generally perform better than or as well as metalinguistic prompting (Figure 2)."),
    ("3", "Minimal pairs help: Meta accuracy rises from isolated judgments (3a, Figure 2c) to comparisons (3b, "
          "Figure 2d) for models above chance."),
    ("4", "The less similar the task or prompt is to direct next-word probabilities, the weaker the item-level "
          "correlation with the direct measurement (Figure 3)."),
)
APPENDIX_D = ("Appendix D (Mandarin Chinese, Figure 11) is a run of its own: its materials are on the repository's "
              "`chinese` branch (datasets/exp1/news_zh, datasets/exp3/mandarin; prompts in utils/llm_zh.py). "
              "`--language zh --data <that datasets/ folder>` runs Experiments 1, 3a and 3b on any model; "
              "`--authors-outputs results_zh.zip` recomputes Figure 11 from the authors' text-davinci-003 outputs "
              "(the model itself has been retired by OpenAI).")


@dataclass
class Options(RunOptions):
    """`items` (RunOptions) are agreement stimulus files; `n_items` the per-dataset sample size."""

    data: Path | None = None
    experiments: tuple[str, ...] = EXPERIMENTS
    n_items: int | None = None
    prompt_text: str = conventions.DEFAULT_PROMPT_TEXT
    language: str = "en"  # zh: Appendix D (the chinese branch's materials and prompts)
    scoring: str = conventions.DEFAULT_SCORING
    pairs: list[Path] = field(default_factory=list)
    agreement: bool = False
    items_per_condition: int | None = 16


# ------------------------------------------------------------------------------------ inputs
def check_inputs(opt: Options) -> tuple[list[Dataset], list[str]]:
    """Every dataset the run will use, read and checked (before any model loads); notes for the report."""
    opt.check_selection()
    for model in opt.models:  # a local encoder-decoder folder counts as seq2seq
        conventions.check(opt.scoring, opt.prompt_text, _backend_name(opt, model))
    conventions.backend_options(opt.scoring, opt.backend, opt.backend_options)  # a contradicting -B is refused now
    bad = [e for e in opt.experiments if e not in EXPERIMENTS]
    if bad or not opt.experiments:
        raise ReproError(f"--experiments: unknown {', '.join(bad) or '(none)'}; choose from {', '.join(EXPERIMENTS)}")
    if opt.n_items is not None and opt.n_items < 1:
        raise ReproError("--items must be at least 1")
    _check_language(opt)
    datasets: list[Dataset] = []
    if opt.data is not None:
        datasets += load_datasets(opt.data, opt.experiments, opt.n_items, opt.seed, language=opt.language)
    extra = extra_pair_datasets(opt)
    if extra and not {"3a", "3b"} & set(opt.experiments):
        raise ReproError("--pairs / --agreement add Experiment 3 items; --experiments leaves out 3a and 3b")
    datasets += extra
    if not datasets:
        raise ReproError("nothing to run: give --data DIR (the authors' datasets/ folder), or --pairs / --agreement "
                         "for Experiment 3 pairs")
    names = [d.spec.name for d in datasets]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ReproError(f"dataset name(s) {', '.join(dup)} given twice (the same --pairs file twice?)")
    notes = [n for d in datasets for n in d.notes]
    return datasets, notes


def _prompt_text_said(opt: Options) -> str:
    if opt.language == "zh":
        return f"the authors' Chinese prompts ({SOURCE}); the sentences as the corpus holds them"
    return f"{opt.prompt_text} ({conventions.PROMPT_TEXTS[opt.prompt_text]})"


def _check_language(opt: Options) -> None:
    """Chinese runs: the authors' Chinese prompts (the paper prints none), Experiments 1, 3a and 3b only."""

    if opt.language not in LANGUAGES:
        raise ReproError(f"--language must be one of {', '.join(LANGUAGES)}, not {opt.language!r}")
    if opt.language != "zh":
        return
    if opt.prompt_text != "authors":
        raise ReproError("--language zh: the paper prints no Chinese prompt (Appendix D only says a native speaker "
                         "translated them); the prompts are the authors' code's (utils/llm_zh.py): leave out "
                         "--prompt-text or give authors")
    if opt.scoring == "openai-last-token":
        raise ReproError("--language zh: the authors' Chinese code counted every token of the answer (found by "
                         "character offsets), not the English code's last sub-token; --scoring authors does that")
    other = [e for e in opt.experiments if e not in EXPERIMENTS_ZH]
    if other:
        raise ReproError(f"--language zh: experiment(s) {', '.join(other)} have no Chinese materials (the chinese "
                         f"branch has Experiments {', '.join(EXPERIMENTS_ZH)})")
    if opt.pairs or opt.agreement:
        raise ReproError("--language zh: --pairs and --agreement add English sentences; leave them out")
    if opt.data is None:
        raise ReproError("--language zh needs --data: the chinese branch's datasets/ folder (exp1/news_zh, "
                         "exp3/mandarin)")


def extra_pair_datasets(opt: Options) -> list[Dataset]:
    """--pairs JSONL files and (when asked) twinlab's agreement pairs as Experiment 3 datasets."""

    out = []
    for f in opt.pairs:
        pairs = load_blimp_jsonl(f)
        out.append(_pairs_dataset(Path(f).stem, str(f), pairs, sha256_file(Path(f)), opt))
    if opt.agreement:
        if opt.items:
            items = []
            for f in opt.items:
                try:
                    items += load_items(f)
                except StimulusFileError as exc:
                    raise ReproError(str(exc)) from None
        else:
            cells = cells_study()  # the paper's agreement pairs: the study's key structure, generated
            items = cells.generate_items(cells.KEY_STRUCTURE, "test", opt.items_per_condition or 16, opt.seed)
        pairs = pairs_from_items(items, opt.dependency)
        digest = sha256_text(json.dumps([(p.pair_id, p.good, p.bad) for p in pairs]))
        out.append(_pairs_dataset("agreement", "twinlab agreement pairs", pairs, digest, opt))
    return out


def _pairs_dataset(name: str, where: str, pairs: list, digest: str, opt: Options) -> Dataset:
    spec = DatasetSpec(name, ("3a", "3b"), where, (), (), len(pairs), group="category", label=name)
    items = [Item(name, p.pair_id, k + 1, good_sentence=p.good, bad_sentence=p.bad, group=p.category)
             for k, p in enumerate(pairs)]
    total = len(items)
    if opt.n_items is not None and opt.n_items < total:
        keep = sorted(np.random.default_rng(opt.seed).choice(total, size=opt.n_items, replace=False).tolist())
        items = [items[i] for i in keep]
    return Dataset(spec, Path(where), digest, items, total)


# ------------------------------------------------------------------------------------ models
def _backend_name(opt: Options, model: str | None) -> str | None:
    """The backend to load: as given; a local encoder-decoder folder under the default goes to seq2seq."""
    if opt.backend not in (None, "", "transformers", "hf"):
        return opt.backend
    cfg = Path(model or "") / "config.json" if model else None
    if cfg is not None and cfg.is_file():
        try:
            if json.loads(cfg.read_text(encoding="utf-8")).get("is_encoder_decoder"):
                return "seq2seq"
        except (OSError, ValueError):
            pass
    return opt.backend


def run_model(opt: Options, model: str | None, queries: list, prog) -> tuple[pd.DataFrame, dict[str, Any], dict]:
    t0 = time.perf_counter()
    name = _backend_name(opt, model)
    try:
        conventions.check(opt.scoring, opt.prompt_text, name)  # a folder found to be seq2seq only now
        settings = conventions.backend_options(opt.scoring, name, opt.backend_options)
        backend = load_backend(model, backend=name, dtype=opt.dtype, device=opt.device, add_bos=opt.add_bos,
                               batch_size=opt.batch_size, threads=opt.threads, **settings)
    except ModelLoadError as exc:
        raise ReproError(str(exc)) from None
    except (RuntimeError, ValueError, OSError) as exc:  # a server that cannot be reached, refused settings
        raise ReproError(f"--model {model or 'default'} ({name or 'transformers'}): {exc}") from None
    opt.out.mkdir(parents=True, exist_ok=True)  # only once a model has loaded
    desc = backend.describe()
    desc.setdefault("backend", getattr(backend, "backend_name", name) or "transformers")
    load_s = time.perf_counter() - t0
    parts = (desc.get("backend"), desc.get("name"), desc.get("revision"), desc.get("weights_sha256"),
             desc.get("dtype"), desc.get("add_bos"), desc.get("url"), desc.get("scoring"), desc.get("mode"))
    if desc.get("whole_sentence"):  # a served model's whole-sentence rule changes those scores
        parts += (desc["whole_sentence"],)
    ident = sha256_text(repr(parts))[:12]
    cache = ScoreCache(opt.out / "cache" / f"{slug(desc.get('name') or model or 'model')}-{ident}.jsonl")
    task = prog.add_task(f"{desc.get('name')}: {len(queries)} requests", total=None)

    def advance(n: int, total: int | None) -> None:
        if total is not None:
            prog.update(task, total=max(total, 1))
        if n:
            prog.advance(task, n)

    try:
        chunk = 2048 if opt.batch_size == "auto" else max(64, 8 * int(opt.batch_size))
        scores, n_now, secs = score_queries(backend, cache, queries, chunk=chunk, progress=advance,
                                            scoring=opt.scoring)
    finally:
        cache.close()
    skipped = getattr(backend, "n_first_token_skipped", None)
    del backend
    timing = {"model": desc.get("name"), "backend": desc.get("backend"), "requests": len(queries),
              "scoring": opt.scoring, "whole_sentences_scored_after_first_token_now": skipped,
              "requests_computed_now": n_now, "unscorable": unscorable(scores), "load_seconds": round(load_s, 1),
              "scoring_seconds": round(secs, 1)}
    return scores.assign(model=desc.get("name")), desc, timing


# ------------------------------------------------------------------------------------ the paper
def paper_comparison(datasets: list[Dataset], perf: pd.DataFrame, mean_ic: pd.DataFrame) -> pd.DataFrame:
    """What the paper prints beside ours: item counts, and its four results checked on our numbers.

    The paper prints no numerical values for Figures 2-3 in its text (only bars and a heat map), so
    its results are set beside our numbers as statements, with the models they came from.
    """
    rows = []
    for d in datasets:
        if d.spec.paper_count and d.spec.path.startswith("exp"):
            rows.append({"what": f"items in {d.spec.label}", "paper": d.spec.paper_count, "paper_models": "-",
                         "ours": d.all_count, "ours_note": f"{len(d.items)} run", "agrees": d.all_count ==
                         d.spec.paper_count})
    p = perf[perf["dataset"] == "all"]
    for model, g in p.groupby("model", sort=False):
        est = g.set_index(["experiment", "method"])["estimate"]
        best = []
        for exp in ("1", "2", "3a", "3b"):
            if (exp, "Direct") in est.index:
                metas = [est[(exp, m)] for m in META if (exp, m) in est.index]
                if metas:
                    best.append(f"{exp}: Direct {est[(exp, 'Direct')]:.2f} vs best Meta {max(metas):.2f}")
        if best:
            wins = sum(1 for exp in ("1", "2", "3a", "3b") if (exp, "Direct") in est.index
                       and all(est[(exp, "Direct")] >= est[(exp, m)] for m in META if (exp, m) in est.index))
            rows.append({"what": f"Result 2 (Direct >= Meta), {model}", "paper": "nearly always",
                         "paper_models": PAPER_MODELS, "ours": f"{wins} of {len(best)} experiments",
                         "ours_note": "; ".join(best), "agrees": wins >= len(best) - 1})
        if all((e, m) in est.index for e in ("3a", "3b") for m in META):
            up = [m for m in META if est[("3b", m)] > est[("3a", m)]]
            lows = g.set_index(["experiment", "method"])["ci_low"]
            above = any(lows[(e, m)] > 0.5 for e in ("3a", "3b") for m in META)  # the claim is for models above chance
            rows.append({"what": f"Result 3 (Meta 3b > 3a), {model}", "paper": "yes, for models above chance",
                         "paper_models": PAPER_MODELS, "ours": f"{len(up)} of 3 Meta methods",
                         "ours_note": "; ".join(f"{m}: {est[('3a', m)]:.2f} -> {est[('3b', m)]:.2f}" for m in META)
                         + ("" if above else " (every Meta CI includes chance: the claim does not apply)"),
                         "agrees": (len(up) >= 2) if above else "n/a"})
    if not mean_ic.empty:
        m = mean_ic.groupby("experiment", sort=False)["pearson_r"].mean()
        order = [e for e in ("1", "2", "3a", "3b") if e in m.index]
        rows.append({"what": "Result 4 (mean r falls from Exp 1 to 3b)", "paper": "broadly, yes",
                     "paper_models": PAPER_MODELS, "ours": ", ".join(f"{e}: {m[e]:.2f}" for e in order),
                     "ours_note": "mean over Meta methods, datasets and models",
                     "agrees": bool(len(order) >= 2 and m[order[0]] >= m[order[-1]])})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------ the run
def _score_models(opt: Options, queries: list) -> tuple[pd.DataFrame, list[dict[str, Any]], list[dict]]:
    """Every model scores every query (one progress display); returns the scores, the models and their timings."""
    frames, models, timings = [], [], []
    with progress_bar(opt.quiet) as prog:
        for model in opt.models:
            scores, desc, timing = run_model(opt, model, queries, prog)
            frames.append(scores)
            models.append(desc)
            timings.append(timing)
    return pd.concat(frames, ignore_index=True), models, timings


def _report_run(rep: Report, opt: Options, names: list[str], datasets: list[Dataset], timings: list[dict],
                notes: list[str]) -> None:
    """What ran (models, prompt text, scoring, data, requests) and the notes a reader needs before the numbers."""
    rep.text(f"Model(s): {', '.join(names)}; backend(s): {', '.join(sorted({str(t['backend']) for t in timings}))}. "
             f"Prompt text: {_prompt_text_said(opt)}. "
             f"Scoring: {opt.scoring} ({conventions.SCORING[opt.scoring]}). Experiments: {', '.join(opt.experiments)}.")
    rep.text("Data: " + "; ".join(f"{d.spec.label} {len(d.items)} of {d.all_count} items" for d in datasets)
             + (f" (--items {opt.n_items}, seed {opt.seed})" if opt.n_items else "") + ".")
    rep.text("; ".join(f"{t['model']}: {t['requests']} requests, {t['requests_computed_now']} scored now in "
                       f"{t['scoring_seconds']} s (model load {t['load_seconds']} s), {t['unscorable']} unscorable"
                       for t in timings) + ".")
    for n in notes:
        rep.note(n)
    if any(t.get("whole_sentences_scored_after_first_token_now") for t in timings):
        rep.note("Whole sentences (Direct, Experiments 3a/3b) on a served model without BOS are scored after their "
                 "first token (the authors' OpenAI rule, --scoring authors): "
                 + "; ".join(f"{t['model']}: {t['whole_sentences_scored_after_first_token_now']} sentence(s) scored now"
                             for t in timings if t.get("whole_sentences_scored_after_first_token_now")) + ".")
    if opt.scoring == "openai-last-token":
        rep.note("--scoring openai-last-token: every answer after a prompt counts its last sub-token only, as the "
                 "authors' OpenAI code matched a word (a compatibility mode, not a measurement of the whole word).")
    if any("SmolLM2-135M" in n for n in names):
        rep.note("SmolLM2-135M-Instruct is a 135M-parameter causal model, not one of the paper's models "
                 f"({PAPER_MODELS}).")


def _note_unscored(rep: Report, scores: pd.DataFrame) -> None:
    """Requests without a score are named with their reasons: they are left out of their cells, never counted wrong."""
    bad = scores[scores["logprob"].isna()]
    if len(bad):
        kinds = bad.loc[bad["unscorable"] != "", "unscorable"].str.replace(
            r"^(token .* of )?option .* is not among", "an option (or one of its tokens) is not among", regex=True
        ).str.replace(r" \(lowest returned .*\)$", "", regex=True)
        reasons = kinds.value_counts()
        rep.note(f"{len(bad)} request(s) have no score (NaN): their items are left out of the cells they belong to "
                 "(`n_scored` in tables/performance.csv), never counted wrong; each reason is in the `unscorable` "
                 "column of tables/items_scores.csv. "
                 "" + " ".join(f"{n} x: {why}." for why, n in reasons.head(6).items())
                 + (f" {len(bad) - int(reasons.sum())} outside the served model's top log-probabilities."
                    if len(bad) > int(reasons.sum()) else ""))


def _write_item_tables(rep: Report, opt: Options, scores: pd.DataFrame, items: pd.DataFrame) -> None:
    """The per-item tables (every prompt, option and log-probability), written before any summary."""
    score_cols = ["model", "experiment", "dataset", "item", "method", "order", "shown", "option", "prompt", "context",
                  "continuation", "logprob", "unscorable", "request"]
    atomic_write_text(opt.out / "tables" / "items_scores.csv",
                      spreadsheet_safe_frame(scores[score_cols]).to_csv(index=False))
    atomic_write_text(opt.out / "tables" / "items.csv", spreadsheet_safe_frame(items).to_csv(index=False))
    rep.text("Per-item tables: `tables/items_scores.csv` (every prompt, option and log-probability) and "
             "`tables/items.csv` (per item, method and answer order: correct, differential, the prompts, options "
             "and log-probabilities).")


def _performance_section(rep: Report, opt: Options, perf: pd.DataFrame, datasets: list[Dataset]) -> None:
    """Figure 2: task performance pooled over datasets, then one figure per dataset (Appendix B)."""

    rep.heading("Task performance (Figure 2)", anchor="performance")
    rep.text("Exp 1: mean log-probability of the ground-truth final word. Exp 2 and 3b: accuracy over items and both "
             "answer orders (the mean of the two orders). Exp 3a: Direct accuracy; Meta balanced accuracy (TPR + "
             "TNR)/2. "
             "Pooled over each experiment's datasets, as the paper's Figure 2; 95% percentile bootstrap CIs over "
             "items.")
    shown = perf[perf["dataset"] == "all"].pivot_table(index=["model", "experiment"], columns="method",
                                                      values="estimate", sort=False)
    shown = shown[[m for m in METHODS if m in shown.columns]].round(3).reset_index()
    rep.table("performance_wide", shown, "Figure 2 numbers (pooled over datasets)")
    rep.table("performance", perf, "Per dataset, with CIs, per-order accuracies and TPR/TNR", show=False)
    rep.figure(F.figure2(perf, opt.out / "figures" / "figure2.png"), "Figure 2: performance by experiment, model and "
               "method (bars: 95% bootstrap CIs over items; dashed: chance)")
    for ds in [d.spec.name for d in datasets if d.spec.name in set(perf["dataset"])]:  # the paper's order
        rep.figure(F.figure2(perf, opt.out / "figures" / f"figure2_{slug(ds)}.png", dataset=ds),
                   f"Figure 2 for {F.DATASET_LABELS.get(ds, ds)} alone (the paper's Appendix B, Figures 4-5)")


def _consistency_section(rep: Report, opt: Options, diffs: pd.DataFrame, ic: pd.DataFrame, by_model: pd.DataFrame,
                         mean_ic: pd.DataFrame, n_models: int) -> None:
    """Figures 3 and 6 (internal consistency) and the item-level scatters of Figures 7-10."""

    rep.heading("Internal consistency (Figures 3 and 6)", anchor="consistency")
    rep.text("Pearson r between the item-level Direct and Meta values (Exp 1: log P(word); Exp 2: the plausible-minus-"
             "implausible differential; Exp 3a: Direct good-minus-bad sentence log-probability against log P(Yes | "
             "good) "
             "- log P(Yes | bad); Exp 3b: against the good-minus-bad label differential; Meta values averaged over the "
             "two answer orders), per dataset, then averaged over datasets (Figure 6) and models (Figure 3).")
    wide = mean_ic.pivot_table(index="experiment", columns="method", values="pearson_r", sort=False)
    wide = wide[[m for m in META if m in wide.columns]].round(3).reset_index()
    wide.insert(0, "task", [TASK_LABELS[e] for e in wide["experiment"]])
    rep.table("consistency_mean", wide, "Figure 3: mean Pearson r (tasks x methods)")
    rep.table("consistency_by_model", by_model, "Figure 6: mean r by model", show=False)
    rep.table("consistency", ic, "Per model, experiment, dataset and method: r, p, 95% CI, n", show=False)
    atomic_write_text(opt.out / "tables" / "differentials.csv", spreadsheet_safe_frame(diffs).to_csv(index=False))
    rep.figure(F.figure3(mean_ic, opt.out / "figures" / "figure3.png", n_models), "Figure 3: internal consistency")
    rep.figure(F.figure6(by_model, opt.out / "figures" / "figure6.png"), "Figure 6: internal consistency by model")
    rep.heading("Item-level differentials (Figures 7-10)", anchor="scatters")
    for exp, num in F.FIGURE_OF_EXPERIMENT.items():
        rep.figure(F.scatter_figure(diffs, ic, exp, opt.out / "figures" / f"figure{num}.png"),
                   f"Figure {num}: {TASK_LABELS[exp]}, Direct (x) against each Meta method (y), every panel")


def _table5_section(rep: Report, datasets: list[Dataset]) -> None:
    """Table 5 (the phenomena of Experiment 3) beside the items of the files read, when there are any."""

    t5 = table5(datasets)
    if not t5.empty:
        rep.heading("Phenomena of Experiments 3a and 3b (Table 5)", anchor="table5")
        bad = t5[~t5["agrees"].astype(bool)]
        rep.text(f"Table 5 as the paper prints it (Appendix A), beside the items of each phenomenon in the files read "
                 f"and run: {len(t5) - len(bad)} of {len(t5)} rows agree with the paper's count"
                 + (f"; differing: {', '.join(bad['release_value'])}" if len(bad) else "") + ".")
        rep.table("table5", t5, "Table 5: phenomena and items (paper beside the release)")


def _paper_section(rep: Report, opt: Options, datasets: list[Dataset], perf: pd.DataFrame, mean_ic: pd.DataFrame,
                   names: list[str]) -> None:
    """The paper's claims checked on this run: Appendix D's for Chinese, the four English results otherwise."""
    if opt.language == "zh":
        rep.heading("Appendix D beside ours", anchor="paper_zh")
        rep.text("Appendix D's claims (GPT-3.5, text-davinci-003, on the same Chinese materials), checked on this "
                 "run's numbers; `--authors-outputs results_zh.zip` gives the authors' own numbers.")
        rep.table("appendix_d_claims", pd.concat([statements(perf, m).assign(model=m) for m in names],
                                                 ignore_index=True), "Appendix D's claims on this run")
    if opt.language != "zh":  # the English results are claims about the English materials
        rep.heading("The paper beside ours", anchor="paper")
        rep.text(f"The paper's numbers come from {PAPER_MODELS}. Its text prints no values for Figures 2-3 (bars and "
                 "a heat map only), so its item counts and its four results are set beside ours.")
        rep.table("paper_comparison", paper_comparison(datasets, perf, mean_ic), "Paper vs this run")
        for _, r in PAPER_RESULTS:
            rep.text(r)
        rep.note(APPENDIX_D)


def _conventions_section(rep: Report, opt: Options) -> None:
    """Where the authors' code and twinlab differ, and which one this run followed."""
    rep.heading("Conventions: the authors' code and twinlab", anchor="conventions")
    rep.text(f"This run: --prompt-text {opt.prompt_text}, --scoring {opt.scoring}. Each difference between the "
             "authors' released code and twinlab's own rules, and which one the default follows:")
    rep.table("conventions", pd.DataFrame(conventions.describe(opt.scoring, opt.prompt_text)["differences"]),
              "Differences between the authors' code and twinlab")


def _provenance_section(rep: Report, opt: Options, scores: pd.DataFrame, models: list[dict[str, Any]],
                        timings: list[dict], datasets: list[Dataset], started: float) -> None:
    """The prompt templates in the report, and provenance.json (files, hashes, timings, the items run)."""
    templates = templates_text(opt.prompt_text, opt.language)
    rep.heading("Provenance", anchor="provenance")
    rep.details(f"prompt templates ({opt.prompt_text})",
                "".join(f"<h3>{k}</h3><pre>{v}</pre>" for k, v in templates.items()))
    opts = {k: (str(v) if isinstance(v, Path) else [str(x) for x in v] if isinstance(v, (list, tuple)) else v)
            for k, v in dataclasses.asdict(opt).items()}
    files = {}
    if opt.data is not None:
        files = {f"data:{k}": p for k, p in data_files(opt.data).items()}
    files |= ({f"pairs:{Path(f).name}": Path(f) for f in opt.pairs}
              | {f"items:{Path(f).name}": Path(f) for f in opt.items})
    prompts_hash = sha256_text("\n".join(sorted(set(scores["prompt"]))))
    write_provenance(opt.out, PAPER, opts, models, {}, templates, files, [], started, extra={
        "timings": timings, "prompt_text": opt.prompt_text, "language": opt.language, "prompts_sha256": prompts_hash,
        "conventions": conventions.describe(opt.scoring, opt.prompt_text), "appendix_d": APPENDIX_D,
        "n_prompts": int(scores["prompt"].nunique()),
        "datasets": [{"name": d.spec.name, "file": str(d.file), "sha256": d.sha256, "items_in_file": d.all_count,
                      "items_run": [it.item_id for it in d.items]} for d in datasets],
        "sample": {"items_per_dataset": opt.n_items, "seed": opt.seed}})


def reproduce(opt: Options) -> Path:
    """Check the inputs, score every model, then write the report section by section; returns report.html."""

    started = time.time()
    datasets, notes = check_inputs(opt)
    queries = all_queries(datasets, opt.experiments, opt.prompt_text, opt.language)
    scores, models, timings = _score_models(opt, queries)
    names = list(dict.fromkeys(scores["model"]))
    rep = Report(opt.out, "Reproduction of seeds/003 (Hu & Levy 2023): direct vs metalinguistic evaluation"
                 + (" in Mandarin Chinese (Appendix D, Figure 11)" if opt.language == "zh" else ""))
    _report_run(rep, opt, names, datasets, timings, notes)
    _note_unscored(rep, scores)
    items = item_table(scores)
    perf = performance(items, opt.n_boot, opt.seed)
    diffs = differentials(items)
    ic = consistency(diffs)
    by_model, mean_ic = consistency_means(ic)
    _write_item_tables(rep, opt, scores, items)
    _performance_section(rep, opt, perf, datasets)
    _consistency_section(rep, opt, diffs, ic, by_model, mean_ic, len(names))
    _table5_section(rep, datasets)
    _paper_section(rep, opt, datasets, perf, mean_ic, names)
    _conventions_section(rep, opt)
    _provenance_section(rep, opt, scores, models, timings, datasets, started)
    return rep.write()
