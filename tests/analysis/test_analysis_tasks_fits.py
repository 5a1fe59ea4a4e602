"""Task models fitted by R: the cumulative-link mixed model of ratings (ordinal::clmm) against statsmodels'
OrderedModel, parameter recovery, the surprisal-reading-time model recovering known coefficients, and the
task sections of `analyze` with their diagnostics."""
from __future__ import annotations

import json

import numpy as np
import pytest

from analysis import api
from tests.support import design_synthetic as ds

pytestmark = [pytest.mark.r, pytest.mark.slow]


@pytest.fixture(scope="module")
def ordinal_ready():
    from analysis.stats.mixed import MixedModelError
    from analysis.stats.ordinal import OrdinalError, clmm_fitter

    try:
        clmm_fitter()
    except (MixedModelError, OrdinalError) as exc:  # pragma: no cover - the set-up installs r-cran-ordinal
        pytest.skip(str(exc))


def test_clmm_equals_ordered_logit_without_subject_or_item_variance(ordinal_ready, tmp_path):
    from statsmodels.miscmodels.ordinal_model import OrderedModel

    ds.rating_sessions(tmp_path, n_subjects=12, n_items=16, subject_sd=0.0, item_sd=0.0, seed=11)
    df = api.load_sessions(tmp_path)
    f = api.fit(df, "rating ~ grammatical + (1 | subject) + (1 | item)", family="ordinal")
    x = np.where(df["grammatical"].astype(bool), 1.0, -1.0)[:, None]  # sum coding: true = +1
    ref = OrderedModel(df["rating"].astype(int).to_numpy(), x, distr="logit").fit(method="bfgs", disp=False,
                                                                                   gtol=1e-8, maxiter=2000)
    assert f.coef("grammatical")["estimate"] == pytest.approx(ref.params[0], abs=0.03)
    # OrderedModel parametrises the thresholds as the first and then log increments
    cuts = np.cumsum(np.r_[ref.params[1], np.exp(ref.params[2:])])
    np.testing.assert_allclose([c["estimate"] for c in f.coefficients if "|" in c["term"]], cuts, atol=0.03)
    assert all(r["estimate"] < 0.35 for r in f.random_effects)


def test_clmm_recovers_the_effect_and_reports_diagnostics(ordinal_ready, tmp_path):
    ds.rating_sessions(tmp_path, n_subjects=24, n_items=20, effect=0.8, subject_sd=1.0, item_sd=0.5, seed=3)
    f = api.fit(api.load_sessions(tmp_path), "rating ~ grammatical + (1 | subject) + (1 | item)", family="ordinal")
    c = f.coef("grammatical")
    assert abs(c["estimate"] - 0.8) < 2.5 * c["se"]
    assert f.converged and f.scaled_grad < 2e-3 and f.cond_h < 1e4 and f.status == "ok"
    sd = {r["group"]: r["estimate"] for r in f.random_effects}
    assert set(sd) == {"subject_id", "item"} and 0.5 < sd["subject_id"] < 1.6
    assert f.n_thresholds == 6 and f.n_obs == 24 * 20


def test_surprisal_model_recovers_known_coefficients(ordinal_ready, tmp_path):
    from analysis.measures.reading import surprisal_formula
    from analysis.stats.formula_fit import fit_formula

    ds.reading_sessions(tmp_path, n_subjects=16, n_items=16, beta_surprisal=12.0)
    (g, j), = api.surprisal_rt(api.load_sessions(tmp_path)).items()
    f = fit_formula(j, surprisal_formula(j), "gaussian", {}, log_rt=False)
    assert f.method == "lmer" and f.response_transform == "" and f.status == "ok"
    for term, true in (("surprisal", 12.0), ("surprisal_prev1", 4.0), ("length", 8.0)):
        c = f.coef(term)
        assert abs(c["estimate"] - true) < 3 * c["se"], (term, c)


def test_task_sections_of_the_report(ordinal_ready, tmp_path):
    ds.rating_sessions(tmp_path / "rating")
    res = api.report(tmp_path / "rating", tmp_path / "out_r", n_boot=100, show_progress=False)
    sec = {s["id"]: s for s in res["sections"]}
    assert "task_rating" in sec and "formula" not in sec
    fit = sec["task_rating"]["items"][0]["fit"]
    assert {"converged", "max_grad", "cond_h", "status", "contrasts"} <= set(fit)
    html = (tmp_path / "out_r" / "report.html").read_text()
    assert "cond.H" in html and "ordinal::clmm" in html
    ds.reading_sessions(tmp_path / "spr", n_subjects=8, n_items=8)
    res = api.report(tmp_path / "spr", tmp_path / "out_s", n_boot=100, show_progress=False)
    sec = {s["id"]: s for s in res["sections"]}
    assert {"task_reading", "surprisal_rt"} <= set(sec)
    region_fits = [i["fit"] for i in sec["task_reading"]["items"] if i["fit"]["response_transform"] == "log"]
    model_fits = [i["fit"] for i in sec["task_reading"]["items"] if i["fit"]["formula"].startswith("surprisal_bits")]
    assert len(model_fits) == 4  # the model's region surprisal on the factors, one per region
    # one row per trial and region: log region time on the factors, length and (after the first region) spillover
    assert len(region_fits) == 4 and all(f["fitted"].startswith("log(region_rt_ms) ~ ambiguity + "
                                                                "length") for f in region_fits)
    assert ("length_prev1" not in region_fits[0]["fitted"]
            and all("+ length_prev1" in f["fitted"] for f in region_fits[1:]))
    assert json.loads((tmp_path / "out_s" / "results.json").read_text())["design"] == "general"
    assert (tmp_path / "out_s" / "figures" / "surprisal_rt.png").exists()
