"""The options of one analysis run (`twinlab analyze` flags, `api.report` keywords) and the one function that
checks them, `check_options`.

Its own module so that the pipeline and the section writers share it without importing each other."""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from analysis.learning.general import FocusError, check_focus_path, parse_focus
from analysis.load.formats import frame_format_names
from analysis.load.rows import BlocksError, parse_blocks
from analysis.measures.demand_gap import GapError, parse_pair
from analysis.measures.scoring import RULES
from analysis.stats.formula import FormulaError, parse
from experiments.studies import declared


@dataclass
class Options:
    """The options as the analysis uses them once `check_options` has checked them. The command line's text forms
    (by 'A,B'; rt_trim and word_rt_range 'LOW,HIGH'; gap_pairs ['LOW=>HIGH']; blocks 'training, test') may be
    given as typed: check_options reads them into these types, so the same run gives the same values."""
    seed: int = 0
    n_boot: int = 2000
    mixed: bool = True
    focus: str = ""  # --focus: the exposure models' cell; "" = none given (a study's plan may apply its default)
    fmt: str = "auto"
    training_blocks: list[str] = field(default_factory=list)
    keep_outliers: bool = False
    # analysis/measures/scoring.py: how REJECTED trials count in first encounters and exposures
    rejected_rule: str = "paper"
    show_progress: bool = True
    by: list[str] | str = field(default_factory=list)  # --by: the factors of the rates tables (default: the design's)
    formula: str = ""  # --formula: the analyst's lme4 formula
    family: str = "auto"  # --family: auto | binomial | gaussian | ordinal
    gap_pairs: list[tuple[str, str] | str] = field(default_factory=list)  # --gap LOW=>HIGH (default: every pair)
    model_copies: str = "merge"  # --model-copies: merge deterministic model copies into one subject, or keep "subjects"
    rt_trim: tuple[float, float] | str = (200.0, 3000.0)  # --rt-trim LOW,HIGH: response times (ms) kept, inclusive
    rt_sd: float = 2.5  # --rt-sd: drop RTs beyond this many SDs of the subject's mean (0: off)
    region: str = ""  # --region NAME: --formula fitted on that region's rows (kinds/self_paced_reading/analysis.py)
    word: int = 0  # --word N: --formula fitted on the N-th word's rows
    word_rt_range: tuple[float, float] | str = (100.0, 5000.0)  # --word-rt-range: self-paced reading's `rt_range` rule
    exclude_wrong_answers: bool = False  # --exclude-wrong-answers: self-paced reading's `wrong_answer` rule
    blocks: str = "test"  # --blocks: test | training,test | all -- the rows of the rates, --formula and learning fits
    # --allow-spec-versions: pool sessions of different spec versions (coded by the current)
    allow_spec_versions: bool = False


from analysis.input_errors import InputError  # noqa: E402 (one class for the API, the options and power)

COPIES = ("merge", "subjects")
FAMILIES = ("auto", "binomial", "gaussian", "ordinal")
FORMATS = ("auto", "twinlab", *frame_format_names())  # a study's released tables too (FRAME_FORMATS)
MAX_BOOT = 100_000
YES_NO = ("mixed", "keep_outliers", "show_progress", "exclude_wrong_answers", "allow_spec_versions")
# the flags not spelt --<keyword with dashes>
FLAGS = {"mixed": "--no-mixed", "fmt": "--format", "training_blocks": "--training-block", "gap_pairs": "--gap",
         "region/word": "--region/--word"}
REGION_EXAMPLE = "\"region_rt_ms ~ ambiguity + length + (1 | subject) + (1 | item)\""


@dataclass(frozen=True)
class Names:
    """How a message names an option. Why two ways: `twinlab analyze` names the flag its user typed
    (`--rt-trim`), the API the keyword with its flag (`rt_trim (--rt-trim)`); a command line's numbers are
    written as they are typed (100000, not 100,000)."""
    command_line: bool = False

    def __call__(self, key: str, flag: str | None = None) -> str:
        flag = flag or FLAGS.get(key) or "--" + key.replace("_", "-")
        return flag if self.command_line else f"{key} ({flag})"

    def whole(self, key: str, v, low: int, high: int | None = None) -> int:
        return whole(self(key), v, low, high, sep="" if self.command_line else ",")


API = Names()
COMMAND_LINE = Names(command_line=True)


