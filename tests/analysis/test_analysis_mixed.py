"""Mixed models with real R/lme4 through pymer4, and the whole `twinlab analyze` pipeline.

R starts once for this module (module-scoped fixture, ~20 s); every glmer fit after that takes ~1 s.
The glmer fits are checked against an independent Laplace-approximation implementation (numpy/scipy),
against a plain logistic GLM (statsmodels) when the subject variance is zero, and for parameter
recovery on data simulated with a known exposure slope and subject SD.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.stats import chi2

from analysis.simulate import ErrorModel, logit, simulate_exposure_frame, simulate_sessions

pytestmark = [pytest.mark.r, pytest.mark.slow]
FORMULA = "error ~ exposures + (1|subject)"


@pytest.fixture(scope="module")
def mixed():
    """Import pymer4 (starts R) once for the module."""
    from analysis.stats import mixed as m

    try:
        m._glmer()
    except m.MixedModelError as exc:  # pragma: no cover - the CI machine has R
        pytest.skip(str(exc))
    return m


# ---- an independent reference: Laplace approximation of the random-intercept logistic model -------
def laplace_loglik(theta: np.ndarray, X: np.ndarray, y: np.ndarray, g: np.ndarray, n_groups: int) -> float:
    """log L(beta, sigma) = sum_i log int prod_j p(y_ij | x_ij beta + u) N(u; 0, sigma^2) du, Laplace at the mode."""
    beta, s2 = theta[:-1], math.exp(2 * theta[-1])
    eta0 = X @ beta
    u = np.zeros(n_groups)
    for _ in range(100):  # Newton steps for each subject's conditional mode
        p = 1 / (1 + np.exp(-(eta0 + u[g])))
        step = (np.bincount(g, y - p, n_groups) - u / s2) / (np.bincount(g, p * (1 - p), n_groups) + 1 / s2)
        u += step
        if np.max(np.abs(step)) < 1e-12:
            break
    eta = eta0 + u[g]
    p = 1 / (1 + np.exp(-eta))
    h = np.bincount(g, p * (1 - p), n_groups) + 1 / s2
    ll_y = np.bincount(g, y * eta - np.logaddexp(0, eta), n_groups)
    return float(np.sum(ll_y - u ** 2 / (2 * s2) - 0.5 * math.log(s2) - 0.5 * np.log(h)))


def laplace_fit(df: pd.DataFrame) -> tuple[np.ndarray, float, np.ndarray]:
    X = np.column_stack([np.ones(len(df)), df["exposures"].to_numpy(float)])
    y = df["error"].to_numpy(float)
    g, uniq = pd.factorize(df["subject"])
    f = lambda th: -laplace_loglik(th, X, y, g, len(uniq))  # noqa: E731
    th = minimize(f, np.array([0.0, 0.0, math.log(0.5)]), method="BFGS", options={"gtol": 1e-8}).x
    k, e = len(th), 1e-4
    H = np.zeros((k, k))
    for i in range(k):
        for j in range(k):
            di, dj = np.eye(k)[i] * e, np.eye(k)[j] * e
            H[i, j] = (f(th + di + dj) - f(th + di - dj) - f(th - di + dj) + f(th - di - dj)) / (4 * e * e)
    return th, -f(th), np.sqrt(np.diag(np.linalg.inv(H)))


def test_glmer_matches_independent_laplace_implementation(mixed):
    df = simulate_exposure_frame(60, 6, slope=-0.3, intercept=0.4, subject_sd=1.0, seed=5)
    fit = mixed.fit_glmer(df, FORMULA)
    th, ll, se = laplace_fit(df)
    assert fit.coef("(Intercept)")["estimate"] == pytest.approx(th[0], abs=3e-3)
    assert fit.coef("exposures")["estimate"] == pytest.approx(th[1], abs=3e-3)
    assert fit.random_effects[0]["estimate"] == pytest.approx(math.exp(th[2]), abs=5e-3)
    assert fit.loglik == pytest.approx(ll, abs=5e-3)
    assert fit.coef("exposures")["se"] == pytest.approx(se[1], rel=0.03)
    assert fit.n_obs == 360 and fit.n_groups == 60 and fit.n_params == 3
    assert fit.aic == pytest.approx(-2 * fit.loglik + 2 * 3)
    assert fit.bic == pytest.approx(-2 * fit.loglik + 3 * math.log(360))


def test_glmer_equals_logistic_glm_without_subject_variance(mixed):
    import statsmodels.api as sm

    df = simulate_exposure_frame(60, 6, slope=-0.3, intercept=0.4, subject_sd=0.0, seed=6)
    fit = mixed.fit_glmer(df, FORMULA)
    assert fit.random_effects[0]["estimate"] < 1e-3 and fit.singular
    glm = sm.GLM(df["error"], sm.add_constant(df["exposures"].astype(float)), family=sm.families.Binomial()).fit()
    assert fit.coef("(Intercept)")["estimate"] == pytest.approx(glm.params.iloc[0], abs=1e-4)
    assert fit.coef("exposures")["estimate"] == pytest.approx(glm.params.iloc[1], abs=1e-4)
    assert fit.coef("exposures")["se"] == pytest.approx(glm.bse.iloc[1], rel=1e-3)
    assert fit.loglik == pytest.approx(glm.llf, abs=1e-4)


def test_parameter_recovery_slope_and_subject_sd(mixed):
    slope, sd = -0.35, 1.0
    df = simulate_exposure_frame(150, 6, slope=slope, intercept=0.3, subject_sd=sd, seed=21)
    fit = mixed.fit_glmer(df, FORMULA)
    c = fit.coef("exposures")
    assert c["ci_low"] < slope < c["ci_high"], c
    assert c["ci_high"] < 0 and c["p"] < 0.001
    assert c["ci_low"] == pytest.approx(c["estimate"] - 1.959964 * c["se"], abs=1e-6)
    assert 0.6 < fit.random_effects[0]["estimate"] < 1.4
    # a model that ignores the exposures must lose the likelihood-ratio test
    df2 = df.assign(session=1.0, total_trials=df["exposures"] / 10 + np.random.default_rng(1).random(len(df)))
    ext = mixed.fit_glmer(df2, "error ~ exposures + total_trials + (1 + exposures|subject)")
    lr = mixed.likelihood_ratio(fit, ext)
    assert lr["df"] == ext.n_params - fit.n_params == 3
    assert lr["chi2"] == pytest.approx(2 * (ext.loglik - fit.loglik), abs=1e-9)
    assert lr["p"] == pytest.approx(chi2.sf(lr["chi2"], 3))
    assert lr["preferred_by_bic"] == "base"


# ---- the whole pipeline on simulated sessions ---------------------------------------------------------
TRUE_SLOPE = -1.0


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    """16 humans x 2 sessions with a strong exposure effect; model subjects with two protocols."""
    root = tmp_path_factory.mktemp("study")
    humans = ErrorModel(default_logit=logit(0.3), slope=TRUE_SLOPE, subject_sd=0.5,
                        base={("long_nested", "PSP", "inner"): logit(0.75)})
    # standing in for real participants (unmarked) to exercise the analyses only real humans get
    simulate_sessions(root / "humans", 16, error_model=humans, seed=2, sessions=2, mark_simulated=False)
    models = ErrorModel(default_logit=logit(0.15), slope=0.0, subject_sd=0.3)
    for proto, sub in (("forced_choice", "direct"), ("violation_judgment", "meta")):
        simulate_sessions(root / sub, 4, error_model=models, seed=3, subject_kind="model", prefix="M",
                          model="tiny-lm", context_mode="running", protocol=proto)
    return root


@pytest.mark.long  # over 80 s with its fixture: the long pass (scripts/test.sh)
def test_analyze_cli_end_to_end(mixed, study, tmp_path):
    from typer.testing import CliRunner

    from experiments.cli import app

    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["analyze", str(study / "humans"), str(study / "direct"), str(study / "meta"),
                                 "--out", str(out), "--n-boot", "300", "--seed", "4"])
    assert r.exit_code == 0, r.output
    res = json.loads((out / "results.json").read_text())
    items = {i.get("group") or i.get("model_group"): i for s in res["sections"] for i in s["items"]}
    human = items["human"]
    base = {c["term"]: c for c in human["base"]["coefficients"]}
    assert base["exposures"]["ci_low"] < TRUE_SLOPE < base["exposures"]["ci_high"]
    assert base["exposures"]["ci_high"] < 0
    assert human["base"]["n_groups"] == 16 and human["base"]["n_obs"] <= 64
    assert "session" in human["extended"]["formula"] and "total_trials" in human["extended"]["formula"]
    assert human["comparison"]["df"] == human["extended"]["n_params"] - human["base"]["n_params"]
    joint = [i for i in items.values() if i.get("kind") == "joint"]
    assert joint and all("fit" in j for j in joint)
    terms = {c["term"] for c in joint[0]["fit"]["coefficients"]}
    assert {"subject_kindmodel", "exposures:subject_kindmodel"} <= terms
    # tables, figures and the report
    for name in ("error_rates", "first_encounter", "table_c1", "table_c1_long", "demand_gap", "internal_consistency",
                 "mixed_base_human", "mixed_comparison_human"):
        assert (out / "tables" / f"{name}.csv").exists(), name
    for f in res["figures"].values():
        assert (out / f["file"]).read_bytes()[:4] == b"\x89PNG"
    assert "error_rates_long_nested" in res["figures"] and "exposures_focus" in res["figures"]
    html = (out / "report.html").read_text()
    for text in ("Table C2", "Table C3", "likelihood ratio", "error ~ exposures + (1|subject)", "Sample sizes",
                 "Demand gap", "Internal consistency", "First encounter"):
        assert text in html, text
    er = pd.read_csv(out / "tables" / "error_rates.csv")
    assert set(er["group"]) == {"human", "tiny-lm · running · forced_choice", "tiny-lm · running · violation_judgment"}
    # `twinlab report` re-renders from the folder alone
    (out / "report.html").unlink()
    r2 = CliRunner().invoke(app, ["report", str(out)])
    assert r2.exit_code == 0 and (out / "report.html").exists()


def test_cli_errors_are_clean(tmp_path):
    from typer.testing import CliRunner

    from experiments.cli import app

    def run(*args: str) -> tuple[int, str]:
        r = CliRunner().invoke(app, list(args))
        return r.exit_code, " ".join(r.output.split())  # rich wraps long lines

    code, out = run("analyze", str(tmp_path / "missing"), "--out", str(tmp_path / "o"), "--no-mixed")
    assert code == 2 and "no such file or folder" in out and "Traceback" not in out
    code, out = run("analyze", str(tmp_path), "--out", str(tmp_path / "o"), "--focus", "PSP")
    assert code == 2 and "STRUCTURE:CONDITION" in out
    code, out = run("report", str(tmp_path))
    assert code == 2 and "no results.json" in out


# ---- fit diagnostics: a fit that did not converge, or is singular, is marked and never starred -------
def _significant_data() -> pd.DataFrame:
    """A strong exposure effect (p < .001 when the fit converges), so a star would be due if it were given."""
    return simulate_exposure_frame(80, 6, slope=-0.6, intercept=0.8, subject_sd=0.8, seed=31)


def test_an_unconverged_fit_is_marked_and_never_starred(mixed):
    from analysis.report.render import fit_html
    from studies.lakretz2021.tables import wide_slopes

    df = _significant_data()
    ok = mixed.fit_glmer(df, FORMULA)
    assert ok.converged and ok.status == "ok" and ok.coef("exposures")["p"] < 0.001
    assert mixed.significance_mark(ok.coef("exposures")["p"], ok.status) == "***"
    # lme4 stopped after 10 function evaluations: a real optimiser failure, no refit allowed
    bad = mixed.fit_glmer(df, FORMULA, optimizer="bobyqa", maxfun=10, fallback=False)
    assert not bad.converged and bad.status == "not converged, do not interpret"
    assert any("maximum number of function evaluations" in w for w in bad.optimizer_warnings + bad.messages)
    html = fit_html("unconverged", bad.to_dict())
    assert "not converged, do not interpret" in html and "*" not in html.split("<table>", 1)[1].split("</table>")[0]
    c = bad.coef("exposures")
    slopes = pd.DataFrame([{"violation_type": "inner", "condition": "PSP", "n_trials": bad.n_obs, "n_subjects": 80,
                            "estimate": c["estimate"], "se": c["se"], "z": c["z"], "p": min(c["p"], 0.001),
                            "status": bad.status, "note": "; ".join(bad.messages)}])
    w = wide_slopes(slopes).set_index("statistic")
    assert "not converged, do not interpret" in w.loc["beta (exposures)", "PSP"]
    assert "*" not in w.loc["p", "PSP"] and w.loc["fit", "PSP"] == "not converged, do not interpret"
    # the same slope from a converged fit gets its star in the same table
    good = wide_slopes(slopes.assign(status="ok")).set_index("statistic")
    assert good.loc["p", "PSP"].endswith("***")


def test_the_fallback_refit_is_recorded(mixed):
    fit = mixed.fit_glmer(_significant_data(), FORMULA, optimizer="bobyqa", maxfun=10)
    assert fit.converged and fit.status == "ok"
    assert "refitted with optimizer=bobyqa, maxfun=100000" in fit.fallback


def test_a_singular_fit_is_marked_and_never_starred(mixed):
    from analysis.report.render import fit_html

    df = simulate_exposure_frame(80, 6, slope=-0.6, intercept=0.8, subject_sd=0.0, seed=33)  # lme4 estimates SD 0 here
    fit = mixed.fit_glmer(df, FORMULA)
    assert fit.singular and fit.converged and fit.status == "singular, do not interpret"
    assert fit.coef("exposures")["p"] < 0.05  # would be starred if it were interpretable
    assert mixed.significance_mark(fit.coef("exposures")["p"], fit.status) == ""
    html = fit_html("singular", fit.to_dict())
    assert "singular, do not interpret" in html and "*" not in html.split("<table>", 1)[1].split("</table>")[0]


def test_simulated_humans_are_their_own_group_and_labelled(mixed, study, tmp_path):
    """Sessions marked simulated are analysed as 'human (simulated)', never pooled with real humans."""
    from analysis.pipeline import Options, run_analysis

    simulate_sessions(tmp_path / "sim", 6, seed=9, sessions=1, prefix="sim")
    res = run_analysis([study / "humans", tmp_path / "sim"], tmp_path / "out", Options(n_boot=50, mixed=False,
                                                                                        show_progress=False))
    ss = pd.read_csv(tmp_path / "out" / "tables" / "sample_sizes.csv").set_index("group")
    assert ss.loc["human", "subjects"] == 16 and ss.loc["human (simulated)", "subjects"] == 6
    assert res["notes"][0].startswith("SIMULATED HUMANS: the group 'human (simulated)' (6 subjects)")
    c1 = pd.read_csv(tmp_path / "out" / "tables" / "table_c1_long.csv")
    assert c1["n_subjects"].max() <= 16  # Table C1 beside the paper: real humans only
