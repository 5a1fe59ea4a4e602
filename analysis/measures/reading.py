"""Reading measures: per-word and per-region rows, means with CIs for people and models, the by-region and
surprisal-reading-time model formulas, and the named rules that change reading-time numbers. One unit for every
trial with per-word reading times or surprisals (`word_rts_ms`, `word_surprisal_bits`), whatever its kind: self-paced
reading's sections (analysis/report/reading.py), `--region`/`--word`, the adaptation effect, the twins' reading ΔLL
and the API's `reading_*` all read words through it.

One row per word (`word_rows`): the trial's subject, item and factors (ordered categoricals in the
spec's declared level order, so every later step, sum coding included, keeps that order), `position`
(1-based word index), `word`, `length` (characters, punctuation not counted), `region` (1-based, from
the item's `regions` material read by the one rule, experiments/tasks/regions.py:
the sentence with `|` between regions; one word per region without it),
`region_name` (the spec's `task.region_names`, else `R<k> (<its words in the first item>)`), the human
reading time `word_rt_ms`, the model surprisal `surprisal_bits`, and `question_correct` (the
comprehension answer, where the trial had a question). A trial read region by region (one press showed a whole
region: `reveal: region`, an imported PCIbex DashedSentence in chunks) has no word times, only its regions'
(`region_rts_ms`): each word of a region carries the region's time as `region_read_ms` (its `word_rt_ms` empty),
and the region's time is that time, never a share of it spread over words. One row per trial x region (`region_rows`):
`region_rt_ms` (the sum of its words' times), `surprisal_bits` (the sum of its words' surprisals),
`length` (characters), `n_words`, and the previous region's values as `*_prev1` (spillover).

Named rules, each with the count it removes (`ReadingRules`, `apply_rules`):
- `rt_range`: reading times of one press (a word, or a region where a press showed a region) outside
  [RT_MIN, RT_MAX] ms are left out (below 100 ms nothing is read, above 5000 ms the reader was interrupted); a
  region's time left out removes the region's words;
- `wrong_answer` (off by default): trials whose comprehension question was answered wrongly are left out.

Models (lme4 through analysis/stats/formula_fit.py, each with its diagnostics):

- by region: `log(region_rt_ms) ~ <factors> + length + length_prev1 + (1 | subject_id) + (1 | item)` on
  the region's trials (lmer), factors sum-coded in the declared order; a predictor that is constant in
  the rows fitted (a one-word region whose word is the same in every item; the first region has no
  previous one) is dropped and the fit says so (`dropped_predictors`);
- surprisal and reading time (Smith & Levy 2013): `word_rt_ms ~ surprisal + surprisal_prev1 + length +
  length_prev1 [+ log_frequency + log_frequency_prev1] + (1 | subject_id) + (1 | item)`, raw RT in ms
  (the linking function surprisal theory tests is linear), one fit per model group whose surprisals
  are joined to the human trials: same item and the same words, word by word. `_prev1` is the previous
  word's value (the first word of a sentence has none and is left out). Frequency is used where the item
  gives per-word frequencies (`frequencies` in its materials, one per word; log10(frequency + 1)).

CIs: people's means are over subjects' means (bootstrap over subjects); a model's surprisal is one
number per item (every copy of a deterministic model scores a word the same way), so its CIs resample
items.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.measures.cells import json_list, materials
from analysis.stats.bootstrap import bootstrap_mean
from analysis.stats.formula import FormulaError
from experiments.tasks.base import TaskError
from experiments.tasks.regions import regions
from stimuli.input_rules import ascii_int

RT_MIN, RT_MAX = 100.0, 5000.0
RT_RULE = (f"reading times of one press (a word, or a region read at once) outside [{RT_MIN:g}, {RT_MAX:g}] ms are "
           "left out")
SPILLOVER = 1
ID_COLS = ["group", "subject_kind", "subject_key", "subject_id", "item", "item_id", "model", "protocol"]


class ReadingError(FormulaError):
    """Reading data that cannot give the number asked for (names what is missing)."""


@dataclass(frozen=True)
class ReadingRules:
    """The named rules that change reading-time numbers (docs/analysis.md)."""

    rt_min: float = RT_MIN
    rt_max: float = RT_MAX
    exclude_wrong_answers: bool = False

    def describe(self) -> dict[str, str]:
        out = {"rt_range": f"reading times of one press (a word, or a region read at once) outside "
                           f"[{self.rt_min:g}, {self.rt_max:g}] ms are left out"}
        out["wrong_answer"] = ("trials whose comprehension question was answered wrongly are left out"
                               if self.exclude_wrong_answers else "off: trials with a wrong comprehension answer are "
                                                                  "kept")
        return out


def word_length(w: str) -> int:
    return len(re.sub(r"[^\w]", "", w)) or len(w)


def region_of_words(mat: dict, words: list[str]) -> list[int]:
    """1-based region of each word, read by the one rule of the `regions` material
    (experiments/tasks/regions.py: `regions` is the sentence with `|` between regions, a `regions` without `|`
    one region; no `regions`: one region per word). Regions that do not split these words are refused
    (ReadingError): a reading time summed over a guessed region is a wrong number."""
    try:
        regs = regions({**mat, "sentence": " ".join(words)})
    except TaskError as exc:
        raise ReadingError(f"materials: {exc}") from None
    out = [0] * len(words)
    for r, idx in enumerate(regs, start=1):
        for i in idx:
            out[i] = r
    return out


def declared_levels(df: pd.DataFrame, factors: list[str] | dict[str, list[str]]) -> dict[str, list[str]]:
    """Factor -> levels in the spec's order (a dict given, else the frame's attrs or categorical dtypes),
    then any other level present, sorted."""
    given = dict(factors) if isinstance(factors, dict) else {}
    known = {**(df.attrs.get("factors") or {}), **given}
    out = {}
    for f in (list(factors) if not isinstance(factors, dict) else list(given)):
        if f not in df.columns:
            continue
        lv = list(known.get(f) or [])
        if not lv and isinstance(df[f].dtype, pd.CategoricalDtype):
            lv = [str(c) for c in df[f].cat.categories]
        present = sorted({str(v) for v in df[f].dropna()})
        out[f] = [x for x in lv if x in present] + [x for x in present if x not in lv]
    return out


def ordered(df: pd.DataFrame, levels: dict[str, list[str]]) -> pd.DataFrame:
    """Factor columns as ordered categoricals in the declared order, and `attrs['factors']` set: the
    order survives groupby, concat, filtering and a fit (api.factors reads either)."""
    for f, lv in levels.items():
        if f in df.columns:
            df[f] = pd.Categorical(df[f].map(lambda x: x if pd.isna(x) else str(x)), categories=lv, ordered=True)
    df.attrs["factors"] = {f: list(lv) for f, lv in levels.items()}
    return df


def _region_names(row: pd.Series) -> list[str] | None:
    v = row.get("region_names") if "region_names" in row.index else None
    names = json_list(v) if isinstance(v, str) else (list(v) if isinstance(v, (list, tuple)) else None)
    return [str(x) for x in names] if names else None


def word_rows(df: pd.DataFrame, factors: list[str] | dict[str, list[str]]) -> pd.DataFrame:
    """Explode trials with per-word reading times or surprisals into one row per word."""
    levels = declared_levels(df, factors)
    fs = list(levels)
    keep = [c for c in ID_COLS + fs if c in df.columns]
    has = pd.Series(False, index=df.index)
    for c in ("word_rts_ms", "word_surprisal_bits", "region_rts_ms"):
        if c in df.columns:
            has |= df[c].notna()
    d = df[has]
    out = []
    for (_, row), mat in zip(d.iterrows(), materials(d), strict=False):
        words = str(row["words"] or "").split() if isinstance(row["words"], str) else []
        rts = json_list(row.get("word_rts_ms"))
        sur = json_list(row.get("word_surprisal_bits"))
        n = len(words)
        if not n:
            continue
        try:
            regions = region_of_words(mat, words)
        except ReadingError as exc:
            raise ReadingError(f"item {row.get('item')} ({row.get('item_id')}): {exc}") from None
        by_region = region_read_times(row, rts, max(regions))
        names = _region_names(row)
        if names is not None and len(names) != max(regions):
            raise ReadingError(f"task.region_names names {len(names)} region(s) ({', '.join(names)}) but item "
                               f"{row.get('item')} ({row.get('item_id')}) has {max(regions)}: {mat.get('regions')!r}; "
                               "give one name per region of every item")
        texts = {r: " ".join(w for w, rr in zip(words, regions, strict=False) if rr == r) for r in set(regions)}
        freqs = mat.get("frequencies")
        freqs = freqs if isinstance(freqs, list) and len(freqs) == n else None
        qc = row.get("correct") if mat.get("question") and "correct" in row.index else None
        base = {c: row[c] for c in keep}
        for i, w in enumerate(words):
            out.append(base | {"words": row["words"], "position": i + 1, "word": w, "length": word_length(w),
                               "region": regions[i], "region_given_name": names[regions[i] - 1] if names else None,
                               "region_text": texts[regions[i]],
                               "word_rt_ms": float(rts[i]) if rts and len(rts) == n and rts[i] is not None else np.nan,
                               "region_read_ms": by_region[regions[i] - 1] if by_region else np.nan,
                               "surprisal_bits": (float(sur[i]) if sur and len(sur) == n and sur[i] is not None
                                                  else np.nan),
                               "log_frequency": math.log10(float(freqs[i]) + 1) if freqs else np.nan,
                               "question_correct": qc if qc is not None and not pd.isna(qc) else np.nan})
    cols = keep + ["words", "position", "word", "length", "region", "region_given_name", "region_text", "word_rt_ms",
                   "region_read_ms", "surprisal_bits", "log_frequency", "question_correct"]
    w = pd.DataFrame(out, columns=cols)
    w.insert(cols.index("region") + 1, "region_name", _name_regions(w))
    w = w.drop(columns=["region_given_name"])
    return ordered(w, levels)


def region_read_times(row: pd.Series, word_rts: list | None, n_regions: int) -> list[float] | None:
    """A trial read region by region: its regions' times (`region_rts_ms`, one per region; a region without
    a time NaN); None when the trial has word times (a region's time is then the sum of its words') or no
    region times. Region times that do not match the item's regions are refused (ReadingError)."""
    if word_rts or "region_rts_ms" not in row.index:
        return None
    got = json_list(row.get("region_rts_ms"))
    if not got:
        return None
    if len(got) != n_regions:
        raise ReadingError(f"item {row.get('item')} ({row.get('item_id')}): region_rts_ms holds {len(got)} "
                           f"time(s), but the item has {n_regions} region(s)")
    return [float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else np.nan for x in got]


