"""Broken specs give one readable error naming the file, the field and the value."""
from __future__ import annotations

import pytest
import yaml

from experiments.spec import SpecError, bundled_spec_path, load_spec

BASE = yaml.safe_load(bundled_spec_path("lakretz2021_nested").read_text())


def write(tmp_path, mutate):
    data = yaml.safe_load(yaml.safe_dump(BASE))
    mutate(data)
    p = tmp_path / "broken.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


CASES = [
    ("unknown top-level key", lambda d: d.update(feedbak={}), ["feedbak", "unknown field"]),
    ("unknown block key", lambda d: d["blocks"][0].update(trails=40), ["blocks.0.trails", "unknown field"]),
    ("wrong type", lambda d: d["timing"].update(word_ms="fast"), ["timing.word_ms", "'fast'"]),
    ("impossible value", lambda d: d["timing"].update(word_ms=-5), ["timing.word_ms", "-5"]),
    ("zero trials", lambda d: d["blocks"][0].update(trials=0), ["blocks.0.trials", "0"]),
    ("unknown structure", lambda d: d["blocks"][1].update(structures=["long_nestd"]), ["long_nestd", "known:"]),
    ("bad condition letters", lambda d: d["blocks"][1].update(conditions=["PXP"]), ["PXP", "S and P"]),
    ("missing instructions", lambda d: d["texts"].pop("instructions"), ["texts.instructions", "Field required"]),
    ("duplicate block names", lambda d: d["blocks"][1].update(name="training"), ["unique", "training"]),
    ("missing stimulus "
     "file", lambda d: d.update(stimuli={"file": "nowhere.csv"}), ["stimuli.file", "nowhere.csv", "does not exist"]),
    ("bad lexicon", lambda d: d["blocks"][0].update(lexicon="french"), ["blocks.0.lexicon", "french"]),
]


@pytest.mark.parametrize("name,mutate,needles", CASES, ids=[c[0] for c in CASES])
def test_broken_spec_is_a_named_error(tmp_path, name, mutate, needles):
    p = write(tmp_path, mutate)
    with pytest.raises(SpecError) as err:
        load_spec(p)
    msg = str(err.value)
    assert str(p) in msg
    for n in needles:
        assert n in msg, msg


def test_missing_spec_file_and_bad_yaml(tmp_path):
    with pytest.raises(SpecError, match="does not exist"):
        load_spec(tmp_path / "nope.yaml")
    p = tmp_path / "bad.yaml"
    p.write_text("name: [unclosed\n")
    with pytest.raises(SpecError, match="not valid YAML"):
        load_spec(p)
    p.write_text("- a list\n")
    with pytest.raises(SpecError, match="mapping"):
        load_spec(p)
    p.write_text("\x01name: x\n")  # a control character in the first bytes the YAML reader checks
    with pytest.raises(SpecError, match="not valid YAML.*#x0001"):
        load_spec(p)


def test_bundled_spec_by_name():
    assert load_spec("lakretz2021_nested").name == "lakretz2021_nested"
