"""The analysis as a Python API, for notebooks: what `twinlab analyze` does, one call at a time.

    from analysis import api
    df = api.load_sessions(["sessions/agreement_attraction"])      # tidy trials, the design's factors as columns
    api.factors(df)                                                # {'head_number': ['sg', 'pl'], ...}
    api.rates(df, by=["head_number", "attractor_number"])          # rates, CIs over subjects and over items
    fit = api.fit(df, "correct ~ head_number * attractor_number + (1 | subject) + (1 | item)")
    fit.status, fit.coef_frame()     # one group; with people and model protocols: one fit per group (fit.fits)
    api.report(df, "report_out", by=["head_number", "attractor_number"], formula="...")
    res = api.power(df, "correct ~ cond + (1 | subject) + (1 | item)", "cond", subjects=[16, 24, 32], effect=0.4)

docs/analysis.md has the full walk-through. Nothing here starts R until a model is fitted. Every function
checks its inputs as `twinlab analyze` does (InputError, FormulaError, GapError: a message naming the
argument), and report() never writes among the data it reads.
"""
from __future__ import annotations

import difflib
from dataclasses import fields
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from analysis.kind_sections import kind_function
from analysis.learning import general as ln
from analysis.learning.general import first_encounter_table, learning_curve
from analysis.load import load
from analysis.load.base import LoadInfo
from analysis.load.frames import design_frame, with_order
from analysis.load.rows import BlocksError, parse_blocks, select_blocks
from analysis.measures.demand_gap import check_pairs
from analysis.measures.demand_gap import demand_gaps as _gaps
from analysis.measures.design_rates import acceptance_rates, design_rows, dprime_table
from analysis.measures.design_rates import rates as _rates
from analysis.measures.reading import (
    REGIONS,
    ReadingRules,
    add_spillover,
    apply_rules,
    join_surprisal,
    plain,
    region_means,
    region_rows,
    region_surprisal,
    target_rows,
    trim_rts,
    with_rules,
    word_means,
    word_rows,
    word_surprisal,
)
from analysis.measures.scoring import RULES, apply_rule
from analysis.options import API, FORMATS, Names, check_options, distinct, flag, target, whole
from analysis.options import model_copies as check_copies
from analysis.pipeline import Options, analyse_checked, analyse_loaded_checked
from analysis.power.main import run_power
from analysis.power.settings import PowerSettings, check_out_folder, check_settings
from analysis.report.results_folder import KINDS as RESULT_FOLDERS
from analysis.stats.bootstrap import N_BOOT
from analysis.stats.formula import FormulaError, parse
from analysis.stats.formula_checks import check_fit_request
from analysis.stats.formula_fit import fit_groups as _fit_groups
from analysis.twins.answers import is_replay, likelihood
from analysis.twins.effects import default_formula, twin_long
from experiments.options import OptionError, output_folder
from experiments.outputs import check_output_folder, same_file

__all__ = ["load_sessions", "factors", "model_copies", "rates", "acceptance", "dprime", "fit", "fit_groups", "report",
           "first_encounter", "learning_curves", "choice_bias",
           "rating_distribution", "reading_words", "reading_regions", "reading_times", "surprisal_rt", "completion",
           "demand_gaps", "power", "twins_likelihood", "twin_effects", "InputError"]
from analysis.options import (  # noqa: E402 (one class, analysis/input_errors.py; re-exported)
    FAMILIES,
    MAX_BOOT,
    InputError,
)


def _check_frame(df) -> pd.DataFrame:
    """A frame of trials: a DataFrame whose column names are each given once (a duplicated name would make
    `df[name]` a table, not a column)."""
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"df: a table of trials from load_sessions(), not {type(df).__name__}")
    dup = df.columns[df.columns.duplicated()]
    if len(dup):
        raise InputError(f"df: column {str(dup[0])!r} appears {int((df.columns == dup[0]).sum())} times; "
                         "each column name must be given once")
    return df


def _check_boot(seed, n_boot) -> None:
    """As `analyze --seed/--n-boot` (analysis/options.py: the one rule): whole numbers, seed >= 0,
    n_boot from 1 to 100,000."""
    whole("seed (--seed)", seed, 0, 2**32 - 1)
    whole("n_boot (--n-boot)", n_boot, 1, MAX_BOOT)


