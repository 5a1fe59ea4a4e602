"""`twinlab analyze` and `twinlab report` (declared in analysis/__init__.py's `COMMANDS`).

Nothing heavy is imported at module level: pandas/matplotlib load when a command runs, R (lme4 via rpy2)
only when a mixed model is fitted.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import List

import typer
from typer.core import TyperCommand

from analysis.api import check_out
from analysis.api import report as api_report
from analysis.learning.general import FocusError, check_focus_path, parse_focus
from analysis.load import LoadError
from analysis.load.formats import frame_format_names
from analysis.load.rows import BlocksError, parse_blocks
from analysis.measures.demand_gap import GapError, parse_pair
from analysis.report.render import ReportError, render_report
from analysis.stats.formula import FormulaError, parse
from analysis.stats.mixed import MixedModelError
from analysis.stats.ordinal import OrdinalError
from analysis.study_options import declared_options, problem, with_study_options
from experiments.cli_common import console, fail
from experiments.commands import HELP_LAYOUT, PanelledCommand
from experiments.options import OptionError, at_least, output_folder


def analyze(
    data: List[Path] = typer.Argument(..., help="session folders (<root>/data/*_data.csv), session CSVs, or Lakretz et "
                                                "al. (2021) results CSVs"),
    out: Path = typer.Option(..., "--out", "-o", help="results folder (tables/, figures/, results.json, report.html)"),
    fmt: str = typer.Option("auto", "--format", help="auto | twinlab | lakretz (auto recognises the Lakretz columns)"),
    no_mixed: bool = typer.Option(False, "--no-mixed", help="skip the mixed-effects models (no R needed)"),
    seed: int = typer.Option(0, "--seed", help="seed of the bootstrap resampling"),
    n_boot: int = typer.Option(2000, "--n-boot", help="bootstrap resamples"),
    focus: str = typer.Option("", "--focus", help="cell of the exposure (learning) models: FACTOR=LEVEL,... for a "
                                                  "general design (e.g. attractor=mismatch,agreement=broken; default: "
                                                  "every cell), or a study's own cell form (default: the cell the "
                                                  "study declares); results.json records the cell used and where it "
                                                  "came from"),
    blocks: str = typer.Option("test", "--blocks", help="rows of the rates, acceptance, --formula and exposure-model "
                                                        "fits: test (default; the test blocks, fillers out), "
                                                        "training,test (training blocks and practice rows too), all "
                                                        "(every row, fillers included); every table and fit says which "
                                                        "blocks and roles it used"),
    force: bool = typer.Option(False, "--force", help="replace the results of an earlier analysis in --out (never the "
                                                      "data analysed)"),
    by: str = typer.Option("", "--by", help="FACTOR,...: rates (bootstrap CIs over subjects and over items), "
                                            "acceptance and d' by these columns (default for a general design: its "
                                            "declared factors)"),
    formula: str = typer.Option("", "--formula", help="an lme4 formula fitted with its diagnostics, e.g. \"correct ~ a "
                                                      "* b + (1 + a | subject) + (1 | item)\" (glmer binomial for 0/1 "
                                                      "outcomes, lmer with log RTs; factors sum-coded; random effects "
                                                      "simplified when not converged or singular). Parsed by twinlab's "
                                                      "grammar, never run as R code: columns (`backticked` names too), "
                                                      "+ - * / ^ : %in%, (... | g), (... || g), 0, 1, I(), log(), "
                                                      "scale(), poly(x, k); anything else refused. With several groups "
                                                      "(people, each model protocol) one fit per group, unless the "
                                                      "formula names `group`"),
    family: str = typer.Option("auto", "--family", help="family of --formula: auto (binomial for 0/1, else gaussian) | "
                                                        "binomial | gaussian | ordinal (ordinal::clmm, for ratings)"),
    gap: List[str] = typer.Option([], "--gap", help="LOW=>HIGH: two protocols whose demand gap to report, any names "
                                                    "(LOW:HIGH when the names hold no ':'); repeatable; each must name "
                                                    "two protocols one model and context ran; default: every pair of a "
                                                    "model's protocols"),
    model_copies: str = typer.Option("merge", "--model-copies", help="merge (default): model sessions that are "
                                                                     "deterministic copies (same model, protocol and "
                                                                     "context, no sampling, no running history) are "
                                                                     "one subject, items the unit; subjects: keep each "
                                                                     "session a subject"),
    rt_trim: str = typer.Option("200,3000", "--rt-trim", help="LOW,HIGH: response times (ms) kept in the RT analyses "
                                                              "of lexical decision, judgment and choice (inclusive)"),
    rt_sd: float = typer.Option(2.5, "--rt-sd", help="RT analyses: also drop RTs beyond this many SDs of the subject's "
                                                     "mean (after --rt-trim; 0: off)"),
    region: str = typer.Option("", "--region", help="fit --formula on one region's rows (one per trial: region_rt_ms, "
                                                    "surprisal_bits, length, length_prev1, n_words, ...): its number, "
                                                    "R<k> or its task.region_names name"),
    word: int = typer.Option(0, "--word", help="fit --formula on the N-th word's rows (one per trial: word_rt_ms, "
                                               "surprisal_bits, length, length_prev1, ...)"),
    word_rt_range: str = typer.Option("100,5000", "--word-rt-range", help="LOW,HIGH: self-paced reading's word reading "
                                                                          "times (ms) kept (rule `rt_range`; the "
                                                                          "counts removed are reported)"),
    exclude_wrong_answers: bool = typer.Option(False, "--exclude-wrong-answers", help="self-paced reading: leave out "
                                                                                      "trials whose comprehension "
                                                                                      "question was answered wrongly "
                                                                                      "(rule `wrong_answer`, counted)"),
    allow_spec_versions: bool = typer.Option(False, "--allow-spec-versions", help="analyse sessions run with different "
                                                                                  "versions of the spec (another "
                                                                                  "spec_hash or factor level order) "
                                                                                  "together, coded by the current "
                                                                                  "version (the newest session's); the "
                                                                                  "report names every version. Without "
                                                                                  "it they are refused"),
    study_options: dict | None = None,
) -> None:
    """Analyse people's and models' trial tables by factor, task and your formula, and write report.html.

    A study's own designs add its report plan's sections (the options it declares are under its heading)."""

    study_options = study_options or {}
    blocks = _checked_rows_options(data, out, fmt, n_boot, force, study_options, focus, blocks)
    by_list, word_range, rt_range, pairs = _checked_fit_options(by, family, formula, no_mixed, region, word,
                                                                word_rt_range, model_copies, rt_trim, rt_sd, gap)
    from analysis.api import InputError

    t0 = time.time()
    try:  # the command is the API's report() (analysis/api.py); --out was checked above (--force)
        res = api_report(list(data), out, by=by_list, formula=formula, force=True,
                         log=lambda s: console.print(s, highlight=False), seed=seed, n_boot=n_boot,
                         mixed=not no_mixed, focus=focus, fmt=fmt, **study_options, family=family, gap_pairs=pairs,
                         model_copies=model_copies, rt_trim=rt_range, rt_sd=rt_sd,
                         region=region, word=word, word_rt_range=word_range,
                         exclude_wrong_answers=exclude_wrong_answers, allow_spec_versions=allow_spec_versions,
                         blocks=blocks)
    except (LoadError, MixedModelError, ReportError, FormulaError, OrdinalError, GapError, InputError,
            OptionError, FocusError, BlocksError) as exc:
        fail(str(exc))
    except OSError as exc:  # a full disk, a read-only folder: the files written so far are whole
        fail(f"--out {out}: cannot write {exc.filename or ''} ({exc.strerror or exc}); "
             "free space or choose another --out, then run the analysis again")
    _say_results(res, out, time.time() - t0)


def _checked_rows_options(data: List[Path], out: Path, fmt: str, n_boot: int, force: bool, study_values: dict,
                          focus: str, blocks: str):
    """--format, --n-boot, --out (never the data; an earlier analysis only with --force), the studies' declared
    options, --focus and --blocks, in that order; one line and exit 2. Returns the parsed --blocks."""

    formats = ("auto", "twinlab", *frame_format_names())
    if fmt not in formats:
        fail(f"--format must be {', '.join(formats[:-1])} or {formats[-1]}, not {fmt!r}")

    try:
        at_least("--n-boot", n_boot, 1, 100_000)
        output_folder("--out", out)
        check_results_folder(out, data, force)
    except OptionError as exc:
        fail(str(exc))
    for _, opt in declared_options():
        why = problem(opt, study_values.get(opt["api"], opt["default"]))
        if why:
            fail(why)

    try:
        if focus:  # none given: every cell of a general design, or the default of a study's plan
            parse_focus(focus) if "=" in focus else check_focus_path(focus)
        return parse_blocks(blocks)
    except (ValueError, FocusError, BlocksError) as exc:
        fail(str(exc))


def _checked_fit_options(by: str, family: str, formula: str, no_mixed: bool, region: str, word: int,
                         word_rt_range: str, model_copies: str, rt_trim: str, rt_sd: float, gap: List[str]):
    """--by, --family, --region/--word, --word-rt-range, --formula, --model-copies, --rt-trim/--rt-sd and --gap,
    in that order; one line and exit 2. Returns (--by columns, word RT range, RT trim, --gap pairs)."""

    by_list = [b.strip() for b in by.split(",") if b.strip()]
    if by and not by_list:
        fail("--by names no column (e.g. --by head_number,attractor_number)")
    from analysis.options import InputError, distinct  # late: the CLI starts without the analysis (pandas, R)

    try:
        distinct("--by", by_list)
    except InputError as exc:
        fail(str(exc))
    if family not in ("auto", "binomial", "gaussian", "ordinal"):
        fail(f"--family must be auto, binomial, gaussian or ordinal, not {family!r}")
    if (region or word) and not formula:
        fail("--region/--word choose the rows of --formula: give a --formula too (e.g. --formula "
             "\"region_rt_ms ~ ambiguity + length + (1 | subject) + (1 | item)\")")
    if region and word:
        fail("--region and --word: give one of them")
    if word < 0:
        fail(f"--word must be 1 or more, got {word}")
    try:
        spr_lo, spr_hi = (float(x) for x in word_rt_range.split(","))
        if not 0 <= spr_lo < spr_hi:
            raise ValueError
    except ValueError:
        fail(f"--word-rt-range {word_rt_range!r}: write LOW,HIGH in ms with 0 <= LOW < HIGH (e.g. 100,5000)")
    if formula and no_mixed:
        fail("--formula is fitted by R (lme4) and --no-mixed means no R: drop one of them")
    try:
        if formula:
            parse(formula)
    except FormulaError as exc:
        fail(f"--formula: {exc}")
    if model_copies not in ("merge", "subjects"):
        fail(f"--model-copies must be merge or subjects, not {model_copies!r}")
    try:
        lo_ms, hi_ms = (float(x) for x in rt_trim.split(","))
        if not (0 <= lo_ms < hi_ms and rt_sd >= 0):
            raise ValueError
    except ValueError:
        fail(f"--rt-trim {rt_trim!r} / --rt-sd {rt_sd!r}: write --rt-trim LOW,HIGH in ms (LOW < HIGH) and --rt-sd >= 0")
    try:
        return by_list, (spr_lo, spr_hi), (lo_ms, hi_ms), [parse_pair(g) for g in gap]
    except GapError as exc:
        fail(str(exc))


def _say_results(res: dict, out: Path, seconds: float) -> None:
    """The notes, the trial-order statement and one line of what was written; exit 1 when a result asked for
    is missing (said at the top of the report too)."""

    for n in res["notes"] + res["skipped"]:
        console.print(f"[yellow]note:[/yellow] {n}", highlight=False)
    if res.get("order_statement"):
        console.print(f"[yellow]trial order:[/yellow] {res['order_statement']}", highlight=False)
    typer.echo(f"wrote {len(res['tables'])} tables, {len(res['figures'])} figures and {out / 'report.html'} "
               f"in {seconds:.1f} s")
    if res.get("failures"):
        for f in res["failures"]:
            typer.echo(f"failed: {f}", err=True)
        raise typer.Exit(1)


def check_results_folder(out: Path, data: List[Path], force: bool) -> None:
    """--out may hold an earlier analysis only with --force, and never the data being analysed (the rule
    lives in analysis.api.check_out, which api.report() applies too)."""

    check_out(out, data, force)


def report(
    results: Path = typer.Argument(..., help="a results folder written by `twinlab analyze` (holds results.json)"),
) -> None:
    """Re-render report.html from a results folder (no data, no R needed)."""

    try:
        path = render_report(results)
    except ReportError as exc:
        fail(str(exc))
    typer.echo(f"wrote {path}")


def built_analyze() -> TyperCommand:
    """`analyze` as the CLI mounts it: the study's own options added and listed under its heading."""
    one = typer.Typer(add_completion=False, **HELP_LAYOUT)
    one.command("analyze", cls=PanelledCommand)(with_study_options(analyze))
    return typer.main.get_command(one)


analyze_command = built_analyze()
