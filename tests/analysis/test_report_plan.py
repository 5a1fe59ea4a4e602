"""One analysis pipeline. `run_loaded` runs the report plan the trial table calls for
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


def test_the_core_has_no_default_focus_and_a_lakretz_table_gets_its_study_s(tmp_path):
    """`--focus` defaults to nothing in the core (the CLI, Options); the Lakretz study declares
    its default cell (REPORT_PLANS), applied when the table is that study's; results.json records the cell
    used and where it came from, the report says so, and the exposure section is on that cell."""
    import inspect

    from analysis import cli
    from analysis.pipeline import Options, run_analysis
    from studies.lakretz2021.simulate import simulate_lakretz_rows

    assert Options().focus == "" and inspect.signature(cli.analyze).parameters["focus"].default.default == ""
    csv = tmp_path / "results.csv"
    simulate_lakretz_rows(3, seed=1).to_csv(csv, index=False)
    opt = dict(n_boot=10, mixed=False, show_progress=False)
    res = run_analysis([csv], tmp_path / "default", Options(**opt))
    assert res["design"] == "lakretz" and res["options"]["focus"] == "long_nested:PSP:inner"
    assert res["focus_source"].startswith("the default of study lakretz2021")
    titles = {s["id"]: s["title"] for s in res["sections"]}
    assert titles["exposure_models"].startswith("Exposure models on long_nested:PSP:inner")
    assert "the default of study lakretz2021" in (tmp_path / "default" / "report.html").read_text()
    given = run_analysis([csv], tmp_path / "given", Options(focus="long_nested:SSS:outer", **opt))
    assert given["options"]["focus"] == "long_nested:SSS:outer" and given["focus_source"] == "given (--focus)"
    assert {s["id"]: s["title"] for s in given["sections"]}["exposure_models"].startswith(
        "Exposure models on long_nested:SSS:outer")


def test_a_general_design_gets_no_focus_cell_unless_given(loaded, tmp_path):
    from analysis.pipeline import Options, run_loaded

    df, info = loaded
    res = run_loaded(df, info, tmp_path / "out", Options(n_boot=10, mixed=False, show_progress=False))
    assert res["design"] == "general" and res["options"]["focus"] == "" and "focus_source" not in res
