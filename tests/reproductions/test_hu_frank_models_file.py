"""The models file of `reproduce hu-frank2024 --data DIR --models FILE`: YAML (safe-loaded) or CSV, each
model's path, family, size (parameters) and optional step; every error names the file, the entry and the field."""
from __future__ import annotations

import pytest
from cli_refusal import refused

from reproductions.common import ReproError
from reproductions.hu_frank.models_file import parse_size, read_models_file


def test_yaml_and_csv_give_the_same_entries(tmp_path):
    y = tmp_path / "m.yaml"
    y.write_text("models:\n  - {path: a/t5, family: t5, size: 60M}\n  - {path: run/step1000, family: mine, size: "
                 "1.2e9, step: 1000, name: r1}\n")
    c = tmp_path / "m.csv"
    c.write_text("path,family,size,step,name\na/t5,t5,60000000,,\nrun/step1000,mine,1.2B,1000,r1\n")
    for f in (y, c):
        a, b = read_models_file(f)
        assert (a.path, a.family, a.size, a.step, a.label) == ("a/t5", "t5", 60e6, None, "t5")
        assert (b.family, b.size, b.step, b.label) == ("mine", 1.2e9, 1000, "r1")


@pytest.mark.parametrize("value, params", [(135000000, 135e6), ("135M", 135e6), ("1.4B", 1.4e9), ("7e9", 7e9),
                                           ("350k", 350e3)])
def test_sizes(value, params):
    assert parse_size(value) == pytest.approx(params)


@pytest.mark.parametrize("body, message", [
    ("models:\n  - {path: a, family: t5, size: big}\n", "models[0].size: 'big' is not a number of parameters"),
    ("models:\n  - {path: a, size: 1M}\n", "models[0].family: missing"),
    ("models:\n  - {path: a, family: f, size: 1M}\n  - {family: f, size: 2M}\n", "models[1].path: missing"),
    ("models:\n  - {path: a, family: f, step: 0}\n", "models[0].step: 0 is not a whole number of at least 1"),
    ("models:\n  - {path: a, family: f, steps: 3}\n", "models[0]: unknown field(s) steps"),
    ("models:\n  - {path: a, family: f}\n  - {path: b/a, family: g}\n", "model label(s) given twice: a"),
    ("- {path: a, family: f}\n", "expected a list under 'models:'"),
    ("models: [\n", "not valid YAML"),
    ("models:\n  - !!python/object/apply:os.system [echo]\n", "not valid YAML"),
])
def test_yaml_errors_name_file_entry_and_field(tmp_path, body, message):
    f = tmp_path / "models.yaml"
    f.write_text(body)
    with pytest.raises(ReproError) as e:
        read_models_file(f)
    assert str(f) in str(e.value) and message in str(e.value)


def test_csv_errors_name_the_line(tmp_path):
    f = tmp_path / "models.csv"
    f.write_text("path,family,size\na,t5,1M\nb,t5,-3\n")
    with pytest.raises(ReproError, match=r"models.csv line 3.size: '-3' is not a number of parameters"):
        read_models_file(f)
    f.write_text("path,size\na,1M\n")
    with pytest.raises(ReproError, match="missing column"):
        read_models_file(f)


def test_the_command_refuses_a_bad_models_file_before_writing(tmp_path):
    from tests.support.hu_frank_release import write_release, write_stimuli

    rel = write_stimuli(write_release(tmp_path / "rel"))
    f = tmp_path / "models.yaml"
    f.write_text("models:\n  - {path: a, family: t5, size: big}\n")
    out = tmp_path / "out"
    refused("reproduce", "hu-frank2024", "--data", str(rel), "--models", str(f), "--out", str(out),
            match="models[0].size: 'big' is not a number of parameters")
    assert not out.exists()
    f.write_text("models:\n  - {path: a, family: t5, size: 1M}\n")
    refused("reproduce", "hu-frank2024", "--data", str(rel), "--models", str(f), "--model", "x", "--out", str(out),
            match="leave out --model")
