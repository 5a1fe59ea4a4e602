"""The whole analysis: load -> prepare -> tables, figures, models -> results dir (+ report.html).

Output layout::

    OUT/tables/*.csv      every table the report shows
    OUT/figures/*.png     every figure
    OUT/results.json      options, inputs, sample sizes, exclusions, model fits, section layout
    OUT/report.html       rendered from the three above (`twinlab report OUT` re-renders it)

One pipeline for every design: `run_loaded` picks the report plan the trial table calls for
(analysis/report/plan.py: a general design's, or a registered study's, e.g. the Lakretz cells' with the
paper's rules: data, not a branch on a design's name), applies that study's default focus cell when no
--focus is given (results.json `focus_source` says so), runs its steps on one `Run` and writes results.json.
The pieces live in the rooms beside it: report/results_folder (the collector), report/data_section (sample
sizes, order, outliers), report/tables (what the shown tables share), learning/ (first encounter, curves,
exposure models of any design, and their sections), report/design (a general design's); a study's own
sections and tables live in the study (studies/<name>/).
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable

import pandas as pd

from analysis.load import load
from analysis.option_checks import check_by_and_formula, check_training_blocks
from analysis.options import Options, check_options
from analysis.report.plan import Run, plan_for, with_focus

# names other code imported from here before the split (kept importable from the pipeline)
from analysis.report.render import render_report
from analysis.report.results_folder import Results, clean_json, json_default
from analysis.stats.fit_items import grouped_notes
from analysis.stats.formula import merge_level_notes
from experiments.atomic import atomic_write_text


def run_analysis(data: Iterable[str | Path], out: str | Path, options: Options | None = None,
                 log: Callable[[str], None] | None = None) -> dict:
    """Run every analysis on the data and write the results folder; returns the results dict. The options are
    checked here (check_options), before any work."""
    return analyse_checked(data, out, check_options(options or Options()), log)


def analyse_checked(data: Iterable[str | Path], out: str | Path, opt: Options,
                    log: Callable[[str], None] | None = None) -> dict:
    """`run_analysis` with options `check_options` has checked already (api.report_options, which api.report and
    `twinlab analyze` call, checks them before its own work): an analysis checks its options once."""
    df, info = load(data, opt.fmt, keep_outliers=opt.keep_outliers, training_blocks=opt.training_blocks,
                    allow_spec_versions=opt.allow_spec_versions)
    check_training_blocks(opt, info.formats)
    return analyse_loaded_checked(df, info, out, opt, log)


def run_loaded(df: pd.DataFrame, info, out: str | Path, options: Options | None = None,
               log: Callable[[str], None] | None = None) -> dict:
    """The analysis of trials already loaded (analysis.load.load or analysis.api.load_sessions): the steps of
    the plan the table calls for (analysis/report/plan.py), then results.json and report.html. The options are
    checked here (check_options), before any work."""
    return analyse_loaded_checked(df, info, out, check_options(options or Options()), log)


def analyse_loaded_checked(df: pd.DataFrame, info, out: str | Path, opt: Options,
                           log: Callable[[str], None] | None = None) -> dict:
    """`run_loaded` with options `check_options` has checked already."""
    t0 = time.time()
    out = Path(out)
    plan = plan_for(df, info.factors)
    opt, focus_source = with_focus(opt, plan)  # a study's default focus when its design is the data's
    check_by_and_formula(df, opt, plan.general, info.factors)
    run = Run(info=info, opt=opt, out=out, log=log or (lambda s: None), res=Results(out))
    if plan.default_focus:  # a plan with a focus cell of its own: say which was used and where it came from
        run.extra["focus_source"] = focus_source
    plan.frame(df, run)
    for step in plan.steps:
        step(run)
    results = {
        "title": "twinlab analysis",
        "design": plan.name,
        **run.head,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "runtime_s": round(time.time() - t0, 1),
        "options": asdict(opt),
        "inputs": {"files": info.files, "formats": info.formats},
        "outliers": info.outliers,
        **run.extra,
        "notes": run.notes, "skipped": grouped_notes(merge_level_notes(run.skipped)), "exclusions": info.exclusions,
        "failures": run.res.failures,
        "spec_versions": info.spec_versions,
        "tables": run.res.tables, "figures": run.res.figures, "sections": run.res.sections,
    }
    return write_results(out, results)


def write_results(out: Path, results: dict) -> dict:
    """results.json (atomically), then report.html rendered from it."""
    atomic_write_text(out / "results.json", json.dumps(clean_json(results), indent=1, default=json_default))
    render_report(out)
    return results
