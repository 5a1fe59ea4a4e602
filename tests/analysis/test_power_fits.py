"""Power's second pass (and power's bounds): a broken fit is never a rejection, the same
seed gives the same per-simulation numbers whatever --cores, --batch or early stopping, a boundary pilot is
named as the cause, boundary counts are those of glmer's own start, and the figure says what it shows."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis import api
from tests.support.power_synthetic import pilot

F = "correct ~ cond + (1 | subject) + (1 | item)"
KEEP = ["sim", "estimate", "se", "statistic", "p", "failed", "converged", "singular", "boundary", "implausible_se"]


@pytest.fixture(scope="module")
def boundary_pilot(tmp_path_factory) -> pd.DataFrame:
    """8 people x 12 items whose glmer fit puts the subject SD at 0 (a boundary pilot; item SD 0.68)."""
    root = tmp_path_factory.mktemp("bpilot")
    pilot(root, n_subjects=8, n_items=12, seed=1)
    return api.load_sessions([root])


def _power(df, **kw):
    args = {"formula": F, "term": "cond", "subjects": [8], "sims": 10, "seed": 7, "effect": 0.5}
    return api.power(df, **(args | kw))


# ---- no R ----------------------------------------------------------------------------------------------------
def test_boundary_status_names_the_pilot_not_the_size():
    from analysis.power.stats import summarize

    sims = pd.DataFrame({"failed": False, "converged": True, "boundary": [True] * 8 + [False] * 2,
                         "degenerate": False, "implausible_se": False, "p": [0.01] * 5 + [0.5] * 5})
    cause = ("the pilot's subject SD is 0 (a boundary fit), simulated as 0: simulated subjects have no random "
             "intercept, so their fits sit at the boundary whatever the size; give --sd subject=X to simulate one")
    with_cause = summarize(sims, 0.05, "wilson", cause)["status"]
    assert with_cause == ("most fits are boundary (singular): 8 of 10; the cause is the pilot, not the study's size: "
                          f"{cause}")
    assert "at this size" not in with_cause
    assert "cannot be estimated at this size" in summarize(sims, 0.05)["status"]


def test_an_implausible_se_is_counted_apart_never_a_rejection():
    """Hand counts on a frame: 6 converged fits, one with a collapsed SE and p about 0."""
    from analysis.power.stats import IMPLAUSIBLE_SE, reference_se, summarize

    assert reference_se(0.4, 96, 384) == pytest.approx(0.2)  # 4x the trials halves the SE
    sims = pd.DataFrame({"failed": [False] * 6 + [True], "converged": [True] * 6 + [False],
                         "boundary": False, "degenerate": False,
                         "implausible_se": [False] * 5 + [True, False],
                         "p": [0.01, 0.02, 0.3, 0.4, 0.5, 1e-30, np.nan]})
    row = summarize(sims, 0.05)
    assert (row["tests"], row["rejected"], row["implausible_se"], row["failed"]) == (5, 2, 1, 1)
    assert row["power"] == pytest.approx(2 / 5) and row["power_incl_implausible"] == pytest.approx(3 / 6)
    assert f"below {IMPLAUSIBLE_SE:g} of what the design allows" in row["status"]


def test_figure_title_and_target_label_clear_of_every_point():
    from analysis.power.report import draw_figure

    table = pd.DataFrame({"subjects": [4, 8, 16, 32], "items": 12, "power": [0.3, 0.55, 0.78, 0.81],
                          "ci_low": [0.2, 0.45, 0.7, 0.74], "ci_high": [0.4, 0.65, 0.85, 0.87],
                          "analytic_power": [0.32, 0.57, 0.8, 0.82]})
    res = {"settings": {"target": 0.8, "term": "cond", "effect": 0.5}, "alpha": 0.05, "test": "Wald z",
           "pilot": {"group": "human", "subject_kind": "human"},
           "simulated": {"coefficients": ["cond"], "beta": {"cond": 0.5}}}
    fig = draw_figure(table, res)
    ax = fig.axes[0]
    assert ax.get_title() == "power of cond, effect 0.5 (stated)\npilot: human"
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    label = next(t for t in ax.texts if t.get_gid() == "target_label")
    assert label.get_text() == "80%"
    box = label.get_window_extent(r)
    for line in ax.lines[:1]:  # the simulation's points (o markers, 6 pt)
        for x, y in ax.transData.transform(line.get_xydata()):
            half = line.get_markersize() / 72 * fig.dpi
            assert not (box.x0 - half <= x <= box.x1 + half and box.y0 - half <= y <= box.y1 + half), (x, y, box)
    assert box.x0 >= ax.get_window_extent(r).x1  # outside the axes, right of the line
    assert box.x1 <= fig.bbox.x1  # and inside the figure


# ---- R -------------------------------------------------------------------------------------------------------
@pytest.mark.r
@pytest.mark.slow
def test_same_seed_same_simulations_whatever_cores_batch_or_early_stop(boundary_pilot, r_ready):
    """Simulation by simulation, bit for bit: 1 core in batches of 7, 2 cores in one batch, and a run stopped
    early (2 cores, batches of 5) agree on every simulation both ran."""
    one = _power(boundary_pilot, sims=20, cores=1, batch=7, early_stop=False)["sims"][KEEP]
    two = _power(boundary_pilot, sims=20, cores=2, batch=20, early_stop=False)["sims"][KEEP]
    early = _power(boundary_pilot, sims=20, cores=2, batch=5, min_sims=5, target=0.05, effect=2.0)
    pd.testing.assert_frame_equal(one, two, check_exact=True)
    assert early["rows"][0]["stopped_early"] and early["rows"][0]["sims_run"] < 20
    big = _power(boundary_pilot, sims=early["rows"][0]["sims_run"], cores=1, batch=3, early_stop=False, effect=2.0)
    pd.testing.assert_frame_equal(early["sims"][KEEP], big["sims"][KEEP], check_exact=True)
    decided = lambda d: (d["p"] < 0.05) & d["converged"] & ~d["implausible_se"]  # noqa: E731
    assert decided(one).equals(decided(two))


@pytest.mark.r
@pytest.mark.slow
def test_a_boundary_pilot_is_named_and_a_stated_sd_is_not_called_zero(boundary_pilot, r_ready):
    plain = _power(boundary_pilot, sims=2)
    text = " ".join(plain["warnings"])
    assert "the pilot's subject SD is " in text and ("(a boundary fit), simulated as 0: simulated subjects have no "
                                                     "random intercept") in text
    assert "give --sd subject=X to simulate one" in text
    assert "at this size" not in text
    stated = _power(boundary_pilot, sims=2, sd={"subject": 0.8})
    text = " ".join(stated["warnings"]) + " ".join(r["status"] for r in stated["rows"])
    assert "no random intercept" not in text and "simulated as zero" not in text
    assert "simulated with the stated --sd subject=0.8" in text


@pytest.mark.r
@pytest.mark.slow
def test_a_collapsed_se_on_separated_data_is_not_a_rejection(tmp_path, r_ready):
    """Nearly all-correct answers (intercept 3.5) at 4 subjects: lme4 calls some fits converged with an SE of
    ~0.006 where the design allows ~0.45 (p about 0). Those are counted apart, never as rejections; the counts
    equal a hand count on the simulations, the reference SE a direct computation from the pilot."""
    pilot(tmp_path / "sep", n_subjects=8, n_items=12, seed=6, intercept=3.5, effect=0.5)
    df = api.load_sessions([tmp_path / "sep"])
    res = api.power(df, F, "cond", subjects=[4], effect=1.0, seed=1, sims=50, batch=50, early_stop=False)
    s, row = res["sims"], res["rows"][0]
    c = next(c for c in res["pilot"]["coefficients"] if c["term"] == "cond")
    ref = c["se_hessian_free"] * math.sqrt(res["pilot"]["n_obs"] / (4 * 12))
    ok = ~s["failed"]
    assert np.allclose(s.loc[ok, "se_ratio"], s.loc[ok, "se"] / ref)
    broken = ok & s["converged"] & (s["se"] < 0.2 * ref)
    assert broken.sum() >= 1 and (s.loc[broken, "p"] < 0.05).any()  # the case makes what it is for
    tests = ok & s["converged"] & ~broken
    assert row["implausible_se"] == broken.sum() and row["tests"] == tests.sum()
    assert row["rejected"] == (tests & (s["p"] < 0.05)).sum()
    assert row["power"] == pytest.approx(row["rejected"] / row["tests"])
    assert row["power_incl_implausible"] > row["power"]


@pytest.mark.r
@pytest.mark.slow
def test_boundary_counts_match_a_plain_glmer_refit(boundary_pilot, r_ready):
    """Every simulated response rebuilt from its seed and refitted by glmer with all its defaults: the singular
    flags agree with the simulation's (its start: lme4's default theta; 13 against 11 of 16 here, where a start at
    the true SD of 0 left many more singular before), and the estimates are those data's."""
    import rpy2.robjects as ro

    from analysis.power.pilot import build_pilot
    from analysis.power.run import coded_design, size_seed
    from analysis.power.settings import PowerSettings, check_settings
    from analysis.power.sim import SizeModel

    res = _power(boundary_pilot, sims=16, batch=16, early_stop=False)
    st = PowerSettings(data=[], formula=F, term="cond", subjects=[8], effect=0.5, seed=7)
    p = build_pilot(st, check_settings(st), boundary_pilot, api.factors(boundary_pilot), lambda m: None)
    design, _ = coded_design(p, 8, 12)
    model = SizeModel(design, p.coded.fixed, " + ".join(r.text() for r in p.coded.random), p.truth)
    ys = model.responses(size_seed(7, 8, 12), list(range(1, 17)))
    plain = ro.r("""function(d, y) { d$y__ <- y
      m <- suppressMessages(suppressWarnings(lme4::glmer(y__ ~ X__2 + (1 | subject_id) + (1 | item), d,
                                                          family = stats::binomial)))
      c(lme4::isSingular(m), lme4::fixef(m)[2]) }""")
    out = np.array([list(plain(model.data(), ro.FloatVector(y))) for y in ys])
    sims = res["sims"]
    # the same data (estimates within 2e-3); singular flags differ only where theta ends near isSingular's 1e-4
    # threshold (glmer's default switches to Nelder-Mead for its second stage, the simulation keeps bobyqa)
    assert (out[:, 0].astype(bool) == sims["singular"].to_numpy()).mean() >= 0.8
    assert abs(int(out[:, 0].sum()) - int(sims["boundary"].sum())) <= 2
    assert np.allclose(out[:, 1], sims["estimate"], atol=2e-3)
