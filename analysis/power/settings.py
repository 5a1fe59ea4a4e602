"""Power by simulation from a pilot: the settings and their checks (this module); `twinlab power` is `api.power`,
which checks, loads, then calls analysis/power/main.run_power.

The steps, each in its own module: every setting checked before any data or R (`check_settings`, this
module; bad input is a PowerInputError naming the option); the pilot loaded as `analyze` loads it and one
group's test rows taken (`pilot_rows`); the formula fitted to them by the analysis layer's fit_formula (family
rules, sum coding, the random-effects fallback, diagnostics); the design's lists read from the pilot
(analysis/power/design.py); per study size, batches of simulations refitted in R in parallel
(analysis/power/sim.py) until the sims are done or the Monte Carlo interval is clearly above or below the
target (analysis/power/stats.py); an analytic first pass beside it where the design allows
(analysis/power/analytic.py); the table, power.json and the figure written (analysis/power/report.py).

A pilot of model subjects is a hypothesis, not an estimate, and says so everywhere; a pilot whose effect is
simulated as estimated gets simr's observed-power warning.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.input_errors import InputError
from analysis.load.frames import model_frame
from analysis.options import flag
from analysis.power.terms import TermError, check_in_formula
from analysis.stats import formula as fm
from experiments.options import OptionError
from experiments.outputs import check_output_folder

# The bounds of one run (docs/analysis/power.md "Bounds"), checked before the pilot is read or R starts; the rows of one
# simulated study are checked once the pilot's lists are known, before the pilot is fitted
MAX_SIMS = 10_000
MAX_SUBJECTS = 5_000
MAX_ITEMS = 5_000
MAX_SIZES = 50  # subjects x items combinations
MAX_CORES = 64
MAX_ROWS = 500_000  # trials of one simulated study (subjects x trials per subject)
TESTS = ("wald", "lrt")
MODEL_LABEL = "effect sizes from models: a hypothesis, not an estimate"
OBSERVED_POWER = ("observed power: the effect simulated is the pilot's own estimate (no --effect). Power computed "
                  "from an observed effect restates the pilot's p-value and is biased by its noise (as simr warns); "
                  "state the smallest effect of interest with --effect")


class PowerInputError(InputError):
    """An option of `twinlab power` / api.power that cannot work; the message names it (exit 2)."""


@dataclass
class PowerSettings:
    """Every setting of one power run (all written to power.json)."""

    data: list[str]
    formula: str
    term: str
    subjects: list[int]
    items: list[int] | None = None  # None: the pilot's items
    effect: float | None = None
    sims: int = 500
    alpha: float = 0.05
    seed: int = 0
    group: str | None = None
    test: str = "wald"
    target: float = 0.8
    early_stop: bool = True
    min_sims: int = 100
    batch: int = 50
    cores: int = 2
    interval: str = "wilson"
    sd: dict[str, float] = field(default_factory=dict)  # grouping column -> stated SD of its random intercept
    family: str = "auto"


from stimuli.input_rules import is_ascii_digits  # noqa: E402 (ASCII digits only: never isdigit() then int())


def parse_sizes(text: str | list, name: str, most: int = MAX_SUBJECTS) -> list[int]:
    """'16,24,32' (or a list) -> sorted distinct positive whole numbers up to `most`; PowerInputError otherwise."""
    if not isinstance(text, (str, list, tuple)) and not hasattr(text, "__iter__"):
        raise PowerInputError(f"{name} {text!r}: sizes are whole numbers separated by commas (e.g. 16,24,32)")
    parts = [p.strip() for p in text.split(",")] if isinstance(text, str) else list(text)
    if len(parts) > MAX_SIZES:
        raise PowerInputError(f"{name}: {len(parts):,} sizes; at most {MAX_SIZES} in one run")
    out = []
    for p in parts:
        s = str(p).strip()
        if isinstance(p, bool) or not is_ascii_digits(s) or len(s) > 9 or int(s) < 1 or int(s) > most:
            raise PowerInputError(f"{name} {text!r}: sizes are positive whole numbers separated by commas "
                                  f"(e.g. 16,24,32), at most {most:,}; refused {s!r}")
        out.append(int(s))
    if not out:
        raise PowerInputError(f"{name} names no size (e.g. {name} 16,24,32)")
    return sorted(set(out))


def _whole(name: str, v, low: int, high: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not low <= int(v) <= high:
        raise PowerInputError(f"{name} must be a whole number from {low:,} to {high:,}, not {v!r}")
    return int(v)


def check_settings(s: PowerSettings) -> fm.Formula:
    """Everything checkable without data: returns the parsed formula (module docstring)."""
    s.subjects = parse_sizes(s.subjects, "--subjects")
    if s.items is not None:
        s.items = parse_sizes(s.items, "--items", MAX_ITEMS)
        if min(s.items) < 2:
            raise PowerInputError("--items: a study needs at least 2 items")
    n_sizes = len(s.subjects) * len(s.items or [0])
    if n_sizes > MAX_SIZES:
        raise PowerInputError(f"--subjects x --items: {n_sizes} study sizes; at most {MAX_SIZES} in one run")
    _whole("--sims", s.sims, 1, MAX_SIMS)
    _whole("--seed", s.seed, 0, 2**31 - 1)
    _whole("--cores", s.cores, 1, MAX_CORES)
    _whole("--batch", s.batch, 1, MAX_SIMS)
    _whole("--min-sims", s.min_sims, 1, MAX_SIMS)
    for name, v in (("--alpha", s.alpha), ("--target", s.target)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < float(v) < 1:
            raise PowerInputError(f"{name} must be a number between 0 and 1 (exclusive), not {v!r}")
    try:
        flag("early_stop (--no-early-stop)", s.early_stop)
    except InputError as exc:
        raise PowerInputError(str(exc)) from None
    if s.test not in TESTS:
        raise PowerInputError(f"--test must be wald or lrt, not {s.test!r}")
    if s.interval not in ("wilson", "clopper-pearson"):
        raise PowerInputError(f"--interval must be wilson or clopper-pearson, not {s.interval!r}")
    if s.family not in ("auto", "binomial", "gaussian"):
        raise PowerInputError(f"--family must be auto, binomial or gaussian for a power simulation, not {s.family!r}")
    if s.effect is not None and (isinstance(s.effect, bool) or not isinstance(s.effect, (int, float, np.number))
                                 or not np.isfinite(float(s.effect))):
        raise PowerInputError(f"--effect must be a finite number on the model's scale, not {s.effect!r}")
    if not isinstance(s.sd, dict):
        raise PowerInputError(f"sd must map grouping columns to SDs (e.g. {{'subject': 0.8}}), not {s.sd!r}")
    for g, v in s.sd.items():
        if isinstance(v, bool) or not isinstance(v, (int, float, np.number)) or not np.isfinite(float(v)) or v < 0:
            raise PowerInputError(f"--sd {g}={v}: an SD is a number of 0 or more")
    try:
        f = fm.parse(s.formula)
    except fm.FormulaError as exc:
        raise PowerInputError(f"--formula: {exc}") from None
    try:
        check_in_formula(s.term, f)
    except TermError as exc:
        raise PowerInputError(str(exc)) from None
    unknown = [g for g in s.sd if fm.ALIASES.get(g, g) not in f.groups]
    if unknown:
        raise PowerInputError(f"--sd {unknown[0]}: not a grouping column of the formula's random effects "
                              f"({', '.join(f.groups) or 'none'})")
    return f


def pilot_rows(df: pd.DataFrame, group: str | None) -> tuple[pd.DataFrame, str, str]:
    """(rows, group label, subject kind) of one group's test trials; several groups need --group."""

    d = model_frame(df)
    groups = sorted(set(d["group"].dropna().astype(str))) if "group" in d.columns else []
    if group is None:
        if len(groups) > 1:
            raise PowerInputError(f"--group: the pilot holds {len(groups)} groups ({', '.join(groups)}); name the one "
                                  "whose fit is simulated")
        group = groups[0] if groups else ""
    elif group not in groups:
        raise PowerInputError(f"--group {group!r} is not in the pilot; its groups are: {', '.join(groups) or 'none'}")
    rows = d[d["group"].astype(str) == group] if groups else d
    kinds = set(rows["subject_kind"].dropna().astype(str)) if "subject_kind" in rows.columns else {"human"}
    return rows.reset_index(drop=True), group, "model" if "model" in kinds else "human"


