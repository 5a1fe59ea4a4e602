"""A new kind is one folder on the model and analysis sides too: a toy kind installed by this test only
(tests/support/kinds/colour_toy_b/: its task part, its model protocol, its report section), found through
the one registry of kinds, runs in the model runner with a stand-in backend and appears in the report with
its own section, whose numbers are counted here from the session table by hand. Nothing in twinlab names it."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Sequence

import pandas as pd
import pytest
import yaml

from model_subjects.backends.base import Backend
from model_subjects.requests import LoglikelihoodResult

sys.path.insert(0, str(Path(__file__).parent.parent / "support"))
from toy_kinds import installed  # noqa: E402

TOY = "colour_toy_b"
COLOURS = {"red", "blue", "green"}


class Lexicon(Backend):
    """A stand-in model: ' colour' is likely after a prompt that holds a colour word, ' other' otherwise."""

    name = "lexicon"

    def loglikelihood(self, requests: Sequence[Any], progress: Any = None) -> list[LoglikelihoodResult]:
        out = []
        for r in requests:
            said_colour = any(w in COLOURS for w in r.context.replace("\n", " ").split())
            likely = "colour" if said_colour else "other"
            out.append(LoglikelihoodResult(-0.5 if r.continuation.strip() == likely else -3.0, True, 1))
        return out

    def generate_until(self, requests: Sequence[Any], progress: Any = None) -> list[str]:
        return ["" for _ in requests]


@pytest.fixture()
def toy(tmp_path):
    with installed(TOY, tmp_path):
        yield


def write_spec(tmp: Path) -> Path:
    rows = ["1,c,red,colour", "1,o,table,other", "2,c,blue,colour", "2,o,chair,other",
            "3,c,green,colour", "3,o,spoon,other", "4,c,red,colour", "4,o,chair,other"]
    (tmp / "items.csv").write_text("item,colourness,sentence,answer\n" + "\n".join(rows) + "\n", encoding="utf-8")
    data = {"name": "toyb", "seed": 1, "design": {"file": "items.csv", "factors": {"colourness": ["c", "o"]},
                                                  "lists": "latin_square"},
            "blocks": [{"name": "test", "role": "test", "feedback": False}],
            "task": {"kind": TOY}, "texts": {"instructions": ["Say whether each word is a colour."]}}
    p = tmp / "toy.yaml"
    p.write_text(yaml.safe_dump(data), encoding="utf-8")
    return p


def test_a_toy_kind_runs_in_the_model_runner_and_has_its_section_in_the_report(toy, tmp_path):
    from analysis import api
    from experiments.spec import load_spec
    from model_subjects.context import protocol_for
    from model_subjects.run_checks import candidate_protocols
    from model_subjects.runner import RunConfig, run_models

    spec = write_spec(tmp_path)
    exp = load_spec(spec)  # run-model's checks and `twinlab context` find the toy's protocol by lookup
    assert candidate_protocols(exp) == ["meta"] and protocol_for(exp, f"{TOY}:meta").name == f"{TOY}:meta"
    cfg = RunConfig(spec=str(spec), subjects=2, out=tmp_path / "sessions", seed=1)
    run_models(cfg, backend=Lexicon())
    csvs = sorted((tmp_path / "sessions").rglob("*_data.csv"))
    assert len(csvs) == 2
    rows = pd.concat([pd.read_csv(p) for p in csvs], ignore_index=True)
    assert set(rows["task"]) == {TOY} and set(rows["protocol"]) == {f"{TOY}:meta"} and len(rows) == 8
    # the stand-in answers by the word, so every answer is the item's: the kind's own score says so
    assert (rows["response"] == rows["correct_response"]).all() and rows["correct"].all()
    # its declared column (tests/support/kinds/colour_toy_b/__init__.py) closes the header before the factor and
    # holds log P(' colour') - log P(' other'): -0.5 - -3.0 for a colour word, the reverse otherwise
    assert pd.read_csv(csvs[0], nrows=0).columns[-2:].tolist() == ["colour_margin", "colourness"]
    assert (rows["colour_margin"] == rows["correct_response"].map({"colour": 2.5, "other": -2.5})).all()
    from analysis.load import load

    loaded, _ = load(csvs)  # the loader knows the declared column and its dtype (not taken for a factor)
    assert str(loaded["colour_margin"].dtype) == "Float64" and loaded["colour_margin"].abs().eq(2.5).all()

    res = api.report(tmp_path / "sessions", tmp_path / "out", n_boot=20, mixed=False)
    sec = {s["id"]: s for s in res["sections"]}
    assert f"task_{TOY}" in sec
    got = pd.read_csv(tmp_path / "out" / "tables" / "toy_answers.csv")
    by_answer = rows.groupby("correct_response")["response"].agg(lambda r: int((r == "colour").sum()))
    assert dict(zip(got["correct_response"], got["n_colour"], strict=False)) == by_answer.to_dict() == {
        "colour": 4, "other": 0}
    assert dict(zip(got["correct_response"], got["n_trials"], strict=False)) == {"colour": 4, "other": 4}


def test_without_its_folder_the_kind_has_no_model_protocol():
    from model_subjects.protocols import ProtocolError, get_protocol

    with pytest.raises(ProtocolError, match=f"task kind '{TOY}' has no model protocols here"):
        get_protocol("meta", task=type("T", (), {"kind": TOY})())
