"""Task analyses without R: choice position bias, completion scoring, rating distributions, the per-word
rows of self-paced reading and surprisal, and the demand gap between protocols; against hand counts."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from analysis import api
from analysis.measures.reading import RT_MAX, ReadingError, region_of_words, trim_rts
from tests.support import design_synthetic as ds


def test_choice_position_bias_and_correct_position(tmp_path):
    ds.choice_sessions(tmp_path, n_subjects=6, n_items=40, bias=0.4)
    df = api.load_sessions(tmp_path)
    pb, ap = api.choice_bias(df)
    # hand counts from the recorded columns
    k0 = int((df["chosen_position"] == 0).sum())
    row = pb[(pb["position"] == 0)].iloc[0]
    assert row["n_chosen"] == k0 and row["n_trials"] == 240 and row["chance"] == 0.5
    assert row["share"] > 0.55 and row["p_binomial"] < 0.05  # the generator's bias is found
    from scipy.stats import binomtest

    assert row["p_binomial"] == pytest.approx(binomtest(k0, 240, 0.5).pvalue)
    # the correct option is original index 0; its screen position is where 0 sits in option_order
    cpos = [json.loads(o).index(0) for o in df["option_order"]]
    hand = df.assign(c=df["correct"].astype(float), p=cpos).groupby("p")["c"].mean()
    assert ap.set_index("correct_position")["accuracy"].to_dict() == pytest.approx(hand.to_dict())
    assert hand[0] > hand[1]  # a bias to position 0 helps when the answer is shown first


def test_completion_strict_and_accepted_against_hand_scores(tmp_path):
    ds.completion_sessions(tmp_path)
    df = api.load_sessions(tmp_path)
    t = api.completion(df, by=[], n_boot=50)
    got = {(r.score, r.group): (r.n_trials, r.rate) for r in t.itertuples()}
    # K0: "Mouse." = mouse; coffee is accepted for tea; window != door; " park " = park
    # K1: mice accepted for mouse; tea; door; no answer (left out)
    assert got[("target", "human")] == (7, pytest.approx(4 / 7))
    assert got[("target or accepted", "human")] == (7, pytest.approx(6 / 7))
    by = api.completion(df, by=["constraint"], n_boot=50)
    strict = by[by["score"] == "target"].set_index("constraint")["rate"]
    assert strict["high"] == pytest.approx(2 / 4) and strict["low"] == pytest.approx(2 / 3)


def test_rating_distribution_shares(tmp_path):
    ds.rating_sessions(tmp_path, n_subjects=4, n_items=10)
    df = api.load_sessions(tmp_path)
    dist = api.rating_distribution(df, by=["grammatical"])
    for g, x in df.groupby("grammatical"):
        row = dist[dist["grammatical"] == g].iloc[0]
        assert row["n_trials"] == len(x)
        for v, share in x["rating"].value_counts(normalize=True).items():
            assert row[f"share_{int(v)}"] == pytest.approx(share)
        assert sum(row[c] for c in dist.columns if c.startswith("share_")) == pytest.approx(1.0)


def test_reading_word_rows_regions_and_surprisal_join(tmp_path):
    paths, truth = ds.reading_sessions(tmp_path, n_subjects=3, n_items=4)
    df = api.load_sessions(tmp_path)
    w = api.reading_words(df)
    first = w[(w["subject_kind"] == "human") & (w["item_id"] == w["item_id"].iloc[0])]
    first = first[first["subject_id"] == first["subject_id"].iloc[0]]
    sent = first["words"].iloc[0].split()
    assert first["position"].tolist() == list(range(1, len(sent) + 1)) and first["word"].tolist() == sent
    assert first["length"].tolist() == [len(x.strip(".")) or 1 for x in sent]
    horse = "The horse raced past the barn fell .".split()
    assert region_of_words({"regions": "The horse | raced past | the barn | fell ."}, horse) == [1, 1, 2, 2, 3, 3, 4, 4]
    with pytest.raises(ReadingError, match="do not split the sentence"):  # regions that do not fit the words: refused
        region_of_words({"regions": "a | b"}, ["a", "b", "c"])
    joined = api.surprisal_rt(df)
    (g, j), = joined.items()
    assert "tiny-lm" in g and len(j) == len(w[w["subject_kind"] == "human"])
    item = int(j["item"].iloc[0])
    rows = j[j["item"] == str(item)].sort_values(["subject_key", "position"])
    one = rows[rows["subject_key"] == rows["subject_key"].iloc[0]]
    assert one["surprisal"].tolist() == pytest.approx(list(truth["surprisal"][item]))
    assert math.isnan(one["surprisal_prev1"].iloc[0])
    assert one["surprisal_prev1"].iloc[1:].tolist() == pytest.approx(list(truth["surprisal"][item][:-1]))


def test_reading_time_trimming_is_counted():
    w = pd.DataFrame({"word_rt_ms": [50.0, 300.0, RT_MAX + 1, np.nan, 400.0]})
    kept, removed = trim_rts(w)
    assert kept["word_rt_ms"].tolist() == [300.0, 400.0] and removed == 2


def test_demand_gap_paper_and_smoothed_definitions(tmp_path):
    ds.agreement_judgments(tmp_path, n_subjects=4, kind="model", protocol="direct", model="tiny", seed=5)
    ds.agreement_judgments(tmp_path, n_subjects=4, kind="model", protocol="meta", model="tiny", seed=6)
    df = api.load_sessions(tmp_path)
    gp = api.demand_gaps(df, n_boot=200)
    assert len(gp) == 1
    row = gp.iloc[0]
    assert (row["low_demand"], row["high_demand"]) == ("direct", "meta")  # direct first
    a = df[df["protocol"] == "direct"]["correct"].astype(float)
    b = df[df["protocol"] == "meta"]["correct"].astype(float)
    lo = lambda p: math.log(p / (1 - p))  # noqa: E731
    assert row["gap_paper"] == pytest.approx(lo(a.mean()) - lo(b.mean()))
    sm = lambda k, n: math.log((k + 0.5) / (n - k + 0.5))  # noqa: E731
    assert row["gap_smoothed"] == pytest.approx(sm(a.sum(), len(a)) - sm(b.sum(), len(b)))
    # item x condition (item_id): 32 items in 4 lists
    assert row["ci_low"] < row["gap_smoothed"] < row["ci_high"] and row["n_items"] == 128
    # named pairs, and items answered by one protocol only are left out of both
    df2 = df[~((df["protocol"] == "meta") & (df["item"] == "0"))]
    gp2 = api.demand_gaps(df2, pairs=[("meta", "direct")], n_boot=50)
    assert gp2.iloc[0]["low_demand"] == "meta" and gp2.iloc[0]["n_items"] == 124
    # an accuracy of 1 makes the paper's gap infinite and the smoothed one finite, flagged
    df3 = df.copy()
    df3.loc[df3["protocol"] == "direct", "correct"] = True
    r3 = api.demand_gaps(df3, n_boot=50).iloc[0]
    assert math.isinf(r3["gap_paper"]) and math.isfinite(r3["gap_smoothed"]) and "ceiling" in r3["flag"]


def test_task_sections_honour_blocks(tmp_path):
    """The choice section counts the rows --blocks names: the default `test` leaves the trials
    marked training out, `all` keeps them; counted against the frame."""
    from analysis.options import Options
    from analysis.report.design import task_sections
    from analysis.report.results_folder import Results

    ds.choice_sessions(tmp_path / "data", n_subjects=6, n_items=40, bias=0.4)
    df = api.load_sessions(tmp_path / "data")
    df = pd.DataFrame(df).assign(training=lambda x: x.groupby("subject_key").cumcount() < 10)
    n_train = int(df["training"].sum())
    assert n_train == 60
    for blocks, n in (("test", 240 - n_train), ("all", 240)):
        res = Results(tmp_path / blocks)
        task_sections(res, df, {}, Options(blocks=blocks), tmp_path / blocks, lambda s: None, [])
        pb = pd.read_csv(tmp_path / blocks / "tables" / "choice_position_bias.csv")
        assert pb["n_trials"].iloc[0] == n
