"""Issue 39.3: one analysis pipeline. `run_loaded` runs the report plan the trial table calls for
(analysis/report/plan.py); a plan is data (which rows, which sections), chosen by the table's columns, not by
a design's name: a toy plan put first in `PLANS` is run by the same pipeline, and nothing else is."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from analysis.report import plan as rp
from tests.support import learning_synthetic as ls


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    from analysis.load import load

    root = ls.learning_study(tmp_path_factory.mktemp("plan"), n_people=2, n_running=2, n_static=0)
    return load([root])


def test_the_plan_follows_the_table_not_a_name(loaded):
    df, info = loaded
    assert rp.plan_for(df, info.factors) is rp.DESIGN  # a task column and declared factors
    lakretz_like = df.drop(columns=["task"]).assign(experiment="anything")
    lakretz = rp.plan_for(lakretz_like, {})  # no task, no factors: the Lakretz cells, the study's registered plan
    assert (lakretz.name, lakretz.study, lakretz.default_focus) == ("lakretz", "lakretz2021", "long_nested:PSP:inner")
    assert "LAKRETZ_CELLS" not in vars(rp) and lakretz in rp.study_plans()
    assert rp.plan_for(lakretz_like.assign(experiment="lakretz2021_nested"), {"attractor": []}) is rp.DESIGN


def test_a_plan_added_as_data_is_run_by_the_one_pipeline(loaded, tmp_path, monkeypatch):
    from analysis.pipeline import run_loaded

    df, info = loaded
    seen = []

    def frame(d: pd.DataFrame, run: rp.Run) -> None:
        run.d = d
        run.head = {"toy": True}

    def count(run: rp.Run) -> None:
        seen.append(len(run.d))
        t = run.d.groupby("subject_id").size().rename("trials").reset_index()
        run.res.section("toy", "Toy", "Trials per subject.", [run.res.table("toy_trials", t, "Trials")])

    toy = rp.ReportPlan("toy", lambda d, f: True, True, frame, (count,))
    monkeypatch.setattr(rp, "PLANS", [toy, *rp.PLANS])
    res = run_loaded(df, info, tmp_path / "out")
    assert seen == [len(df)] and res["design"] == "toy" and res["toy"] is True
    written = json.loads((tmp_path / "out" / "results.json").read_text())
    assert [s["id"] for s in written["sections"]] == ["toy"] and (tmp_path / "out" / "report.html").exists()
    assert pd.read_csv(tmp_path / "out" / "tables" / "toy_trials.csv")["trials"].sum() == len(df)
