"""What a report holds, as data: which frame its sections read and which sections, in order.

One pipeline runs every design (analysis/pipeline.py `run_loaded`): it picks a `ReportPlan` from what the
trial table holds and runs the plan's steps on one `Run`. The core's plan is

- `DESIGN`: a general design (a table with a task or declared factors): data and design, rates by the
  factors, each task's analyses, the analyst's formula, and the learning analyses (first encounter,
  learning curves, exposure models) wherever the data hold training or feedback;

and after it come the plans the registered studies declare (`REPORT_PLANS` in a study's `__init__`: the
module and object of the plan, its learning cell and its default focus cell), e.g. the Lakretz cells'
(studies/lakretz2021/plan.py: the paper's sections on a table with no task and no declared factors).

A plan is chosen by the table's columns, never by a design's name; adding a plan is adding data here or in
a study.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

import pandas as pd

from analysis.adaptation import adaptation_step  # the adaptation effect in reading
from analysis.input_errors import InputError
from analysis.learning.general import has_learning_data
from analysis.learning.report import learning_sections
from analysis.load.frames import design_frame, is_general_design, with_order
from analysis.load.rows import ORDER_COLUMNS
from analysis.options import Options
from analysis.report.design import design_sections
from analysis.report.results_folder import Results
from experiments.studies import declared, study_part


@dataclass
class Run:
    """One analysis in progress: the inputs, the frame the sections read, and what results.json adds."""

    info: object
    opt: Options
    out: Path
    log: Callable[[str], None]
    res: Results
    d: pd.DataFrame | None = None
    rows: object = None  # the plan's own prepared rows (e.g. a study's: LakretzRows for the Lakretz cells)
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
    order; `general` says whether every order column is a column of --by. A study's plan, as registered,
    carries its study's name and the default focus cell it declares (applied when no --focus is given)."""

    name: str
    applies: Callable[[pd.DataFrame, dict], bool]
    general: bool
    frame: Callable[[pd.DataFrame, Run], None]
    steps: tuple[Step, ...]
    study: str = ""
    default_focus: str = ""


# ------------------------------------------------------------------------------ a general design
def design_frame_step(df: pd.DataFrame, run: Run) -> None:
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


def is_general(df: pd.DataFrame, factors: dict) -> bool:
    return is_general_design(df, factors)


DESIGN = ReportPlan("general", is_general, True, design_frame_step, (design_step, learning_step, adaptation_step,
                                                                        exclusions_step))


# ------------------------------------------------------------------------------ the studies' plans
PLANS: list[ReportPlan] = [DESIGN]  # the core's plans, tried before the studies'


def study_plans() -> tuple[ReportPlan, ...]:
    """The plans the registered studies declare (REPORT_PLANS), in listing order, each with its study and its
    default focus cell; a study's plan module is imported here, when a table is first matched."""
    out = []
    for study, plans in declared("REPORT_PLANS").items():
        for p in plans:
            plan = getattr(study_part(study, p["module"]), p["plan"])
            out.append(replace(plan, study=study, default_focus=p.get("default_focus") or ""))
    return tuple(out)


def plan_for(df: pd.DataFrame, factors: dict) -> ReportPlan:
    """The first plan that applies: the core's `PLANS` (a table with a task or declared factors is a general
    design's), then the studies' (e.g. without, the Lakretz cells')."""
    plan = next((p for p in [*PLANS, *study_plans()] if p.applies(df, factors)), None)
    if plan is None:
        raise InputError("no report plan reads this table: it has no task column and no declared design factors, "
                         "and no registered study's plan (REPORT_PLANS) applies to it")
    return plan


def with_focus(opt: Options, plan: ReportPlan) -> tuple[Options, str]:
    """The options the run uses, with the focus cell actually used, and where it came from: --focus when
    given, else the default of the study whose design the data are (its REPORT_PLANS), else none (every cell)."""
    if opt.focus:
        return opt, "given (--focus)"
    if plan.default_focus:
        return (replace(opt, focus=plan.default_focus),
                f"the default of study {plan.study}, declared in its REPORT_PLANS; no --focus given")
    return opt, "none given: every cell"