def _name_regions(w: pd.DataFrame) -> pd.Series:
    """`task.region_names` where the sessions give them; else R<k> (the region's words in the first item)."""
    if w.empty:
        return pd.Series([], dtype=object)
    given = w.groupby("region")["region_given_name"].agg(lambda s: s.dropna().iloc[0] if s.notna().any() else None)
    first = w.sort_values(["item", "position"], key=lambda s: s.map(_natural) if s.name == "item" else s)
    first = first.groupby("region")["region_text"].first()
    names = {r: (given[r] if given[r] else f"R{r} ({first[r]})") for r in given.index}
    return w["region"].map(names)


def _natural(x):
    s = str(x)
    n = ascii_int(s, strip=False)
    return (0, n, s) if n is not None else (1, 0, s)


def region_order(w: pd.DataFrame) -> list[str]:
    """Region names in reading order."""
    return list(w.drop_duplicates("region").sort_values("region")["region_name"])


def apply_rules(w: pd.DataFrame, rules: ReadingRules = ReadingRules()) -> tuple[pd.DataFrame, dict[str, int]]:
    """Human word rows kept by the rules; returns (rows, {rule: word times removed, rule + REGIONS: region
    times removed (trials read region by region, whose words have no time of their own)})."""
    by_region = w["region_read_ms"].notna() if "region_read_ms" in w.columns else pd.Series(False, index=w.index)
    h = w[w["word_rt_ms"].notna() | by_region]
    by_region = by_region[h.index]
    counts: dict[str, int] = {}

    def removed(rule: str, gone: pd.Series) -> None:
        counts[rule] = int((gone & ~by_region).sum())
        if by_region.any():  # region times removed, where some trials were read region by region
            counts[rule + REGIONS] = int(h[gone & by_region].drop_duplicates(_trial_region_keys(h)).shape[0])

    if rules.exclude_wrong_answers:
        wrong = h["question_correct"].map(answered_wrong).astype(bool)
        removed("wrong_answer", wrong)
        h, by_region = h[~wrong], by_region[~wrong]
    t = h["word_rt_ms"].where(~by_region, h.get("region_read_ms"))
    ok = t.between(rules.rt_min, rules.rt_max)
    removed("rt_range", ~ok)
    out = h[ok].copy()
    out.attrs = dict(w.attrs)
    return out, counts