def _check_outcome(df: pd.DataFrame, outcome) -> str:
    """A rate is the mean of a 0/1 (or numeric) column: a text column (response, text) is refused naming it."""
    if not isinstance(outcome, str) or outcome not in df.columns:
        guess = difflib.get_close_matches(str(outcome), [str(c) for c in df.columns], n=1)
        raise InputError(f"outcome: unknown column {outcome!r}" + (f" (did you mean {guess[0]!r}?)" if guess else "")
                         + "; a rate is of a 0/1 column such as correct or accepted")
    s = df[outcome].dropna()
    if pd.api.types.is_bool_dtype(s) or str(s.dtype) == "boolean":
        return outcome
    num = pd.to_numeric(s, errors="coerce") if not pd.api.types.is_numeric_dtype(s) else s
    if num.isna().any():
        raise InputError(f"outcome {outcome!r} is text (e.g. {s[num.isna()].iloc[0]!r}), not a 0/1 or numeric column; "
                         "rates are of correct, accepted or another 0/1 column")
    inf = ~np.isfinite(num.astype(float))
    if inf.any():
        raise InputError(f"outcome {outcome!r} holds {int(inf.sum())} infinite value(s) (e.g. row "
                         f"{inf[inf].index[0]!r}: "
                         f"{num[inf].iloc[0]!r}); a rate of an infinite value means nothing: drop or fix those rows")
    return outcome


def _finish(df: pd.DataFrame, info: LoadInfo, copies: str = "merge") -> pd.DataFrame:
    """Derived columns every analysis of a design uses (analysis/load/frames.py: prepare()'s, item, the judgment
    columns, deterministic model copies merged); attrs: factors, load info, the copies table."""
    d, table, notes = design_frame(df, dict(info.factors), copies)
    info.notes += [n for n in notes if n not in info.notes]
    d.attrs["factors"] = dict(info.factors)
    d.attrs["load_info"] = info
    # plain values only: a DataFrame in attrs breaks merge, concat and groupby().describe() (pandas compares
    # the attrs of the frames it combines); model_copies(df) gives the table back
    d.attrs["model_copies"] = table.to_dict("records") if len(table) else []
    return d


def model_copies(df: pd.DataFrame) -> pd.DataFrame:
    """The deterministic model copies load_sessions() merged (one row per merged subject)."""
    return pd.DataFrame(_check_frame(df).attrs.get("model_copies") or [])


def load_sessions(paths: Iterable[str | Path] | str | Path, include_simulated: bool = False,
                  keep_outliers: bool = False, fmt: str = "auto", model_copies: str = "merge",
                  allow_spec_versions: bool = False) -> pd.DataFrame:
    """Session CSVs or folders -> one tidy frame: one row per trial, every schema column, the design's
    factors under their own names, plus `group`, `subject_key`, `error`, `training`, and for judgment-like
    tasks `accepted`, `signal`, `said_reject` (from the task's labels). Deterministic model copies are one
    subject (`model_copies="subjects"` keeps them apart; `api.model_copies(df)` lists them). The order
    columns (analysis/load/rows.py: block_kind, trial_position, trials_before, exposures per cell of the
    design's factors, exposures_any, first_encounter) are columns like any other (`fit`, `rates(by=...)`).

    `df.attrs['factors']` maps each factor to its levels (the spec's order, from the sidecars);
    `df.attrs['load_info']` says what was read, noted and excluded. Sessions of different versions of a
    spec (another spec_hash or factor level order) are refused (analysis.load.SpecVersionError) unless
    `allow_spec_versions`: then they are coded by the current version and the notes name every version."""
    check_copies(model_copies)
    for name, v in (("include_simulated", include_simulated), ("keep_outliers", keep_outliers),
                    ("allow_spec_versions", allow_spec_versions)):
        flag(name, v)
    if fmt not in FORMATS:
        raise InputError(f"fmt must be {', '.join(FORMATS)}, not {fmt!r}")
    if isinstance(paths, (str, Path)):
        paths = [paths]
    df, info = load(paths, fmt, include_simulated=include_simulated, keep_outliers=keep_outliers,
                    allow_spec_versions=allow_spec_versions)
    return _finish(df, info, model_copies)


