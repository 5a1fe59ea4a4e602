"""What a report holds, as data: which frame its sections read and which sections, in order.

One pipeline runs every design (analysis/pipeline.py `run_loaded`): it picks a `ReportPlan` from what the
trial table holds and runs the plan's steps on one `Run`. Two plans exist:

- `DESIGN`: a general design (a table with a task or declared factors): data and design, rates by the
  factors, each task's analyses, the analyst's formula, and the learning analyses (first encounter,
  learning curves, exposure models) wherever the data hold training or feedback;
- `LAKRETZ_CELLS`: the Lakretz cells (structure x condition x violation position, no task column): the
  same learning analyses (analysis/learning/general.py, configured `learning.LAKRETZ`) laid out with the paper's
  rules as seeds/000 prints them (error rates by condition x dependency, d', Table C1, Figures C1-C4,
  Tables C2/C3), the model-side measures, and the design sections that --by / --formula ask for.

A plan is chosen by the table's columns, never by a design's name; adding a plan is adding data here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from analysis.adaptation import adaptation_step  # issue 51: the adaptation effect in reading
from analysis.options import Options
from analysis.report.results_folder import Results
from studies.lakretz2021.report import (data_section, error_rates_section, exposures_section,
    first_encounter_section, lakretz_rows, model_measures_section)
from analysis.learning.general import has_learning_data
from analysis.learning.report import learning_sections
from analysis.load.prepare import order_known_rows
from analysis.load.rows import ORDER_COLUMNS
from analysis.measures import scoring
from analysis.report.sections import detection_section, exposure_models_section, training_section
from analysis.twins.answers import is_replay
from analysis.measures.demand_gap import GapError


@dataclass
class Run:
    """One analysis in progress: the inputs, the frame the sections read, and what results.json adds."""

    info: object
    opt: Options
    out: Path
    log: Callable[[str], None]
    res: Results
    d: pd.DataFrame | None = None
    rows: object = None  # the plan's own prepared rows (LakretzRows for the Lakretz cells)
    cell: list[str] = field(default_factory=list)
    copies: pd.DataFrame | None = None
    notes: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    head: dict = field(default_factory=dict)  # results.json keys after `design`
    extra: dict = field(default_factory=dict)  # results.json keys after `outliers`
    state: dict = field(default_factory=dict)  # what one step hands the next


Step = Callable[[Run], None]


@dataclass(frozen=True)
class ReportPlan:
    """`name` is results.json's `design`; `applies` says whether a loaded table (and its declared factors) is
    this plan's; `frame` builds the rows (raising on a request the plan refuses); `steps` add the sections in
    order; `general` says whether every order column is a column of --by."""

    name: str
    applies: Callable[[pd.DataFrame, dict], bool]
    general: bool
    frame: Callable[[pd.DataFrame, Run], None]
    steps: tuple[Step, ...]


# ------------------------------------------------------------------------------ a general design
def design_frame_step(df: pd.DataFrame, run: Run) -> None:
    from analysis.load.frames import design_frame, with_order  # late: scipy.stats stays out of start-up
    d, copies, copy_notes = design_frame(df, dict(run.info.factors), run.opt.model_copies)
    if copies.empty and df.attrs.get("model_copies"):
        copies = pd.DataFrame(df.attrs["model_copies"])  # a frame of api.load_sessions: merged there (records)
    # a cell: the factors of --by (order columns such as block_kind are no cell), else the design's
    run.cell = [b for b in run.opt.by if b not in ORDER_COLUMNS] or [f for f in run.info.factors if f in d.columns]
    run.d = with_order(d, run.cell)  # exposures per cell of --by (else the design's factors)
    run.copies = copies
    run.notes = list(run.info.notes) + copy_notes
    run.head = {"factors": dict(run.info.factors)}
    run.log(f"loaded {len(run.d)} trials of {run.d['subject_key'].nunique()} subject(s) from {len(run.info.files)} "
            f"file(s); design factors: {', '.join(run.info.factors) or 'none'}")


def design_step(run: Run) -> None:
    from analysis.report.design import design_sections  # late: scipy.stats stays out of start-up

    design_sections(run.res, run.d, dict(run.info.factors), run.opt, run.out, run.log, run.notes, run.skipped,
                    general=True, copies=run.copies)


def learning_step(run: Run) -> None:
    """A training block or feedback: learning, whatever the design is called."""
    if has_learning_data(run.d):
        learning_sections(run.res, run.d, run.cell, run.opt, run.out, run.log, run.skipped)


def exclusions_step(run: Run) -> None:
    excl = pd.DataFrame(run.info.exclusions, columns=["what", "rows", "reason"])
    if len(excl):
        run.res.section("exclusions", "Exclusions", "What was left out before the analyses.",
                        [run.res.table("exclusions", excl, "Exclusions")])


def _is_general(df: pd.DataFrame, factors: dict) -> bool:
    from analysis.load.frames import is_general_design  # late: scipy.stats stays out of start-up

    return is_general_design(df, factors)


DESIGN = ReportPlan("general", _is_general, True, design_frame_step, (design_step, learning_step, adaptation_step,
                                                                        exclusions_step))


# ------------------------------------------------------------------------------ the Lakretz cells
def lakretz_frame_step(df: pd.DataFrame, run: Run) -> None:
    """The paper's rows (studies/lakretz2021/report.py `lakretz_rows`); a replay (issue 40) is neither a person
    nor a model subject, and --gap pairs protocols of a general design."""
    if run.opt.gap_pairs:  # never silently ignored
        raise GapError("--gap applies to a general design's protocols; a Lakretz design's demand gap pairs each "
                       "metalinguistic protocol with its direct partner (analysis/measures/model_measures.py)")
    if is_replay(df).any():
        run.info.notes.append(f"{int(is_replay(df).sum())} replay row(s) left out: the Twins sections are a general "
                              "design's (docs/analysis.md)")
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
    from analysis.report.design import design_sections  # late: scipy.stats stays out of start-up

    if run.opt.by or run.opt.formula:
        design_sections(run.res, run.d, {}, run.opt, run.out, run.log, run.notes, run.skipped, general=False)


def _is_lakretz_cells(df: pd.DataFrame, factors: dict) -> bool:
    """No task and no declared factors: the trial table of the Lakretz cells (structure, condition, violation)."""
    return not _is_general(df, factors)


LAKRETZ_CELLS = ReportPlan("lakretz", _is_lakretz_cells, False, lakretz_frame_step,
                           (data_step, error_rates_step, first_encounter_step, exposures_step, training_step,
                            model_measures_step, requested_step))


PLANS: list[ReportPlan] = [DESIGN, LAKRETZ_CELLS]


def plan_for(df: pd.DataFrame, factors: dict) -> ReportPlan:
    """The first plan of `PLANS` that applies (a table with a task or declared factors is a general design's;
    without, the Lakretz cells')."""
    return next(p for p in PLANS if p.applies(df, factors))
