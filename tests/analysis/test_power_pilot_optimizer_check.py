"""A pilot fit that misses lme4's gradient tolerance by a hair is refitted with lme4's other optimizers (allFit's
advice): used when every estimate agrees within the stated tolerance, refused naming the optimizer, parameter
and both values when not; anything but a near miss of the gradient check is not checked (stays refused)."""
from __future__ import annotations

import dataclasses

import pytest

from analysis import api
from analysis.load.frames import model_frame
from analysis.stats import formula as fm
from analysis.stats.formula_fit import fit_formula, prepare_data
from analysis.stats.mixed import NOT_CONVERGED
from analysis.stats.optimizer_check import AGREE_TOL, check_optimizers, near_miss
from tests.support.power_synthetic import pilot

F = "correct ~ cond + (1 | subject) + (1 | item)"
GRAD = "Model failed to converge with max|grad| = 0.00214 (tol = 0.002, component 1)"


def _fit(**kw):
    base = dict(formula=F, fitted=F, family="binomial", method="glmer", response_transform="", n_obs=1, n_groups={},
                coefficients=[], random_effects=[], aic=0.0, bic=0.0, loglik=0.0, n_params=1, singular=False,
                converged=False, messages=[GRAD], status=NOT_CONVERGED)
    from analysis.stats.formula_fit import FormulaFit

    return FormulaFit(**(base | kw))


def test_only_a_near_miss_of_the_gradient_check_is_checked():
    assert near_miss(_fit()) == (0.00214, 0.002)
    assert near_miss(_fit(messages=[GRAD.replace("0.00214", "0.5")])) is None  # far above: not converged
    assert near_miss(_fit(opt_code=1)) is None  # the optimiser itself failed
    assert near_miss(_fit(messages=[GRAD, "Model is nearly unidentifiable: very large eigenvalue"])) is None
    assert near_miss(_fit(messages=["Hessian is numerically singular: parameters are not uniquely determined"])) is None
    assert near_miss(_fit(converged=True, messages=[], status="ok")) is None
    assert near_miss(_fit(method="glm")) is None


@pytest.mark.slow
@pytest.mark.parametrize("formula", [F, "rt_ms ~ cond + (1 | subject) + (1 | item)"])
def test_refits_agree_or_the_disagreement_is_named(tmp_path, r_ready, formula):
    pilot(tmp_path / "p", n_subjects=12, n_items=16, seed=1, subject_sd=1.0, item_sd=0.8)
    df = api.load_sessions([tmp_path / "p"])
    rows, declared = model_frame(df), api.factors(df)
    fit = fit_formula(rows, formula, "auto", declared)
    assert fit.status == "ok"
    d, coded, _, _, _, _ = prepare_data(rows, fm.parse(formula), "auto", declared)
    data = d[[c for c in d.columns if c in set(coded.variables)]]
    near = dataclasses.replace(fit, converged=False, status=NOT_CONVERGED, messages=[GRAD])
    check = check_optimizers(near, data)
    assert check is not None and check.agreed, check.reason
    ran = [r for r in check.refits if r["ran"]]
    assert len(ran) >= 3 and all(r["largest_difference"] <= AGREE_TOL for r in ran)
    assert "every estimate agrees within 0.001" in check.reason and "allFit" in check.reason
    assert check.to_dict()["rule"].startswith("refitted with lme4's other optimizers")
    # the same fit with its effect moved by 0.05: every optimizer disagrees, and the reason says where
    term = fit.coefficients[1]["term"]
    moved = [c | {"estimate": c["estimate"] + 0.05} if c["term"] == term else c for c in fit.coefficients]
    off = dataclasses.replace(near, coefficients=moved)
    bad = check_optimizers(off, data)
    assert bad is not None and not bad.agreed
    assert "they disagree" in bad.reason and f"gives {term} = " in bad.reason and "where the fit has" in bad.reason


@pytest.mark.slow
def test_power_uses_a_near_miss_pilot_whose_refits_agree_and_refuses_one_whose_do_not(tmp_path, r_ready, monkeypatch):
    """The pilot's own fit is real; only lme4's verdict on it is replaced by a near miss (no pilot misses the
    tolerance by a hair on demand). Agreeing refits: the run goes on, the check in the warnings and power.json.
    A fit whose effect is moved off its optimum: refused, naming the optimizer and the parameter."""
    from analysis.power import pilot as pilot_module
    from analysis.power.settings import PowerInputError

    real = pilot_module.fit_formula
    shift = {"by": 0.0}

    def near_miss_fit(*args, **kw):
        fit = real(*args, **kw)
        moved = [c | {"estimate": c["estimate"] + shift["by"]} if k == 1 else c for k, c in enumerate(fit.coefficients)]
        return dataclasses.replace(fit, converged=False, status=NOT_CONVERGED, messages=[GRAD], coefficients=moved)

    monkeypatch.setattr(pilot_module, "fit_formula", near_miss_fit)
    pilot(tmp_path / "p", n_subjects=12, n_items=16, seed=1, subject_sd=1.0, item_sd=0.8)
    df = api.load_sessions([tmp_path / "p"])
    res = api.power(df, F, "cond", subjects=[12], sims=3, seed=1, effect=0.5, early_stop=False,
                    out=tmp_path / "out")
    check = res["pilot"]["optimizer_check"]
    assert check["agreed"] and check["gradient"] == 0.00214 and "within 0.001" in check["rule"]
    assert any("missed lme4's gradient tolerance" in w and "is used as converged" in w for w in res["warnings"])
    shift["by"] = 0.05
    with pytest.raises(PowerInputError, match="they disagree: .* gives cond = .* where the fit has"):
        api.power(df, F, "cond", subjects=[12], sims=3, seed=1, effect=0.5, early_stop=False)
