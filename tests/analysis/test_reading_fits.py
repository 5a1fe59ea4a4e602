"""Self-paced-reading fits by R (lme4): the sign of a sum-coded estimate follows the spec's declared level
order through api.reading_words / api.reading_regions / --region (checked against an independent least-
squares refit with the coding written out by hand), and the report's region fits with length, spillover
and the constant predictors they drop."""
from __future__ import annotations

import json

import numpy as np
import pytest

from analysis import api
from tests.cli_refusal import twinlab
from tests.support import reading_synthetic as rs

pytestmark = [pytest.mark.r, pytest.mark.slow]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("sprfit")
    rs.reading_design(root, cue_ms=80.0, effect_ms=0.0, region_names=["subject", "verb", "object", "pp"])
    return root, api.load_sessions(root)


def _hand_ls(y, cue, load):
    """log RT on +1/-1 columns written out by hand: cue weak = +1 (declared first), load high = +1."""
    X = np.column_stack([np.ones(len(y)), np.where(cue == "weak", 1.0, -1.0), np.where(load == "high", 1.0, -1.0)])
    return np.linalg.lstsq(X, np.log(y), rcond=None)[0]


def test_sum_coding_follows_the_declared_order_in_every_reading_frame(data):
    _, df, = data[0], data[1]
    r = api.reading_regions(df)
    crit = r[(r["region"] == 3) & (r["subject_kind"] == "human")]
    ref = _hand_ls(crit["region_rt_ms"].to_numpy(float), crit["cue"].astype(str).to_numpy(),
                   crit["load"].astype(str).to_numpy())
    assert ref[1] > 0.03  # weak cue read slower: + for the level declared first
    fits = {"--region": api.fit(df[df["subject_kind"] == "human"], "region_rt_ms ~ cue + load", region="object"),
            "reading_regions": api.fit(crit, "region_rt_ms ~ cue + load")}
    stripped = crit.copy()
    stripped.attrs = {}  # a user's merge loses attrs: the ordered categoricals keep the order
    fits["attrs lost"] = api.fit(stripped, "region_rt_ms ~ cue + load")
    for name, f in fits.items():
        assert f.method == "lm" and f.response_transform == "log", name
        assert [c["levels"] for c in f.contrasts] == [["weak", "strong"], ["high", "low"]], name
        np.testing.assert_allclose([f.coef(t)["estimate"] for t in ("(Intercept)", "cue", "load")], ref, rtol=1e-7,
                                   err_msg=name)
    # the mixed model on the words of that region, from api.reading_words: the same sign
    w = api.reading_words(df)
    m = api.fit(w[(w["region"] == 3) & (w["subject_kind"] == "human")], "word_rt_ms ~ cue + (1 | subject) + (1 | item)")
    assert m.method == "lmer" and m.coef("cue")["estimate"] > 0 and m.contrasts[0]["levels"] == ["weak", "strong"]


def test_report_region_fits_have_length_spillover_and_say_what_they_drop(data, tmp_path):
    _, df = data
    res = api.report(df, tmp_path / "res", n_boot=100)
    sec = {s["id"]: s for s in res["sections"]}["task_reading"]
    fits = {i["title"]: i["fit"] for i in sec["items"]}
    first = [t for t in fits if t.startswith("Region subject")][0]
    assert "dropped, constant in these rows: length_prev1" in first  # the first region has no previous one
    obj = fits["Region object: log reading time"]
    assert obj["fitted"].startswith("log(region_rt_ms) ~ cue * load + length + length_prev1")
    assert obj["contrasts"][0]["levels"] == ["weak", "strong"] and obj["coefficients"][1]["term"] == "cue"
    cue = [c for c in obj["coefficients"] if c["term"] == "cue"][0]
    assert cue["estimate"] > 0 and cue["ci_low"] > 0 and obj["converged"] is True
    assert "surprisal_rt" in {s["id"] for s in res["sections"]}


def test_analyze_region_formula_end_to_end(data, tmp_path):
    root, _ = data
    out = tmp_path / "res"
    r = twinlab("analyze", str(root), "--out", str(out), "--formula",
                "region_rt_ms ~ cue * load + length + (1 | subject) + (1 | item)", "--region", "object",
                "--n-boot", "50", timeout=900)
    assert r.returncode == 0, r.stderr
    res = json.loads((out / "results.json").read_text())
    fits = [i["fit"] for s in res["sections"] if s["id"] == "formula" for i in s["items"]]
    assert fits, res["skipped"]
    f = fits[0]
    assert f["n_obs"] == 12 * 16 and f["contrasts"][0]["levels"] == ["weak", "strong"]
    assert [c for c in f["coefficients"] if c["term"] == "cue"][0]["estimate"] > 0


def test_models_alone_get_means_with_cis_a_figure_and_region_fits(tmp_path):
    rs.reading_design(tmp_path / "d", n_subjects=1, cue_bits=3.0, region_names=["subject", "verb", "object", "pp"])
    df = api.load_sessions(tmp_path / "d")
    res = api.report(df[df["subject_kind"] == "model"], tmp_path / "res", n_boot=200)
    sec = {s["id"]: s for s in res["sections"]}["task_reading"]
    assert "reading_regions" in sec["figures"] and "surprisal_by_region" in sec["tables"]
    fits = {i["title"]: i["fit"] for i in sec["items"]}
    obj = [f for t, f in fits.items() if "region object: surprisal" in t][0]
    assert obj["fitted"] == "surprisal_bits ~ cue * load + (1 | item)" and obj["response_transform"] == ""
    cue = [c for c in obj["coefficients"] if c["term"] == "cue"][0]
    # +3 bits on each of the region's 3 words for weak: +9 bits, +4.5 per sum-coded unit
    assert abs(cue["estimate"] - 4.5) < 3 * cue["se"] and cue["ci_low"] > 0 and obj["status"] == "ok"
    assert obj["n_obs"] == 2 * 16  # items x the two cells each read: the two copies' rows are one value each
    assert obj["contrasts"][0]["levels"] == ["weak", "strong"]
