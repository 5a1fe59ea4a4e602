"""The whole analysis: load -> prepare -> tables, figures, models -> results dir (+ report.html).

Output layout::

    OUT/tables/*.csv      every table the report shows
    OUT/figures/*.png     every figure
    OUT/results.json      options, inputs, sample sizes, exclusions, model fits, section layout
    OUT/report.html       rendered from the three above (`twinlab report OUT` re-renders it)

This module runs the analyses in order and writes results.json; the pieces live beside it:
`results_folder` (the collector), `data_section` (sample sizes, order, outliers), `report_tables`
(the shown tables), `sections` (detection, exposure models, training),
`lakretz_report` (the Lakretz sections), `design_report` (a general design's).
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable

import pandas as pd

from analysis import scoring
from analysis.design_report import design_sections
from analysis.frames import design_frame, is_general_design, with_order
from analysis.learning import has_learning_data
from analysis.learning_report import learning_sections
from analysis.lakretz_report import (data_section, error_rates_section, exposures_section, first_encounter_section,
                                     lakretz_rows, model_measures_section)
from analysis.load import load
from analysis.options import Options, check_options  # noqa: F401 (Options re-exported: analysis.pipeline.Options)
from analysis.prepare import order_known_rows
from analysis.results_folder import Results, clean_json, json_default
from analysis.sections import detection_section, exposure_models_section, training_section
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
    """The analysis of trials already loaded (analysis.load.load or analysis.api.load_sessions): the
    sections follow the design (a general design's own, or the Lakretz sections)."""
    opt = check_options(options or Options())
    log = log or (lambda s: None)
    t0 = time.time()
    out = Path(out)
    general = is_general_design(df, info.factors)
    check_by_and_formula(df, opt, general, info.factors)
    if general:
        return run_general(df, info, out, opt, log, t0)
    if opt.gap_pairs:  # never silently ignored
        from analysis.demand_gap import GapError

        raise GapError("--gap applies to a general design's protocols; a Lakretz design's demand gap pairs each "
                       "metalinguistic protocol with its direct partner (analysis/model_measures.py)")
    return run_lakretz(df, info, out, opt, log, t0)


def run_lakretz(df: pd.DataFrame, info, out: Path, opt: Options, log: Callable[[str], None], t0: float) -> dict:
    """The Lakretz designs: the sections of seeds/000 (and the model-side measures), in order."""
    from analysis.twins import is_replay  # twins (issue 40): a replay is neither a person nor a model subject

    if is_replay(df).any():
        info.notes.append(f"{int(is_replay(df).sum())} replay row(s) left out: the Twins sections are a general "
                          "design's (docs/analysis.md)")
        df = df[~is_replay(df)]
    r = lakretz_rows(df, info, opt)
    d, notes, skipped = r.d, r.notes, []
    res = Results(out)
    statement = data_section(res, d, info, log)
    er = error_rates_section(res, d, opt, out)
    detection_section(res, d, er, opt, out)
    rule_diff = first_encounter_section(res, r, opt, out)
    group_fits: dict[str, dict] = {}
    exposures_section(res, r, opt, out, log, skipped)
    if r.has_order:  # exposure models on the focus cell (Tables C2, C3)
        skipped += exposure_models_section(res, r.od, r.focus, opt, group_fits, log, out, r.od_other, r.other_rule)
    if r.has_order or r.d_all["training"].any():  # training: Figures C3, C4
        training_section(res, d, r.od, order_known_rows(r.d_all), opt, out, notes)
    if (d["subject_kind"] == "model").any():
        model_measures_section(res, d, opt, out, notes)
    if opt.by or opt.formula:
        design_sections(res, d, {}, opt, out, log, notes, skipped, general=False)
    results = {
        "title": "twinlab analysis",
        "design": "lakretz",
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "runtime_s": round(time.time() - t0, 1),
        "options": asdict(opt),
        "inputs": {"files": info.files, "formats": info.formats},
        "outliers": info.outliers,
        "order_statement": statement,
        "rejected_rule": {"rule": opt.rejected_rule, "text": scoring.RULE_TEXT[opt.rejected_rule],
                          "differences": rule_diff if r.has_order else None},
        "notes": notes, "skipped": skipped, "exclusions": info.exclusions, "failures": res.failures,
        "spec_versions": info.spec_versions,
        "tables": res.tables, "figures": res.figures, "sections": res.sections,
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


def run_general(df: pd.DataFrame, info, out: Path, opt: Options, log: Callable[[str], None], t0: float) -> dict:
    """A general design (docs/general_model.md): its own sections (analysis/design_report.py)."""
    d, copies, copy_notes = design_frame(df, dict(info.factors), opt.model_copies)
    if copies.empty and df.attrs.get("model_copies"):
        copies = pd.DataFrame(df.attrs["model_copies"])  # a frame of api.load_sessions: merged there (records)
    from analysis.learning_rows import ORDER_COLUMNS

    # a cell: the factors of --by (order columns such as block_kind are no cell), else the design's
    cell = [b for b in opt.by if b not in ORDER_COLUMNS] or [f for f in info.factors if f in d.columns]
    d = with_order(d, cell)  # exposures per cell of --by (else the design's factors)
    res = Results(out)
    notes, skipped = list(info.notes) + copy_notes, []
    log(f"loaded {len(d)} trials of {d['subject_key'].nunique()} subject(s) from {len(info.files)} file(s); "
        f"design factors: {', '.join(info.factors) or 'none'}")
    design_sections(res, d, dict(info.factors), opt, out, log, notes, skipped, general=True, copies=copies)
    if has_learning_data(d):  # a training block or feedback: learning, whatever the design is called
        learning_sections(res, d, cell, opt, out, log, skipped)
    excl = pd.DataFrame(info.exclusions, columns=["what", "rows", "reason"])
    if len(excl):
        res.section("exclusions", "Exclusions", "What was left out before the analyses.",
                    [res.table("exclusions", excl, "Exclusions")])
    results = {
        "title": "twinlab analysis",
        "design": "general",
        "factors": dict(info.factors),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "runtime_s": round(time.time() - t0, 1),
        "options": asdict(opt),
        "inputs": {"files": info.files, "formats": info.formats},
        "outliers": info.outliers,
        "notes": notes, "skipped": skipped, "exclusions": info.exclusions, "failures": res.failures,
        "spec_versions": info.spec_versions,
        "tables": res.tables, "figures": res.figures, "sections": res.sections,
    }
    return write_results(out, results)
