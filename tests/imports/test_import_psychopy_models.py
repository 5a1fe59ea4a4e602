"""End to end on PsychoPy's own files: the imported people, a model subject on the spec read from
their data, a replay of each person, and `analyze`, whose twins section scores the people's answers."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from analysis import api
from experiments.session import read_rows
from model_subjects.replay import run_replay
from model_subjects.runner import RunConfig, run_models
from participants.imports.api import import_study

DATA = Path(__file__).parent.parent / "data" / "imports" / "psychopy" / "data"

pytestmark = [pytest.mark.model, pytest.mark.slow, pytest.mark.long]


def test_models_replay_and_analyze_on_an_imported_psychopy_study(tmp_path, bundled_backend):
    spec = tmp_path / "spec" / "builder.yaml"
    report = import_study("psychopy", [DATA], {"labels": {"f": "yes", "j": "no"}}, tmp_path / "people", spec_out=spec)
    run_models(RunConfig(spec=str(spec), out=tmp_path / "models", subjects=1, protocol="meta", trials=4),
               backend=bundled_backend)
    model_rows = read_rows(next((tmp_path / "models" / "data").glob("*_data.csv")))
    people = {p: read_rows(p) for p in sorted((tmp_path / "people" / "data").glob("*_data.csv"))}
    first = next(iter(people.values()))
    assert [r["item_id"] for r in model_rows] == [r["item_id"] for r in first][:4]  # subject 1 reads list 1
    run_replay(RunConfig(spec=str(spec), out=tmp_path / "replay", protocol="meta", trials=4), tmp_path / "people",
               backend=bundled_backend)
    replays = sorted((tmp_path / "replay" / "data").glob("*_data.csv"))
    assert len(replays) == report.people == 3
    for f in replays:
        rows = read_rows(f)
        person = json.loads(f.with_suffix(".json").read_text())["replay"]["person"]
        mine = next(v for k, v in people.items() if f"subject-{person}_" in k.name)
        assert [json.loads(r["extra"])["person_response"] for r in rows] == [r["response"] for r in mine[:4]]
    df = api.load_sessions([tmp_path / "people", tmp_path / "models", tmp_path / "replay"])
    api.report(df, tmp_path / "report", n_boot=100)
    sizes = pd.read_csv(tmp_path / "report" / "tables" / "sample_sizes.csv").set_index("group")
    assert sizes.loc["human", "subjects"] == 3
    tw = pd.read_csv(tmp_path / "report" / "tables" / "twins_likelihood.csv")
    assert "replay" in set(tw["context"])
    assert "Twins: the model as a model of the people" in (tmp_path / "report" / "report.html").read_text()
