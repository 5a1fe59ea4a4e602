"""`twinlab power` / api.power: bad input refused before any simulation, the numbers reproducible from
the seed, failures never folded into "not significant", power rising with subjects, the null's rejection rate
at alpha and the power agreeing with an independent lme4 loop (the last two under `long`)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import api
from analysis.power.settings import PowerInputError
from tests.cli_refusal import refused
from tests.support.power_synthetic import pilot

F = "correct ~ cond + (1 | subject) + (1 | item)"
SLOPES = "rt_ms ~ cond + (1 + cond | subject) + (1 | item)"  # the pilot's fit keeps the slopes (not singular)


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    """People (8 subjects x 12 items, 2 lists) and a sampled model group (4 subjects) of the same design."""
    root = tmp_path_factory.mktemp("power")
    pilot(root / "pilot", n_subjects=8, n_items=12, seed=1)
    pilot(root / "pilot", n_subjects=4, n_items=12, seed=2, kind="model", model="tiny-lm")
    pilot(root / "three", n_subjects=6, n_items=12, seed=3, levels=("a", "b", "c"))
    return root


@pytest.fixture(scope="module")
def frame(study):
    return api.load_sessions([study / "pilot"])


def _power(frame, **kw):
    args = {"formula": F, "term": "cond", "subjects": [4], "sims": 10, "group": "human", "seed": 7}
    return api.power(frame, **(args | kw))


# ---- bad input: refused before R (PowerInputError from the API; exit 2 from the CLI) -----------------
@pytest.mark.parametrize("kw, match", [
    ({"term": "attractor"}, "'attractor' is not in the fixed effects"),
    ({"formula": "correct ~ cond + system('ls')"}, "refused"),
    ({"formula": "correct ~ cond + (1 | subject"}, "--formula"),
    ({"subjects": "4,0"}, "refused '0'"),
    ({"subjects": "4,2.5"}, "refused '2.5'"),
    ({"subjects": [1]}, "fewer subjects than the design's 2 lists"),
    ({"items": "1"}, "at least 2 items"),
    ({"sims": 10_001}, "--sims must be a whole number from 1 to 10,000"),
    ({"alpha": 1.5}, "--alpha"),
    ({"test": "score"}, "--test must be wald or lrt"),
    ({"group": "robots"}, "--group 'robots' is not in the pilot"),
    ({"group": None}, "holds 2 groups"),
    ({"term": "cond * cond"}, "name one term"),
    ({"sd": {"list": 0.5}}, "--sd list"),
    ({"sd": {"subject": "big"}}, "an SD is a number"),
    ({"effect": "0.3"}, "--effect must be a finite number"),
    ({"max_sims": 20_000}, "unknown option 'max_sims'"),
    ({"subjects": "100000"}, "at most 5,000; refused '100000'"),  # a hang, then a traceback
    ({"items": [100_000]}, "at most 5,000; refused '100000'"),
    ({"subjects": list(range(4, 56))}, "52 sizes; at most 50"),
    ({"subjects": "2000", "items": "2000"}, "would have 4,000,000 trials; at most 500,000"),
    ({"cores": 65}, "--cores must be a whole number from 1 to 64"),
    ({"early_stop": "no"}, "must be True or False, not 'no'"),
    ({"out": "o", "force": "no"}, "force must be True or False"),
])
def test_bad_input_refused_before_any_simulation(frame, kw, match, monkeypatch):
    import analysis.power.sim as ps

    monkeypatch.setattr(ps.SizeModel, "__init__", lambda *a, **k: pytest.fail("a simulation started"))
    monkeypatch.setattr("analysis.power.pilot._fit", lambda *a, **k: pytest.fail("the pilot was fitted"))
    with pytest.raises(api.InputError, match=match.replace("(", r"\(").replace("*", r"\*")):  # PowerInputError's base
        _power(frame, **kw)


def test_effect_on_a_three_level_factor_needs_its_contrast(study, monkeypatch):
    monkeypatch.setattr("analysis.power.pilot._fit", lambda *a, **k: pytest.fail("the pilot was fitted"))
    df = api.load_sessions([study / "three"])
    with pytest.raises(PowerInputError, match=r"factor 'cond' has 3 levels .* one of: cond1, cond2"):
        api.power(df, F, "cond", subjects=[6], effect=0.3)
    with pytest.raises(PowerInputError, match="fewer subjects than the design's 3 lists"):
        api.power(df, F, "cond1", subjects=[2], effect=0.3)


def test_a_degenerate_pilot_fit_is_refused_not_simulated(tmp_path, r_ready, monkeypatch):
    """Answers that follow the condition exactly (quasi-separation): lme4 returns a 'singular' fit with huge
    estimates; simulating from them would give a silent 0% (Hauck-Donner), so the pilot is refused."""
    import analysis.power.sim as ps

    pilot(tmp_path / "sep", n_subjects=4, n_items=8, effect=40.0, intercept=0.0, subject_sd=0.0, item_sd=0.0)
    monkeypatch.setattr(ps.SizeModel, "__init__", lambda *a, **k: pytest.fail("a simulation started"))
    with pytest.raises(PowerInputError, match="is degenerate .*quasi-separation"):
        api.power(api.load_sessions([tmp_path / "sep"]), F, "cond", subjects=[4], effect=0.5)


def test_term_resolution_by_variables():
    from analysis.power.terms import resolve
    from analysis.stats.formula import Coding

    cod = [Coding("a", ["x", "y", "z"], {"a1": {}, "a2": {}}), Coding("b", ["p", "q"], {"b": {}})]
    names = ["(Intercept)", "a1", "a2", "b", "a1:b", "a2:b"]
    assert resolve("a:b", names, cod) == ["a1:b", "a2:b"]
    assert resolve("b:a", names, cod) == ["a1:b", "a2:b"]
    assert resolve("a", names, cod) == ["a1", "a2"]
    assert resolve("a2:b", names, cod) == ["a2:b"]


def test_cli_refuses_with_exit_2_and_writes_nothing(study, tmp_path):
    out = tmp_path / "out"
    refused("power", str(study / "pilot"), "--formula", F, "--term", "nope", "--subjects", "8", "--group", "human",
            "--out", str(out), match="'nope' is not in the fixed effects")
    assert not out.exists()


# ---- runs (R) --------------------------------------------------------------------------------------------
def test_same_seed_same_numbers_and_outputs(frame, tmp_path, r_ready):
    a = _power(frame, effect=0.5, out=tmp_path / "a", batch=3, sims=6)
    b = _power(frame, effect=0.5, out=tmp_path / "b", batch=6, sims=6, cores=1)  # batches and cores change nothing
    c = _power(frame, effect=0.5, seed=8, sims=2)
    keep = ["estimate", "se", "p", "failed", "converged", "boundary"]
    pd.testing.assert_frame_equal(a["sims"][keep], b["sims"][keep])
    assert not np.allclose(a["sims"]["estimate"][:2], c["sims"]["estimate"])
    table = pd.read_csv(tmp_path / "a" / "tables" / "power.csv")
    assert list(table["subjects"]) == [4] and table.loc[0, "sims_run"] == 6
    assert table.loc[0, "tests"] + table.loc[0, "failed"] + table.loc[0, "unconverged"] == 6
    row = a["rows"][0]
    assert row["power"] == pytest.approx(row["rejected"] / row["tests"])
    assert row["ci_low"] <= row["power"] <= row["ci_high"]
    meta = json.loads((tmp_path / "a" / "power.json").read_text())
    assert meta["seed"] == 7 and meta["settings"]["sims"] == 6 and meta["test"] == "Wald z"
    assert meta["simulated"]["beta"]["cond"] == 0.5
    assert (tmp_path / "a" / "figures" / "power.png").stat().st_size > 1000
    with pytest.raises(PowerInputError, match="--force"):
        _power(frame, effect=0.5, out=tmp_path / "a")


def test_model_pilot_is_labelled_a_hypothesis_and_observed_power_warned(frame, r_ready):
    res = _power(frame, group="tiny-lm · running · direct", sims=4)
    text = json.dumps(res["warnings"]) + res["rows"][0]["pilot"]
    assert "effect sizes from models: a hypothesis, not an estimate" in text
    assert "observed power" in text


def test_fits_that_all_fail_report_failure_not_zero_power(frame, tmp_path, r_ready):
    """2 subjects x 2 items of an lmer with by-subject slopes: 4 observations <= 4 random effects, lme4 refuses
    every fit; the size says so and has no power."""
    res = _power(frame, formula=SLOPES, subjects=[2], items=[2], sims=6,
                 effect=0.1)
    row = res["rows"][0]
    assert row["failed"] == 6 and row["tests"] == 0
    assert np.isnan(row["power"]) and "fits mostly failed" in row["status"]
    assert "number of observations" in res["sims"]["message"].iloc[0]


def test_cli_run_exits_1_when_every_size_fails(study, tmp_path, r_ready):
    from typer.testing import CliRunner

    from experiments.cli import app

    r = CliRunner().invoke(app, ["power", str(study / "pilot"), "--formula", SLOPES, "--term", "cond",
                                 "--subjects", "2", "--items", "2", "--sims", "3", "--group", "human", "--effect",
                                 "0.1", "--out", str(tmp_path / "o")])
    assert r.exit_code == 1 and r.exception is None or isinstance(r.exception, SystemExit), r.output
    assert "no study size gave a power" in " ".join(r.output.split())
    assert pd.read_csv(tmp_path / "o" / "tables" / "power.csv").loc[0, "failed"] == 3


def test_power_rises_with_subjects(frame, r_ready):
    res = _power(frame, subjects=[2, 16], sims=10, effect=0.7, early_stop=False, batch=10)
    low, high = res["rows"]
    assert low["tests"] >= 5 and high["tests"] >= 5
    assert high["power"] > low["power"] + 0.3, (low["power"], high["power"])
    assert high["analytic_power"] > low["analytic_power"]


# ---- long: the test of the test, and an independent loop ---------------------------------------------------
@pytest.mark.long
def test_null_effect_rejects_at_alpha(frame, r_ready):
    res = _power(frame, subjects=[16], items=[16], sims=200, effect=0.0, early_stop=False, batch=100, sd={"item": 0.4})
    row = res["rows"][0]
    from analysis.power.stats import wilson

    lo, hi = wilson(row["rejected"], row["tests"])
    assert lo <= 0.05 <= hi, (row["rejected"], row["tests"])


PLAIN_LOOP = r"""
function(n, ns, ni, b0, b1, sds, sdi, seed) {
  set.seed(seed)
  hits <- 0; ok <- 0
  for (k in seq_len(n)) {
    d <- expand.grid(s = factor(seq_len(ns)), i = factor(seq_len(ni)))
    lst <- (as.integer(d$s) - 1) %% 2 + 1
    d$x <- ifelse((as.integer(d$i) - 1 + lst) %% 2 == 0, 1, -1)
    d$y <- suppressMessages(stats::simulate(~ x + (1 | s) + (1 | i), newdata = d, family = stats::binomial,
             newparams = list(beta = c(b0, b1), theta = c(sds, sdi)))[[1]])
    m <- tryCatch(suppressMessages(suppressWarnings(lme4::glmer(y ~ x + (1 | s) + (1 | i), d,
                                                                family = stats::binomial))),
                  error = function(e) NULL)
    if (is.null(m) || length(m@optinfo$conv$lme4$messages[!grepl("singular", m@optinfo$conv$lme4$messages)])) next
    ok <- ok + 1
    hits <- hits + (stats::coef(summary(m))["x", 4] < 0.05)
  }
  c(hits, ok)
}
"""


@pytest.mark.long
def test_power_agrees_with_an_independent_lme4_loop(frame, r_ready):
    """The same model simulated by lme4's own simulate() and refitted from scratch with glmer's defaults, in a
    plain loop written here: the two powers agree within Monte Carlo error (and the analytic pass is near)."""
    import rpy2.robjects as ro

    res = _power(frame, subjects=[12], items=[12], sims=150, effect=0.35, early_stop=False, batch=75,
                 sd={"subject": 0.6, "item": 0.4})
    row = res["rows"][0]
    b0 = res["simulated"]["beta"]["(Intercept)"]
    hits, ok = ro.r(PLAIN_LOOP)(150, 12, 12, b0, 0.35, 0.6, 0.4, 11)
    p1, p2 = row["power"], hits / ok
    se = np.sqrt(p1 * (1 - p1) / row["tests"] + p2 * (1 - p2) / ok)
    assert abs(p1 - p2) < 3 * se + 1e-9, (p1, p2, se)
    assert abs(row["analytic_power"] - p1) < 0.15


def test_a_clear_size_stops_early_and_says_so(frame, r_ready):
    """With a large effect the 99% interval clears the target after the first batches: fewer sims run and the
    row says why (10 of 10 rejections: 99% Wilson interval 0.60-1, above 0.5)."""
    row = _power(frame, subjects=[8], sims=200, effect=2.0, min_sims=10, batch=10, target=0.5)["rows"][0]
    assert row["stopped_early"].startswith("stopped early: the 99% interval")
    assert "above the target 0.5" in row["stopped_early"]
    assert 10 <= row["sims_run"] < 200 and row["sims_run"] % 10 == 0


def test_lrt_and_a_many_level_term_are_named(study, r_ready):
    """--test lrt and a three-level term (two coefficients, a 2-df test) run and say which test they are."""
    df = api.load_sessions([study / "three"])
    res = api.power(df, F, "cond", subjects=[6], sims=2, test="lrt", effect=None, seed=1)
    assert res["test"].startswith("likelihood-ratio test (chi-square, 2 df")
    assert res["simulated"]["coefficients"] == ["cond1", "cond2"]
    assert res["rows"][0]["analytic_note"].startswith("no analytic pass: the term has 2 coefficients")
    wald = api.power(df, F, "cond", subjects=[6], sims=2, seed=1)
    assert wald["test"] == "Wald chi-square (2 df)"
    assert (wald["sims"]["statistic"] >= 0).all()


@pytest.mark.long
def test_a_learning_design_without_lists_or_items(r_ready):
    """The public Lakretz et al. (2021) sample (../shared): no list or item columns; each pilot subject's sequence
    is a list, its trials the units; power is reported for each size."""
    root = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "lakretz2021_sample"
    if not root.is_dir():
        pytest.skip("../shared/data/lakretz2021_sample is not here")
    df = api.load_sessions([root])
    res = api.power(df, "correct ~ dependency + (1 | subject)", "dependency", subjects=[2, 16], items=[40], sims=20,
                    effect=-0.4, early_stop=False)
    low, high = res["rows"]
    assert low["lists"] == high["lists"] == df["subject_id"].nunique()
    assert high["power"] > low["power"]
    assert any("no item column" in w for w in res["warnings"])
