"""The options of one analysis run (`twinlab analyze` flags, `api.report` keywords).

Its own module so that the pipeline and the section writers share it without importing each other."""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from analysis.learning.general import FocusError, check_focus_path, parse_focus
from analysis.load.formats import frame_format_names
from analysis.measures.scoring import RULES


@dataclass
class Options:
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
    by: list[str] = field(default_factory=list)  # --by: the factors of the rates tables (default: the design's)
    formula: str = ""  # --formula: the analyst's lme4 formula
    family: str = "auto"  # --family: auto | binomial | gaussian | ordinal
    gap_pairs: list[tuple[str, str]] = field(default_factory=list)  # --gap LOW=>HIGH (default: every pair)
    model_copies: str = "merge"  # --model-copies: merge deterministic model copies into one subject, or keep "subjects"
    rt_trim: tuple[float, float] = (200.0, 3000.0)  # --rt-trim LOW,HIGH: response times (ms) kept, inclusive
    rt_sd: float = 2.5  # --rt-sd: drop RTs beyond this many SDs of the subject's mean (0: off)
    region: str = ""  # --region NAME: --formula fitted on that region's rows (kinds/self_paced_reading/analysis.py)
    word: int = 0  # --word N: --formula fitted on the N-th word's rows
    word_rt_range: tuple[float, float] = (100.0, 5000.0)  # --word-rt-range: self-paced reading's `rt_range` rule
    exclude_wrong_answers: bool = False  # --exclude-wrong-answers: self-paced reading's `wrong_answer` rule
    blocks: str = "test"  # --blocks: test | training,test | all -- the rows of the rates, --formula and learning fits
    # --allow-spec-versions: pool sessions of different spec versions (coded by the current)
    allow_spec_versions: bool = False


from analysis.input_errors import InputError  # noqa: E402 (one class for the API, the options and power)

COPIES = ("merge", "subjects")
FAMILIES = ("auto", "binomial", "gaussian", "ordinal")
FORMATS = ("auto", "twinlab", *frame_format_names())  # a study's released tables too (FRAME_FORMATS)
MAX_BOOT = 100_000


def whole(name: str, v, low: int, high: int | None = None) -> int:
    """A whole-number option: an int (not a bool, not 200.0, not '3'), from `low` (to `high`)."""
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise InputError(f"{name} must be a whole number (an int), not {v!r}")
    if v < low or (high is not None and v > high):
        rng = f"from {low:,} to {high:,}" if high is not None else f"{low} or more"
        raise InputError(f"{name} must be {rng}, not {v}")
    return int(v)


def ms_range(name: str, v, example: str) -> tuple[float, float]:
    """LOW, HIGH in ms: two finite numbers with 0 <= LOW < HIGH."""
    ok = (isinstance(v, (tuple, list)) and len(v) == 2
          and all(isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x) for x in v))
    if not ok or not 0 <= v[0] < v[1]:
        raise InputError(f"{name} {v!r}: give (LOW, HIGH) in ms, finite, with 0 <= LOW < HIGH (e.g. {example})")
    return float(v[0]), float(v[1])


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


FLAGS = ("mixed", "keep_outliers", "show_progress", "exclude_wrong_answers", "allow_spec_versions")
FLAG_NAMES = {"mixed": "mixed (--no-mixed)"}


def model_copies(v) -> str:
    if v not in COPIES:
        raise InputError(f"model_copies (--model-copies) must be merge or subjects, not {v!r}")
    return v


def target(region, word) -> tuple[str, int]:
    """--region / --word as given to a fit: a region's name or number (text), or a word position >= 1."""
    region = "" if region is None else region
    word = 0 if word is None else word
    if not isinstance(region, (str, int)) or isinstance(region, bool):
        raise InputError(f"region (--region) must be a region's name or number, not {region!r}")
    word = whole("word (--word)", word, 0)
    if region not in ("", 0) and word:
        raise InputError("--region and --word (region, word): give one of them")
    return str(region) if region != 0 else "", word


def check_options(opt: Options) -> Options:
    """Every option of an analysis, checked in the one function `api.report`, `twinlab analyze` and the
    pipeline itself (run_analysis, run_loaded) apply before any work: InputError naming the option."""
    whole("seed (--seed)", opt.seed, 0, 2**32 - 1)
    for f in FLAGS:
        setattr(opt, f, flag(FLAG_NAMES.get(f, f"{f} (--{f.replace('_', '-')})"), getattr(opt, f)))
    whole("n_boot (--n-boot)", opt.n_boot, 1, MAX_BOOT)
    if opt.family not in FAMILIES:
        raise InputError(f"family (--family) must be {', '.join(FAMILIES[:-1])} or {FAMILIES[-1]}, not {opt.family!r}")
    if opt.fmt not in FORMATS:
        raise InputError(f"fmt (--format) must be {', '.join(FORMATS[:-1])} or {FORMATS[-1]}, not {opt.fmt!r}")
    model_copies(opt.model_copies)
    opt.rt_trim = ms_range("rt_trim (--rt-trim)", opt.rt_trim, "(200, 3000)")
    opt.word_rt_range = ms_range("word_rt_range (--word-rt-range)", opt.word_rt_range, "(100, 5000)")
    sd = opt.rt_sd
    if isinstance(sd, bool) or not isinstance(sd, numbers.Real) or not math.isfinite(sd) or sd < 0:
        raise InputError(f"rt_sd (--rt-sd) must be a finite number >= 0 (0: off), not {sd!r}")
    opt.region, opt.word = target(opt.region, opt.word)
    if (opt.region or opt.word) and not opt.formula:
        raise InputError("region/word (--region/--word) choose the rows of the formula: give a formula too")
    if not isinstance(opt.formula, str):
        raise InputError(f"formula (--formula) must be a text, not {opt.formula!r}")
    if not isinstance(opt.by, list) or not all(isinstance(b, str) for b in opt.by):
        raise InputError(f"by (--by) must be column names, not {opt.by!r}")
    distinct("by (--by)", opt.by)
    if opt.rejected_rule not in RULES:
        raise InputError(f"rejected_rule (--rejected-rule) must be {' or '.join(RULES)}, not {opt.rejected_rule!r}")
    if not isinstance(opt.focus, str):
        raise InputError(f"focus (--focus) must be a text, not {opt.focus!r}")
    if not opt.focus:  # none given: every cell of a general design, or the default of a study's plan
        return opt
    if "=" in opt.focus:  # a general design's focus cell (FACTOR=LEVEL,...): its form (each factor once) here,
        try:  # its factors and levels against the data later
            parse_focus(opt.focus)
        except FocusError as exc:
            raise InputError(str(exc)) from None
        return opt
    try:
        check_focus_path(opt.focus)
    except (ValueError, TypeError, AttributeError) as exc:
        raise InputError(f"focus (--focus): {exc}") from None
    return opt
