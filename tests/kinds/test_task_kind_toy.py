"""A new kind is one folder: a toy kind installed here (tests/support/kinds/colour_toy_b/, as a third party's
package: settings, materials, its item check, scoring, runners) is validated in a spec, its items checked, scored
by the one rule, and refused by the runners that do not implement it, naming the one that does; nothing else in
twinlab was edited for it."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from experiments.spec import SpecError, load_spec, parse_spec
from experiments.tasks import TaskError, get_task, runs_on
from experiments.tasks.items import check_items

sys.path.insert(0, str(Path(__file__).parent.parent / "support"))
from toy_kinds import installed  # noqa: E402

TOY = "colour_toy_b"  # tests/support/kinds/colour_toy_b/: the folder is the whole kind


@pytest.fixture()
def toy(tmp_path):
    with installed(TOY, tmp_path / "site"):
        yield get_task(TOY)


def spec(tmp: Path, rows: list[str]) -> Path:
    (tmp / "items.csv").write_text("item,colourness,sentence,answer\n" + "\n".join(rows) + "\n", encoding="utf-8")
    data = {"name": "toy", "seed": 1, "design": {"file": "items.csv", "factors": {"colourness": ["c", "o"]},
                                                 "lists": "latin_square"},
            "blocks": [{"name": "test", "role": "test", "feedback": False}],
            "task": {"kind": TOY, "question": "Colour?"}, "texts": {"instructions": ["Colour or not?"]}}
    p = tmp / "toy.yaml"
    p.write_text(yaml.safe_dump(data), encoding="utf-8")
    return p


def test_a_registered_toy_kind_is_a_whole_kind(toy, tmp_path):
    p = spec(tmp_path, ["1,c,red,colour", "1,o,table,other", "2,c,blue,colour", "2,o,chair,other"])
    exp = load_spec(p)
    assert exp.task.kind == TOY and exp.task.settings().question == "Colour?"
    assert get_task(TOY) is toy and runs_on(TOY) == "model subjects (run-model) only"
    from experiments.design_compiler import compile_sequence

    seq = compile_sequence(exp, "p01", 1)
    t = seq[0]
    assert t.task == TOY and toy.score(t, " " + t.mat["answer"].upper() + ".") is True
    with pytest.raises(SpecError, match="question: not a setting|scale: not a setting"):
        parse_spec({**yaml.safe_load(p.read_text()), "task": {"kind": TOY, "scale": {"points": 5}}},
                   base_dir=tmp_path)


def test_the_toy_kinds_item_check_runs_at_validate_time(toy, tmp_path):
    p = spec(tmp_path, ["1,c,red,colour", "1,o,table,maybe", "2,c,blue,colour", "2,o,chair,other"])
    with pytest.raises(SpecError, match="line 3: answer 'maybe' is not colour or other"):
        load_spec(p)
    with pytest.raises(TaskError, match="line 9"):
        check_items(load_spec(spec(tmp_path, ["1,c,red,colour", "1,o,table,other", "2,c,blue,colour",
                                              "2,o,chair,other"])).task, [(9, {"sentence": "s"})], "f")


def test_an_unregistered_kind_is_refused_naming_the_known_ones():
    with pytest.raises(SpecError, match="unknown task kind 'colour_toy_b'"):
        parse_spec({"name": "x", "task": {"kind": TOY}, "texts": {"instructions": ["x"]}})
