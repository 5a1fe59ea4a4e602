"""Measures read from the task, honest subjects, ratings, decisions and RTs as a reviewer reads
them. Each number is checked against a hand count on tables built by tests/support/measures_synthetic.py
(or an independent bootstrap / scipy computation), never against the code under test."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import mannwhitneyu, norm

from analysis import api
from tests.support import measures_synthetic as ms


def _reject_all(item, cond):
    return "no"


# ---- 32.1: acceptance and d' from the task, not from `grammatical` -----------------------------------
def test_a_model_that_rejects_everything(tmp_path):
    """The issue's case: `grammatical` is True on every row (the runner's default), the factors are not
    called grammatical; a model answering "no" to everything accepts nothing and rejects everything."""
    ms.judgment_sessions(tmp_path, n_subjects=4, answer=_reject_all, meta=ms.model_meta(temperature=0.9))
    df = api.load_sessions(tmp_path)
    raw = pd.concat(pd.read_csv(p, dtype=str) for p in sorted((tmp_path / "data").glob("*.csv")))
    assert (raw["grammatical"] == "True").all()  # the column claims every sentence is grammatical ...
    # ... the analysis fills it from the answers instead
    assert df["grammatical"].tolist() == (df["correct_response"] == "yes").tolist()
    acc = api.acceptance(df, by=["agreement", "distance"], n_boot=200)
    assert len(acc) == 4 and (acc["rate"] == 0).all() and (acc["n_trials"] == 16).all()
    assert set(acc["answer"]) == {"accept (yes)", "reject (no)"}
    dp = api.dprime(df, by=["agreement", "distance"], n_boot=200).set_index("distance")
    # agreement fixes the answer: d' pools over it, by distance
    assert list(dp.index) == ["far", "near"] and "agreement" not in dp.columns
    for dist in ("near", "far"):
        row = dp.loc[dist]
        assert row["hit_rate"] == 1.0 and row["false_alarm_rate"] == 1.0
        assert row["hits"] == row["signal_trials"] == 16 and row["false_alarms"] == row["noise_trials"] == 16
        H, F = 16.5 / 17, 16.5 / 17
        assert row["dprime"] == pytest.approx(norm.ppf(H) - norm.ppf(F))
        assert row["criterion_c"] == pytest.approx(-(norm.ppf(H) + norm.ppf(F)) / 2)
        assert row["bias"] == "answers 'no' on every trial"


def test_acceptance_is_the_share_of_the_accepting_label_by_hand(tmp_path):
    rng = np.random.default_rng(3)
    ms.judgment_sessions(tmp_path, n_subjects=6, kind="human", prefix="P",
                         answer=lambda s, i, c: "yes" if rng.random() < (0.8 if c["agreement"] == "match" else 0.3)
                         else "no")
    df = api.load_sessions(tmp_path)
    acc = api.acceptance(df, by=["agreement", "distance"], n_boot=200).set_index(["agreement", "distance"])
    for (a, d), x in df.groupby(["agreement", "distance"]):
        assert acc.loc[(a, d), "rate"] == pytest.approx((x["response"] == "yes").mean())
        subj = x.groupby("subject_id")["response"].apply(lambda r: (r == "yes").mean()).mean()
        assert acc.loc[(a, d), "by_subject_mean"] == pytest.approx(subj)
    dp = api.dprime(df, by=["distance"], n_boot=200).set_index("distance")
    for d, x in df.groupby("distance"):
        sig, noi = x[x["correct_response"] == "no"], x[x["correct_response"] == "yes"]
        h, f = (sig["response"] == "no").sum(), (noi["response"] == "no").sum()
        H, F = (h + .5) / (len(sig) + 1), (f + .5) / (len(noi) + 1)
        assert dp.loc[d, "hits"] == h and dp.loc[d, "false_alarms"] == f
        assert dp.loc[d, "dprime"] == pytest.approx(norm.ppf(H) - norm.ppf(F))


def test_the_report_has_acceptance_and_dprime_without_a_grammatical_factor(tmp_path):
    ms.judgment_sessions(tmp_path / "d", n_subjects=4, kind="human", prefix="P",
                         answer=lambda s, i, c: "yes" if (s + i) % 3 else "no")
    res = api.report(tmp_path / "d", tmp_path / "out", n_boot=100, mixed=False, show_progress=False)
    ids = [s["id"] for s in res["sections"]]
    assert "acceptance" in ids
    t = pd.read_csv(tmp_path / "out" / "tables" / "acceptance_long.csv")
    assert set(t["agreement"]) == {"match", "mismatch"} and set(t["distance"]) == {"near", "far"}


def test_labels_from_the_sidecar_decide_which_answer_accepts(tmp_path):
    """A judgment whose first label is `no` (e.g. "is this sentence odd?"): the sidecar's labels say so."""
    meta = ms.model_meta(temperature=0.5)
    meta["protocol_settings"]["task_settings"]["labels"] = [{"value": "no", "text": "Fine"},
                                                            {"value": "yes", "text": "Odd"}]
    ms.judgment_sessions(tmp_path, n_subjects=2, answer=_reject_all, meta=meta)
    df = api.load_sessions(tmp_path)
    acc = api.acceptance(df, by=["agreement"], n_boot=50)
    assert (acc["rate"] == 1.0).all()  # "no" is the accepting label here


