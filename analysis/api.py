"""The analysis as a Python API, for notebooks: what `twinlab analyze` does, one call at a time.

    from analysis import api
    df = api.load_sessions(["sessions/agreement_attraction"])      # tidy trials, the design's factors as columns
    api.factors(df)                                                # {'head_number': ['sg', 'pl'], ...}
    api.rates(df, by=["head_number", "attractor_number"])          # rates, CIs over subjects and over items
    fit = api.fit(df, "correct ~ head_number * attractor_number + (1 | subject) + (1 | item)")
    fit.status, fit.coef_frame()
    api.report(df, "report_out", by=["head_number", "attractor_number"], formula="...")

docs/analysis.md has the full walk-through. Nothing here starts R until a model is fitted.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pandas as pd

from analysis.bootstrap import N_BOOT
from analysis.load_base import LoadInfo

__all__ = ["load_sessions", "factors", "rates", "acceptance", "dprime", "fit", "report", "choice_bias",
           "rating_distribution", "reading_words", "reading_regions", "reading_times", "surprisal_rt", "completion",
           "demand_gaps"]


def _finish(df: pd.DataFrame, info: LoadInfo) -> pd.DataFrame:
    """Derived columns every analysis of a design uses: prepare()'s, item, accepted; attrs: factors, load info."""
    from analysis.design_rates import add_accepted, item_key
    from analysis.prepare import prepare

    d = prepare(df)
    d["item"] = item_key(d)
    d = add_accepted(d)
    d.attrs["factors"] = dict(info.factors)
    d.attrs["load_info"] = info
    return d


def load_sessions(paths: Iterable[str | Path] | str | Path, include_simulated: bool = False,
                  keep_outliers: bool = False, fmt: str = "auto") -> pd.DataFrame:
    """Session CSVs or folders -> one tidy frame: one row per trial, every schema column, the design's
    factors under their own names, plus `group`, `subject_key`, `error`, `training`, `accepted`.

    `df.attrs['factors']` maps each factor to its levels (the spec's order, from the sidecars);
    `df.attrs['load_info']` says what was read, noted and excluded."""
    from analysis.load import load

    if isinstance(paths, (str, Path)):
        paths = [paths]
    df, info = load(paths, fmt, include_simulated=include_simulated, keep_outliers=keep_outliers)
    return _finish(df, info)


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
    from analysis.formula import FormulaError

    by = [b.strip() for b in by.split(",")] if isinstance(by, str) else list(by or [])
    missing = [b for b in by if b not in df.columns]
    if missing:
        raise FormulaError(f"--by: unknown column {missing[0]!r}; the design's factors are "
                           f"{', '.join(factors(df)) or '(none)'}")
    return by


def _design(df: pd.DataFrame) -> pd.DataFrame:
    from analysis.design_rates import design_rows

    return design_rows(df)


def rates(df: pd.DataFrame, by: Iterable[str] | str | None = None, outcome: str = "correct", seed: int = 0,
          n_boot: int = N_BOOT) -> pd.DataFrame:
    """Rates of a 0/1 outcome (default: correct) per group x cell of `by` (default: every factor), with
    95% bootstrap CIs over subjects (pooled rate and F1 by-subject mean) and over items (F2 mean)."""
    from analysis.design_rates import rates as _rates

    by = _check_by(df, list(factors(df)) if by is None else by)
    return _rates(_design(df), by, outcome, seed, n_boot)


def acceptance(df: pd.DataFrame, by: Iterable[str] | str | None = None, seed: int = 0,
               n_boot: int = N_BOOT) -> pd.DataFrame:
    """Acceptance rates on grammatical and ungrammatical trials per cell of `by`."""
    from analysis.design_rates import acceptance_rates

    return acceptance_rates(_design(df), _check_by(df, by), seed, n_boot)


def dprime(df: pd.DataFrame, by: Iterable[str] | str | None = None, seed: int = 0,
           n_boot: int = N_BOOT) -> pd.DataFrame:
    """d' and criterion c per cell of `by` (signal: ungrammatical sentences; a hit rejects one)."""
    from analysis.design_rates import dprime_table

    return dprime_table(_design(df), _check_by(df, by), seed, n_boot)


def model_frame(df: pd.DataFrame) -> pd.DataFrame:
    """The rows a formula is fitted on: the design's test trials; `subject_id` made unique across groups
    (a human S01 and a model subject S01 are two subjects), `item` the item group."""
    d = _design(df).copy()
    if "subject_key" in d.columns:
        d["subject_id"] = d["subject_key"].astype(str)
    return d


def fit(df: pd.DataFrame, formula: str, family: str = "auto", fallback: bool = True, region: str | None = None,
        word: int | None = None):
    """Fit an lme4 formula (`subject` means subject_id): glmer binomial for 0/1 outcomes, lmer (RTs on a
    log scale) otherwise, glm/lm without random effects; `family='ordinal'` fits ordinal::clmm (ratings).
    Factors are sum-coded in the declared level order (attrs or ordered categoricals of `df`, so frames
    of reading_words/reading_regions keep it). `region`/`word`: fitted on that region's rows (region_rt_ms,
    surprisal_bits, length, length_prev1, ...) or that word position's (word_rt_ms, ...), as
    `analyze --region/--word`. Returns a FormulaFit (or OrdinalFit) with status, diagnostics and fallback."""
    from analysis.formula_fit import fit_formula
    from analysis.tasks_reading import plain, target_rows

    d = model_frame(df)
    if region is not None or word is not None:
        d = target_rows(d, factors(df), region, word)
    d = plain(d)
    if family == "ordinal":
        from analysis.tasks_rating import fit_clmm

        return fit_clmm(d, formula, factors(df))
    return fit_formula(d, formula, family=family, declared=factors(df), fallback=fallback)


