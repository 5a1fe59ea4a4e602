"""`twinlab reproduce <paper>`: one command per seed paper (typer sub-app; nothing heavy at import)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from experiments import options as o
from experiments.cli_common import fail
from experiments.commands import HELP_LAYOUT, ListingGroup
from experiments.outputs import check_output_folder
from experiments.spec_model import MAX_ITEMS_PER_CONDITION
from model_subjects.backends.base import ModelLoadError
from model_subjects.backends.registry import canonical_name
from model_subjects.cli import parse_backend_options
from reproductions import hu_frank2024 as hu_frank_run
from reproductions import hu_levy2023 as hu_levy_run
from reproductions import lampinen2024 as lampinen_run
from reproductions.common import ReproError, slug
from reproductions.hu_frank.authors import AuthorsOptions, reproduce_authors
from reproductions.hu_frank.lab import LabOptions, reproduce_lab
from reproductions.hu_frank.models_file import read_models_file
from reproductions.hu_levy.authors_zh import AuthorsZhOptions, read_outputs, reproduce_authors_zh
from reproductions.hu_levy.human_study import write_study
from reproductions.hu_levy.prompts_zh import EXPERIMENTS_ZH
from reproductions.pairs import load_blimp_jsonl
from stimuli.files import StimulusFileError, load_items
from stimuli.input_rules import ascii_int
from stimuli.textfile import regular_file_problem

app = typer.Typer(no_args_is_help=True, cls=ListingGroup, **HELP_LAYOUT,
                  help="Reproduce the seeds' model experiments in the papers' own layout.")

# The files each command reads, shown at the end of its --help (what a user must have before running it).
FILES = {
    "lampinen2024": "Files read: none required (items are generated from the bundled lexicons). Optional: --items "
                    "stimulus CSV(s) (e.g. from `twinlab stimuli import lakretz-text`), --humans session folders or a "
                    "Lakretz results CSV, --model a local model folder or .gguf file.",
    "hu-levy2023": "Files read (--data DIR, the authors' datasets/ folder of jennhu/metalinguistic-prompting): "
                   "DIR/exp1/p18/corpus.csv and DIR/exp1/news/corpus.csv (Experiment 1), DIR/exp2/dtfit/corpus.csv "
                   "(Experiment 2), DIR/exp3/syntaxgym/corpus.csv and DIR/exp3/blimp/corpus.csv (Experiments 3a "
                   "and 3b); --experiments/-e reads only the files of the experiments chosen. A missing file is "
                   "named before any model loads. Optional: --pairs BLiMP JSONL file(s), --agreement-items "
                   "stimulus CSV(s). With --language zh (--data: the chinese branch's datasets/ folder): "
                   "DIR/exp1/news_zh/corpus.csv and DIR/exp3/mandarin/corpus.csv. With --authors-outputs: the "
                   "authors' results_zh.zip only (JSON files; no model is run).",
    "hu-frank2024": "Files read: with --authors-outputs DIR (jennhu/lm-task-demands, or its output/ folder): "
                    "output/digit_mat/, output/crt/crt1-3/, output/lambada/, output/dgl/ and output/blimp/, one "
                    "<model>.csv or .csv.gz per model. With --data DIR (the same release): "
                    "external_stimuli/digit_mat/all_problems.npz, external_stimuli/crt/stimuli.csv, "
                    "external_stimuli/dgl/stimuli.csv, external_stimuli/blimp/stimuli.csv and output/lambada/<model>"
                    ".csv(.gz) (the LAMBADA items). Otherwise: none required (--pairs BLiMP JSONL file(s), --items "
                    "agreement stimulus CSV(s), optional).",
    "hu-levy2023-human": "Files read (--data DIR, the authors' datasets/ folder): DIR/exp2/dtfit/corpus.csv and "
                         "DIR/exp3/blimp/corpus.csv only (exp1/ and exp3/syntaxgym/ are not needed). Written: "
                         "OUT/hu_levy2023_human.yaml and OUT/hu_levy2023_human_items.csv. With --language zh (DIR: "
                         "the chinese branch's datasets/): DIR/exp3/mandarin/corpus.csv only; written: "
                         "OUT/hu_levy2023_human_zh.yaml and OUT/hu_levy2023_human_zh_items.csv.",
}


def _fail(message: str, code: int = 2) -> None:
    fail(message, code)


def _split(values: Optional[list[str]]) -> Optional[list[str]]:
    if not values:
        return None
    return [v.strip() for item in values for v in item.split(",") if v.strip()]


def _check_options(out: Path, dependency: Optional[str], n_boot: int, dtype: str, device: str, batch_size: str,
                   threads: int, max_new_tokens: int = 1, *, models: Optional[list[str]] = None,
                   items: Optional[list[Path]] = None, pairs: Optional[list[Path]] = None,
                   humans: Optional[list[Path]] = None, items_per_condition: Optional[int] = None,
                   seed: Optional[int] = None) -> int | str:
    """The options and inputs of a reproduction, by the rules `run-model` uses (experiments/options.py):
    every model, stimulus file, pair file and human data path is checked, and read where cheap,
    before anything is written (not even the --out folder); exit 2 with one message.

    Returns the batch size (a whole number or 'auto', as `run-model` takes it)."""

    try:
        out_folder(out)
        if dependency is not None and dependency not in ("inner", "outer"):
            raise o.OptionError(f"--dependency must be inner or outer, not {dependency!r}")
        o.at_least("--n-boot", n_boot, 100, 100_000)
        o.dtype(dtype)
        o.device(device)
        batch = o.batch_size(batch_size)
        o.threads(threads)
        o.at_least("--max-new-tokens", max_new_tokens, 1, 4096)
        if seed is not None:
            _seed(seed)
        if items_per_condition is not None and items_per_condition < 1:
            raise o.OptionError("--items-per-condition must be at least 1")
        o.at_least("--items-per-condition", items_per_condition, 1, MAX_ITEMS_PER_CONDITION)

        for m in models or []:
            o.model_path("--model", m)
        names = [slug(m or "SmolLM2-135M-Instruct") for m in models or []]
        for n in names:
            o.path_component("--model (as a folder name)", n)
        o.unique_labels("--model", names, "give each model once")
        for f in items or []:
            problem = regular_file_problem(f, "stimulus")
            if problem:
                raise o.OptionError(f"--items {f}: {problem}")
        for f in pairs or []:
            problem = regular_file_problem(f, "pairs")
            if problem:
                raise o.OptionError(f"--pairs {f}: {problem}")
        for h in humans or []:
            if not h.exists():
                raise o.OptionError(f"--humans: {h}: no such file or folder")
            if not h.is_dir():
                problem = regular_file_problem(h, "results")
                if problem:
                    raise o.OptionError(f"--humans {h}: {problem}")
    except o.OptionError as exc:
        _fail(str(exc))
    # the contents: a broken stimulus or pair file is refused before the run writes anything

    for f in items or []:
        try:
            load_items(f)
        except StimulusFileError as exc:
            _fail(f"--items {exc}")
    for f in pairs or []:
        try:
            load_blimp_jsonl(f)
        except ReproError as exc:
            _fail(str(exc))
    return batch


MAX_ITEMS = 1_000_000  # --items: a bound far above any release (the largest corpus has 395 items)
MAX_SEED = 2**32 - 1


def _seed(seed: int) -> int:
    """--seed: numpy's generators take 0 .. 2**32 - 1 here (a negative seed is their traceback otherwise)."""

    return o.at_least("--seed", seed, 0, MAX_SEED)  # type: ignore[return-value]


