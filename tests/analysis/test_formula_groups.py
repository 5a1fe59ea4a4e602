"""One fit per comparison: with people and two model protocols in the data, `--formula`
fits each group separately (named in the table and the report), or once with `group` in the formula;
each fit keeps its diagnostics and the "do not interpret" rule. One group's estimates are checked against
an independent refit of that subset (a direct lme4 call on hand-coded columns; statsmodels' GLM), and
valid formulas with transformations against statsmodels fits of the plain formula (the R text rebuilt
from the parsed tree means what the user wrote)."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from analysis import api
from tests.support import design_synthetic as ds

pytestmark = [pytest.mark.r, pytest.mark.slow]


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    """8 people; a model under `direct` (6 subjects); the same model under `meta` as two identical copies
    of one session (their subject variance is 0 by construction: a singular fit)."""
    root = tmp_path_factory.mktemp("groups")
    ds.agreement_judgments(root / "humans", n_subjects=8, n_items=32)
    ds.agreement_judgments(root / "direct", n_subjects=6, n_items=32, kind="model", protocol="direct", model="m",
                           seed=4)
    (p,) = ds.agreement_judgments(root / "meta", n_subjects=1, n_items=32, kind="model", protocol="meta", model="m",
                                  seed=9)
    twin = p.with_name(p.name.replace("S00-meta", "S01-meta"))
    twin.write_text("".join(("S01" + ln[3:]) if ln.startswith("S00,") else ln
                            for ln in p.read_text(encoding="utf-8").splitlines(keepends=True)), encoding="utf-8")
    shutil.copy(p.with_suffix(".json"), twin.with_suffix(".json"))
    return root


@pytest.fixture(scope="module")
def df(three):
    """Each session a subject (--model-copies subjects): the synthetic model records no sampling, so by
    default its sessions would be merged as deterministic copies (tested below)."""
    return api.load_sessions([three / "humans", three / "direct", three / "meta"], model_copies="subjects")


def test_deterministic_copies_fitted_as_one_subject_without_a_subject_term(r_ready, three):
    """Default loading merges a deterministic model's copies into one subject (analysis/load/subjects.py); its
    group's fit then leaves the subject term out and says so, instead of failing in lme4."""
    merged = api.load_sessions([three / "humans", three / "meta"])
    g = api.fit(merged, "correct ~ head_number * grammatical + (1 | subject)")
    meta = g["m · none · meta"]
    assert meta.method == "glm" and "subject_id" not in meta.n_groups and meta.n_obs == 32
    assert any("(1 | subject_id) left out" in m for m in meta.messages), meta.messages
    assert g["human"].method == "glmer" and g["human"].n_groups == {"subject_id": 8}


def test_one_fit_per_group_by_default_each_matching_an_independent_lme4_refit(r_ready, df):
    import rpy2.robjects as ro
    from rpy2.robjects import pandas2ri
    from rpy2.robjects.conversion import localconverter

    from analysis.stats.formula_fit import PER_GROUP, GroupFits

    g = api.fit(df, "correct ~ head_number * grammatical + (1 | subject)")
    assert isinstance(g, GroupFits) and g.scope == PER_GROUP
    assert sorted(g.fits) == ["human", "m · none · direct", "m · none · meta"] and not g.skipped
    assert "fitted separately for each of the 3 groups" in g.scope_text()
    for name, f in g:
        assert f.group == name and f.n_obs == (df["group"] == name).sum()
    assert g["human"].n_groups == {"subject_id": 8} and g["m · none · direct"].n_groups == {"subject_id": 6}
    # the copies: no subject variance at all -> singular, and said so (never "ok")
    assert g["m · none · meta"].singular and g["m · none · meta"].status != "ok"
    assert g.status != "ok" and "m · none · meta" in g.status
    # independent refit of the human subset: lme4::glmer called directly on hand sum-coded columns
    h = df[df["group"] == "human"]
    d = pd.DataFrame({"y": h["correct"].astype(float).to_numpy(),
                      "hn": np.where(h["head_number"] == "sg", 1.0, -1.0),
                      "gr": np.where(h["grammatical"].astype(bool), 1.0, -1.0),
                      "s": h["subject_key"].astype(str).to_numpy()})
    with localconverter(ro.default_converter + pandas2ri.converter):
        rd = ro.conversion.py2rpy(d)
    ref = ro.r("function(d) { m <- lme4::glmer(y ~ hn * gr + (1 | s), data = d, family = binomial); "
               "c(lme4::fixef(m), sqrt(unlist(lme4::VarCorr(m)))) }")(rd)
    mine = g["human"]
    np.testing.assert_allclose([c["estimate"] for c in mine.coefficients], list(ref)[:4], rtol=1e-5, atol=1e-6)
    assert mine.random_effects[0]["estimate"] == pytest.approx(list(ref)[4], rel=1e-4)
    # one glmer over every row (what `--formula` did before) is another number: nothing is pooled silently
    from analysis.stats.formula_fit import fit_formula

    pooled = fit_formula(api.model_frame(df), "correct ~ head_number * grammatical + (1 | subject)")
    assert pooled.n_obs == len(df)
    assert abs(pooled.coef("grammatical")["estimate"] - mine.coef("grammatical")["estimate"]) > 1e-3