def with_rules(w: pd.DataFrame, rules: ReadingRules = ReadingRules()) -> pd.DataFrame:
    """The word rows with people's reading times through the rules, beside the rows that hold no person's
    time (models' surprisals): the rows a region's or a word's table is built from."""
    kept, _ = apply_rules(w, rules)
    untimed = w["word_rt_ms"].isna() & (w["region_read_ms"].isna() if "region_read_ms" in w.columns else True)
    out = pd.concat([kept, w[untimed]], ignore_index=True)
    out.attrs = dict(kept.attrs)
    return out


REGIONS = ":regions"  # apply_rules' key suffix: region times removed (trials read region by region)


def _trial_region_keys(h: pd.DataFrame) -> list[str]:
    return [c for c in ("subject_key", "subject_id", "item_id", "item", "words", "region") if c in h.columns]


def read_units(w: pd.DataFrame) -> tuple[bool, bool]:
    """(some people's times are per word, some per region read at once) in the word rows."""
    by_region = "region_read_ms" in w.columns and bool(w["region_read_ms"].notna().any())
    return bool(w["word_rt_ms"].notna().any()), by_region


def removed_text(counts: dict[str, int], rule: str, w: pd.DataFrame) -> str:
    """What a rule removed, in the units the people's times are of (`w`: the word rows): "3 word(s) removed",
    "2 region(s) removed" (trials read region by region), or both."""
    words, regions = counts.get(rule, 0), counts.get(rule + REGIONS, 0)
    by_word, by_region = read_units(w)
    parts = ([f"{words} word(s)"] if by_word or words or not by_region else []) + \
        ([f"{regions} region(s) read at once"] if by_region or regions else [])
    return " and ".join(parts) + " removed"