# ---- 32.3: deterministic copies are one subject ------------------------------------------------------
def _item_boot(values_by_item: pd.DataFrame, n_boot: int, seed: int) -> tuple[float, float]:
    """An independent cluster bootstrap of the pooled rate over items."""
    rng = np.random.default_rng(seed)
    s, n = values_by_item["sum"].to_numpy(), values_by_item["size"].to_numpy()
    idx = rng.integers(0, len(s), size=(n_boot, len(s)))
    r = s[idx].sum(1) / n[idx].sum(1)
    return tuple(np.quantile(r, [0.025, 0.975]))


def test_copies_given_the_same_trials_are_one_subject(tmp_path):
    """8 deterministic sessions on 4 lists: the two sessions of each list are copies (one subject, each trial
    counted once); sessions on other lists answered other trials and stay subjects."""
    ms.judgment_sessions(tmp_path / "copies", n_subjects=8, meta=ms.model_meta("none"))
    ms.judgment_sessions(tmp_path / "four", n_subjects=4, meta=ms.model_meta("none"))
    df8 = api.load_sessions(tmp_path / "copies")
    df4 = api.load_sessions(tmp_path / "four")
    assert df8["subject_key"].nunique() == 4 and len(df8) == 64  # 128 trials, each list's trials twice
    copies = api.model_copies(df8)
    assert list(copies["sessions"]) == [2, 2, 2, 2] and list(copies["duplicates_dropped"]) == [16] * 4
    assert any("different trials" in n for n in df4.attrs["load_info"].notes)
    by = ["agreement", "distance"]
    cols = ["rate", "rate_ci_low", "rate_ci_high", "n_items", "n_trials", "n_subjects", "ci_unit"]
    r8 = api.rates(df8, by=by, n_boot=2000, seed=5)
    r4 = api.rates(df4, by=by, n_boot=2000, seed=5)
    pd.testing.assert_frame_equal(r8[by + cols], r4[by + cols])  # the copies add nothing: 4 subjects, one per list
    assert (r8["n_subjects"] == 4).all()


def test_merged_copies_keep_each_session_s_order(tmp_path):
    """A merged subject's order columns are its sessions' own: positions within the block's length."""
    ms.judgment_sessions(tmp_path, n_subjects=8, meta=ms.model_meta("none"))
    df = api.load_sessions(tmp_path)
    assert df["trial_position"].max() == 16 and df["trials_before"].max() == 15
    by_hand = df.groupby("subject_key")["trial_position"].apply(lambda s: sorted(s.astype(int)))
    assert all(v == list(range(1, 17)) for v in by_hand)


def test_running_context_and_sampled_subjects_stay_subjects(tmp_path):
    ms.judgment_sessions(tmp_path / "run", n_subjects=8, meta=ms.model_meta("running"))
    ms.judgment_sessions(tmp_path / "samp", n_subjects=8, meta=ms.model_meta("none", temperature=0.7), prefix="S")
    for sub in ("run", "samp"):
        df = api.load_sessions(tmp_path / sub)
        assert df["subject_key"].nunique() == 8 and len(df) == 128
        r = api.rates(df, by=["agreement"], n_boot=100)
        assert (r["n_subjects"] == 8).all() and (r["ci_unit"] == "subject").all()


def test_copies_that_disagree_stay_subjects_and_the_option_keeps_copies_apart(tmp_path):
    rng = np.random.default_rng(1)

    def noisy(i, c):  # claims determinism but answers a repeated trial differently
        return "yes" if rng.random() < 0.5 else "no"

    ms.judgment_sessions(tmp_path / "bad", n_subjects=8, answer=noisy, meta=ms.model_meta("none"))
    df = api.load_sessions(tmp_path / "bad")
    assert df["subject_key"].nunique() == 8
    assert any("answer repeated trials differently" in n for n in df.attrs["load_info"].notes)
    ms.judgment_sessions(tmp_path / "good", n_subjects=8, meta=ms.model_meta("none"))
    assert api.load_sessions(tmp_path / "good")["subject_key"].nunique() == 4
    kept = api.load_sessions(tmp_path / "good", model_copies="subjects")
    assert kept["subject_key"].nunique() == 8 and len(kept) == 128


