"""Signal detection (analysis/measures/detection.py) against hand-computed values.

The expected d' and c are written out here from the counts with scipy's normal quantile, not
with the module's own function.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from analysis.measures.detection import bias_label, detection_table, dprime_c


def trials(subject: str, group: str, hits: int, signal: int, fas: int, noise: int, dep: str = "inner",
           protocol_response: tuple[str, str] = ("violation", "no_violation")) -> list[dict]:
    yes, no = protocol_response
    base = {"group": group, "subject_kind": "human" if group == "human" else "model", "structure": "long_nested",
            "condition": "PSP", "training": False, "subject_key": f"{group}:{subject}"}
    out = [base | {"violation_position": dep, "response": yes if i < hits else no} for i in range(signal)]
    out += [base | {"violation_position": "none", "response": yes if i < fas else no} for i in range(noise)]
    return out


def test_dprime_and_c_equal_a_hand_computation_with_the_log_linear_correction():
    # 2 subjects: 7/10 and 9/10 hits, 2/10 and 1/10 false alarms -> pooled 16/20 hits, 3/20 false alarms
    df = pd.DataFrame(trials("a", "human", 7, 10, 2, 10) + trials("b", "human", 9, 10, 1, 10))
    t = detection_table(df, n_boot=200, pooled=True)
    assert len(t) == 1
    r = t.iloc[0]
    h, f = (16 + 0.5) / (20 + 1), (3 + 0.5) / (20 + 1)  # Hautus (1995): +0.5 to the counts, +1 to the trials
    assert (r["hits"], r["signal_trials"], r["false_alarms"], r["noise_trials"]) == (16, 20, 3, 20)
    assert r["hit_rate"] == 0.8 and r["false_alarm_rate"] == 0.15 and r["miss_rate"] == pytest.approx(0.2)
    assert r["dprime"] == pytest.approx(norm.ppf(h) - norm.ppf(f), abs=1e-12)
    assert r["dprime"] == pytest.approx(1.7591, abs=1e-4)  # z(16.5/21 = .7857) = 0.7916, z(3.5/21 = .1667) = -0.9674
    assert r["criterion_c"] == pytest.approx(0.0879, abs=1e-4)  # -(0.7916 - 0.9674) / 2
    assert r["criterion_c"] == pytest.approx(-(norm.ppf(h) + norm.ppf(f)) / 2, abs=1e-12)
    # each subject's own d', then their mean
    da = norm.ppf(7.5 / 11) - norm.ppf(2.5 / 11)
    db = norm.ppf(9.5 / 11) - norm.ppf(1.5 / 11)
    assert r["mean_subject_dprime"] == pytest.approx((da + db) / 2, abs=1e-12)
    assert r["ci_unit"] == "subject" and r["dprime_ci_low"] <= r["dprime"] <= r["dprime_ci_high"]
    # resampling 2 subjects gives the pooled counts of (a, a), (a, b) or (b, b): the CI ends are two of them
    aa = norm.ppf(14.5 / 21) - norm.ppf(4.5 / 21)
    bb = norm.ppf(18.5 / 21) - norm.ppf(2.5 / 21)
    assert r["dprime_ci_low"] == pytest.approx(aa) and r["dprime_ci_high"] == pytest.approx(bb)


def test_rates_of_0_and_1_stay_finite_and_show_the_bias():
    # a subject who says 'violation' to everything: no misses, all false alarms
    yes = detection_table(pd.DataFrame(trials("y", "m · yes", 10, 10, 10, 10)), n_boot=50, pooled=True).iloc[0]
    assert yes["miss_rate"] == 0 and np.isfinite(yes["dprime"])
    assert yes["dprime"] == pytest.approx(0.0, abs=1e-12)
    assert yes["criterion_c"] == pytest.approx(-norm.ppf(10.5 / 11), abs=1e-12) and yes["criterion_c"] < -1.5
    assert bias_label(yes["criterion_c"], yes["c_ci_low"], yes["c_ci_high"]) == "leans to 'violation'"
    no = detection_table(pd.DataFrame(trials("n", "m · no", 0, 10, 0, 10)), n_boot=50, pooled=True).iloc[0]
    assert no["miss_rate"] == 1 and no["criterion_c"] > 1.5 and no["ci_unit"] == "trial"
    d, c = dprime_c(10, 10, 0, 10)
    assert d == pytest.approx(2 * norm.ppf(10.5 / 11)) and c == pytest.approx(0.0, abs=1e-12)


def test_only_violation_judgments_are_detection_trials():
    rows = trials("a", "human", 7, 10, 2, 10) + trials("b", "human", 9, 10, 1, 10)
    fc = trials("f", "m · forced_choice", 5, 10, 5, 10, protocol_response=("sono", "è"))  # a word, not a judgment
    unanswered = [dict(rows[0], response="none")] * 3
    train = [dict(r, training=True) for r in trials("a", "human", 0, 10, 10, 10)]
    t = detection_table(pd.DataFrame(rows + fc + unanswered + train), n_boot=50, pooled=True)
    assert list(t["group"]) == ["human"] and t.iloc[0]["signal_trials"] == 20 and t.iloc[0]["noise_trials"] == 20


def test_per_condition_and_dependency_share_the_noise_trials():
    rows = trials("a", "human", 7, 10, 2, 10) + [r for r in trials("a", "human", 3, 10, 0, 0, dep="outer")]
    t = detection_table(pd.DataFrame(rows), n_boot=50).set_index("dependency")
    assert t.loc["inner", "noise_trials"] == t.loc["outer", "noise_trials"] == 10
    assert t.loc["outer", "dprime"] == pytest.approx(norm.ppf(3.5 / 11) - norm.ppf(2.5 / 11), abs=1e-12)
