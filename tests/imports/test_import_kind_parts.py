"""The import's per-kind rules are each kind's importer part (kinds/<kind>/importer.py), found through the one
registry: the tools' elements mean the kinds they meant when the readers held the tables (the literal tables
below are those readers' tables, participants/imports/pcibex.py TASKS and jspsych.py PLUGIN_TASKS before the
move), a kind without the part is refused listing those with one, and a toy kind's folder with an importer part
is all an import of that kind needs (sessions whose answers equal the file's, counted here by hand)."""
from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

from experiments.spec import load_spec
from participants.imports.api import import_study
from participants.imports.kinds import default_kind, import_kinds, tool_kinds
from participants.imports.records import ImportInputError

sys.path.insert(0, str(Path(__file__).parent.parent / "support"))
from toy_kinds import installed  # noqa: E402

PCIBEX_BEFORE = {"Maze": "maze", "DashedSentence": "self_paced_reading", "AcceptabilityJudgment": "judgment",
                 "Scale": "rating", "Selector": "choice", "DropDown": "choice", "TextInput": "completion",
                 "Controller-Maze": "maze", "Controller-DashedSentence": "self_paced_reading"}
JSPSYCH_BEFORE = {"survey-likert": "rating", "html-slider-response": "rating", "image-slider-response": "rating",
                  "audio-slider-response": "rating", "video-slider-response": "rating", "survey-text": "completion",
                  "cloze": "completion", "maze": "maze"}
WRITES = "judgment, lexical_decision, choice, rating, self_paced_reading, completion, maze"


def test_the_tools_elements_mean_the_kinds_they_meant_before():
    # an old-Ibex Question's answer stated judgment inside the reader; it is now judgment's hint
    assert tool_kinds("pcibex") == {**PCIBEX_BEFORE, "Question": "judgment"}
    assert tool_kinds("jspsych") == JSPSYCH_BEFORE
    # a Builder Slider states a rating, a Textbox a completion (a keyboard states none: the default kind)
    assert tool_kinds("psychopy") == {"slider": "rating", "textbox": "completion"} and default_kind() == "judgment"
    assert ", ".join(import_kinds()) == WRITES


def _table(tmp_path: Path) -> Path:
    table = tmp_path / "toy.csv"
    table.write_text("participant,item,condition,sentence,response,answer,rt\n"
                     "p1,1,c,red,c,colour,800\np1,2,o,table,c,other,900\np1,3,c,blue,m,colour,700\n"
                     "p1,4,o,chair,m,other,650\n", encoding="utf-8")
    return table


@pytest.mark.parametrize("kind, why", [("violation_detection", r"task kind 'violation_detection' has no importer part "
                                                               r"\(kinds/violation_detection/importer.py\)"),
                                       ("colour_toy", "the import cannot write task kind 'colour_toy'")])
def test_a_kind_without_an_importer_part_is_refused_listing_those_with_one(tmp_path, kind, why):
    with pytest.raises(ImportInputError, match=f"{why}; an import writes the task kinds {WRITES}$"):
        import_study("table", [_table(tmp_path)], {"task": kind}, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_toy_kinds_importer_part_is_all_its_import_needs(tmp_path):
    table = _table(tmp_path)
    with installed("colour_toy", tmp_path / "site"):
        assert import_kinds()[-1] == "colour_toy" and tool_kinds("jspsych")["colour-word"] == "colour_toy"
        report = import_study("table", [table], {"task": "colour_toy", "labels": {"c": "colour", "m": "other"}},
                              tmp_path / "out", spec_out=tmp_path / "toy.yaml")
        assert report.task == "colour_toy" and report.trials == 4 and load_spec(tmp_path / "toy.yaml").task.kind == \
            "colour_toy"
    with open(next((tmp_path / "out" / "data").glob("*_data.csv")), encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    # by hand: c = colour, m = other; red and chair answered right, table and blue wrong
    assert [(r["response"], r["correct"], r["rt_ms"]) for r in rows] == [
        ("colour", "True", "800.0"), ("colour", "False", "900.0"), ("other", "False", "700.0"),
        ("other", "True", "650.0")]
    assert "colour_toy" not in import_kinds() and "colour-word" not in tool_kinds("jspsych")
