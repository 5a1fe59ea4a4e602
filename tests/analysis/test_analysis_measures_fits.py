"""The ordinal fit as a reviewer reads it (R ordinal::clmm): scale points that never occur are
flagged (only 1 and 7 used: one threshold), every diagnostic is printed or "not available", and the effect
equals statsmodels' logistic regression on the same two points (no subject or item variance)."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
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


def two_point_ratings(root, n_subjects: int = 12, n_items: int = 16, seed: int = 4):
    """People who answer only 1 or 7 on a 7-point scale: P(7) = logistic(0.2 + 0.9 x), x = +1 long, -1 short."""
    f = {"island": ["long", "short"]}
    rng = np.random.default_rng(seed)
    for s in range(n_subjects):
        rows = []
        for t in range(n_items):
            long_ = (t + s) % 2 == 0
            x = 1.0 if long_ else -1.0
            r7 = rng.random() < 1 / (1 + np.exp(-(0.2 + 0.9 * x)))
            lv = {"island": "long" if long_ else "short"}
            r = ds.base_row("islands", f"H{s}", "human", t, t, lv, "rating", {"sentence": f"s{t} ."})
            r |= {"rating": 7 if r7 else 1, "response": "7" if r7 else "1"}
            rows.append(r)
        ds.write_session(root, "islands", f"H{s}", rows, f)


def test_unused_scale_points_are_flagged_and_the_fit_equals_a_logistic_regression(ordinal_ready, tmp_path):
    """With two points used, the cumulative-link mixed model is a logistic mixed model: lme4's glmer (called
    here directly through rpy2, Laplace) on rating == 7 gives the same slope and minus its intercept."""
    import rpy2.robjects as ro
    from rpy2.robjects import pandas2ri
    from rpy2.robjects.conversion import localconverter

    two_point_ratings(tmp_path / "d")
    df = api.load_sessions(tmp_path / "d")
    f = api.fit(df, "rating ~ island + (1 | subject) + (1 | item)", family="ordinal")
    assert f.unused_points == [2, 3, 4, 5, 6] and f.n_thresholds == 1
    assert any("2, 3, 4, 5, 6 never occur" in m for m in f.messages)
    d = pd.DataFrame({"y": (df["rating"] == 7).astype(int), "x": np.where(df["island"] == "long", 1.0, -1.0),
                      "s": df["subject_id"].astype(str), "i": df["item"].astype(str)})
    with localconverter(ro.default_converter + pandas2ri.converter):
        rd = ro.conversion.py2rpy(d)
    ref = list(ro.r("function(d) lme4::fixef(lme4::glmer(y ~ x + (1 | s) + (1 | i), data = d, family = binomial))")(rd))
    # clmm: logit P(Y <= 1) = theta - beta x, so beta = the logistic slope, theta = -intercept
    assert f.coef("island")["estimate"] == pytest.approx(ref[1], abs=0.01)
    assert f.coef("1|7")["estimate"] == pytest.approx(-ref[0], abs=0.01)
    res = api.report(df, tmp_path / "out", n_boot=50, show_progress=False)
    page = (tmp_path / "out" / "report.html").read_text()
    for name in ("cond.H", "max.grad", "scaled gradient"):
        m = re.search(re.escape(name) + r" = ([^;<]*)", page)
        assert m and m.group(1).strip() not in ("",), name
    assert "scale point(s) never used: 2, 3, 4, 5, 6" in page
    sec = next(s for s in res["sections"] if s["id"] == "task_rating")
    assert "never simplified" in str(sec) and "simplified step by step" not in str(sec)