def factors(df: pd.DataFrame) -> dict[str, list[str]]:
    """The design's factors and their levels (for a Lakretz table: structure, condition, dependency)."""
    f = df.attrs.get("factors") or {}
    if f:
        return {k: list(v) for k, v in f.items()}
    cats = {c: [str(x) for x in df[c].cat.categories] for c in df.columns  # attrs lost (a groupby, a merge):
            if isinstance(df[c].dtype, pd.CategoricalDtype) and df[c].cat.ordered}  # ordered columns keep it
    if cats:
        return cats
    return {c: sorted(set(df[c].dropna().astype(str))) for c in ("structure", "condition", "dependency")
            if c in df.columns and df[c].notna().any()}


def _check_by(df: pd.DataFrame, by: Iterable[str] | str | None) -> list[str]:
    by = [b.strip() for b in by.split(",")] if isinstance(by, str) else list(by or [])
    distinct("by", by)
    missing = [b for b in by if b not in df.columns]
    if missing:
        raise FormulaError(f"--by: unknown column {missing[0]!r}; the design's factors are "
                           f"{', '.join(factors(df)) or '(none)'}")
    return by


def _design(df: pd.DataFrame) -> pd.DataFrame:
    return design_rows(df)


def rates(df: pd.DataFrame, by: Iterable[str] | str | None = None, outcome: str = "correct", seed: int = 0,
          n_boot: int = N_BOOT) -> pd.DataFrame:
    """Rates of a 0/1 outcome (default: correct) per group x cell of `by` (default: every factor), with
    95% bootstrap CIs over subjects (pooled rate and F1 by-subject mean) and over items (F2 mean)."""
    _check_frame(df)
    by = _check_by(df, list(factors(df)) if by is None else by)
    _check_outcome(df, outcome)
    _check_boot(seed, n_boot)
    return _rates(_design(df), by, outcome, seed, n_boot)


def acceptance(df: pd.DataFrame, by: Iterable[str] | str | None = None, seed: int = 0,
               n_boot: int = N_BOOT) -> pd.DataFrame:
    """Acceptance (share of the task's accepting label) per cell of `by` x the item's answer."""
    _check_frame(df)
    _check_boot(seed, n_boot)
    return acceptance_rates(_design(df), _check_by(df, by), seed, n_boot)


def dprime(df: pd.DataFrame, by: Iterable[str] | str | None = None, seed: int = 0,
           n_boot: int = N_BOOT) -> pd.DataFrame:
    """d' and criterion c per cell of `by` (signal: items whose answer is the rejecting label; a hit rejects one)."""
    _check_frame(df)
    _check_boot(seed, n_boot)
    return dprime_table(_design(df), _check_by(df, by), seed, n_boot)


from analysis.load.frames import model_frame  # noqa: E402,F401 (the rows a formula is fitted on)


def fit(df: pd.DataFrame, formula: str, family: str = "auto", fallback: bool = True, region: str | None = None,
        word: int | None = None, blocks: str = "test"):
    """Fit an lme4 formula (`subject` means subject_id): glmer binomial for 0/1 outcomes, lmer (RTs on a
    log scale) otherwise, glm/lm without random effects; `family='ordinal'` fits ordinal::clmm (ratings).
    Factors are sum-coded in the declared level order (attrs or ordered categoricals of `df`, so frames
    of reading_words/reading_regions keep it); the formula is parsed by twinlab's grammar
    (analysis/stats/formula.py) and refused (FormulaError) before R starts when it is not one. `region`/`word`:
    fitted on that region's rows (region_rt_ms, surprisal_bits, length, length_prev1, ...) or that word
    position's (word_rt_ms, ...), as `analyze --region/--word`.

    With one group of rows (people only, or one model protocol), or with `group` in the formula: one
    FormulaFit (or OrdinalFit) with status, diagnostics and fallback. With several groups and no `group`
    term: a GroupFits, one fit per group (`.fits[group]`, `.scope_text()`, `.coef_frame()`), as
    fit_groups() always returns. `blocks`: the rows fitted, as `analyze --blocks` (test, the default;
    training,test; all: every row): the fit's `n_obs` says how many rows it used."""
    g = fit_groups(df, formula, family, fallback, region, word, blocks)
    if len(g.fits) == 1 and not g.skipped:
        return next(iter(g.fits.values()))
    return g


