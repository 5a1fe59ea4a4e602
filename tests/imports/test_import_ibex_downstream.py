"""Real Ibex results files imported with the defaults (no map) carry on downstream: the spec read from the
data validates, a model subject runs it, people are replayed with their own answers in the history, and the
twins' likelihood table scores the people's answers under the model."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from analysis import api
from experiments.session import read_rows
from experiments.spec import load_spec
from model_subjects.replay import run_replay
from model_subjects.runner import RunConfig, run_models
from participants.imports.api import import_study

DATA = Path(__file__).parent.parent / "data" / "imports" / "ibex"

pytestmark = [pytest.mark.model, pytest.mark.slow, pytest.mark.long, pytest.mark.r]


@pytest.mark.parametrize("name,kind,protocol", [("ibex_aj_yesno_results", "judgment", "meta"),
                                                ("ibex_aj_scale_results", "rating", "meta")])
def test_an_imported_ibex_study_runs_for_a_model_and_its_people_are_replayed(tmp_path, bundled_backend, r_ready,
                                                                            name, kind, protocol):
    spec = tmp_path / "spec" / "study.yaml"
    report = import_study("pcibex", [DATA / name], None, tmp_path / "people", spec_out=spec)
    assert report.task == kind and report.people >= 2
    exp = load_spec(spec)
    assert exp.task.kind == kind
    run_models(RunConfig(spec=str(spec), out=tmp_path / "models", subjects=1, protocol=protocol, trials=3),
               backend=bundled_backend)
    assert len(read_rows(next((tmp_path / "models" / "data").glob("*_data.csv")))) == 3
    answered = tmp_path / "answered" / "data"  # a person with an unanswered trial is not replayed
    answered.mkdir(parents=True)
    people = {}
    for p in sorted((tmp_path / "people" / "data").glob("*_data.csv")):
        rows = read_rows(p)
        if all(r["response"] for r in rows):
            people[p.name] = rows
            for f in (p, p.with_suffix(".json")):
                shutil.copy(f, answered / f.name)
    assert people
    run_replay(RunConfig(spec=str(spec), out=tmp_path / "replay", protocol=protocol, trials=3), answered.parent,
               backend=bundled_backend)
    for f in sorted((tmp_path / "replay" / "data").glob("*_data.csv")):
        person = json.loads(f.with_suffix(".json").read_text())["replay"]["person"]
        mine = next(v for k, v in people.items() if f"subject-{person}_" in k)
        assert [json.loads(r["extra"])["person_response"] for r in read_rows(f)] == [r["response"] for r in mine[:3]]
    df = api.load_sessions([tmp_path / "people", tmp_path / "models", tmp_path / "replay"])
    api.report(df, tmp_path / "report", n_boot=50, show_progress=False)
    tw = pd.read_csv(tmp_path / "report" / "tables" / "twins_likelihood.csv")
    assert "replay" in set(tw["context"])