def has_people_times(trials: pd.DataFrame) -> bool:
    """Whether the trials hold people's reading times: per word, or per region for a trial read region by region."""
    for c in ("word_rts_ms", "region_rts_ms"):
        if c in trials.columns and trials[c].notna().any():
            rows = trials[trials[c].notna()]
            if "subject_kind" not in rows.columns or (rows["subject_kind"].astype(str) != "model").any():
                return True
    return False


def kept_word_times(trials: pd.DataFrame, rules: ReadingRules) -> tuple[int, int, float, float]:
    """People's reading times in the trials (`word_rts_ms`; a trial read region by region: `region_rts_ms`) and
    how many the rules keep: (times, kept, lowest, highest). Read straight from the cells (no word rows built),
    so the analysis checks a range before any work; wrong comprehension answers count as left out under
    `exclude_wrong_answers`."""
    cols = [c for c in ("word_rts_ms", "region_rts_ms") if c in trials.columns]
    if not cols:
        return 0, 0, 0.0, 0.0
    rows = trials[trials[cols].notna().any(axis=1)]
    if "subject_kind" in rows.columns:
        rows = rows[rows["subject_kind"].astype(str) != "model"]
    times: list[float] = []
    kept = 0
    for (_, row), ok in zip(rows.iterrows(), _answered_right(rows, rules), strict=False):
        # the word times, else (a trial read region by region) the regions' times: each press's time once
        got = json_list(row.get("word_rts_ms")) or json_list(row.get("region_rts_ms")) or []
        for x in got:
            if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x):
                times.append(float(x))
                kept += ok and rules.rt_min <= x <= rules.rt_max
    return len(times), kept, min(times, default=0.0), max(times, default=0.0)


def _answered_right(rows: pd.DataFrame, rules: ReadingRules) -> list[bool]:
    """Per trial: kept by the `wrong_answer` rule (always, when the rule is off)."""
    if not rules.exclude_wrong_answers or "correct" not in rows.columns:
        return [True] * len(rows)
    return [not (mat.get("question") and answered_wrong(v))
            for v, mat in zip(rows["correct"], materials(rows), strict=False)]


def answered_wrong(v) -> bool:
    """Whether a comprehension answer is recorded wrong (False, 0, 'false'); a missing one (None, NaN, pandas'
    NA: a trial with no question) is not wrong, so the rule keeps it."""
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return False
    return v is False or str(v).strip().lower() in ("false", "0", "0.0") or (
        isinstance(v, (int, float)) and not isinstance(v, bool) and v == 0)


