"""The options of an analysis checked against the loaded table, before any work (nothing written yet).

Why its own module: `api.report`, `twinlab analyze` and the pipeline all call `check_by_and_formula`
once the trials are loaded (the checks without data are analysis/options.py's `check_options`). An
option is never taken silently: a `--focus` naming a column that is no factor, a `--blocks` choosing
rows the sessions do not have, a `--word-rt-range` that leaves out every word are refused here, naming
what the data hold, instead of giving an empty or partial report.
"""
from __future__ import annotations

import difflib
from typing import Iterable

import pandas as pd

from analysis.learning.general import FocusError, parse_focus
from analysis.load.formats import frame_format_names
from analysis.load.prepare import is_training_block
from analysis.load.rows import ORDER_COLUMNS, BlocksError, parse_blocks
from analysis.measures.demand_gap import check_pairs
from analysis.measures.reading import ReadingRules, check_target, kept_word_times
from analysis.options import InputError, Options
from analysis.stats import formula as fm
from analysis.stats.formula_checks import check_fit_request


def check_by_and_formula(df: pd.DataFrame, opt: Options, general: bool = True,
                         factors: dict[str, list[str]] | Iterable[str] = ()) -> None:
    """--blocks, --focus, --by, --region/--word, --formula, --family, --gap and the reading rules name what
    the table has: checked before any work (FormulaError, FocusError, BlocksError or InputError naming the
    option). The order columns count as columns (a general design gets all of them,
    analysis/load/rows.py; a Lakretz table those analysis/load/prepare.py defines)."""
    declared = dict(factors) if isinstance(factors, dict) else {f: [] for f in factors}
    opt.blocks = parse_blocks(opt.blocks)  # BlocksError names the choices
    check_blocks_have_rows(df, opt.blocks)
    check_focus(df, opt, general, declared)
    cols = set(df.columns) | {"group", "subject_key", "error", "accepted", "signal", "said_reject", "training",
                              "item", "block", "trials_before", "exposures", "first_encounter"}
    if general:
        cols |= set(ORDER_COLUMNS)
    missing = [b for b in opt.by if b not in cols]
    if missing:
        guess = difflib.get_close_matches(missing[0], sorted(cols), n=1)
        raise fm.FormulaError("--by: unknown column "
                              f"{missing[0]!r}" + (f" (did you mean {guess[0]!r}?)" if guess else "")
                              + "; the design's factors and columns are named in `twinlab analyze --help`")
    if opt.region or opt.word:  # the reading rows' columns; an unknown region or word is refused here
        cols |= check_target(df, opt.region or None, opt.word or None)
    check_reading_rules(df, opt)
    if opt.formula:
        f = fm.parse(opt.formula)
        fm.check_columns(f, sorted(cols))
        check_fit_request(f, df, opt.family, list(declared))
    if opt.family not in ("auto", "binomial", "gaussian", "ordinal"):
        raise fm.FormulaError(f"--family must be auto, binomial, gaussian or ordinal, not {opt.family!r}")
    opt.gap_pairs = check_pairs(df, opt.gap_pairs)


def check_focus(df: pd.DataFrame, opt: Options, general: bool, declared: dict[str, list[str]]) -> None:
    """--focus FACTOR=LEVEL,...: each a declared factor of the design (of the cell, when --by chooses it) and
    one of its levels; the Lakretz cells take their own form (STRUCTURE:CONDITION:inner|outer)."""
    if "=" not in (opt.focus or ""):
        return
    if not general:
        raise FocusError(f"--focus {opt.focus!r}: FACTOR=LEVEL names a cell of a general design; these are the "
                         "Lakretz cells: write STRUCTURE:CONDITION:inner|outer (e.g. long_nested:PSP:inner)")
    cell = [b for b in opt.by if b not in ORDER_COLUMNS] or list(declared)  # the cell the learning sections use
    outside = [k for k in parse_focus(opt.focus) if k in declared and k not in cell]
    if outside:
        raise FocusError(f"--focus: {outside[0]!r} is a factor of the design but not of the cell --by chooses "
                         f"({', '.join(cell)}): add it to --by or leave it out of --focus")
    focus = parse_focus(opt.focus, df, [f for f in cell if f in declared], {f: lv for f, lv in declared.items() if lv})
    opt.focus = ",".join(f"{k}={v}" for k, v in focus.items())  # the declared levels' form from here on


def check_blocks_have_rows(df: pd.DataFrame, blocks: str) -> None:
    """--blocks training on sessions without a training row would give an empty report: refused, naming the
    blocks the sessions have (the rule of a training row: analysis/load/rows.py)."""
    if "training" not in blocks.split(",") or df.empty or "block" not in df.columns:
        return
    train = df["training"].astype(bool) if "training" in df.columns else is_training_block(df["block"])
    if "role" in df.columns:
        train = train | df["role"].fillna("").astype(str).eq("practice")
    if train.any():
        return
    names = sorted(set(df["block"].dropna().astype(str)))
    what = "only the test rows" if blocks == "training,test" else "no rows"
    raise BlocksError(f"--blocks {blocks}: the sessions have no training rows (a block named like training or "
                      f"practice, or role practice); their blocks are {', '.join(names) or 'unnamed'}, so it would "
                      f"choose {what}: use --blocks test (the default) or all")


def check_reading_rules(df: pd.DataFrame, opt: Options) -> None:
    """--word-rt-range (and --exclude-wrong-answers) leave at least one person's word reading time: a range
    that trims every word is refused, naming the times the data hold (before, a traceback)."""
    rules = ReadingRules(*opt.word_rt_range, exclude_wrong_answers=opt.exclude_wrong_answers)
    n, kept, low, high = kept_word_times(df, rules)
    if n and not kept:
        raise InputError(f"--word-rt-range {rules.rt_min:g},{rules.rt_max:g} leaves out every one of the {n} word "
                         f"reading times (they run from {low:g} to {high:g} ms): no reading time would be left to "
                         "analyse; widen the range (the default is 100,5000)")


def check_training_blocks(opt: Options, formats: dict[str, str]) -> None:
    """--training-block names blocks of a Lakretz et al. (2021) results CSV: on twinlab sessions alone (whose
    training rows are read from their block names) it would be ignored without a word: refused."""
    if opt.training_blocks and not set(frame_format_names()) & set(formats.values()):
        raise InputError(f"--training-block {', '.join(map(str, opt.training_blocks))}: applies to Lakretz et al. "
                         "(2021) results CSVs, and none was given; twinlab sessions mark their training rows by "
                         "block name (training/practice) or role practice: leave the option out")
