"""`twinlab analyze` and `twinlab report` (declared in analysis/__init__.py's `COMMANDS`; imported when one runs).

R (lme4 via rpy2) starts only when a mixed model is fitted, matplotlib with the first figure.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import List

import typer
from typer.core import TyperCommand

from analysis.api import InputError, report_options
from analysis.learning.general import FocusError
from analysis.load import LoadError
from analysis.load.rows import BlocksError
from analysis.measures.demand_gap import GapError
from analysis.options import COMMAND_LINE, Options
from analysis.report.render import ReportError, render_report
from analysis.stats.formula import FormulaError
from analysis.stats.mixed import MixedModelError
from analysis.stats.ordinal import OrdinalError
from analysis.study_options import with_study_options
from experiments.cli_common import console, fail
from experiments.commands import HELP_LAYOUT, PanelledCommand
from experiments.options import OptionError


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

    # the flags as typed (`--rt-trim 200,3000` stays text): check_options checks and reads them, as the API's
    opt = Options(seed=seed, n_boot=n_boot, mixed=not no_mixed, focus=focus, fmt=fmt, by=by, formula=formula,
                  family=family, gap_pairs=list(gap), model_copies=model_copies, rt_trim=rt_trim, rt_sd=rt_sd,
                  region=region, word=word, word_rt_range=word_rt_range, exclude_wrong_answers=exclude_wrong_answers,
                  allow_spec_versions=allow_spec_versions, blocks=blocks, **(study_options or {}))
    t0 = time.time()
    try:  # the command is the API's report (analysis/api.py): it checks --out and every option, once
        res = report_options(list(data), out, opt, force=force, log=lambda s: console.print(s, highlight=False),
                             names=COMMAND_LINE)
    except (LoadError, MixedModelError, ReportError, FormulaError, OrdinalError, GapError, InputError,
            OptionError, FocusError, BlocksError) as exc:
        fail(str(exc))
    except OSError as exc:  # a full disk, a read-only folder: the files written so far are whole
        fail(f"--out {out}: cannot write {exc.filename or ''} ({exc.strerror or exc}); "
             "free space or choose another --out, then run the analysis again")
    _say_results(res, out, time.time() - t0)


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
