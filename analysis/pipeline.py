"""The whole analysis: load -> prepare -> tables, figures, models -> results dir (+ report.html).

Output layout::

    OUT/tables/*.csv      every table the report shows
    OUT/figures/*.png     every figure
    OUT/results.json      options, inputs, sample sizes, exclusions, model fits, section layout
    OUT/report.html       rendered from the three above (`twinlab report OUT` re-renders it)

One pipeline for every design: `run_loaded` picks the report plan the trial table calls for
(analysis/report_plan.py: a general design's, or the Lakretz cells' with the paper's rules: data, not a
branch on a design's name), runs its steps on one `Run` and writes results.json. The pieces live beside it:
`results_folder` (the collector), `data_section` (sample sizes, order, outliers), `report_tables` (the shown
tables), `learning` (first encounter, curves, exposure models of any design), `learning_report` and
`lakretz_report` + `sections` (their sections), `design_report` (a general design's).
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
from analysis.options import Options, check_options  # noqa: F401 (Options re-exported: analysis.pipeline.Options)
from analysis.report_plan import Run, plan_for
from analysis.results_folder import Results, clean_json, json_default
from experiments.atomic import atomic_write_text
# names other code imported from here before the split (kept importable from the pipeline)
from analysis.data_section import drop_training_only_sessions, order_statement, outlier_text, sample_sizes  # noqa: F401,E402
from analysis.report_tables import wide_error_rates, wide_slopes, wide_table_c1  # noqa: F401,E402


def run_analysis(data: Iterable[str | Path], out: str | Path, options: Options | None = None,
                 log: Callable[[str], None] | None = None) -> dict:
    """Run every analysis on the data and write the results folder; returns the results dict."""
    opt = check_options(options or Options())
    df, info = load(data, opt.fmt, keep_outliers=opt.keep_outliers, training_blocks=opt.training_blocks,
                    allow_spec_versions=opt.allow_spec_versions)
    return run_loaded(df, info, out, opt, log)


def run_loaded(df: pd.DataFrame, info, out: str | Path, options: Options | None = None,
               log: Callable[[str], None] | None = None) -> dict:
    """The analysis of trials already loaded (analysis.load.load or analysis.api.load_sessions): the steps of
    the plan the table calls for (analysis/report_plan.py), then results.json and report.html."""
    opt = check_options(options or Options())
    t0 = time.time()
    out = Path(out)
    plan = plan_for(df, info.factors)
    check_by_and_formula(df, opt, plan.general, info.factors)
    run = Run(info=info, opt=opt, out=out, log=log or (lambda s: None), res=Results(out))
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
        "notes": run.notes, "skipped": run.skipped, "exclusions": info.exclusions, "failures": run.res.failures,
        "spec_versions": info.spec_versions,
        "tables": run.res.tables, "figures": run.res.figures, "sections": run.res.sections,
    }
    return write_results(out, results)


def write_results(out: Path, results: dict) -> dict:
    """results.json (atomically), then report.html rendered from it."""
    atomic_write_text(out / "results.json", json.dumps(clean_json(results), indent=1, default=json_default))
    from analysis.report import render_report

    render_report(out)
    return results


def check_by_and_formula(df: pd.DataFrame, opt: Options, general: bool = True, factors: Iterable[str] = ()) -> None:
    """--by and --formula name columns of the table: checked before any work (FormulaError names the column).
    The order columns count as columns (a general design gets all of them, analysis/learning_rows.py; a
    Lakretz table those analysis/prepare.py defines)."""
    from analysis import formula as fm

    from analysis.learning_rows import ORDER_COLUMNS, parse_blocks

    opt.blocks = parse_blocks(opt.blocks)  # BlocksError names the choices
    if "=" in (opt.focus or ""):  # a general design's focus cell: its factors and levels must be in the data
        from analysis.learning import parse_focus

        parse_focus(opt.focus, df, [c for c in df.columns if c in (df.attrs.get("factors") or {})] or None)
    cols = set(df.columns) | {"group", "subject_key", "error", "accepted", "signal", "said_reject", "training",
                              "item", "block", "trials_before", "exposures", "first_encounter"}
    if general:
        cols |= set(ORDER_COLUMNS)
    missing = [b for b in opt.by if b not in cols]
    if missing:
        import difflib

        guess = difflib.get_close_matches(missing[0], sorted(cols), n=1)
        raise fm.FormulaError(f"--by: unknown column {missing[0]!r}" + (f" (did you mean {guess[0]!r}?)" if guess else "")
                              + "; the design's factors and columns are named in `twinlab analyze --help`")
    if opt.region or opt.word:  # the reading rows' columns; an unknown region or word is refused here
        from analysis.tasks_reading import check_target

        cols |= check_target(df, opt.region or None, opt.word or None)
    if opt.formula:
        from analysis.formula_checks import check_fit_request

        f = fm.parse(opt.formula)
        fm.check_columns(f, sorted(cols))
        check_fit_request(f, df, opt.family, factors)
    if opt.family not in ("auto", "binomial", "gaussian", "ordinal"):
        raise fm.FormulaError(f"--family must be auto, binomial, gaussian or ordinal, not {opt.family!r}")
    from analysis.demand_gap import check_pairs

    opt.gap_pairs = check_pairs(df, opt.gap_pairs)
