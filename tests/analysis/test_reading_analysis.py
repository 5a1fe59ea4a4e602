"""Self-paced reading without R (analysis/measures/reading.py, self-paced reading's numbers): regions named,
the declared factor order kept through every API call, region rows and rules with counts, means with CIs for
people (over subjects) and models (over items) against hand computations, --region/--word rows and refusals,
and the report's figure."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from analysis import api
from analysis.measures.reading import (
    ReadingError,
    ReadingRules,
    apply_rules,
    check_target,
    region_formula,
    region_rows,
    target_rows,
    varying,
    word_rows,
)
from tests.cli_refusal import refused
from tests.support import reading_synthetic as rs

NAMES = ["subject", "verb", "object", "pp"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("spr")
    truth = rs.reading_design(root, region_names=NAMES)
    return root, api.load_sessions(root), truth


def test_regions_are_named_by_the_setting_or_by_their_words(data, tmp_path):
    _, df, _ = data
    w = api.reading_words(df)
    assert list(w.drop_duplicates("region").sort_values("region")["region_name"]) == NAMES
    rs.reading_design(tmp_path, n_subjects=2, n_items=4, model=False)  # no region_names: R<k> (words of item 1)
    w2 = api.reading_words(api.load_sessions(tmp_path))
    got = list(w2.drop_duplicates("region").sort_values("region")["region_name"])
    assert got == ["R1 (The clerk)", "R2 (kept)", "R3 (the old letters)", "R4 (in a box .)"]


def test_region_names_that_do_not_fit_the_items_are_refused(tmp_path):
    rs.reading_design(tmp_path, n_subjects=1, n_items=2, model=False, region_names=["a", "b", "c"])
    with pytest.raises(ReadingError, match="region_names names 3 region"):
        api.reading_words(api.load_sessions(tmp_path))


def test_declared_factor_order_survives_every_api_call(data):
    _, df, _ = data
    assert api.factors(df)["cue"] == ["weak", "strong"]  # not alphabetical
    w = api.reading_words(df)
    assert w.attrs["factors"]["cue"] == ["weak", "strong"]
    assert list(w["cue"].cat.categories) == ["weak", "strong"] and w["cue"].cat.ordered
    # attrs dropped (a groupby, a user's merge): the ordered categoricals still carry the order
    stripped = w.copy()
    stripped.attrs = {}
    assert api.factors(stripped)["cue"] == ["weak", "strong"]
    assert api.factors(api.reading_regions(df))["cue"] == ["weak", "strong"]
    for j in api.surprisal_rt(df).values():
        assert api.factors(j)["cue"] == ["weak", "strong"]
    t = api.reading_times(df, n_boot=50)
    assert list(t["region_rt"]["cue"].drop_duplicates()) == ["weak", "strong"]  # tables in the declared order
    for k in ("region_rt", "word_rt", "region_surprisal", "word_surprisal"):  # and regrouped (the figure) too
        assert [str(c) for c in t[k].groupby(["cue", "load"], observed=True, sort=True).size().index] == \
            ["('weak', 'high')", "('weak', 'low')", "('strong', 'high')", "('strong', 'low')"], k
    assert list(target_rows(api.model_frame(df), api.factors(df), region="object").attrs["factors"]["cue"]) == \
        ["weak", "strong"]


def test_region_rows_sum_words_and_a_trimmed_word_leaves_no_region_time(data):
    _, df, _ = data
    w = api.reading_words(df)
    h = w[w["subject_kind"] == "human"].copy()
    h.attrs = dict(w.attrs)
    one = h[(h["subject_id"] == h["subject_id"].iloc[0]) & (h["item"] == "1")]
    r = region_rows(one)
    for reg, g in one.groupby("region"):
        row = r[r["region"] == reg].iloc[0]
        assert row["region_rt_ms"] == pytest.approx(g["word_rt_ms"].sum())
        assert row["length"] == sum(len(x.strip(".")) or 1 for x in g["word"])
        assert row["n_words"] == len(g)
    assert np.isnan(r.iloc[0]["length_prev1"]) and r.iloc[1]["length_prev1"] == r.iloc[0]["length"]
    bad = one.copy()
    bad.loc[bad.index[3], "word_rt_ms"] = 7000.0  # "the", a word of region 3, beyond RT_MAX
    kept, counts = apply_rules(bad)
    assert counts == {"rt_range": 1}
    r2 = region_rows(kept)
    assert np.isnan(r2[r2["region"] == 3]["region_rt_ms"].iloc[0])
    assert r2[r2["region"] == 2]["region_rt_ms"].iloc[0] == pytest.approx(r[r["region"] == 2]["region_rt_ms"].iloc[0])


def test_wrong_answer_rule_is_named_and_counted():
    w = pd.DataFrame({"word_rt_ms": [300.0, 320.0, 50.0, 400.0], "question_correct": [True, False, True, np.nan]})
    kept, counts = apply_rules(w, ReadingRules(exclude_wrong_answers=True))
    assert counts == {"wrong_answer": 1, "rt_range": 1} and kept["word_rt_ms"].tolist() == [300.0, 400.0]
    assert "off" in ReadingRules().describe()["wrong_answer"]


def test_means_people_over_subjects_models_over_items(data):
    _, df, truth = data
    t = api.reading_times(df, n_boot=200)
    rt, sur = t["region_rt"], t["region_surprisal"]
    regions = api.reading_regions(df)
    h = regions[(regions["subject_kind"] == "human") & (regions["region"] == 3)]
    cell = h[(h["cue"] == "weak") & (h["load"] == "high")]
    hand = cell.groupby("subject_key")["region_rt_ms"].mean()
    row = rt[(rt["region"] == 3) & (rt["cue"] == "weak") & (rt["load"] == "high")].iloc[0]
    assert row["mean_rt_ms"] == pytest.approx(hand.mean()) and row["n_subjects"] == len(hand)
    assert row["ci_low"] < row["mean_rt_ms"] < row["ci_high"]
    # the model: a region's surprisal = the sum of its words' (read from the table's JSON by hand); the cell's
    # mean is the mean over its items, with n_items and a CI over items
    words = truth["items"]
    reg3 = [k for k, ch in enumerate(words[0][1].split("|")) for _ in ch.split()]
    m = sur[(sur["region"] == 3)]
    assert set(m["group"].astype(str)) == {g for g in df["group"].astype(str).unique() if "tiny-lm" in g}
    raw = df[df["subject_kind"] == "model"]
    per_item = {}
    for _, t_row in raw.iterrows():
        bits = json.loads(t_row["word_surprisal_bits"])
        if t_row["cue"] == "weak" and t_row["load"] == "high":
            per_item[t_row["item"]] = sum(b for b, k in zip(bits, reg3, strict=False) if k == 2)
    mrow = m[(m["cue"] == "weak") & (m["load"] == "high")].iloc[0]
    assert (mrow["n_items"] == len(per_item)
            and mrow["mean_surprisal_bits"] == pytest.approx(np.mean(list(per_item.values()))))
    assert mrow["ci_low"] < mrow["mean_surprisal_bits"] < mrow["ci_high"]
    assert (m["n_items"] > 0).all() and "n_subjects" not in m.columns
    assert len(t["word_rt"]) and len(t["word_surprisal"]) and t["rules"]["rule"].tolist() == ["rt_range"]


def test_constant_predictors_are_dropped_and_named():
    r = pd.DataFrame({"cue": ["weak", "strong"] * 4, "load": ["high"] * 8, "length": [5] * 8,
                      "length_prev1": [3, 4, 3, 4, 3, 4, 3, 4]})
    f, dropped = region_formula(["cue", "load"], r)
    assert f == "region_rt_ms ~ cue + length_prev1 + (1 | subject_id) + (1 | item)"
    assert dropped == ["load", "length"]
    first = r.assign(length=[4, 5] * 4, length_prev1=np.nan)  # the first region: no spillover, all rows fitted
    assert region_formula(["cue", "load"], first) == ("region_rt_ms ~ cue + length + (1 | subject_id) + (1 | item)",
                                                      ["load", "length_prev1"])
    assert varying(r.assign(length_prev1=np.nan), ["length_prev1"]) == ([], ["length_prev1"])


def test_region_and_word_rows_for_the_formula(data):
    _, df, _ = data
    m = api.model_frame(df)
    r = target_rows(m, api.factors(df), region="object")
    assert set(r["region"]) == {3} and len(r[r["subject_kind"] == "human"]) == 12 * 16
    assert {"region_rt_ms", "length", "length_prev1", "surprisal_bits"} <= set(r.columns)
    assert target_rows(m, api.factors(df), region="R3")["region_rt_ms"].equals(r["region_rt_ms"])
    w = target_rows(m, api.factors(df), word=2)
    assert set(w["position"]) == {2} and w["length_prev1"].eq(3).all()  # "The"
    with pytest.raises(ReadingError, match="no such region.*1 = 'subject'"):
        check_target(m, "critical", None)
    with pytest.raises(ReadingError, match="numbered 1 to 10"):
        check_target(m, None, 12)


def test_cli_refuses_an_unknown_region_before_work(data, tmp_path):
    root, _, _ = data
    out = tmp_path / "res"
    refused("analyze", str(root), "--out", str(out), "--formula", "region_rt_ms ~ cue + (1 | subject)", "--region",
            "crit", match=["--region 'crit': no such region", "1 = 'subject'"], timeout=300)
    assert not (out / "results.json").exists()


@pytest.mark.long
def test_cli_refuses_region_without_formula_and_a_word_out_of_range(data, tmp_path):
    root, _, _ = data
    out = tmp_path / "res"
    refused("analyze", str(root), "--out", str(out), "--region", "verb", match="give a --formula", timeout=300)
    refused("analyze", str(root), "--out", str(out), "--formula", "word_rt_ms ~ cue + (1 | subject)", "--word", "40",
            match="numbered 1 to 10", timeout=300)
    refused("analyze", str(root), "--out", str(out), "--word-rt-range", "5000,100", match="--word-rt-range '5000,100'",
            timeout=300)


def test_report_section_and_figure_without_r(data, tmp_path):
    _, df, _ = data
    res = api.report(df, tmp_path / "res", mixed=False, n_boot=100)
    sec = {s["id"]: s for s in res["sections"]}["task_reading"]
    assert "rt_range" in sec["text"] and "reading_regions" in sec["figures"]
    assert (tmp_path / "res" / "figures" / "reading_regions.png").stat().st_size > 10_000
    t = pd.read_csv(tmp_path / "res" / "tables" / "reading_region_means.csv")
    assert list(t.drop_duplicates("region_name").sort_values("region")["region_name"]) == NAMES
    assert json.loads((tmp_path / "res" / "results.json").read_text())["sections"]


def test_a_region_the_same_in_every_condition_gets_no_surprisal_fit():
    from analysis.measures.reading import surprisal_region_formula

    same = pd.DataFrame({"item": ["1", "1", "2", "2"], "cue": ["weak", "strong"] * 2,
                         "surprisal_bits": [5.0, 5.0, 7.0, 7.0]})
    formula, _, why = surprisal_region_formula(["cue"], same)
    assert formula is None and "same in all its conditions" in why
    differ = same.assign(surprisal_bits=[5.0, 6.0, 7.0, 7.5])
    assert surprisal_region_formula(["cue"], differ)[0] == "surprisal_bits ~ cue + (1 | item)"
    once = differ.assign(item=["1", "2", "3", "4"])  # each item in one condition: no item intercept
    assert surprisal_region_formula(["cue"], once)[0] == "surprisal_bits ~ cue"
    assert surprisal_region_formula(["cue"], differ.assign(cue="weak"))[2] == "no factor varies in this region's rows"


def test_region_names_setting_travels_from_the_spec_to_the_sidecar_record(tmp_path):
    import shutil

    from experiments.design_compiler import compile_sequence
    from experiments.spec import SpecError, load_spec
    from tests.cli_refusal import ROOT

    src = ROOT / "experiments" / "specs"
    shutil.copy(src / "self_paced_reading_items.csv", tmp_path)
    text = (src / "self_paced_reading.yaml").read_text()
    (tmp_path / "spr.yaml").write_text(text.replace("  option_keys: [f, j]\n", "  option_keys: [f, j]\n"
                                                    "  region_names: [subject, verb, pp, critical, spillover]\n"))
    exp = load_spec(str(tmp_path / "spr.yaml"))
    assert exp.task.settings().region_names == ["subject", "verb", "pp", "critical", "spillover"]
    assert compile_sequence(exp, "P01").design["region_names"] == ["subject", "verb", "pp", "critical", "spillover"]
    assert "region_names" not in compile_sequence(load_spec("self_paced_reading"), "P01").design  # unchanged without
    (tmp_path / "bad.yaml").write_text(text.replace("  option_keys: [f, "
                                                    "j]\n", "  option_keys: [f, j]\n  region_names: 3\n"))
    with pytest.raises(SpecError, match="region_names"):
        load_spec(str(tmp_path / "bad.yaml"))


def test_the_word_rt_range_option_is_applied_and_counted(data, tmp_path):
    _, df, _ = data
    res = api.report(df, tmp_path / "res", mixed=False, n_boot=50, word_rt_range=(300.0, 5000.0))
    text = {s["id"]: s for s in res["sections"]}["task_reading"]["text"]
    rts = api.reading_words(df)["word_rt_ms"].dropna()
    hand = int((~rts.between(300.0, 5000.0)).sum())
    assert hand > 0 and f"outside [300, 5000] ms are left out ({hand} word(s) removed)" in text


@pytest.mark.parametrize("regions", [
    "The horse raced past the barn fell .",  # no bar: one region (the kind's rule), not one region per word
    "The horse | raced past | the barn | fell .",
    None,  # no regions: each word a region
])
def test_the_analysis_regions_are_the_kinds_regions(regions):
    """One rule: the analysis' regions of an item are the self_paced_reading kind's (the one every runner
    uses to sum reading times per region), for a bar-less `regions`, one with bars, and none."""
    from kinds.self_paced_reading.task import units

    sentence = "The horse raced past the barn fell ."
    mat = {"sentence": sentence} | ({"regions": regions} if regions else {})
    n = len(sentence.split())
    df = pd.DataFrame([{"subject_kind": "human", "subject_key": "s1", "subject_id": "s1", "group": "human",
                        "item": "1", "item_id": "1-a", "words": sentence, "materials": json.dumps(mat),
                        "word_rts_ms": json.dumps([300.0 + i for i in range(n)])}])
    w = word_rows(df, [])
    _, regs = units(mat)
    kind = [next(r for r, idx in enumerate(regs, start=1) if i in idx) for i in range(n)]
    assert w["region"].tolist() == kind
    assert w["region"].nunique() == {None: n, sentence: 1}.get(regions, 4)
    r = region_rows(w)  # a region's time: the sum of its words' times, over the kind's regions
    assert r["region_rt_ms"].tolist() == [sum(300.0 + i for i in idx) for idx in regs]
