"""The paper's measures on hand-made scores: accuracy over both orders, balanced accuracy, differentials,
Pearson r (against scipy on the hand-built vectors) and the heat maps' averaging."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr

from reproductions.hu_levy.measures import consistency, consistency_means, differentials, item_table, performance


def row(exp, ds, item, method, order, shown, option, lp):
    return {"model": "m", "experiment": exp, "dataset": ds, "item": str(item), "method": method, "order": order,
            "shown": shown, "option": option, "prompt": f"{method}|{order}|{shown}|{option}", "logprob": float(lp)}


def scores() -> pd.DataFrame:
    rows = []
    # Exp 1: 4 items; Direct log P = -1..-4, MetaQuestionSimple = 2 * Direct + noise
    for k, (d, m) in enumerate([(-1, -2.5), (-2, -4.0), (-3, -6.5), (-4, -8.0)]):
        rows += [row("1", "p18", k, "Direct", "none", "item", "word", d),
                 row("1", "p18", k, "MetaQuestionSimple", "none", "item", "word", m)]
    # Exp 2: 3 items. Direct: good - bad = +1, -1, +2. MetaInstruct per order (goodFirst, badFirst) differentials:
    # item0 (+1, -3) -> mean -1; item1 (+2, +2) -> 2; item2 (-1, +0.5) -> -0.25
    for k, dd in enumerate([1, -1, 2]):
        rows += [row("2", "dtfit", k, "Direct", "none", "pair", "good", -5 + dd),
                 row("2", "dtfit", k, "Direct", "none", "pair", "bad", -5)]
    for k, (a, b) in enumerate([(1, -3), (2, 2), (-1, 0.5)]):
        for order, diff in (("goodFirst", a), ("badFirst", b)):
            rows += [row("2", "dtfit", k, "MetaInstruct", order, "pair", "good", -3 + diff),
                     row("2", "dtfit", k, "MetaInstruct", order, "pair", "bad", -3)]
    # Exp 3a: 4 items. MetaQuestionComplex: Yes > No for good on items 0,1,2; No > Yes for bad on items 0,3
    yes_good = [-0.5, -0.6, -0.7, -2.0]
    no_good = [-1.0, -1.0, -1.0, -0.1]
    yes_bad = [-1.5, -0.2, -0.3, -1.9]
    no_bad = [-1.0, -1.0, -1.0, -0.2]
    for k in range(4):
        rows += [row("3a", "blimp", k, "Direct", "none", "pair", "good", -10 - k),
                 row("3a", "blimp", k, "Direct", "none", "pair", "bad", -10.5 if k < 3 else -9)]
        rows += [row("3a", "blimp", k, "MetaQuestionComplex", "none", "good", "Yes", yes_good[k]),
                 row("3a", "blimp", k, "MetaQuestionComplex", "none", "good", "No", no_good[k]),
                 row("3a", "blimp", k, "MetaQuestionComplex", "none", "bad", "Yes", yes_bad[k]),
                 row("3a", "blimp", k, "MetaQuestionComplex", "none", "bad", "No", no_bad[k])]
    return pd.DataFrame(rows)


def test_item_table_and_performance_by_hand():
    items = item_table(scores())
    perf = performance(items, 300, 0).set_index(["experiment", "dataset", "method"])
    assert perf.loc[("1", "all", "Direct"), "estimate"] == pytest.approx(-2.5)
    assert perf.loc[("1", "all", "MetaQuestionSimple"), "estimate"] == pytest.approx(-5.25)
    assert perf.loc[("2", "all", "Direct"), "estimate"] == pytest.approx(2 / 3)
    # both orders count: correct in (item0 gF), (item1 gF, bF), (item2 bF) = 4 of 6
    assert perf.loc[("2", "all", "MetaInstruct"), "estimate"] == pytest.approx(4 / 6)
    assert perf.loc[("2", "all", "MetaInstruct"), "accuracy_goodFirst"] == pytest.approx(2 / 3)
    assert perf.loc[("2", "all", "MetaInstruct"), "accuracy_badFirst"] == pytest.approx(2 / 3)
    assert perf.loc[("2", "all", "MetaInstruct"), "n_items"] == 3
    # 3a Direct: good > bad for items 0, 1 (-10 > -10.5, -11 < -10.5?) -> by hand: item0 -10>-10.5 yes,
    # item1 -11>-10.5 no, item2 -12>-10.5 no, item3 -13>-9 no
    assert perf.loc[("3a", "all", "Direct"), "estimate"] == pytest.approx(1 / 4)
    # balanced: TPR = 3/4, TNR = (item0: -1.0 > -1.5 yes; item1 no; item2 no; item3 -0.2 > -1.9 yes) = 2/4
    assert perf.loc[("3a", "all", "MetaQuestionComplex"), "estimate"] == pytest.approx((0.75 + 0.5) / 2)
    assert perf.loc[("3a", "all", "MetaQuestionComplex"), "measure"] == "balanced accuracy"
    lo, hi = perf.loc[("3a", "all", "MetaQuestionComplex"), ["ci_low", "ci_high"]]
    assert 0 <= lo <= 0.625 <= hi <= 1
    assert perf.loc[("2", "dtfit", "MetaInstruct"), "estimate"] == perf.loc[("2", "all", "MetaInstruct"), "estimate"]


def test_differentials_average_the_orders_and_r_is_pearsons():
    items = item_table(scores())
    diffs = differentials(items).set_index(["experiment", "method", "item"])
    assert diffs.loc[("2", "MetaInstruct", "0"), "meta"] == pytest.approx(-1.0)
    assert diffs.loc[("2", "MetaInstruct", "2"), "meta"] == pytest.approx(-0.25)
    assert diffs.loc[("2", "MetaInstruct", "2"), "direct"] == pytest.approx(2.0)
    assert diffs.loc[("3a", "MetaQuestionComplex", "0"), "meta"] == pytest.approx(-0.5 - -1.5)
    assert diffs.loc[("3a", "MetaQuestionComplex", "3"), "direct"] == pytest.approx(-13 - -9)
    ic = consistency(differentials(items)).set_index(["experiment", "method"])
    assert ic.loc[("2", "MetaInstruct"), "pearson_r"] == pytest.approx(pearsonr([1, -1, 2], [-1, 2, -0.25]).statistic)
    assert ic.loc[("1", "MetaQuestionSimple"), "pearson_r"] == pytest.approx(
        pearsonr([-1, -2, -3, -4], [-2.5, -4, -6.5, -8]).statistic)
    assert ic.loc[("3a", "MetaQuestionComplex"), "pearson_r"] == pytest.approx(
        pearsonr([0.5, -0.5, -1.5, -4],
                 np.subtract(yes := [-0.5, -0.6, -0.7, -2.0], [-1.5, -0.2, -0.3, -1.9])).statistic)
    assert yes


def test_heat_map_means_average_datasets_then_models():
    ic = pd.DataFrame([
        {"model": "a", "experiment": "1", "dataset": "p18", "method": "MetaInstruct", "pearson_r": 0.9},
        {"model": "a", "experiment": "1", "dataset": "news", "method": "MetaInstruct", "pearson_r": 0.5},
        {"model": "b", "experiment": "1", "dataset": "p18", "method": "MetaInstruct", "pearson_r": 0.1},
        {"model": "b", "experiment": "1", "dataset": "news", "method": "MetaInstruct", "pearson_r": 0.3},
    ])
    by_model, overall = consistency_means(ic)
    assert by_model.set_index("model")["pearson_r"].to_dict() == pytest.approx({"a": 0.7, "b": 0.2})
    assert overall["pearson_r"].iloc[0] == pytest.approx(0.45)


def test_an_unscored_request_leaves_its_item_out_never_counted_wrong():
    s = scores()
    s.loc[(s["experiment"] == "2") & (s["method"] == "Direct") & (s["item"] == "0") & (s["option"] == "bad"),
          "logprob"] = np.nan
    s.loc[(s["experiment"] == "1") & (s["method"] == "Direct") & (s["item"] == "3"), "logprob"] = np.nan
    perf = performance(item_table(s), 100, 0).set_index(["experiment", "dataset", "method"])
    assert perf.loc[("2", "all", "Direct"), "estimate"] == pytest.approx(1 / 2)  # items 1 (wrong) and 2 (right)
    assert perf.loc[("2", "all", "Direct"), ["n_items", "n_scored"]].tolist() == [3, 2]
    assert perf.loc[("1", "all", "Direct"), "estimate"] == pytest.approx(-2.0)
    diffs = differentials(item_table(s))
    assert set(diffs[(diffs["experiment"] == "2") & (diffs["method"] == "MetaInstruct")]["item"]) == {"1", "2"}
