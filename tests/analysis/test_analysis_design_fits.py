"""A user's formula fitted by R (lme4 through rpy2), checked against independent references: statsmodels
GLM with the same sum coding (identical coefficients), statsmodels MixedLM on a random-intercept model, the
random-effects fallback on data whose maximal structure is singular, and `twinlab analyze --formula` end
to end on a general design and on a Lakretz design."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from analysis import api
from analysis.stats.formula_fit import fit_formula
from tests.support import design_synthetic as ds

pytestmark = [pytest.mark.r, pytest.mark.slow]


@pytest.fixture(scope="module")
def agreement(tmp_path_factory):
    root = tmp_path_factory.mktemp("agr")
    ds.agreement_judgments(root / "humans")
    return root


@pytest.fixture(scope="module")
def df(agreement):
    return api.load_sessions(agreement / "humans")


def test_glm_without_random_effects_equals_statsmodels_with_sum_coding(r_ready, df):
    import statsmodels.api as sm
    import statsmodels.formula.api as smf

    f = api.fit(df, "correct ~ head_number * attractor_number * grammatical")
    assert f.method == "glm" and f.family == "binomial" and f.status == "ok"
    d = df.assign(y=df["correct"].astype(float), g=df["grammatical"].map({True: "true", False: "false"}))
    ref = smf.glm("y ~ C(head_number, Sum, levels=['sg', 'pl']) * C(attractor_number, Sum, levels=['sg', 'pl']) "
                  "* C(g, Sum, levels=['true', 'false'])", d, family=sm.families.Binomial()).fit()
    assert [c["term"] for c in f.coefficients][:4] == ["(Intercept)", "head_number", "attractor_number", "grammatical"]
    np.testing.assert_allclose([c["estimate"] for c in f.coefficients], ref.params.to_numpy(), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose([c["se"] for c in f.coefficients], ref.bse.to_numpy(), rtol=1e-6)
    assert f.contrasts[0] == {"factor": "head_number", "levels": ["sg", "pl"], "coding": "head_number: sg = +1, pl = "
                                                                                         "-1"}
    assert "sum-coded" in f.contrasts_note


def test_lmer_on_log_rt_matches_statsmodels_mixedlm(r_ready, df):
    import statsmodels.formula.api as smf

    f = api.fit(df, "rt_ms ~ grammatical + (1 | subject)")
    assert f.method == "lmer" and f.response_transform == "log" and f.fitted.startswith("log(rt_ms) ~")
    assert f.status == "ok" and f.n_groups == {"subject_id": 8}
    d = df.assign(lrt=np.log(df["rt_ms"].astype(float)), g=df["grammatical"].map({True: "true", False: "false"}))
    ref = smf.mixedlm("lrt ~ C(g, Sum, levels=['true', 'false'])", d, groups=d["subject_key"]).fit(reml=True)
    np.testing.assert_allclose([c["estimate"] for c in f.coefficients], ref.fe_params.to_numpy(), atol=1e-4)
    np.testing.assert_allclose([c["se"] for c in f.coefficients], ref.bse_fe.to_numpy(), rtol=2e-3)
    sd = next(r["estimate"] for r in f.random_effects if r["group"] == "subject_id")
    assert sd == pytest.approx(float(np.sqrt(ref.cov_re.iloc[0, 0])), rel=5e-3)
    assert f.statistic == "t" and all(c["df"] > 0 for c in f.coefficients)  # lmerTest's Satterthwaite df


def test_a_singular_maximal_structure_falls_back_and_says_so(r_ready):
    """Subjects differ in their intercept only: the slope's variance is 0, the maximal fit singular."""
    rng = np.random.default_rng(7)
    rows = []
    for s in range(20):
        u = rng.normal(0, 1.0)
        for i in range(24):
            x = ["a", "b"][i % 2]
            rows.append({"subject_id": f"s{s}", "item": f"i{i}", "x": x,
                         "y": 1.0 + (0.5 if x == "a" else -0.5) + u + rng.normal(0, 0.5)})
    d = pd.DataFrame(rows)
    f = fit_formula(d, "y ~ x + (1 + x | subject)")
    assert f.attempts[0]["structure"] == "as given (maximal)" and f.attempts[0]["status"] != "ok"
    assert f.status == "ok" and f.random_structure in ("no correlations between random effects (||)",
                                                        "random intercepts only")
    assert f.random_structure in f.fallback and f.attempts[0]["status"] in f.fallback
    assert f.coef("x")["estimate"] == pytest.approx(0.5, abs=0.1)


def test_analyze_formula_end_to_end_general_design(r_ready, agreement, tmp_path):
    from typer.testing import CliRunner

    from experiments.cli import app

    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["analyze", str(agreement / "humans"), "--out", str(out), "--n-boot", "200",
                                 "--by", "head_number,attractor_number", "--formula",
                                 "correct ~ head_number * attractor_number + (1 | subject_id) + (1 | item)"])
    assert r.exit_code == 0, r.output
    res = json.loads((out / "results.json").read_text())
    fit = next(i for s in res["sections"] for i in s["items"] if i["kind"] == "formula_fit")["fit"]
    assert fit["method"] == "glmer" and fit["n_obs"] == 256 and fit["n_groups"] == {"item": 32, "subject_id": 8}
    assert {"converged", "singular", "status", "attempts", "contrasts"} <= set(fit)
    assert [c["term"] for c in fit["coefficients"]] == ["(Intercept)", "head_number", "attractor_number",
                                                        "head_number:attractor_number"]
    html = (out / "report.html").read_text()
    assert "sum-coded" in html and "fit diagnostics" in html and "Table C1" not in html
    assert (out / "tables" / "rates_by_factor.csv").exists() and (out / "tables" / "formula_fit.csv").exists()


def test_lakretz_design_keeps_its_sections_and_adds_by_and_formula(r_ready, tmp_path):
    from analysis.pipeline import Options, run_analysis
    from analysis.simulate import ErrorModel, logit, simulate_sessions

    simulate_sessions(tmp_path / "h", 6, error_model=ErrorModel(default_logit=logit(0.3), slope=0.0, subject_sd=0.3),
                      seed=1, sessions=1, mark_simulated=False)
    res = run_analysis([tmp_path / "h"], tmp_path / "out", Options(n_boot=100, show_progress=False, mixed=False,
                                                                    by=["structure", "dependency"],
                                                                    formula="correct ~ dependency + (1 | subject)"))
    ids = [s["id"] for s in res["sections"]]
    assert "error_rates" in ids and "first_encounter" in ids and res["design"] == "lakretz"
    assert "rates" in ids and "formula" in ids
    t = pd.read_csv(tmp_path / "out" / "tables" / "rates_by_factor_long.csv")
    assert set(t["dependency"].dropna()) <= {"inner", "outer"}