def _run(reproduce, opt, interrupted: str) -> None:
    """Run one reproduction; its errors and Ctrl-C become one line (finished work stays saved)."""

    try:
        report = reproduce(opt)
    except ReproError as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        _fail(f"interrupted; {interrupted}; run the same command again to continue", code=130)
    typer.echo(f"wrote {report}")


def _backend_settings(backend: Optional[str], backend_option: Optional[list[str]]) -> tuple[Optional[str], dict]:
    """--backend and -B KEY=VALUE, by run-model's rules (an unknown backend or a malformed option: exit 2)."""

    name = None
    if backend:
        try:
            name = canonical_name(backend)
        except ModelLoadError as exc:
            _fail(f"--backend: {exc}")
    return name, parse_backend_options(list(backend_option or []))


def _local(backend: Optional[str], models: Optional[list[str]]) -> Optional[list[str]]:
    """The --model values to check as local paths (a served model's id is the server's business)."""
    return None if backend == "openai" else models


def _served_batch(backend: Optional[str], batch_size: str) -> str:
    """A server batches for itself: the commands' default batch size becomes auto for --backend openai."""
    return "auto" if backend == "openai" and batch_size == "32" else batch_size


@app.command("lampinen2024", epilog=FILES["lampinen2024"])
def lampinen2024(
    out: Path = typer.Option(..., "--out", "-o", help="reproduction folder (re-running with it reuses finished work)"),
    model: Optional[list[str]] = typer.Option(None, "--model", "-m", help="model (name, folder, .gguf); repeat for "
                                                                          "several; default: the bundled "
                                                                          "SmolLM2-135M-Instruct"),
    items: Optional[list[Path]] = typer.Option(None, "--items", help="stimulus file(s) instead of the generated ones "
                                                                     "(e.g. from `stimuli import lakretz-text`); the "
                                                                     "dependency is that of each file's critical verb"),
    humans: Optional[list[Path]] = typer.Option(None, "--humans", help="human session folder(s) or Lakretz results "
                                                                       "CSV: their error rates are drawn as dashed "
                                                                       "lines"),
    items_per_condition: Optional[int] = typer.Option(None, "--items-per-condition", "-n", help="items per condition "
                                                                                                "(default: 512 "
                                                                                                "generated, or all of "
                                                                                                "--items)"),
    prompts: Optional[list[str]] = typer.Option(None, "--prompts", help="comma list of none, twoshot, eightshot, "
                                                                        "recombined, interp or single prompt sets "
                                                                        "(default: the paper's plan per subtask)"),
    dependency: Optional[str] = typer.Option(None, "--dependency", help="inner or outer: only that part of the grid"),
    seed: int = typer.Option(1, "--seed", help="seed of the generated items, their subsample and the bootstrap"),
    n_boot: int = typer.Option(2000, "--n-boot", help="bootstrap resamples"),
    add_bos: bool = typer.Option(False, "--add-bos/--no-add-bos", help="prepend the BOS token to every context"),
    dtype: str = typer.Option("float32", "--dtype", help="float32 | bfloat16 | float16"),
    device: str = typer.Option("cpu", "--device", help="cpu | cuda | cuda:N | auto"),
    batch_size: str = typer.Option("32", "--batch-size", help="sequences per forward pass, or auto (a token budget for "
                                                              "the device)"),
    threads: int = typer.Option(1, "--threads", help="CPU threads for torch (0 = torch default)"),
    backend: Optional[str] = typer.Option(None, "--backend", "-b", help="transformers (default) | llamacpp | openai (a "
                                                                        "served model) | seq2seq"),
    backend_option: Optional[list[str]] = typer.Option(None, "--backend-option", "-B", help="backend setting KEY=VALUE "
                                                                                            "(repeatable), e.g. -B "
                                                                                            "url=http://127.0.0.1:8000"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bars"),
) -> None:
    """seeds/000: Table B1 grid, harder variants, recombined prompts, Figure 5 and Figure B1 for any local model."""
    backend_name, options = _backend_settings(backend, backend_option)
    batch_size = _served_batch(backend_name, batch_size)
    batch_size = _check_options(out, dependency, n_boot, dtype, device, batch_size, threads,
                                models=_local(backend_name, model), items=items,
                                humans=humans, items_per_condition=items_per_condition, seed=seed)
    opt = lampinen_run.Options(models=list(model) if model else [None], out=out, items=list(items or []),
                  backend=backend_name, backend_options=options,
                  humans=list(humans or []), items_per_condition=items_per_condition, prompts=_split(prompts),
                  dependency=dependency, seed=seed, n_boot=n_boot, add_bos=add_bos, dtype=dtype, device=device,
                  batch_size=batch_size, threads=threads or None, quiet=quiet)
    _run(lampinen_run.reproduce, opt, "finished sessions are saved")


@app.command("hu-levy2023", epilog=FILES["hu-levy2023"])
def hu_levy2023(
    out: Path = typer.Option(..., "--out", "-o", help="reproduction folder (re-running with it reuses every scored "
                                                      "request)"),
    data: Optional[Path] = typer.Option(None, "--data", help="the authors' datasets/ folder (exp1/p18, exp1/news, "
                                                             "exp2/dtfit, exp3/blimp, exp3/syntaxgym corpus.csv)"),
    n_items: Optional[int] = typer.Option(None, "--items", help="sample N items per dataset (seeded by --seed; "
                                                                "default: all)"),
    experiments: Optional[list[str]] = typer.Option(None, "--experiments", "-e", help="comma list of 1, 2, 3a, 3b "
                                                                                      "(default: all four)"),
    prompt_text: str = typer.Option("authors", "--prompt-text", help="authors (default): the prompts as the released "
                                                                     "code assembles them (blank lines, '...'), which "
                                                                     "made the paper's numbers; paper: as Tables 2-4b "
                                                                     "print them"),
    scoring: str = typer.Option("authors", "--scoring", help="authors (default): whole sentences as the authors scored "
                                                             "them (seq2seq: pseudo-log-likelihood; a served model "
                                                             "without BOS: every token after the first); exact: "
                                                             "twinlab's rule (a whole sentence needs its first token's "
                                                             "score: refused on a server without BOS); "
                                                             "openai-last-token: the authors' OpenAI code, an answer "
                                                             "counted by its last sub-token only (compatibility)"),
    model: Optional[list[str]] = typer.Option(None, "--model", "-m", help="model(s); repeat for several; default: the "
                                                                          "bundled SmolLM2-135M-Instruct"),
    backend: Optional[str] = typer.Option(None, "--backend", "-b", help="transformers (default) | seq2seq (Flan-T5 "
                                                                        "style) | llamacpp | openai (a served model)"),
    backend_option: Optional[list[str]] = typer.Option(None, "--backend-option", "-B", help="backend setting KEY=VALUE "
                                                                                            "(repeatable), e.g. -B "
                                                                                            "url=http://127.0.0.1:8000"),
    pairs: Optional[list[Path]] = typer.Option(None, "--pairs", help="extra Experiment 3 minimal-pair file(s) in the "
                                                                     "BLiMP JSONL format"),
    agreement: bool = typer.Option(False, "--agreement", help="add twinlab's own agreement pairs (long-nested items) "
                                                              "to Experiment 3"),
    no_agreement: bool = typer.Option(False, "--no-agreement", hidden=True, help="(the default now; kept for old "
                                                                                 "command lines)"),
    agreement_items: Optional[list[Path]] = typer.Option(None, "--agreement-items", help="agreement stimulus file(s) "
                                                                                         "instead of the generated "
                                                                                         "items (with --agreement)"),
    items_per_condition: int = typer.Option(16, "--items-per-condition", "-n", help="generated agreement items per "
                                                                                    "condition (with --agreement)"),
    dependency: Optional[str] = typer.Option(None, "--dependency", help="inner or outer: agreement pairs of that verb "
                                                                        "only"),
    seed: int = typer.Option(1, "--seed", help="seed of the --items sample, the agreement items and the bootstrap"),
    n_boot: int = typer.Option(2000, "--n-boot"),
    add_bos: bool = typer.Option(False, "--add-bos/--no-add-bos"),
    dtype: str = typer.Option("float32", "--dtype"),
    device: str = typer.Option("cpu", "--device"),
    batch_size: str = typer.Option("32", "--batch-size", help="sequences per forward pass, or auto"),
    threads: int = typer.Option(1, "--threads", help="CPU threads for torch (0 = torch default)"),
    language: str = typer.Option("en", "--language", help="en (default): the English release; zh: Appendix D, the "
                                 "authors' Chinese materials (--data: the chinese branch's datasets/ folder; "
                                 "Experiments 1, 3a, 3b; their Chinese prompts)"),
    authors_outputs: Optional[Path] = typer.Option(None, "--authors-outputs", help="the authors' Chinese outputs "
                                                   "(results_zh.zip): recompute Figure 11 and its numbers from them; "
                                                   "no model is run"),
    quiet: bool = typer.Option(False, "--quiet", "-q"),
) -> None:
    """seeds/003: Experiments 1, 2, 3a, 3b x Direct, MetaQuestionSimple, MetaInstruct, MetaQuestionComplex.
    --language zh: Appendix D in Chinese; --authors-outputs results_zh.zip: Figure 11 from the authors' outputs."""
    if authors_outputs is not None:
        _hu_levy_authors(authors_outputs, out, n_boot, seed, quiet, data=data, model=model, backend=backend,
                         pairs=pairs, agreement=agreement, n_items=n_items, experiments=experiments)
        return
    if language not in ("en", "zh"):
        _fail(f"--language must be en or zh, not {language!r}")

    backend_name, options = _backend_settings(backend, backend_option)
    batch_size = _served_batch(backend_name, batch_size)
    batch = _check_options(out, dependency, n_boot, dtype, device, batch_size, threads,
                           models=_local(backend_name, model),
                           items=agreement_items, pairs=pairs, items_per_condition=items_per_condition, seed=seed)

    try:
        o.at_least("--items", n_items, 1, MAX_ITEMS)
    except o.OptionError as exc:
        _fail(str(exc))
    exps = tuple(_split(experiments) or ("1", "2", "3a", "3b"))
    if language == "zh":
        exps = tuple(_split(experiments) or EXPERIMENTS_ZH)
    opt = hu_levy_run.Options(models=list(model) if model else [None], out=out, data=data, n_items=n_items,
                              experiments=exps,
                              prompt_text=prompt_text, language=language, scoring=scoring, backend=backend_name,
                              backend_options=options,
                              items=list(agreement_items or []), pairs=list(pairs or []), agreement=agreement,
                              items_per_condition=items_per_condition, dependency=dependency, seed=seed, n_boot=n_boot,
                              add_bos=add_bos, dtype=dtype, device=device, batch_size=batch,
                              threads=threads or None, quiet=quiet)
    try:  # every dataset read and checked before the model loads or --out is written
        datasets, _ = hu_levy_run.check_inputs(opt)
    except ReproError as exc:
        _fail(str(exc))
    for d in datasets:
        typer.echo(f"read {d.spec.label}: {d.all_count} items ({d.file}); running {len(d.items)}"
                   + (" for experiments "
                      f"{', '.join(e for e in exps if e in d.spec.experiments)}" if d.spec.experiments else ""),
                   err=True)
    _run(hu_levy_run.reproduce, opt, "scored requests are cached")


def _hu_levy_authors(archive: Path, out: Path, n_boot: int, seed: int, quiet: bool, **model_options) -> None:
    """`reproduce hu-levy2023 --authors-outputs results_zh.zip`: Figure 11 from the authors' outputs (no model)."""

    try:
        out_folder(out)
        o.at_least("--n-boot", n_boot, 100, 100_000)
        _seed(seed)
    except o.OptionError as exc:
        _fail(str(exc))
    given = [k for k, v in model_options.items() if v]
    if given:
        _fail("--authors-outputs reads the authors' outputs and runs no model: leave out "
              + ", ".join("--" + k.replace("_", "-") for k in given))
    try:  # the whole archive read and checked before --out is written
        read_outputs(archive)
    except ReproError as exc:
        _fail(str(exc))
    _run(reproduce_authors_zh, AuthorsZhOptions(archive, out, n_boot=n_boot, seed=seed, quiet=quiet),
         "nothing is lost: run it again")


@app.command("hu-frank2024", epilog=FILES["hu-frank2024"])
def hu_frank2024(
    out: Path = typer.Option(..., "--out", "-o", help="reproduction folder (re-running with it reuses finished work)"),
    model: Optional[list[str]] = typer.Option(None, "--model", "-m", help="models of different sizes: repeat --model A "
                                                                          "--model B ...; default: the bundled "
                                                                          "SmolLM2-135M-Instruct"),
    pairs: Optional[list[Path]] = typer.Option(None, "--pairs", help="minimal-pair file(s) in the BLiMP JSONL format "
                                                                     "(sentence_good, sentence_bad)"),
    items: Optional[list[Path]] = typer.Option(None, "--items", help="agreement stimulus file(s) instead of the "
                                                                     "generated long-nested items"),
    items_per_condition: int = typer.Option(8, "--items-per-condition", "-n", help="agreement items per condition"),
    dependency: Optional[str] = typer.Option(None, "--dependency", help="inner or outer: agreement items of that verb "
                                                                        "only"),
    mixed: bool = typer.Option(True, "--mixed/--no-mixed", help="fit the glmer of correctness on method x log size "
                                                                "(R)"),
    seed: int = typer.Option(1, "--seed"),
    n_boot: int = typer.Option(2000, "--n-boot"),
    add_bos: bool = typer.Option(False, "--add-bos/--no-add-bos"),
    dtype: str = typer.Option("float32", "--dtype"),
    device: str = typer.Option("cpu", "--device"),
    batch_size: str = typer.Option("32", "--batch-size", help="sequences per forward pass, or auto"),
    threads: int = typer.Option(1, "--threads", help="CPU threads for torch (0 = torch default)"),
    backend: Optional[str] = typer.Option(None, "--backend", "-b", help="transformers (default) | llamacpp | openai (a "
                                                                        "served model) | seq2seq"),
    backend_option: Optional[list[str]] = typer.Option(None, "--backend-option", "-B", help="backend setting KEY=VALUE "
                                                                                            "(repeatable), e.g. -B "
                                                                                            "url=http://127.0.0.1:8000"),
    max_new_tokens: int = typer.Option(4, "--max-new-tokens", help="production: tokens to generate at most"),
    authors_outputs: Optional[Path] = typer.Option(None, "--authors-outputs", help="the authors' released outputs "
                                                   "(jennhu/lm-task-demands, or its output/ folder): recompute the "
                                                   "paper's Figures 2-4 and equations (1)-(4) from them; no model is "
                                                   "run"),
    data: Optional[Path] = typer.Option(None, "--data", help="the release (jennhu/lm-task-demands: external_stimuli/, "
                                        "output/): run its four domains with both methods on --model(s); --items N "
                                        "for a seeded sample of N items per domain (per CRT condition)"),
    models_file: Optional[Path] = typer.Option(None, "--models", help="with --data: a YAML or CSV file naming each "
                                               "model's path, family, size (parameters) and optionally training step "
                                               "(a checkpoint series gives Figure 4)"),
    fits: bool = typer.Option(True, "--fits/--no-fits", help="with --authors-outputs or --data: fit equations (1)-(4) "
                                                             "in R/lme4"),
    sensitivity: bool = typer.Option(True, "--sensitivity/--no-sensitivity", help="with --authors-outputs: the "
                                     "sensitivity fits of every singular size model (several minutes)"),
    row_order: bool = typer.Option(True, "--row-order/--no-row-order", help="with --authors-outputs: refit the paper's "
                                   "models with the rows reversed and in seeded shuffles (the range of each "
                                   "statistic); "
                                   "--no-row-order is --row-orders 1"),
    row_orders: int = typer.Option(5, "--row-orders", help="with --authors-outputs: the number of row orders of each "
                                                           "of "
                                   "the paper's fits (as read, reversed, then seeded shuffles; 1-20; 1 = one fit per "
                                   "model, the rows as read)"),
    quiet: bool = typer.Option(False, "--quiet", "-q"),
) -> None:
    """seeds/002: forced choice vs production and vs metalinguistic judgment per model; demand gap; glmer over size.
    With --authors-outputs: the paper's analysis recomputed from the authors' released per-item outputs."""
    if data is not None:
        n_items = _lab_n_items(items)
        _check_lab_exclusions(authors_outputs=authors_outputs, pairs=pairs, models_file=models_file, model=model,
                              dependency=dependency, max_new_tokens=max_new_tokens,
                              items_per_condition=items_per_condition)
        _hu_frank_lab(data, out, model, n_items, models_file, backend=backend, backend_option=backend_option,
                      batch_size=batch_size, threads=threads, max_new_tokens=max_new_tokens, n_boot=n_boot, seed=seed,
                      add_bos=add_bos, dtype=dtype, device=device, fits=fits, quiet=quiet)
        return
    if authors_outputs is not None:
        _hu_frank_authors(authors_outputs, out, n_boot=n_boot, row_orders=row_orders, row_order=row_order, seed=seed,
                          fits=fits, sensitivity=sensitivity, quiet=quiet,
                          runs_a_model=bool(model or pairs or items or backend or backend_option or models_file))
        return
    if models_file is not None:
        _fail("--models FILE is for --data (the release's four domains); with agreement items give --model per model")
    _hu_frank_agreement(out, model, items, pairs, items_per_condition=items_per_condition, dependency=dependency,
                        mixed=mixed, backend=backend, backend_option=backend_option, batch_size=batch_size,
                        threads=threads, max_new_tokens=max_new_tokens, n_boot=n_boot, seed=seed, add_bos=add_bos,
                        dtype=dtype, device=device, quiet=quiet)


def _lab_n_items(items: Optional[list[Path]]) -> Optional[int]:
    """With --data, --items is a count of items per domain (not stimulus files): the one whole number, or None."""

    n_items = None
    if items:
        n_items = ascii_int(str(items[0])) if len(items) == 1 else None
        if n_items is None or n_items < 1:
            _fail("with --data, --items is the number of items per domain (a whole number, at least 1)")
    return n_items


def _check_lab_exclusions(*, authors_outputs: Optional[Path], pairs: Optional[list[Path]],
                          models_file: Optional[Path], model: Optional[list[str]], dependency: Optional[str],
                          max_new_tokens: int, items_per_condition: int) -> None:
    """--data runs the release as the authors did: an option of the other modes is refused by name, not ignored."""
    if authors_outputs is not None or pairs:
        _fail("--data runs the release's four domains: leave out --authors-outputs and --pairs")
    if models_file is not None and model:
        _fail("--models FILE names every model (path, family, size, step): leave out --model")
    if dependency is not None or max_new_tokens != 4 or items_per_condition != 8:
        _fail("--data runs the release's four domains with the authors' production lengths: leave out "
              "--dependency, --max-new-tokens and --items-per-condition (--items N samples N items per domain)")


def _hu_frank_lab(data: Path, out: Path, model: Optional[list[str]], n_items: Optional[int],
                  models_file: Optional[Path], *, backend: Optional[str], backend_option: Optional[list[str]],
                  batch_size: str, threads: int, max_new_tokens: int, n_boot: int, seed: int, add_bos: bool,
                  dtype: str, device: str, fits: bool, quiet: bool) -> None:
    """`--data`: the release's four domains on --model(s) or a --models file, every input checked before writing."""

    backend_name, options = _backend_settings(backend, backend_option)
    batch_size = _served_batch(backend_name, batch_size)
    entries = None
    if models_file is not None:
        try:
            entries = read_models_file(models_file)
        except ReproError as exc:
            _fail(str(exc))
    paths = [e.path for e in entries] if entries else model
    batch_size = _check_options(out, None, n_boot, dtype, device, batch_size, threads, max_new_tokens,
                                models=_local(backend_name, paths), seed=seed)
    _run(reproduce_lab, LabOptions(data=data, out=out, models=list(model) if model else [None], items=n_items,
                                   seed=seed, n_boot=n_boot, add_bos=add_bos, dtype=dtype, device=device,
                                   batch_size=batch_size, threads=threads or None, quiet=quiet,
                                   backend=backend_name, backend_options=options, entries=entries, fits=fits),
         "finished domains are saved per model (OUT/items/)")


def _hu_frank_authors(authors_outputs: Path, out: Path, *, n_boot: int, row_orders: int, row_order: bool, seed: int,
                      fits: bool, sensitivity: bool, quiet: bool, runs_a_model: bool) -> None:
    """`--authors-outputs`: the paper's analysis from the authors' outputs; a model option is refused by name."""

    try:
        out_folder(out)
        o.at_least("--n-boot", n_boot, 100, 100_000)
        o.at_least("--row-orders", row_orders, 1, 20)
        if seed < 0:
            raise o.OptionError(f"--seed must be 0 or more, not {seed}")
    except o.OptionError as exc:
        _fail(str(exc))
    if runs_a_model:
        _fail("--authors-outputs reads the authors' outputs and runs no model: leave out --model, --models, "
              "--backend, -B, --pairs and --items")
    _run(reproduce_authors, AuthorsOptions(authors_outputs=authors_outputs, out=out, fits=fits, sensitivity=sensitivity,
                                           row_orders=row_orders if row_order else 1, n_boot=n_boot,
                                           seed=seed, quiet=quiet),
         "nothing is lost: run it again")


def _hu_frank_agreement(out: Path, model: Optional[list[str]], items: Optional[list[Path]],
                        pairs: Optional[list[Path]], *, items_per_condition: int, dependency: Optional[str],
                        mixed: bool, backend: Optional[str], backend_option: Optional[list[str]], batch_size: str,
                        threads: int, max_new_tokens: int, n_boot: int, seed: int, add_bos: bool, dtype: str,
                        device: str, quiet: bool) -> None:
    """The default mode: agreement items (and --pairs) with both methods on --model(s), inputs checked first."""
    backend_name, options = _backend_settings(backend, backend_option)
    batch_size = _served_batch(backend_name, batch_size)
    batch_size = _check_options(out, dependency, n_boot, dtype, device, batch_size, threads, max_new_tokens,
                                models=_local(backend_name, model),
                                items=items, pairs=pairs, items_per_condition=items_per_condition, seed=seed)
    opt = hu_frank_run.Options(models=list(model) if model else [None], out=out, items=list(items or []),
                               pairs=list(pairs or []),
                               backend=backend_name, backend_options=options,
                               items_per_condition=items_per_condition, dependency=dependency, seed=seed, n_boot=n_boot,
                               mixed=mixed, add_bos=add_bos, dtype=dtype, device=device, batch_size=batch_size,
                               threads=threads or None, max_new_tokens=max_new_tokens, quiet=quiet)
    _run(hu_frank_run.reproduce, opt, "finished sessions and scores are saved")


@app.command("hu-levy2023-human", epilog=FILES["hu-levy2023-human"])
def hu_levy2023_human(
    data: Path = typer.Option(..., "--data", help="the authors' datasets/ folder (exp2/dtfit and exp3/blimp are read)"),
    out: Path = typer.Option(..., "--out", "-o", help="folder for the study's spec and items"),
    n_items: Optional[int] = typer.Option(20, "--items", help="items per dataset (seeded by --seed; 0 = all)"),
    seed: int = typer.Option(1, "--seed", help="seed of the --items sample (0 or more)"),
    force: bool = typer.Option(False, "--force", help="replace an existing spec or items file"),
    language: str = typer.Option("en", "--language", help="en (default): DTFit and BLiMP; zh: Appendix D's Mandarin "
                                 "pairs (--data: the chinese branch's datasets/, exp3/mandarin is read), Chinese "
                                 "screens"),
) -> None:
    """seeds/003's word comparison (DTFit) and sentence comparison (BLiMP) as a `choice` study for
    people (and model subjects): writes its spec and items from your copy of the release."""

    try:
        o.at_least("--items", n_items, 0, MAX_ITEMS)
        _seed(seed)
        out_folder(out, [("--data", data)])
    except o.OptionError as exc:
        _fail(str(exc))
    if language not in ("en", "zh"):
        _fail(f"--language must be en or zh, not {language!r}")
    try:
        spec, n = write_study(data, out, n_items or None, seed, force=force, language=language)
    except (ReproError, FileExistsError) as exc:
        _fail(str(exc))
    typer.echo(f"wrote {spec} and its {n} items; run it with `twinlab web serve {spec}` (people), "
               f"`twinlab run-model {spec}` (models), then `twinlab analyze` on both folders")


# what a reproduction writes under --out (reproductions/common.py, hu_levy, hu_frank): checked before any work
OUT_FOLDERS = ("tables", "figures", "specs", "stimuli", "items", "cache", "sessions")
OUT_FILES = ("report.html", "provenance.json")


def out_folder(out: Path, input_folders: list[tuple[str, Path]] | None = None) -> Path:
    """--out a folder whose sub-folders hold no link, device or other non-regular file (nothing written
    through a link, nothing cleaned up outside --out) and which is not inside the data read
    (experiments/outputs.py); an OptionError naming it."""

    return check_output_folder("--out", out, OUT_FOLDERS, OUT_FILES, input_folders or [])
