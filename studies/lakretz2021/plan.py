"""The report plan of the Lakretz cells (structure x condition x violation position, no task column): the
learning analyses of analysis/learning/general.py (configured `LAKRETZ`) laid out with the paper's rules as
seeds/000 prints them (error rates by condition x dependency, d', Table C1, Figures C1-C4, Tables C2/C3), the
model-side measures, and the design sections that --by / --formula ask for. Registered in the study's
`__init__` (REPORT_PLANS, with its default focus cell); analysis/report/plan.py runs it."""
from __future__ import annotations

import pandas as pd

from analysis.load.prepare import order_known_rows
from analysis.measures import scoring
from analysis.measures.demand_gap import GapError
from analysis.report.design import design_sections
from analysis.report.plan import ReportPlan, Run, is_general
from analysis.twins.answers import is_replay
from studies.lakretz2021.report import (
    data_section,
    error_rates_section,
    exposures_section,
    first_encounter_section,
    lakretz_rows,
    model_measures_section,
)
from studies.lakretz2021.sections import detection_section, exposure_models_section, training_section


def lakretz_frame_step(df: pd.DataFrame, run: Run) -> None:
    """The paper's rows (studies/lakretz2021/report.py `lakretz_rows`); a replay is neither a person
    nor a model subject, and --gap pairs protocols of a general design."""
    if run.opt.gap_pairs:  # never silently ignored
        raise GapError("--gap applies to a general design's protocols; a Lakretz design's demand gap pairs each "
                       "metalinguistic protocol with its direct partner (analysis/measures/model_measures.py)")
    if is_replay(df).any():
        run.info.notes.append(f"{int(is_replay(df).sum())} replay row(s) left out: the Twins sections are a general "
                              "design's (docs/analysis/twins.md)")
        df = df[~is_replay(df)]
    run.rows = lakretz_rows(df, run.info, run.opt)
    run.d, run.notes = run.rows.d, run.rows.notes



def data_step(run: Run) -> None:
    run.extra["order_statement"] = data_section(run.res, run.d, run.info, run.log)



def error_rates_step(run: Run) -> None:
    er = error_rates_section(run.res, run.d, run.opt, run.out)
    detection_section(run.res, run.d, er, run.opt, run.out)



def first_encounter_step(run: Run) -> None:
    r, opt = run.rows, run.opt
    diff = first_encounter_section(run.res, r, opt, run.out)
    run.extra["rejected_rule"] = {"rule": opt.rejected_rule, "text": scoring.RULE_TEXT[opt.rejected_rule],
                                  "differences": diff if r.has_order else None}



def exposures_step(run: Run) -> None:
    """Figure C2, then the exposure models on the focus cell (Tables C2, C3) where the order is known."""
    r = run.rows
    exposures_section(run.res, r, run.opt, run.out, run.log, run.skipped)
    if r.has_order:
        run.skipped += exposure_models_section(run.res, r.od, r.focus, run.opt, {}, run.log, run.out, r.od_other,
                                               r.other_rule)



def training_step(run: Run) -> None:
    """Figures C3, C4."""
    r = run.rows
    if r.has_order or r.d_all["training"].any():
        training_section(run.res, run.d, r.od, order_known_rows(r.d_all), run.opt, run.out, run.notes)



def model_measures_step(run: Run) -> None:
    if (run.d["subject_kind"] == "model").any():
        model_measures_section(run.res, run.d, run.opt, run.out, run.notes)



def requested_step(run: Run) -> None:
    """The design sections --by or --formula ask for."""

    if run.opt.by or run.opt.formula:
        design_sections(run.res, run.d, {}, run.opt, run.out, run.log, run.notes, run.skipped, general=False)



def _is_lakretz_cells(df: pd.DataFrame, factors: dict) -> bool:
    """No task and no declared factors: the trial table of the Lakretz cells (structure, condition, violation)."""
    return not is_general(df, factors)



LAKRETZ_CELLS = ReportPlan("lakretz", _is_lakretz_cells, False, lakretz_frame_step,
                           (data_step, error_rates_step, first_encounter_step, exposures_step, training_step,
                            model_measures_step, requested_step))