def choice_bias(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Choice tasks: (position bias table, accuracy by the correct option's screen position)."""
    from analysis.tasks_choice import accuracy_by_position, choice_rows, position_bias

    c = choice_rows(_design(df))
    return position_bias(c), accuracy_by_position(c)


def rating_distribution(df: pd.DataFrame, by: Iterable[str] | str | None = None) -> pd.DataFrame:
    from analysis.tasks_rating import distribution, rating_rows

    return distribution(rating_rows(_design(df)), _check_by(df, by))


def reading_words(df: pd.DataFrame) -> pd.DataFrame:
    """One row per word of the trials with reading times or surprisals (position, length, region,
    region_name, word_rt_ms, surprisal_bits, ...); the factors are ordered categoricals in the spec's
    order and `attrs['factors']` is kept, so api.fit on these rows sum-codes in that order."""
    from analysis.tasks_reading import word_rows

    d = model_frame(df)
    return word_rows(d, {f: lv for f, lv in factors(df).items() if f in d.columns})


def reading_regions(df: pd.DataFrame) -> pd.DataFrame:
    """One row per trial x region (region_rt_ms, surprisal_bits, length, n_words, *_prev1), people's word
    times after the `rt_range` rule (a region with a trimmed word has no region time)."""
    from analysis.tasks_reading import apply_rules, region_rows

    w = reading_words(df)
    kept, _ = apply_rules(w)
    both = pd.concat([kept, w[w["word_rt_ms"].isna()]], ignore_index=True)
    both.attrs = dict(w.attrs)
    return region_rows(both)


def reading_times(df: pd.DataFrame, seed: int = 0, n_boot: int = N_BOOT, rules=None) -> dict[str, pd.DataFrame]:
    """The reading report's tables: people's mean reading time by region and by word (CIs over subjects),
    models' mean surprisal by region and by word (CIs over items), and the rules' counts (`rules`)."""
    from analysis.tasks_reading import (ReadingRules, apply_rules, region_means, region_surprisal, word_means,
                                        word_surprisal)

    w = reading_words(df)
    fs = list(w.attrs.get("factors") or {})
    h, counts = apply_rules(w, rules or ReadingRules())
    return {"region_rt": region_means(h, fs, seed, n_boot), "word_rt": word_means(h, fs, seed, n_boot),
            "region_surprisal": region_surprisal(w, fs, seed, n_boot), "word_surprisal": word_surprisal(w, fs, seed, n_boot),
            "rules": pd.DataFrame([{"rule": k, "words_removed": v} for k, v in counts.items()])}


def surprisal_rt(df: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Human word rows joined to each model group's surprisal, with spillover columns (model group -> rows)."""
    from analysis.tasks_reading import add_spillover, join_surprisal, trim_rts

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
    from analysis.design_rates import rates as _rates
    from analysis.tasks_completion import completion_rows

    c = completion_rows(_design(df))
    by = _check_by(df, by)
    a = _rates(c, by, "match_target", seed, n_boot).assign(score="target")
    b = _rates(c, by, "match_accepted", seed, n_boot).assign(score="target or accepted")
    return pd.concat([a, b], ignore_index=True)


def demand_gaps(df: pd.DataFrame, pairs: list[tuple[str, str]] | None = None, seed: int = 0,
                n_boot: int = N_BOOT) -> pd.DataFrame:
    """The demand gap between protocols of the same items: the paper's log-odds and twinlab's smoothed one."""
    from analysis.demand_gap import demand_gaps as _gaps

    return _gaps(_design(df), pairs, seed, n_boot)


def report(data: pd.DataFrame | Iterable[str | Path] | str | Path, out: str | Path,
           by: Iterable[str] | str | None = None, formula: str | None = None, force: bool = False,
           log=None, **options) -> dict:
    """Write the results folder (tables/, figures/, results.json, report.html): `twinlab analyze` is this
    call. From a frame of load_sessions() or from paths; `options` are analysis.pipeline.Options fields
    (seed, n_boot, mixed, family, gap_pairs, ...). Returns the results dict."""
    from analysis.pipeline import Options, run_analysis, run_loaded

    out = Path(out)
    if (out / "results.json").exists() and not force:
        raise FileExistsError(f"{out} holds an earlier analysis; pass force=True to replace it")
    by_list = [b.strip() for b in by.split(",")] if isinstance(by, str) else list(by or [])
    opt = Options(by=by_list, formula=formula or "", **options)
    if isinstance(data, pd.DataFrame):
        info = data.attrs.get("load_info") or LoadInfo(factors=dict(factors(data)))
        return run_loaded(data, info, out, opt, log)
    if isinstance(data, (str, Path)):
        data = [data]
    return run_analysis(list(data), out, opt, log)