def trim_rts(w: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Human words with a reading time inside [RT_MIN, RT_MAX]; returns (rows, count removed)."""
    kept, counts = apply_rules(w, ReadingRules())
    return kept, counts["rt_range"]


def region_rows(w: pd.DataFrame) -> pd.DataFrame:
    """One row per trial x region: `region_rt_ms` and `surprisal_bits` summed over its words (NaN when a word
    lacks one), `length` in characters, `n_words`, and the previous region's as `*_prev1` (spillover)."""
    fs = list(w.attrs.get("factors") or {})
    trial = [c for c in ID_COLS + fs if c in w.columns] + ["words"]
    keys = trial + ["region", "region_name"]
    if w.empty:  # no word left (the rules removed every one): no region, not a crash
        cols = keys + ["region_rt_ms", "surprisal_bits", "length", "n_words", "region_text"]
        r = pd.DataFrame(columns=cols + [f"{c}_prev1" for c in ("region_rt_ms", "surprisal_bits", "length")])
        r.attrs = dict(w.attrs)
        return r

    def total(s: pd.Series) -> float:
        return float(s.sum()) if s.notna().all() and len(s) else np.nan

    if "region_read_ms" not in w.columns:
        w = w.assign(region_read_ms=np.nan)
    g = w.groupby(keys, dropna=False, observed=True, sort=False)
    r = g.agg(region_rt_ms=("word_rt_ms", total), surprisal_bits=("surprisal_bits", total),
              length=("length", "sum"), n_words=("word", "size"), region_text=("region_text", "first"),
              read_at_once=("region_read_ms", "first")).reset_index()
    # a region read at once (one press showed it): its own time, not a sum of word times it does not have
    r["region_rt_ms"] = r["region_rt_ms"].where(r["read_at_once"].isna(), r["read_at_once"])
    r = r.drop(columns=["read_at_once"])
    # a region missing a word (its time trimmed) has no region time: a partial sum is not the region's time
    full = r["region_text"].map(lambda t: len(str(t).split()))
    r.loc[r["n_words"] < full, ["region_rt_ms", "surprisal_bits"]] = np.nan
    r["length"] = r["region_text"].map(lambda t: sum(word_length(x) for x in str(t).split()))
    r["n_words"] = full
    r = r.sort_values(["subject_key", "item_id", "words", "region"], kind="stable")
    gg = r.groupby(["subject_key", "item_id", "words"], sort=False, dropna=False)
    adjacent = gg["region"].shift(1) == r["region"] - 1  # a region read at once and trimmed leaves no row
    for c in ("region_rt_ms", "surprisal_bits", "length"):
        r[f"{c}_prev1"] = gg[c].shift(1).where(adjacent)
    r = r.reset_index(drop=True)
    r.attrs = dict(w.attrs)
    return r


def _means(rows: pd.DataFrame, keys: list[str], value: str, unit: str, seed: int, n_boot: int) -> pd.DataFrame:
    """Mean of `value` per keys cell: the mean of per-`unit` means, with a bootstrap CI over units."""

    cols = keys + [f"n_{unit}s", "mean", "ci_low", "ci_high"]
    rows = rows[rows[value].notna()]
    if rows.empty:
        return pd.DataFrame(columns=cols)
    rng = np.random.default_rng(seed)
    out = []
    for key, g in rows.groupby(keys, dropna=False, sort=True, observed=True):
        per = g.groupby(unit, observed=True)[value].mean().to_numpy()
        ci = bootstrap_mean(per, rng, n_boot, unit=unit)
        out.append(dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=False))
                   | {f"n_{unit}s": len(per), "mean": ci.estimate, "ci_low": ci.low, "ci_high": ci.high})
    levels = rows.attrs.get("factors") or {}  # the table keeps the declared order (figures group by it again)
    return ordered(pd.DataFrame(out, columns=cols), {f: lv for f, lv in levels.items() if f in keys})


def region_means(h: pd.DataFrame, factors: list[str], seed: int = 0, n_boot: int = 2000) -> pd.DataFrame:
    """People: mean reading time per group x region x factor cell (region RT = the sum of its words' RTs
    per trial), the mean of subjects' means with a bootstrap CI over subjects."""
    r = region_rows(h)
    t = _means(r, ["group", "region", "region_name"] + factors, "region_rt_ms", "subject_key", seed, n_boot)
    return t.rename(columns={"n_subject_keys": "n_subjects", "mean": "mean_rt_ms"})


def word_means(h: pd.DataFrame, factors: list[str], seed: int = 0, n_boot: int = 2000) -> pd.DataFrame:
    """People: mean reading time per group x word position x factor cell (CI over subjects)."""
    t = _means(h, ["group", "position"] + factors, "word_rt_ms", "subject_key", seed, n_boot)
    return t.rename(columns={"n_subject_keys": "n_subjects", "mean": "mean_rt_ms"})


