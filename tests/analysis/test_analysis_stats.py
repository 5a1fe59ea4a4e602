"""Analyses without R: exposure definitions, bootstrap coverage, error rates, first encounter, model measures."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis.learning.general import first_encounter_fits as _fits
from analysis.learning.general import first_encounter_table as _fe
from analysis.load.prepare import prepare
from analysis.measures.error_rates import error_rates
from analysis.measures.model_measures import demand_gap, evaluation_method, internal_consistency, task_family
from analysis.stats.bootstrap import bootstrap_mean, error_rate_ci
from experiments.schema import COLUMN_NAMES, DTYPES
from studies.lakretz2021.appendix_c import table_c1
from studies.lakretz2021.learning import LAKRETZ


def frame(rows: list[dict]) -> pd.DataFrame:
    """A loaded-style frame from partial rows (schema columns typed, the rest empty)."""
    base = {"subject_kind": "human", "experiment": "x", "session": 1, "source_file": "f", "session_status": "completed",
            "model": None}
    full = [base | r for r in rows]
    df = pd.DataFrame({c: pd.Series([r.get(c) for r in full], dtype=DTYPES[c]) for c in COLUMN_NAMES})
    for c in ("source_file", "session_status", "model"):
        df[c] = pd.Series([r.get(c) for r in full], dtype="string")
    return df


def trial(subject, idx, block, structure, cond, vpos, correct, session=1, **kw) -> dict:
    return {"subject_id": subject, "trial_index": idx, "block": block, "structure": structure, "condition": cond,
            "violation_position": vpos, "dependency": vpos if vpos in ("inner", "outer") else "inner",
            "correct": correct, "session": session} | kw


def test_exposure_counts_follow_the_seeds_definition():
    rows = [
        trial("S1", 0, "training", "long_nested", "PSP", "inner", True),
        trial("S1", 1, "test", "long_nested", "PSP", "inner", False),
        trial("S1", 2, "test", "long_nested", "PSP", "none", True),
        trial("S1", 3, "test", "long_nested", "PSP", "inner", None),  # no answer: still an exposure
        trial("S1", 4, "test", "long_nested", "SSS", "inner", True),
        trial("S1", 0, "test", "long_nested", "PSP", "inner", True, session=2),
        trial("S2", 0, "test", "long_nested", "PSP", "inner", True),
    ]
    d = prepare(frame(rows))
    s1 = d[d["subject_id"] == "S1"]
    assert list(s1["exposures"].astype("float").fillna(-1)) == [-1, 0, 0, 1, 0, 2]
    assert list(s1["exposures_structure"]) == [0, 1, 2, 3, 0, 4]
    assert list(s1["trials_before"]) == [0, 1, 2, 3, 4, 5]
    assert list(s1["first_encounter"]) == [False, True, True, False, True, False]
    assert list(s1["error"].astype(float).fillna(-1)) == [0, 1, 0, -1, 0, 0]
    assert d.loc[d["subject_id"] == "S2", "exposures"].tolist() == [0]
    # only answered post-training violation trials are scored
    assert s1["scored"].tolist() == [True, True, False, False, True, True]


def test_bootstrap_ci_covers_a_known_mean():
    rng = np.random.default_rng(123)
    true_mean, hits, reps = 0.3, 0, 300
    for _ in range(reps):
        per_subject = rng.beta(3, 7, size=30)  # mean 0.3
        ci = bootstrap_mean(per_subject, rng, n_boot=1000)
        hits += ci.low <= true_mean <= ci.high
    coverage = hits / reps
    assert 0.90 <= coverage <= 0.985, coverage


def test_bootstrap_degenerate_cases():
    rng = np.random.default_rng(0)
    ci = bootstrap_mean(np.array([0.4]), rng)
    assert ci.estimate == 0.4 and math.isnan(ci.low) and ci.n_units == 1
    one = pd.DataFrame({"subject_key": ["a"] * 10, "error": [1.0] * 3 + [0.0] * 7})
    ci = error_rate_ci(one, rng)
    assert ci.unit == "trial" and ci.estimate == pytest.approx(0.3) and ci.low < 0.3 < ci.high


def _cells_frame(n_subjects: int, rng: np.random.Generator) -> pd.DataFrame:
    """Each subject: 2 training trials, then 3 PSP-inner and 3 SSS-inner trials in random order.

    First encounters: SSS errs with p=0.1 everywhere; PSP's first error depends on its trial number
    (logit = 1.5 - 0.5 * trials_before). Later trials err with p=0.45 (SSS) and 0.05 (PSP), so
    picking the wrong trial as "first" would show.
    """
    rows = []
    for s in range(n_subjects):
        sid = f"S{s}"
        rows.append(trial(sid, 0, "training", "long_nested", "PSP", "inner", True))
        rows.append(trial(sid, 1, "training", "long_nested", "SSS", "inner", True))
        order = rng.permutation(["PSP"] * 3 + ["SSS"] * 3)
        seen: dict[str, int] = {}
        for k, cond in enumerate(order, start=2):
            first = cond not in seen
            seen[cond] = seen.get(cond, 0) + 1
            if cond == "SSS":
                p = 0.1 if first else 0.45
            else:
                p = 1 / (1 + math.exp(-(1.5 - 0.5 * k))) if first else 0.05
            rows.append(trial(sid, k, "test", "long_nested", str(cond), "inner", bool(rng.random() >= p)))
    return prepare(frame(rows))


def first_encounter_table(d, **kw):
    return _fe(d, LAKRETZ, **kw)


def first_encounter_fits(d):
    return _fits(d, LAKRETZ)


def test_first_encounter_recovers_known_rates_and_trial_slope():
    d = _cells_frame(1500, np.random.default_rng(7))
    fe = first_encounter_table(d, seed=1, n_boot=300)
    sss = fe[(fe["condition"] == "SSS")].iloc[0]
    assert sss["n_subjects"] == 1500
    assert sss["error_rate"] == pytest.approx(0.1, abs=0.025)
    assert sss["ci_low"] < 0.1 < sss["ci_high"]
    fits = first_encounter_fits(d)
    psp = fits[fits["condition"] == "PSP"].iloc[0]
    assert abs(psp["slope"] - (-0.5)) < 3 * psp["slope_se"], psp.to_dict()
    assert abs(psp["intercept"] - 1.5) < 0.45
    c1 = table_c1(fe, "human", "long_nested")
    assert list(c1.index) == ["inner"] and list(c1.columns) == ["SSS", "PSP"]
    assert c1.loc["inner", "SSS"] == pytest.approx(sss["error_rate"])


def test_error_rates_are_pooled_rates_and_seeded():
    d = _cells_frame(40, np.random.default_rng(3))
    # subjects contribute different numbers of trials: drop some, so pooled != mean of subject rates
    d = d.drop(d[(~d["training"]) & (d["subject_id"].isin([f"S{k}" for k in range(10)]))
                 & (d["condition"] == "SSS")].index[:25])
    er = error_rates(d, seed=5, n_boot=500, show_progress=False)
    post = d[~d["training"]]
    for cond in ("PSP", "SSS"):
        c = post[post["condition"] == cond]
        row = er[er["condition"] == cond].iloc[0]
        assert row["error_rate"] == pytest.approx(float(c["error"].sum() / len(c)))
        assert row["mean_subject_rate"] == pytest.approx(float(c.groupby("subject_id")["error"].mean().mean()))
        assert row["n_subjects"] == c["subject_id"].nunique() and row["n_trials"] == len(c)
        assert row["ci_low"] <= row["error_rate"] <= row["ci_high"]
    assert not np.isclose(er.loc[er["condition"] == "SSS", "error_rate"].iloc[0],
                          er.loc[er["condition"] == "SSS", "mean_subject_rate"].iloc[0])
    again = error_rates(d, seed=5, n_boot=500, show_progress=False)
    other = error_rates(d, seed=6, n_boot=500, show_progress=False)
    pd.testing.assert_frame_equal(er, again)
    assert not np.allclose(er["ci_low"], other["ci_low"])


def test_protocol_methods():
    assert evaluation_method("forced_choice") == "direct"
    assert evaluation_method("violation_judgment:direct") == "direct"
    assert evaluation_method("Direct") == "direct"
    assert evaluation_method("violation_judgment") == "metalinguistic"
    assert evaluation_method("MetaQuestionSimple") == "metalinguistic"
    assert evaluation_method("production") == "production"
    assert evaluation_method(None) == "other"
    assert evaluation_method("sentence_judgment:Direct") == "direct"
    assert evaluation_method("sentence_comparison:MetaInstruct") == "metalinguistic"
    assert evaluation_method("production:completion:lenient") == "production"
    assert task_family("sentence_judgment:MetaInstruct") == task_family("sentence_judgment:Direct")
    assert task_family("direct") == task_family("violation_judgment") != task_family("forced_choice")


def _model_rows(protocol: str, corrects, margins, items) -> list[dict]:
    return [trial("M1", k, "test", "long_nested", "PSP", "inner", bool(c), subject_kind="model", protocol=protocol,
                  margin=float(m), item_id=it, context_mode="none", model="lm")
            for k, (c, m, it) in enumerate(zip(corrects, margins, items, strict=False))]


def test_demand_gap_is_the_log_odds_difference():
    items = [f"i{k}" for k in range(100)]
    direct = _model_rows("forced_choice", [1] * 90 + [0] * 10, np.ones(100), items)
    meta = _model_rows("violation_judgment", [1] * 60 + [0] * 40, np.ones(100), items)
    for r in meta:
        r["subject_id"] = "M2"
    dg = demand_gap(prepare(frame(direct + meta)), seed=0, n_boot=500)
    row = dg.iloc[0]
    assert (row["low_demand"], row["high_demand"], row["high_method"]) == ("forced_choice", "violation_judgment",
                                                                         "metalinguistic")
    # smoothed: log odds of (k + 0.5) / (n + 1); the raw log-odds difference beside it
    assert row["demand_gap"] == pytest.approx(math.log(90.5 / 10.5) - math.log(60.5 / 40.5))
    assert row["demand_gap_unsmoothed"] == pytest.approx(math.log(9) - math.log(1.5))
    assert row["ci_low"] < row["demand_gap"] < row["ci_high"] and row["flag"] == ""


def test_a_method_that_is_never_right_gives_a_finite_gap_flagged_as_task_failure():
    items = [f"i{k}" for k in range(50)]
    direct = _model_rows("forced_choice", [1] * 40 + [0] * 10, np.ones(50), items)
    prod = [r | {"subject_id": "M2"} for r in _model_rows("production:completion", [0] * 50, np.ones(50), items)]
    row = demand_gap(prepare(frame(direct + prod)), seed=0, n_boot=300).iloc[0]
    assert row["accuracy_high"] == 0 and math.isinf(row["demand_gap_unsmoothed"])
    assert row["demand_gap"] == pytest.approx(math.log(40.5 / 10.5) - math.log(0.5 / 50.5))
    assert math.isfinite(row["ci_low"]) and math.isfinite(row["ci_high"])
    assert row["flag"] == "task failure: production:completion never right (accuracy 0)"


def test_internal_consistency_recovers_a_known_correlation():
    rng = np.random.default_rng(0)
    n, rho = 800, 0.7
    z = rng.multivariate_normal([0.5, 0.2], [[1, rho], [rho, 1]], size=n)
    items = [f"i{k}" for k in range(n)]
    direct = _model_rows("forced_choice", z[:, 0] > 0, z[:, 0], items)
    meta = _model_rows("MetaQuestionSimple", z[:, 1] > 0, z[:, 1], items)
    for r in meta:
        r["subject_id"] = "M2"
    ic = internal_consistency(prepare(frame(direct + meta)))
    row = ic.iloc[0]
    assert row["n_items"] == n and row["meta_protocol"] == "MetaQuestionSimple"
    assert row["direct_protocol"] == "forced_choice"
    assert row["pearson_r"] == pytest.approx(np.corrcoef(z[:, 0], z[:, 1])[0, 1])
    assert row["ci_low"] < rho < row["ci_high"]


def test_metalinguistic_protocols_pair_with_the_direct_protocol_of_their_task():
    rng = np.random.default_rng(1)
    n = 200
    items = [f"i{k}" for k in range(n)]
    z = rng.normal(size=(n, 3))
    rows = []
    for sid, proto, col, acc in (("M1", "forced_choice", 0, 0.95), ("M2", "sentence_judgment:Direct", 1, 0.8),
                                 ("M3", "sentence_judgment:MetaInstruct", 1, 0.6), ("M4", "production", 2, 0.5)):
        margins = z[:, col] + (0.1 if "Meta" in proto else 0.0) * rng.normal(size=n)
        corrects = rng.random(n) < acc
        for r in _model_rows(proto, corrects, margins, items):
            rows.append(r | {"subject_id": sid})
    d = prepare(frame(rows))
    dg = demand_gap(d, n_boot=200).set_index("high_demand")
    assert dg.loc["sentence_judgment:MetaInstruct", "low_demand"] == "sentence_judgment:Direct"
    assert dg.loc["production", "low_demand"] == "forced_choice"
    assert dg.loc["production", "high_method"] == "production"
    ic = internal_consistency(d)
    assert list(ic["direct_protocol"]) == ["sentence_judgment:Direct"]
    assert ic["pearson_r"].iloc[0] > 0.98  # same underlying differentials (+ small noise), not forced_choice's