def fit_groups(df: pd.DataFrame, formula: str, family: str = "auto", fallback: bool = True,
               region: str | None = None, word: int | None = None, blocks: str = "test"):
    """One fit per group of rows (people; each model · context · protocol), or one pooled fit when the
    formula names `group`: a GroupFits (analysis/stats/formula_fit.py). `region`/`word` as in fit()."""
    _check_frame(df)
    flag("fallback", fallback)
    if family not in FAMILIES:
        raise InputError(f"family must be {', '.join(FAMILIES[:-1])} or {FAMILIES[-1]}, not {family!r}")
    region_s, word_n = target(region, word)
    f = parse(formula)  # refused here, before any data work or R
    check_fit_request(f, df, family)
    d = model_frame(df, _blocks(blocks))
    if region_s or word_n:
        d = target_rows(d, factors(df), region_s or None, word_n or None)
    return _fit_groups(plain(d), f, family=family, declared=factors(df), fallback=bool(fallback))


def _blocks(blocks) -> str:
    try:
        return parse_blocks(blocks)
    except BlocksError as exc:
        raise InputError(str(exc).replace("--blocks", "blocks")) from None


def _learning_frame(df: pd.DataFrame, cell, rule: str):
    _check_frame(df)
    if rule not in RULES:
        raise InputError(f"rule must be {' or '.join(RULES)}, not {rule!r}")
    cell = _check_by(df, list(factors(df)) if cell is None else cell)
    return apply_rule(with_order(df, cell), rule), ln.general_config(cell)


def first_encounter(df: pd.DataFrame, cell: Iterable[str] | str | None = None, rule: str = "paper", seed: int = 0,
                    n_boot: int = N_BOOT) -> pd.DataFrame:
    """Error on each subject's first test trial of each cell (default cell: the design's factors), per group,
    95% bootstrap CIs over subjects; `rule` how an unanswered trial counts (analysis/measures/scoring.py)."""
    _check_boot(seed, n_boot)
    d, cfg = _learning_frame(df, cell, rule)
    return first_encounter_table(d, cfg, seed, n_boot)


def learning_curves(df: pd.DataFrame, x: str = "exposures", cell: Iterable[str] | str | None = None,
                    blocks: str = "training,test", seed: int = 0, n_boot: int = N_BOOT) -> pd.DataFrame:
    """Error (and mean RT) by `x` (exposures, trial_position, trials_before, exposures_any) per group and block
    kind, CIs over subjects, on the rows of `blocks`."""
    if x not in ("exposures", "trial_position", "trials_before", "exposures_any"):
        raise InputError(f"x must be exposures, trial_position, trials_before or exposures_any, not {x!r}")
    _check_boot(seed, n_boot)
    d, cfg = _learning_frame(df, cell, "paper")
    return learning_curve(select_blocks(d, _blocks(blocks)), cfg, x, seed, n_boot)


