"""A general design's analysis without R: loading its tables, rates by factor (F1/F2), acceptance, d',
formula parsing and checking, sum coding; each against hand counts on invented sessions in the trial-table
format of docs/general_model.md (tests/support/design_synthetic.py)."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from analysis import api
from analysis.load import LoadError
from analysis.stats import formula as fm
from tests.cli_refusal import refused
from tests.support import design_synthetic as ds


@pytest.fixture(scope="module")
def agreement(tmp_path_factory):
    root = tmp_path_factory.mktemp("agr")
    ds.agreement_judgments(root / "humans")
    return root


@pytest.fixture(scope="module")
def df(agreement):
    return api.load_sessions(agreement / "humans")


def test_loader_keeps_factor_and_generic_columns(df):
    assert api.factors(df) == {"head_number": ["sg", "pl"], "attractor_number": ["sg", "pl"],
                               "grammatical": ["true", "false"]}
    assert set(df["head_number"]) == {"sg", "pl"} and set(df["attractor_number"]) == {"sg", "pl"}
    # the factor named like a Lakretz column fills that column (boolean), the others their own
    assert df["grammatical"].dtype == "boolean" and df["grammatical"].notna().all()
    assert str(df["list"].dtype) == "Int64" and sorted(set(df["list"])) == list(range(1, 9))
    assert set(df["task"]) == {"judgment"}
    # the judgment's own answers (yes/no) load; the Lakretz violation/no_violation check is not applied
    assert set(df["correct_response"]) == {"yes", "no"}
    # Latin square: every subject sees 32 items once, every cell 4 times
    cells = df.groupby(["subject_id", "head_number", "attractor_number", "grammatical"]).size()
    assert (cells == 4).all() and df.groupby("subject_id")["item"].nunique().eq(32).all()


def test_a_table_without_its_sidecar_takes_extra_columns_as_factors(agreement, tmp_path):
    f = sorted((agreement / "humans" / "data").glob("*.csv"))[0]
    shutil.copy(f, tmp_path / f.name)  # no sidecar
    d = api.load_sessions(tmp_path / f.name)
    assert set(api.factors(d)) == {"head_number", "attractor_number"}
    assert set(d["head_number"]) == {"sg", "pl"}


def test_a_lakretz_table_still_refuses_an_unknown_column(agreement, tmp_path):
    """Extra columns are factors only in a general design's table (it has item and task); the header
    of a Lakretz table stays strict (a typo is refused, as before)."""
    f = sorted((agreement / "humans" / "data").glob("*.csv"))[0]
    raw = pd.read_csv(f, dtype=str, keep_default_na=False)
    from experiments.schema import GENERIC_COLUMN_NAMES
    from studies.lakretz2021.columns import HEADER

    raw = raw.drop(columns=GENERIC_COLUMN_NAMES + ["attractor_number"]).rename(columns={"head_number": "violation_pos"})
    raw = raw[[c for c in raw.columns if c in HEADER or c == "violation_pos"]]  # a Lakretz table but for the typo
    raw.to_csv(tmp_path / "study-x_subject-1_session-1_data.csv", index=False)
    with pytest.raises(LoadError, match="unknown column 'violation_pos'"):
        api.load_sessions(tmp_path)


def _hand_rates(d: pd.DataFrame, by: list[str], y: pd.Series) -> pd.DataFrame:
    x = d.assign(_y=y.astype(float))
    pooled = x.groupby(by)["_y"].mean()
    f1 = x.groupby(by + ["subject_id"])["_y"].mean().groupby(by).mean()
    f2 = x.groupby(by + ["item"])["_y"].mean().groupby(by).mean()
    return pd.DataFrame({"rate": pooled, "f1": f1, "f2": f2})


def test_rates_by_factor_match_hand_counts(df):
    by = ["head_number", "attractor_number"]
    r = api.rates(df, by=by, n_boot=300).set_index(by)
    hand = _hand_rates(df, by, df["correct"])
    assert len(r) == 4
    for key, row in hand.iterrows():
        got = r.loc[key]
        assert got["rate"] == pytest.approx(row["rate"]) and got["by_subject_mean"] == pytest.approx(row["f1"])
        assert got["by_item_mean"] == pytest.approx(row["f2"])
        assert got["n_subjects"] == 8 and got["n_items"] == 32 and got["n_trials"] == 64
        for u in ("rate", "by_subject", "by_item"):
            lo, hi = got[f"{u}_ci_low"], got[f"{u}_ci_high"]
            assert lo < hi and lo <= got[u if u == "rate" else f"{u}_mean"] <= hi
    # the item CI resamples items, the subject CI subjects: they differ
    assert not np.allclose(r["by_item_ci_low"], r["by_subject_ci_low"])


def test_acceptance_and_dprime_match_hand_counts(df):
    acc = api.acceptance(df, by=["attractor_number"], n_boot=200).set_index(["attractor_number", "answer"])
    yes = (df["response"] == "yes")
    label = df["correct_response"].map({"yes": "accept (yes)", "no": "reject (no)"})
    hand = df.assign(y=yes.astype(float), answer=label).groupby(["attractor_number", "answer"])["y"].mean()
    assert len(hand) == 4
    for key, v in hand.items():
        assert acc.loc[key, "rate"] == pytest.approx(v)
    dp = api.dprime(df, by=["head_number"], n_boot=200).set_index("head_number")
    for h, x in df.groupby("head_number"):
        sig, noi = x[~x["grammatical"].astype(bool)], x[x["grammatical"].astype(bool)]
        hits, fas = (sig["response"] == "no").sum(), (noi["response"] == "no").sum()
        H, F = (hits + .5) / (len(sig) + 1), (fas + .5) / (len(noi) + 1)
        assert dp.loc[h, "hits"] == hits and dp.loc[h, "false_alarms"] == fas
        assert dp.loc[h, "dprime"] == pytest.approx(norm.ppf(H) - norm.ppf(F))
        assert dp.loc[h, "criterion_c"] == pytest.approx(-(norm.ppf(H) + norm.ppf(F)) / 2)
        assert dp.loc[h, "dprime_ci_low"] < dp.loc[h, "dprime"] < dp.loc[h, "dprime_ci_high"]


def test_formula_parsing_aliases_and_random_terms():
    f = fm.parse("correct ~ a * b + (1 + a | subject) + (1 | item)")
    assert f.response == "correct" and f.fixed == "a * b"
    assert [(r.lhs, r.group) for r in f.random] == [("1 + a", "subject_id"), ("1", "item")]
    assert f.variables == ["correct", "a", "b", "subject_id", "item"]
    g = fm.parse("log(rt_ms) ~ x + (1 + x || subject_id)")
    assert g.response_var == "rt_ms" and g.random[0].double_bar
    steps = fm.simpler_structures(f)
    assert [name for name, _ in steps] == ["no correlations between random effects (||)", "random intercepts only"]
    assert steps[0][1].r_text() == "correct ~ a * b + (1 + a || subject_id) + (1 | item)"
    assert steps[1][1].r_text() == "correct ~ a * b + (1 | subject_id) + (1 | item)"
    for bad in ("correct a + b", "~ a", "correct ~ a + (1 | subject", "correct ~ a + (1 | a + b)"):
        with pytest.raises(fm.FormulaError):
            fm.parse(bad)


def test_unknown_formula_column_is_named(df):
    with pytest.raises(fm.FormulaError, match=r"unknown column 'head_nmber' \(did you mean 'head_number'\?\)"):
        fm.check_columns(fm.parse("correct ~ head_nmber + (1 | subject)"), list(df.columns))


def test_sum_coding_of_a_three_level_factor():
    d = pd.DataFrame({"y": [0, 1, 1, 0, 1, 0], "c": ["x", "y", "z", "x", "y", "z"], "subject_id": list("ssssss")})
    data, coded, codings = fm.sum_code(d, fm.parse("y ~ c + (1 + c | subject)"), {"c": ["z", "y", "x"]})
    assert coded.fixed == "(c1 + c2)" and coded.random[0].lhs == "1 + (c1 + c2)"
    assert codings[0].levels == ["z", "y", "x"]
    assert data["c1"].tolist() == [-1, 0, 1, -1, 0, 1] and data["c2"].tolist() == [-1, 1, 0, -1, 1, 0]
    two, coded2, _ = fm.sum_code(d.assign(c=["a", "b"] * 3), fm.parse("y ~ c"), {})
    assert coded2.fixed == "c" and two["c"].tolist() == [1, -1] * 3


def test_cli_refuses_an_unknown_formula_column_and_by(agreement, tmp_path):
    refused("analyze", str(agreement / "humans"), "--out", str(tmp_path / "o1"), "--no-mixed",
            "--by", "head,attractor_number",
            match=["--by: unknown column 'head'"])
    refused("analyze", str(agreement / "humans"), "--out", str(tmp_path / "o2"),
            "--formula", "correct ~ head_number * atractor + (1 | subject)",
            match=["unknown column 'atractor'", "attractor_number"])
    refused("analyze", str(agreement / "humans"), "--out", str(tmp_path / "o3"), "--formula", "correct ~ (1 | subject",
            match=["--formula", "parentheses"])
    refused("analyze", str(agreement / "humans"), "--out", str(tmp_path / "o4"), "--no-mixed",
            "--formula", "correct ~ head_number", match="--no-mixed means no R")
    assert not (tmp_path / "o2" / "results.json").exists()


def test_report_without_r_follows_the_design(agreement, tmp_path):
    d = api.load_sessions(agreement / "humans")
    res = api.report(d, tmp_path / "out", by="head_number,attractor_number", n_boot=100, mixed=False,
                     show_progress=False)
    ids = [s["id"] for s in res["sections"]]
    assert ids[:4] == ["data", "design", "rates", "acceptance"]
    assert not {"error_rates", "first_encounter", "exposures", "detection"} & set(ids)
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Table C1" not in html and "WRONG_DDC" not in html and "focus cell" not in html
    assert (tmp_path / "out" / "figures" / "interaction_accuracy.png").stat().st_size > 5000
    t = pd.read_csv(tmp_path / "out" / "tables" / "rates_by_factor_long.csv")
    assert set(t.columns) >= {"head_number", "attractor_number", "by_item_mean", "by_subject_mean"}
    assert json.loads((tmp_path / "out" / "results.json").read_text())["design"] == "general"