def test_fewshot_prompts_are_one_subject_each(tmp_path):
    for k, prompt in enumerate(("fewshot:twoshot_a", "fewshot:twoshot_b")):
        ms.judgment_sessions(tmp_path, n_subjects=8, meta=ms.model_meta(prompt), prefix=f"F{k}",
                             answer=lambda i, c, k=k: ms.det_answer(i, c, salt=str(k)))
    df = api.load_sessions(tmp_path)
    assert df["subject_key"].nunique() == 8  # per prompt, one merged subject per list (its two copies)
    assert len(api.model_copies(df)) == 8


# ---- 32.6: ratings, decisions and RTs -----------------------------------------------------------------
def test_model_ratings_report_expected_value_and_argmax(tmp_path):
    _, recs = ms.rating_model_sessions(tmp_path / "d")
    res = api.report(tmp_path / "d", tmp_path / "out", n_boot=100, show_progress=False)
    t = pd.read_csv(tmp_path / "out" / "tables" / "rating_means_long.csv")
    hand = pd.DataFrame(recs).groupby("island")[["argmax", "expected"]].mean()
    for island in ("short", "long"):
        ev = t[(t["measure"] == "expected value (default)") & (t["island"] == island)]["rate"].item()
        am = t[(t["measure"] == "argmax") & (t["island"] == island)]["rate"].item()
        assert ev == pytest.approx(hand.loc[island, "expected"]) and am == pytest.approx(hand.loc[island, "argmax"])
    assert hand.loc["long", "argmax"] == 7.0 and hand.loc["long", "expected"] == pytest.approx(0.45 + 0.55 * 7)
    sec = next(s for s in res["sections"] if s["id"] == "task_rating")
    text = json.dumps(sec)
    assert "there are none here" in text and "ordinal_fit" not in text  # no fit promised, none run


def test_lexical_decision_hits_false_alarms_bias_auc_and_rts(tmp_path):
    w = ms.lexical_sessions(tmp_path / "d")
    df = api.load_sessions(tmp_path / "d")
    dp = api.dprime(df, by=[], n_boot=100).set_index("group")
    meta_g = next(g for g in dp.index if g.endswith("meta"))
    row = dp.loc[meta_g]
    assert row["hit_rate"] == 1.0 and row["false_alarm_rate"] == 1.0  # "nonword" to all 24
    assert row["bias"] == "answers 'nonword' on every trial" and row["reject_value"] == "nonword"
    res = api.report(tmp_path / "d", tmp_path / "out", n_boot=200, mixed=False, show_progress=False)
    ids = [s["id"] for s in res["sections"]]
    assert {"acceptance", "model_logprob", "response_times"} <= set(ids)
    # AUC against scipy's Mann-Whitney U; d' at the median criterion by hand
    ld = pd.read_csv(tmp_path / "out" / "tables" / "lexical_logprob_decision.csv").iloc[0]
    lp = pd.DataFrame(w["lp"])
    words, non = lp[lp["word"]]["per_char"], lp[~lp["word"]]["per_char"]
    u = mannwhitneyu(words, non).statistic
    assert ld["auc"] == pytest.approx(u / (len(words) * len(non)))
    crit = np.median(lp["per_char"])
    hits, fas = int((non < crit).sum()), int((words < crit).sum())
    assert ld["hits"] == hits and ld["false_alarms"] == fas
    assert ld["dprime"] == pytest.approx(
        norm.ppf((hits + .5) / (len(non) + 1)) - norm.ppf((fas + .5) / (len(words) + 1)))
    # RTs: correct trials, 200-3000 ms, then 2.5 SD per subject; counts and geometric means by hand
    rt = pd.DataFrame(w["rt"])
    ex = pd.read_csv(tmp_path / "out" / "tables" / "rt_exclusions.csv").iloc[0]
    assert ex["trials_with_rt"] == len(rt) and ex["error_or_unanswered"] == int((~rt["correct"]).sum())
    ok = rt[rt["correct"]]
    assert ex["outside_trim"] == int(((ok["rt"] < 200) | (ok["rt"] > 3000)).sum()) >= 1
    kept = ok[(ok["rt"] >= 200) & (ok["rt"] <= 3000)]
    m, s = kept.groupby("subject")["rt"].transform("mean"), kept.groupby("subject")["rt"].transform("std")
    kept = kept[(kept["rt"] - m).abs() <= 2.5 * s]
    assert ex["kept"] == len(kept)
    means = pd.read_csv(tmp_path / "out" / "tables" / "rt_means.csv").set_index("lexicality")
    for lex, x in kept.groupby("lexicality"):
        geo = np.exp(x.assign(l=np.log(x["rt"])).groupby("subject")["l"].mean().mean())
        assert means.loc[lex, "rt_ms"] == pytest.approx(geo)
    # the direct group no longer reads "answered 0" alone: its log-probabilities are counted
    ss = pd.read_csv(tmp_path / "out" / "tables" / "sample_sizes.csv")
    assert "log-probabilities" in ss.to_csv()
