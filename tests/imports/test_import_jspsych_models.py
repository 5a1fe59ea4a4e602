"""End to end on jsPsych's own files: the imported pilot (three people, the real jsPsych 8 run), a
model subject on the spec read from their data, a replay of each person, `analyze` (whose twins section scores
the people's answers) and `power` planning the next study from the imported pilot. A person with an unanswered
(timed-out) trial is imported but not replayed: `run-model --replay` refuses an empty response."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from analysis import api
from experiments.session import read_rows
from model_subjects.replay import run_replay
from model_subjects.runner import RunConfig, run_models
from participants.imports.api import import_study

DATA = Path(__file__).parent.parent / "data" / "imports" / "jspsych"
LABELS = {"labels": {"f": "yes", "j": "no"}}

pytestmark = [pytest.mark.model, pytest.mark.slow, pytest.mark.long, pytest.mark.r]


def test_models_replay_analyze_and_power_on_an_imported_jspsych_pilot(tmp_path, bundled_backend, r_ready):
    from typer.testing import CliRunner

    from experiments.cli import app

    spec = tmp_path / "spec" / "pilot.yaml"
    report = import_study("jspsych", sorted(DATA.glob("*.csv")), LABELS, tmp_path / "people", spec_out=spec)
    assert report.people == 3 and report.task == "judgment"
    run_models(RunConfig(spec=str(spec), out=tmp_path / "models", subjects=1, protocol="meta", trials=4),
               backend=bundled_backend)
    model_rows = read_rows(next((tmp_path / "models" / "data").glob("*_data.csv")))
    people = {p: read_rows(p) for p in sorted((tmp_path / "people" / "data").glob("*_data.csv"))}
    first = next(iter(people.values()))
    assert [r["item_id"] for r in model_rows] == [r["item_id"] for r in first][:4]   # subject 1 reads list 1
    answered = tmp_path / "answered" / "data"   # replay refuses a person with an unanswered trial (s02 let one
    answered.mkdir(parents=True)               # time out): twinlab's task trials wait for an answer
    for p, rows in people.items():
        if all(r["response"] for r in rows):
            for f in (p, p.with_suffix(".json")):
                shutil.copy(f, answered / f.name)
    assert len(list(answered.glob("*.csv"))) == 2
    run_replay(RunConfig(spec=str(spec), out=tmp_path / "replay", protocol="meta", trials=4), answered.parent,
               backend=bundled_backend)
    replays = sorted((tmp_path / "replay" / "data").glob("*_data.csv"))
    assert len(replays) == 2
    for f in replays:
        person = json.loads(f.with_suffix(".json").read_text())["replay"]["person"]
        mine = next(v for k, v in people.items() if f"subject-{person}_" in k.name)
        assert [json.loads(r["extra"])["person_response"] for r in read_rows(f)] == [r["response"] for r in mine[:4]]
    df = api.load_sessions([tmp_path / "people", tmp_path / "models", tmp_path / "replay"])
    api.report(df, tmp_path / "report", n_boot=100)
    sizes = pd.read_csv(tmp_path / "report" / "tables" / "sample_sizes.csv").set_index("group")
    assert sizes.loc["human", "subjects"] == 3
    tw = pd.read_csv(tmp_path / "report" / "tables" / "twins_likelihood.csv")
    assert "replay" in set(tw["context"])
    r = CliRunner().invoke(app, ["power", str(tmp_path / "people"), "--formula", "rt_ms ~ condition + (1 | subject)",
                                 "--term", "condition", "--subjects", "6", "--sims", "6", "--effect", "50",
                                 "--group", "human", "--cores", "1", "--out", str(tmp_path / "power")])
    assert r.exit_code == 0, r.output   # (accuracy: the pilot's answers follow the condition almost exactly, and
    power = pd.read_csv(tmp_path / "power" / "tables" / "power.csv")   # power refuses a degenerate fit, saying so)
    assert list(power["subjects"]) == [6] and list(power["lists"]) == [3] and power.loc[0, "sims_run"] == 6
    assert "36 trials of 3 subject(s), 12 items, 3 list(s)" in " ".join(r.output.split())