def region_surprisal(w: pd.DataFrame, factors: list[str], seed: int = 0, n_boot: int = 2000) -> pd.DataFrame:
    """Models: mean surprisal (bits) per group x region x factor cell; a region's surprisal is the sum of its
    words' (minus log2 of the region's probability); the mean of item means, with a bootstrap CI over items."""
    m = w[(w["subject_kind"] == "model") & w["surprisal_bits"].notna()]
    if m.empty:
        return pd.DataFrame(columns=["group", "region", "region_name"] + factors + ["n_items", "mean_surprisal_bits",
                                                                                   "ci_low", "ci_high"])
    t = _means(region_rows(m), ["group", "region", "region_name"] + factors, "surprisal_bits", "item", seed, n_boot)
    return t.rename(columns={"mean": "mean_surprisal_bits"})


def word_surprisal(w: pd.DataFrame, factors: list[str], seed: int = 0, n_boot: int = 2000) -> pd.DataFrame:
    """Models: mean surprisal (bits) per group x word position x factor cell (CI over items)."""
    m = w[(w["subject_kind"] == "model") & w["surprisal_bits"].notna()]
    t = _means(m, ["group", "position"] + factors, "surprisal_bits", "item", seed, n_boot)
    return t.rename(columns={"mean": "mean_surprisal_bits"})


def humans_beside_models(rt: pd.DataFrame, sur: pd.DataFrame, factors: list[str]) -> pd.DataFrame:
    """Region by region and cell by cell: the humans' mean reading time beside each model's mean surprisal."""
    if rt.empty or sur.empty:
        return pd.DataFrame()
    keys = ["region", "region_name"] + factors
    h = rt[rt["group"].astype(str).str.startswith("human")][keys + ["mean_rt_ms", "ci_low", "ci_high"]].rename(
        columns={"mean_rt_ms": "human_mean_rt_ms", "ci_low": "human_ci_low", "ci_high": "human_ci_high"})
    wide = sur.pivot_table(index=keys, columns="group", values="mean_surprisal_bits", dropna=False, observed=True)
    wide.columns = [f"surprisal_bits: {c}" for c in wide.columns]
    return h.merge(wide.reset_index(), on=keys, how="outer").sort_values(keys).reset_index(drop=True)


def varying(d: pd.DataFrame, preds: list[str]) -> tuple[list[str], list[str]]:
    """(predictors that vary in the rows, those constant or empty there: dropped, and said so)."""
    keep, drop = [], []
    for p in preds:
        (keep if p in d.columns and d[p].nunique(dropna=True) > 1 else drop).append(p)
    return keep, drop


def region_formula(factors: list[str], r: pd.DataFrame) -> tuple[str, list[str]]:
    """The by-region model on region rows: the design's factors, length and the previous region's length
    (spillover), each where it varies in the rows fitted; returns (formula, dropped predictors)."""
    prev = r[r["length_prev1"].notna()] if "length_prev1" in r.columns else r.iloc[0:0]
    spill, dropped = varying(prev, ["length_prev1"])
    rows = prev if spill else r  # with spillover only the rows that have a previous region are fitted
    fs, dropped_f = varying(rows, factors)
    nums, dropped_n = varying(rows, ["length"])
    preds = ([" * ".join(fs)] if fs else []) + nums + spill
    return (f"region_rt_ms ~ {' + '.join(preds) or '1'} + (1 | subject_id) + (1 | "
            "item)", dropped_f + dropped_n + dropped)


def surprisal_region_formula(factors: list[str], r: pd.DataFrame) -> tuple[str | None, list[str], str]:
    """A model's region surprisal on the design's factors (items the unit: an item intercept where items
    repeat). Returns (formula or None, dropped predictors, why there is no fit): none when no factor varies
    in the rows, or when every item's surprisal is the same in all its conditions (the same words after the
    same context: a deterministic model cannot differ, and a fit would only report a zero residual)."""
    fs, dropped = varying(r, factors)
    if not fs:
        return None, dropped, "no factor varies in this region's rows"
    s = r[r["surprisal_bits"].notna()]
    repeated = s["item"].duplicated(keep=False)
    if repeated.any() and (s[repeated].groupby("item", observed=True)["surprisal_bits"].nunique() <= 1).all():
        return None, dropped, "every item's surprisal is the same in all its conditions (the same words and context)"
    rfx = " + (1 | item)" if repeated.any() else ""
    return f"surprisal_bits ~ {' * '.join(fs)}{rfx}", dropped, ""