def choice_bias(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Choice tasks: (position bias table, accuracy by the correct option's screen position)."""
    return kind_function("choice_bias")(_design(df))


def rating_distribution(df: pd.DataFrame, by: Iterable[str] | str | None = None) -> pd.DataFrame:
    """Rating tasks: the share of each scale point per group x cell of `by` (models: the argmax)."""
    d = _design(df)
    return kind_function("rating_distribution")(d, _check_by(df, by))


def reading_words(df: pd.DataFrame) -> pd.DataFrame:
    """One row per word of the trials with reading times or surprisals (position, length, region,
    region_name, word_rt_ms, surprisal_bits, ...); the factors are ordered categoricals in the spec's
    order and `attrs['factors']` is kept, so api.fit on these rows sum-codes in that order."""
    d = model_frame(df)
    return word_rows(d, {f: lv for f, lv in factors(df).items() if f in d.columns})


def reading_regions(df: pd.DataFrame) -> pd.DataFrame:
    """One row per trial x region (region_rt_ms, surprisal_bits, length, n_words, *_prev1), people's word
    times after the `rt_range` rule (a region with a trimmed word has no region time)."""
    w = reading_words(df)
    return region_rows(with_rules(w))


def reading_times(df: pd.DataFrame, seed: int = 0, n_boot: int = N_BOOT, rules=None) -> dict[str, pd.DataFrame]:
    """The reading report's tables: people's mean reading time by region and by word (CIs over subjects),
    models' mean surprisal by region and by word (CIs over items), and the rules' counts (`rules`)."""
    w = reading_words(df)
    fs = list(w.attrs.get("factors") or {})
    h, counts = apply_rules(w, rules or ReadingRules())
    return {"region_rt": region_means(h, fs, seed, n_boot), "word_rt": word_means(h, fs, seed, n_boot),
            "region_surprisal": region_surprisal(w, fs, seed, n_boot),
            "word_surprisal": word_surprisal(w, fs, seed, n_boot),
            "rules": pd.DataFrame([{"rule": k, "words_removed": v, "regions_removed": counts.get(k + REGIONS, 0)}
                                   for k, v in counts.items() if not k.endswith(REGIONS)])}


def surprisal_rt(df: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Human word rows joined to each model group's surprisal, with spillover columns (model group -> rows)."""
    w = reading_words(df)
    h, _ = trim_rts(w)
    models = w[w["subject_kind"] == "model"]
    both = pd.concat([h, models], ignore_index=True)
    both.attrs = dict(w.attrs)
    joined = join_surprisal(both)
    return {g: add_spillover(j, ["surprisal", "length", "log_frequency"]) for g, j in joined.items()}


def completion(df: pd.DataFrame, by: Iterable[str] | str | None = None, seed: int = 0,
               n_boot: int = N_BOOT) -> pd.DataFrame:
    """Completion: strict (target) and lenient (accepted variants) match rates per cell of `by`."""
    d = _design(df)
    return kind_function("completion")(d, _check_by(df, by), seed, n_boot)


def demand_gaps(df: pd.DataFrame, pairs: list[tuple[str, str]] | None = None, seed: int = 0,
                n_boot: int = N_BOOT) -> pd.DataFrame:
    """The demand gap between protocols of the same items: the paper's log-odds and twinlab's smoothed one."""
    _check_frame(df)
    _check_boot(seed, n_boot)
    pairs = check_pairs(df, pairs) or None  # GapError names the protocols there are
    return _gaps(_design(df), pairs, seed, n_boot)


def _holds_data(folder: Path) -> bool:
    return folder.is_dir() and any(p.is_file() for pat in ("*.csv", "*.csv.gz") for p in folder.glob(pat))


def check_out(out: str | Path, data_paths: Iterable[str | Path], force: bool, frame: bool = False) -> None:
    """Results are never written among their inputs: `out` may not be a data file or folder, a folder
    holding one, nor inside a folder that holds data files directly (a folder given, or its `data/`; for a
    frame, `frame=True`, the folders of the files it was read from); an earlier analysis in `out` is
    replaced only with force. `twinlab analyze --out` and report() both check this."""
    out = Path(out)
    ro = out.resolve()
    for d in data_paths:
        dr = Path(d).resolve()
        if frame:
            folders = [dr.parent]
        elif dr.is_dir():
            folders = [f for f in (dr, dr / "data") if _holds_data(f)]
        else:
            folders = []
        inside = any(ro == f or f in ro.parents for f in folders)
        if same_file(dr, out) or ro in dr.parents or inside:
            raise OptionError(f"--out {out} holds the data analysed ({d}); results are never written among "
                              "their inputs, even with --force: choose another --out")
    # tables/ and figures/ real folders, results.json and report.html regular files: nothing written through a
    # link or over a device, even with --force (experiments/outputs.py)
    check_output_folder("--out", out, subfolders=RESULT_FOLDERS, files=("results.json", "report.html"))
    if (out / "results.json").exists() and not force:
        raise OptionError(f"--out {out} holds the results of an earlier analysis; pass --force to replace "
                          "them or choose another folder")


def report(data: pd.DataFrame | Iterable[str | Path] | str | Path, out: str | Path,
           by: Iterable[str] | str | None = None, formula: str | None = None, force: bool = False,
           log=None, **options) -> dict:
    """Write the results folder (tables/, figures/, results.json, report.html): `twinlab analyze` is this
    call. From a frame of load_sessions() or from paths; `options` are analysis.pipeline.Options fields
    (seed, n_boot, mixed, family, gap_pairs, ...), checked as the CLI checks them. `out` is never among
    the data (a frame's data: the files it was loaded from). Returns the results dict; its `failures` lists
    results asked for that could not be computed (a --formula group not fitted: `analyze` exits 1), also
    stated at the top of report.html."""
    known = {f.name for f in fields(Options)} - {"by", "formula"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise InputError(f"report(): unknown option {unknown[0]!r}; the options are {', '.join(sorted(known))}")
    by_given = by if isinstance(by, str) else list(by or [])  # text A,B: read by check_options
    return report_options(data, out, Options(by=by_given, formula=formula or "", **options), force, log)


def report_options(data: pd.DataFrame | Iterable[str | Path] | str | Path, out: str | Path, options: Options,
                   force: bool = False, log=None, names: Names = API) -> dict:
    """report() given its options as one Options, unchecked: `twinlab analyze` builds one from its flags as
    typed (`names`: its messages name the flags). `out`, then the options (check_options, once in the run),
    are checked before any work; the pipeline gets them checked."""
    out = Path(out)
    if isinstance(data, pd.DataFrame):
        info = data.attrs.get("load_info") or LoadInfo(factors=dict(factors(data)))
        paths: list = list(info.files)  # the files the frame was read from
    else:
        paths = [data] if isinstance(data, (str, Path)) else list(data)
    output_folder(names("out"), out)
    check_out(out, paths, force, frame=isinstance(data, pd.DataFrame))
    opt = check_options(options, names)  # before any work
    if isinstance(data, pd.DataFrame):
        _check_frame(data)
        return analyse_loaded_checked(data, info, out, opt, log)
    return analyse_checked(paths, out, opt, log)


def power(data: pd.DataFrame | Iterable[str | Path] | str | Path, formula: str, term: str,
          subjects: Iterable[int] | str, items: Iterable[int] | str | None = None, effect: float | None = None,
          sims: int = 500, alpha: float = 0.05, seed: int = 0, group: str | None = None, out: str | Path | None = None,
          force: bool = False, log=None, **options) -> dict:
    """Power by simulation from a pilot: `twinlab power` is this call (analysis/power/settings.py,
    docs/analysis/power.md "Power by simulation"). `data`: a frame of load_sessions() or paths (loaded as
    `analyze` loads them);
    `options`: test ('wald'|'lrt'), target, early_stop, cores, batch, min_sims, interval, sd ({'subject': 0.8}),
    family. Every input is checked before R starts (InputError naming it; a data file LoadError). Returns the
    results dict (power.json's content; `rows` one per size, `sims` a frame of every simulated study); with
    `out` the folder is written too."""
    frame = data if isinstance(data, pd.DataFrame) else None
    if frame is not None:
        info = frame.attrs.get("load_info")
        paths = [str(p) for p in (info.files if info else [])]
    else:
        paths = [str(data)] if isinstance(data, (str, Path)) else [str(p) for p in data]
    known = {"test", "target", "early_stop", "cores", "batch", "min_sims", "interval", "sd", "family"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise InputError(f"power(): unknown option {unknown[0]!r}; the options are {', '.join(sorted(known))}")
    s = PowerSettings(data=paths, formula=formula, term=term, subjects=subjects, items=items, effect=effect, sims=sims,
                      alpha=alpha, seed=seed, group=group, **options)
    f = check_settings(s)
    if out is not None:
        try:
            check_out(out, paths, True, frame=frame is not None)
        except OptionError as exc:
            raise InputError(str(exc)) from None
        check_out_folder(out, force)
    df = frame if frame is not None else load_sessions(paths)
    return run_power(s, f, df, factors(df), out, log)


# ---- twins: the model as a model of the people (analysis/twins/answers.py, effects.py) ------------------
def twins_likelihood(df: pd.DataFrame, seed: int = 0, n_boot: int = 2000):
    """log P(each person's answer) under every model group and context (none, few-shot, replay): a
    TwinLikelihood with `.trials` (per person and trial), `.summary` (per group and trials used: people,
    trials, items, LL, LL per trial with a CI over people, pseudo-R²), `.by_item`, `.by_condition`,
    `.missing` (answers not among the options, items the model never ran) and `.notes`."""
    _check_frame(df)
    _check_boot(seed, n_boot)
    return likelihood(df, int(seed), int(n_boot))


def twin_effects(df: pd.DataFrame, formula: str | None = None, family: str = "auto") -> pd.DataFrame:
    """The formula's effects for the people and each model group side by side (one row per term and group:
    estimate, CI, status, differs_from_0, sign_agrees_with_people); `formula` None: the design's default
    (accuracy by the crossed factors, random intercepts for subjects and items). Replays are left out."""
    _check_frame(df)
    d = df[~is_replay(df)]
    formula = formula or default_formula(d, factors(df))
    if not formula:
        raise InputError("formula: the design has no factor with two levels and scored answers, so there is no "
                         "default; give one")
    return twin_long(fit_groups(d, formula, family))