def whole(name: str, v, low: int, high: int | None = None, sep: str = ",") -> int:
    """A whole-number option: an int (not a bool, not 200.0, not '3'), from `low` (to `high`); `sep` groups the
    thousands of the bounds in the message."""
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise InputError(f"{name} must be a whole number (an int), not {v!r}")
    if v < low or (high is not None and v > high):
        rng = f"from {low:{sep}} to {high:{sep}}" if high is not None else f"{low} or more"
        raise InputError(f"{name} must be {rng}, not {v}")
    return int(v)


def ms_range(name: str, v, example: tuple[int, int]) -> tuple[float, float]:
    """LOW, HIGH in ms: two finite numbers with 0 <= LOW < HIGH, given as a pair or as the command line's text
    'LOW,HIGH' (the message shows the form given)."""
    pair = _text_pair(v) if isinstance(v, str) else v
    ok = (isinstance(pair, (tuple, list)) and len(pair) == 2
          and all(isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x) for x in pair))
    if not ok or not 0 <= pair[0] < pair[1]:
        form, shown = ("LOW,HIGH", "{},{}") if isinstance(v, str) else ("(LOW, HIGH)", "({}, {})")
        raise InputError(f"{name} {v!r}: give {form} in ms, finite, with 0 <= LOW < HIGH "
                         f"(e.g. {shown.format(*example)})")
    return float(pair[0]), float(pair[1])


def _text_pair(text: str) -> tuple[float, float] | None:
    """'LOW,HIGH' as two numbers (None when it is not two numbers)."""
    parts = text.split(",")
    try:
        return (float(parts[0]), float(parts[1])) if len(parts) == 2 else None
    except ValueError:
        return None


def flag(name: str, v) -> bool:
    """A yes/no option: True or False only. 'no', 0, 1 or None are refused: `bool('no')` is True, so a text
    read as a flag silently turns the option on (early_stop='no' ran with early stopping)."""
    if not isinstance(v, (bool, np.bool_)):
        raise InputError(f"{name} must be True or False, not {v!r}")
    return bool(v)


def distinct(name: str, values: list[str]) -> list[str]:
    """Names given at most once each: a factor given twice (`--by a,a`) is refused, both named, never the
    last one silently taken."""
    seen: set[str] = set()
    for v in values:
        if v in seen:
            raise InputError(f"{name} names {v!r} twice ({', '.join(values)}); give each column once")
        seen.add(v)
    return values


def model_copies(v, name: str = API("model_copies")) -> str:
    if v not in COPIES:
        raise InputError(f"{name} must be merge or subjects, not {v!r}")
    return v


def target(region, word, names: Names = API) -> tuple[str, int]:
    """--region / --word as given to a fit: a region's name or number (text), or a word position >= 1."""
    region = "" if region is None else region
    word = 0 if word is None else word
    if not isinstance(region, (str, int)) or isinstance(region, bool):
        raise InputError(f"{names('region')} must be a region's name or number, not {region!r}")
    word = names.whole("word", word, 0)
    if region not in ("", 0) and word:
        raise InputError(f"{names('region')} and {names('word')}: give one of them")
    return str(region) if region != 0 else "", word


def check_options(opt: Options, names: Names = API) -> Options:
    """Every option of an analysis, checked before any work and once per run (api.report and `twinlab analyze`
    through api.report_options, or the pipeline's run_analysis/run_loaded; the checked options are passed
    down): InputError naming the option (FormulaError for a formula outside twinlab's grammar). The command
    line's text forms are read into the typed values here. `names`: the API's keywords or the command line's
    flags, in the messages and in one rule: `--no-mixed` promises a run without R, so it refuses a --formula
    (the API's mixed=False leaves out the default mixed models only)."""
    names.whole("seed", opt.seed, 0, 2**32 - 1)
    for f in YES_NO:
        setattr(opt, f, flag(names(f), getattr(opt, f)))
    names.whole("n_boot", opt.n_boot, 1, MAX_BOOT)
    _check_choices(opt, names)
    _check_rows(opt, names)
    _check_fit(opt, names)
    _check_focus(opt, names)
    return opt