def region_fit_rows(r: pd.DataFrame, formula: str) -> pd.DataFrame:
    """The rows a region's fit uses: spillover needs a previous region (the first region's rows have none)."""
    return r[r["length_prev1"].notna()] if "length_prev1" in formula else r


def add_spillover(w: pd.DataFrame, cols: list[str], k: int = SPILLOVER) -> pd.DataFrame:
    """`<col>_prev1`: the previous word's value within the same trial (subject, item, sentence)."""
    attrs = dict(w.attrs)
    w = w.sort_values(["subject_key", "item_id", "words", "position"], kind="stable").copy()
    g = w.groupby(["subject_key", "item_id", "words"], sort=False, observed=True)
    for c in cols:
        w[f"{c}_prev{k}"] = g[c].shift(k)
    w.attrs = attrs
    return w


def join_surprisal(w: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Human word rows with each model group's surprisal (mean over its subjects: one model scores a
    word the same way every time) joined by item, sentence and position."""
    humans = w[(w["subject_kind"] == "human") & w["word_rt_ms"].notna()]
    models = w[(w["subject_kind"] == "model") & w["surprisal_bits"].notna()]
    out = {}
    for g, m in models.groupby("group", sort=True, observed=True):
        s = (m.groupby(["item", "words", "position"], dropna=False, observed=True)["surprisal_bits"].mean()
             .rename("surprisal"))
        j = humans.drop(columns=["surprisal_bits"]).join(s, on=["item", "words", "position"], how="inner")
        if len(j):
            j.attrs = dict(w.attrs)
            out[str(g)] = j
    return out


def join_region_surprisal(w: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """People who read region by region (a press showed a region: no word time): one row per trial x region
    with the region's time as `word_rt_ms` (the time of one press, as for a word read alone), `position` the
    region's number, `length` its characters, and each model group's `surprisal` of the region (the sum of its
    words', the mean over the group's subjects), `*_prev1` the previous region's; attrs `unit` = "region"."""
    by_region = w["region_read_ms"].notna() if "region_read_ms" in w.columns else pd.Series(False, index=w.index)
    humans = w[(w["subject_kind"] == "human") & by_region]
    models = w[(w["subject_kind"] == "model") & w["surprisal_bits"].notna()]
    if humans.empty or models.empty:
        return {}
    h = region_rows(humans).drop(columns=["surprisal_bits", "surprisal_bits_prev1"])
    h = h.rename(columns={"region_rt_ms": "word_rt_ms", "region_rt_ms_prev1": "word_rt_ms_prev1"})
    h["position"], h["word"] = h["region"], h["region_text"]
    out = {}
    for g, m in models.groupby("group", sort=True, observed=True):
        r = region_rows(m)
        s = r.groupby(["item", "words", "region"], dropna=False, observed=True)["surprisal_bits"].mean()
        j = h.join(s.rename("surprisal"), on=["item", "words", "region"], how="inner")
        if len(j):
            j = j.sort_values(["subject_key", "item_id", "words", "region"], kind="stable")
            jg = j.groupby(["subject_key", "item_id", "words"], sort=False)
            j["surprisal_prev1"] = jg["surprisal"].shift(1).where(jg["region"].shift(1) == j["region"] - 1)
            j["log_frequency"] = np.nan
            j.attrs = {**w.attrs, "unit": "region"}
            out[str(g)] = j.reset_index(drop=True)
    return out


def surprisal_formula(j: pd.DataFrame) -> str:
    preds = ["surprisal", f"surprisal_prev{SPILLOVER}", "length", f"length_prev{SPILLOVER}"]
    if j["log_frequency"].notna().any():
        preds += ["log_frequency", f"log_frequency_prev{SPILLOVER}"]
    return "word_rt_ms ~ " + " + ".join(preds) + " + (1 | subject_id) + (1 | item)"


def surprisal_beside_rt(j: pd.DataFrame) -> pd.DataFrame:
    """Per word of each sentence: the humans' mean RT beside the model's surprisal (the scatter's points)."""
    return (j.groupby(["item", "words", "position", "word"], sort=True, observed=True)
            .agg(n_subjects=("subject_key", "nunique"), mean_rt_ms=("word_rt_ms", "mean"),
                 surprisal_bits=("surprisal", "first"), length=("length", "first")).reset_index())