@dataclass
class Pilot:
    """What the simulation is built from: the fit, the coded formula it fitted, the truth, the design."""

    fit: object  # analysis.stats.formula_fit.FormulaFit
    coded: fm.Formula  # the fitted structure, factors coded
    formula: fm.Formula  # the user's formula with the random structure that was fitted (uncoded)
    truth: object  # analysis.power.sim.Truth
    coefficients: list[str]  # the tested ones
    template: object  # analysis.power.design.Template
    declared: dict
    group: str
    kind: str
    warnings: list[str] = field(default_factory=list)
    zero_sds: list[str] = field(default_factory=list)  # the pilot's zero SDs that are simulated as zero, said


def check_out_folder(out: str | Path, force: bool) -> None:
    """--out: a folder (or a new one) that holds no earlier power run unless --force (the data rule is
    api.check_out's, applied by api.power)."""
    if not isinstance(force, (bool, np.bool_)):
        raise PowerInputError(f"force must be True or False, not {force!r}")
    try:  # no link among tables/ and figures/, power.json a regular file (experiments/outputs.py)
        check_output_folder("--out", Path(out), subfolders=("tables", "figures"), files=("power.json",))
    except OptionError as exc:
        raise PowerInputError(str(exc)) from None
    if (Path(out) / "power.json").exists() and not force:
        raise PowerInputError(f"--out {out} holds an earlier power run (power.json); pass --force to replace it or "
                              "choose another folder")
