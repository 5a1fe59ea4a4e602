"""Twins, parts 5 and 6: reading ΔLL against an independent OLS (statsmodels), and the Psych-201 lines."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from analysis.twins.reading_dll import delta_ll, delta_ll_words, predictors


def _words(effect: float, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(8):
        for i in range(12):
            sur = rng.gamma(2.0, 2.0, 8)
            lens = rng.integers(2, 9, 8)
            for p in range(8):
                rows.append({"subject_key": f"h:{s}", "item": str(i), "position": p, "length": float(lens[p]),
                             "surprisal": sur[p], "length_prev1": float(lens[p - 1]) if p else np.nan,
                             "surprisal_prev1": sur[p - 1] if p else np.nan,
                             "word_rt_ms": 300 + 8 * lens[p] + effect * sur[p] + rng.normal(0, 25)})
    return pd.DataFrame(rows)


def test_held_out_log_likelihood_equals_statsmodels_ols():
    import statsmodels.api as sm

    j = _words(10.0)
    w = delta_ll_words(j, "item", k=4, seed=1)
    base, full = predictors(j)
    x = j.dropna(subset=full).reset_index(drop=True)
    units = w.drop_duplicates("unit").set_index("unit")["fold"]
    test_mask = x["item"].astype(str).map(units) == 0
    tr, te = x[~test_mask], x[test_mask]
    want = []
    for cols in (full, base):
        fit = sm.OLS(tr["word_rt_ms"], sm.add_constant(tr[cols])).fit()
        s2 = fit.ssr / fit.nobs  # the maximum-likelihood variance
        r = te["word_rt_ms"] - fit.predict(sm.add_constant(te[cols], has_constant="add"))
        want.append(-0.5 * (np.log(2 * math.pi * s2) + r ** 2 / s2))
    np.testing.assert_allclose(w[w["fold"] == 0]["delta_ll"].to_numpy(), (want[0] - want[1]).to_numpy(), rtol=1e-8)


def test_delta_ll_finds_surprisal_only_where_it_is():
    with_effect = delta_ll({"m": _words(10.0)}, n_boot=300).set_index("folds_by")
    without = delta_ll({"m": _words(0.0)}, n_boot=300).set_index("folds_by")
    for by, folds in (("people", 8), ("items", 10)):
        assert with_effect.loc[by, "ci_low"] > 0.05 and with_effect.loc[by, "folds"] == folds
        assert abs(without.loc[by, "delta_ll_per_word"]) < 0.01 and without.loc[by, "ci_low"] < 0.005
    assert with_effect.loc["people", "words_left_out"] == 8 * 12  # each sentence's first word: no spillover