# ---- --region NAME / --word N: the rows the user's formula is fitted on ------------------------------
def find_region(w: pd.DataFrame, name: str) -> int:
    """A region by its number, `R<k>`, its `task.region_names` name or its full name (case-insensitive)."""
    names = w.drop_duplicates("region")[["region", "region_name"]]
    key = str(name).strip().lower()
    for _, row in names.iterrows():
        r, n = int(row["region"]), str(row["region_name"])
        if key in (str(r), f"r{r}", n.lower(), n.split(" (")[0].lower()):
            return r
    raise ReadingError(f"--region {name!r}: no such region; the regions are "
                       + ", ".join(f"{int(r)} = {n!r}" for r, n in names.sort_values("region").itertuples(index=False)))


def reading_rules(opt) -> ReadingRules:
    """The rules an analysis' options ask for (`--word-rt-range`, `--exclude-wrong-answers`)."""
    lo, hi = getattr(opt, "word_rt_range", (RT_MIN, RT_MAX))
    return ReadingRules(float(lo), float(hi), bool(getattr(opt, "exclude_wrong_answers", False)))


def target_rows(trials: pd.DataFrame, factors: list[str] | dict[str, list[str]], region: str | None = None,
                word: int | None = None, rules: ReadingRules = ReadingRules()) -> pd.DataFrame:
    """The rows `--formula` is fitted on with `--region NAME` (one row per trial: region_rt_ms,
    surprisal_bits, length, n_words, *_prev1) or `--word N` (one row per trial: the N-th word's
    word_rt_ms, surprisal_bits, length, and the previous word's *_prev1). People's reading times pass the
    rules first (a region with a trimmed word has no region time)."""
    if region is not None and word is not None:
        raise ReadingError("--region and --word: give one of them")
    w = word_rows(trials, factors)
    if w.empty:
        raise ReadingError(f"--{'region' if region is not None else 'word'}: the data have no per-word reading times "
                           "or surprisals (word_rts_ms, word_surprisal_bits)")
    w = with_rules(w, rules)
    if region is not None:
        r = region_rows(w)
        out = r[r["region"] == find_region(w, region)]
    else:
        n = int(word)  # type: ignore[arg-type]
        top = int(w["position"].max())
        if not 1 <= n <= top:
            raise ReadingError(f"--word {n}: words are numbered 1 to {top} (the longest sentence)")
        out = add_spillover(w, ["word_rt_ms", "surprisal_bits", "length"])
        out = out[out["position"] == n]
    out = out.reset_index(drop=True)
    out.attrs = dict(w.attrs)
    return out


REGION_COLUMNS = {"region", "region_name", "region_text", "region_rt_ms", "surprisal_bits", "length", "n_words",
                  "region_rt_ms_prev1", "surprisal_bits_prev1", "length_prev1", "words"}
WORD_COLUMNS = {"region", "region_name", "region_text", "position", "word", "word_rt_ms", "surprisal_bits", "length",
                "log_frequency", "question_correct", "word_rt_ms_prev1", "surprisal_bits_prev1", "length_prev1",
                "words"}


def check_target(trials: pd.DataFrame, region: str | None, word: int | None) -> set[str]:
    """Before any work: `--region`/`--word` name a region or word of the data; returns the columns the
    formula may use there (ReadingError otherwise)."""
    if region is not None and word is not None:
        raise ReadingError("--region and --word: give one of them")
    w = word_rows(trials, [])
    what = "--region" if region is not None else "--word"
    if w.empty:
        raise ReadingError(f"{what}: the data have no per-word reading times or surprisals (word_rts_ms, "
                           "word_surprisal_bits)")
    if region is not None:
        find_region(w, region)
        return REGION_COLUMNS
    top = int(w["position"].max())
    if not 1 <= int(word) <= top:  # type: ignore[arg-type]
        raise ReadingError(f"--word {word}: words are numbered 1 to {top} (the longest sentence)")
    return WORD_COLUMNS


def plain(d: pd.DataFrame) -> pd.DataFrame:
    """Categorical columns as text for a fit (the order travels as `declared`, never as a dtype R might read)."""
    cats = [c for c in d.columns if isinstance(d[c].dtype, pd.CategoricalDtype)]
    if not cats:
        return d
    out = d.copy()
    for c in cats:
        out[c] = out[c].astype(object).where(out[c].notna(), None)
    out.attrs = dict(d.attrs)
    return out
