"""Twins, part 3: the people's estimates in the twin table are a direct lme4 fit on the people's rows;
signs and CIs are read only from fits whose status is ok."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "support"))
from design_synthetic import agreement_judgments  # noqa: E402

from analysis import api  # noqa: E402
from analysis.twins.effects import twin_wide  # noqa: E402

FORMULA = "correct ~ head_number * attractor_number + (1 | subject)"


@pytest.fixture(scope="module")
def df(tmp_path_factory):
    root = tmp_path_factory.mktemp("twfx")
    agreement_judgments(root / "h", n_subjects=6, n_items=16, seed=3)
    agreement_judgments(root / "m", n_subjects=6, n_items=16, seed=9, kind="model", protocol="judgment:meta",
                        model="lm")
    return api.load_sessions([root / "h", root / "m"])


def test_people_estimates_equal_a_direct_lme4_fit(r_ready, df):
    import rpy2.robjects as ro
    from rpy2.robjects import pandas2ri
    from rpy2.robjects.conversion import localconverter

    long = api.twin_effects(df, FORMULA)
    assert set(long["who"]) == {"people", "model"}
    h = df[df["group"] == "human"]
    d = pd.DataFrame({"y": h["correct"].astype(float).to_numpy(),
                      "hn": np.where(h["head_number"] == "sg", 1.0, -1.0),
                      "an": np.where(h["attractor_number"] == "sg", 1.0, -1.0),
                      "s": h["subject_key"].astype(str).to_numpy()})
    with localconverter(ro.default_converter + pandas2ri.converter):
        rd = ro.conversion.py2rpy(d)
    ref = list(ro.r("function(d) lme4::fixef(lme4::glmer(y ~ hn * an + (1 | s), data = d, family = binomial))")(rd))
    people = long[long["who"] == "people"]
    np.testing.assert_allclose(people["estimate"].to_numpy(), ref, rtol=1e-5, atol=1e-6)
    m = long[long["who"] == "model"].set_index("term")
    p = people.set_index("term")
    for term, r in m.iterrows():
        ok, people_ok = r["status"] == "ok", p.loc[term, "status"] == "ok"
        assert r["differs_from_0"] == ((r["ci_low"] > 0 or r["ci_high"] < 0) if ok else None)
        assert r["sign_agrees_with_people"] == ((np.sign(r["estimate"]) == np.sign(p.loc[term, "estimate"]))
                                                if ok and people_ok else None)


def test_a_fit_not_ok_is_never_read_as_a_finding():
    long = pd.DataFrame([
        {"term": "x", "group": "human", "who": "people", "estimate": 1.0, "ci_low": 0.5, "ci_high": 1.5, "status": "ok",
         "differs_from_0": True, "sign_agrees_with_people": None, "n_obs": 10},
        {"term": "x", "group": "lm · none · meta", "who": "model", "estimate": 9.0, "ci_low": 8.0, "ci_high": 10.0,
         "status": "singular", "differs_from_0": None, "sign_agrees_with_people": None, "n_obs": 10}])
    w = twin_wide(long).iloc[0]
    assert w["human: estimate [95% CI]"] == "1.000 [0.500, 1.500]"
    assert "singular" in w["lm · none · meta: estimate [95% "
                           "CI]"] and "9.0" not in w["lm · none · meta: estimate [95% CI]"]
    assert w["lm · none · meta: sign as people's"] == "—" and w["lm · none · meta: differs from 0"] == "—"


def test_the_shown_table_says_yes_and_no_from_a_frame_of_numpy_booleans():
    long = pd.DataFrame({"term": ["x", "x"], "group": ["human", "m"], "who": ["people", "model"],
                         "estimate": [1.0, -2.0], "ci_low": [0.5, -3.0], "ci_high": [1.5, 0.5], "status": ["ok", "ok"],
                         "differs_from_0": np.array([True, False]), "sign_agrees_with_people": [None, np.False_],
                         "n_obs": [5, 5]})
    w = twin_wide(long).iloc[0]
    assert (w["human: differs from 0"], w["m: differs from 0"], w["m: sign as people's"]) == ("yes", "no", "no")