def _check_choices(opt: Options, names: Names) -> None:
    """The options that take one of a few words: --family, --format, --model-copies, --rejected-rule and the
    studies' own text options with choices (ANALYSIS_OPTIONS in a study's __init__)."""
    for key, value, choices in (("family", opt.family, FAMILIES), ("fmt", opt.fmt, FORMATS)):
        if value not in choices:
            raise InputError(f"{names(key)} must be {', '.join(choices[:-1])} or {choices[-1]}, not {value!r}")
    model_copies(opt.model_copies, names("model_copies"))
    for declared_opt in [d for opts in declared("ANALYSIS_OPTIONS").values() for d in opts]:
        choices, value = declared_opt.get("choices"), getattr(opt, declared_opt["api"], declared_opt["default"])
        if declared_opt["type"] == "text" and choices and value not in choices:
            raise InputError(f"{names(declared_opt['api'], declared_opt['flag'])} must be {' or '.join(choices)}, "
                             f"not {value!r}")
    if opt.rejected_rule not in RULES:
        raise InputError(f"{names('rejected_rule')} must be {' or '.join(RULES)}, not {opt.rejected_rule!r}")


def _check_rows(opt: Options, names: Names) -> None:
    """The rows analysed: --blocks, --rt-trim, --word-rt-range, --rt-sd."""
    try:
        opt.blocks = parse_blocks(opt.blocks)
    except BlocksError as exc:
        raise InputError(str(exc).replace("--blocks", names("blocks"))) from None
    opt.rt_trim = ms_range(names("rt_trim"), opt.rt_trim, (200, 3000))
    opt.word_rt_range = ms_range(names("word_rt_range"), opt.word_rt_range, (100, 5000))
    sd = opt.rt_sd
    if isinstance(sd, bool) or not isinstance(sd, numbers.Real) or not math.isfinite(sd) or sd < 0:
        raise InputError(f"{names('rt_sd')} must be a finite number >= 0 (0: off), not {sd!r}")


def _check_fit(opt: Options, names: Names) -> None:
    """What the fits and tables name: --region/--word, --formula (its grammar, before any data), --by, --gap."""
    opt.region, opt.word = target(opt.region, opt.word, names)
    if (opt.region or opt.word) and not opt.formula:
        raise InputError(f"{names('region/word')} choose the rows of the formula: give a {names('formula')} too, "
                         f"e.g. {REGION_EXAMPLE}")
    if not isinstance(opt.formula, str):
        raise InputError(f"{names('formula')} must be a text, not {opt.formula!r}")
    if opt.formula and names.command_line and not opt.mixed:
        raise InputError("--formula is fitted by R (lme4) and --no-mixed means no R: drop one of them")
    try:
        if opt.formula:
            parse(opt.formula)
    except FormulaError as exc:
        raise FormulaError(f"{names('formula')}: {exc}") from None
    opt.by = distinct(names("by"), _by_columns(opt.by, names))
    opt.gap_pairs = _gap_pairs(opt.gap_pairs, names)


def _by_columns(by, names: Names) -> list[str]:
    """--by's columns: a list of names, or the command line's text A,B (empty names left out; text naming no
    column refused)."""
    if isinstance(by, str):
        columns = [b.strip() for b in by.split(",") if b.strip()]
        if by and not columns:
            raise InputError(f"{names('by')} names no column (e.g. --by head_number,attractor_number)")
        by = columns
    if not isinstance(by, list) or not all(isinstance(b, str) for b in by):
        raise InputError(f"{names('by')} must be column names, not {by!r}")
    return by


def _gap_pairs(pairs, names: Names):
    """--gap's pairs: (LOW, HIGH) as given, or the command line's text LOW=>HIGH read into one (its form checked
    here; that the protocols ran, once the data are loaded)."""
    if not isinstance(pairs, (list, tuple)):
        return pairs  # refused, naming it, with the data (analysis/option_checks.py: check_pairs)
    try:
        return [parse_pair(p, names("gap_pairs")) if isinstance(p, str) else p for p in pairs]
    except GapError as exc:
        raise InputError(str(exc)) from None


def _check_focus(opt: Options, names: Names) -> None:
    """--focus: its form (FACTOR=LEVEL,..., each factor once; or a study's own cell form) here; its factors and
    levels against the data later. None given: every cell of a general design, or a study plan's default."""
    if not isinstance(opt.focus, str):
        raise InputError(f"{names('focus')} must be a text, not {opt.focus!r}")
    if not opt.focus:
        return
    if "=" in opt.focus:
        try:
            parse_focus(opt.focus)
        except FocusError as exc:
            raise InputError(str(exc)) from None
        return
    try:
        check_focus_path(opt.focus)
    except (ValueError, TypeError, AttributeError) as exc:
        raise InputError(f"{names('focus')}: {exc}") from None