def test_a_model_group_equals_statsmodels_glm_on_its_rows(r_ready, df):
    import statsmodels.api as sm
    import statsmodels.formula.api as smf

    g = api.fit(df, "correct ~ head_number * grammatical")
    f = g["m · none · direct"]
    rows = df[df["group"] == "m · none · direct"].assign(
        y=lambda x: x["correct"].astype(float), gr=lambda x: x["grammatical"].map({True: "true", False: "false"}))
    ref = smf.glm("y ~ C(head_number, Sum, levels=['sg', 'pl']) * C(gr, Sum, levels=['true', 'false'])", rows,
                  family=sm.families.Binomial()).fit()
    np.testing.assert_allclose([c["estimate"] for c in f.coefficients], ref.params.to_numpy(), rtol=1e-6, atol=1e-8)
    assert f.method == "glm" and f.n_obs == len(rows)


def test_group_in_the_formula_fits_once_with_group_effects(r_ready, df):
    import statsmodels.api as sm
    import statsmodels.formula.api as smf

    from analysis.stats.formula_fit import POOLED, FormulaFit

    f = api.fit(df, "correct ~ group * grammatical")
    assert isinstance(f, FormulaFit) and f.group == "" and f.n_obs == len(df)
    assert {"group1", "group2", "grammatical", "group1:grammatical"} <= {c["term"] for c in f.coefficients}
    assert api.fit_groups(df, "correct ~ group * grammatical").scope == POOLED
    d = df.assign(y=df["correct"].astype(float), gr=df["grammatical"].map({True: "true", False: "false"}),
                  grp=df["group"].astype(str))
    ref = smf.glm("y ~ C(grp, Sum, levels=['human', 'm · none · direct', 'm · none · meta']) * "
                  "C(gr, Sum, levels=['true', 'false'])", d, family=sm.families.Binomial()).fit()
    np.testing.assert_allclose([c["estimate"] for c in f.coefficients], ref.params.to_numpy(), rtol=1e-6, atol=1e-8)


def test_transformations_fit_what_they_say(r_ready, df):
    """log(), scale(), I() and poly() rebuilt from the tree: the same fit as statsmodels' plain formula."""
    import statsmodels.formula.api as smf

    h = df[df["group"] == "human"].copy()
    h["t"] = h["trial_index"].astype(float)
    h["lrt"] = np.log(h["rt_ms"].astype(float))
    h["zt"] = (h["t"] - h["t"].mean()) / h["t"].std()
    f = api.fit(h.assign(trial=h["t"]), "log(rt_ms) ~ scale(trial) + I(trial^2 / 100)")
    ref = smf.ols("lrt ~ zt + I(t ** 2 / 100)", h).fit()
    np.testing.assert_allclose([c["estimate"] for c in f.coefficients], ref.params.to_numpy(), rtol=1e-6)
    assert f.fitted == "log(rt_ms) ~ scale(trial) + I(trial^2/100)"
    # poly(t, 2) spans the same space as t + t^2: the same log-likelihood
    p = api.fit(h.assign(trial=h["t"]), "log(rt_ms) ~ poly(trial, 2)")
    q = smf.ols("lrt ~ t + I(t ** 2)", h).fit()
    assert p.loglik == pytest.approx(q.llf, rel=1e-9)


@pytest.mark.long
def test_analyze_names_each_groups_fit_and_stars_only_clean_ones(r_ready, three, tmp_path):
    from tests.cli_refusal import twinlab

    out = tmp_path / "o"
    r = twinlab("analyze", str(three / "humans"), str(three / "direct"), str(three / "meta"), "--out", str(out),
                "--n-boot", "20", "--formula", "correct ~ head_number * grammatical + (1 | subject)", timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    res = json.loads((out / "results.json").read_text())
    sec = next(s for s in res["sections"] if s["id"] == "formula")
    assert "fitted separately for each of the 3 groups" in sec["text"]
    titles = {i["title"]: i["fit"] for i in sec["items"]}
    assert set(titles) == {"Your model — human", "Your model — m · none · direct", "Your model — m · none · meta"}
    assert titles["Your model — m · none · meta"]["status"] != "ok"
    t = pd.read_csv(out / "tables" / "formula_fit.csv")
    assert sorted(set(t["group"])) == ["human", "m · none · direct", "m · none · meta"]
    assert set(t[t["group"] == "m · none · meta"]["status"]) == {titles["Your model — m · none · meta"]["status"]}
    html = (out / "report.html").read_text(encoding="utf-8")
    block = html.split("Your model — m · none · meta")[1].split("<h3>")[0]
    assert "</table>" in block and "*" not in block.split("<table")[1].split("</table>")[0]  # never starred
