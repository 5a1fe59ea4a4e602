"""Importing the released Lakretz et al. English stimuli (.text + .gold) as ordinary stimulus files."""
from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from typer.testing import CliRunner

from experiments.cli import app
from experiments.design_compiler import compile_sequence
from experiments.spec import parse_spec
from stimuli.files import StimulusFileError, load_items
from studies.lakretz2021.texts import import_lakretz_text

DATA = Path(__file__).parent.parent / "data" / "lakretz_text"
# the fixtures are grouped by condition as the release is: 2 items per condition, in this order
CONDITIONS = ["".join(p) for p in itertools.product("SP", repeat=3) for _ in range(2)]


def pair(dep: str) -> tuple[Path, Path]:
    return DATA / f"long_nested_{dep}_english.text", DATA / f"long_nested_{dep}_english.gold"


@pytest.mark.parametrize("dep,index", [("inner", 8), ("outer", 9)])
def test_fixture_conditions_and_dependency_are_derived_from_the_words(dep, index):
    text, gold = pair(dep)
    items = import_lakretz_text(text, gold)
    assert [i.condition for i in items] == CONDITIONS
    assert {i.structure for i in items} == {"long_nested"}
    gold_rows = [ln.split("\t") for ln in gold.read_text().splitlines()]
    for it, sentence, g in zip(items, text.read_text().splitlines(), gold_rows, strict=False):
        assert list(it.verbs) == [dep]
        assert it.verbs[dep] == (int(g[0]), g[1], g[2]) and int(g[0]) == index
        assert it.sentence == sentence
        # the outer verb agrees with noun 1 (letter 1), the inner verb with noun 2 (letter 2)
        letter = it.condition[0] if dep == "outer" else it.condition[1]
        assert g[1].endswith("s") == (letter == "S")


def test_output_is_a_stimulus_file_that_specs_compile(tmp_path):
    out = tmp_path / "items.csv"
    text, gold = pair("inner")
    res = CliRunner().invoke(app, ["stimuli", "import", "lakretz-text", str(text), "--gold", str(gold),
                                   "--out", str(out)])
    assert res.exit_code == 0, res.output
    items = load_items(out)
    assert len(items) == 16 and items[0].item_id == "long_nested_inner_english-00001"
    exp = parse_spec({"name": "imported", "stimuli": {"file": str(out)}, "texts": {"instructions": ["Read."]},
                      "task": {"kind": "forced_choice"},
                      "blocks": [{"name": "test", "structures": ["long_nested"], "versions": ["inner"],
                                  "repetitions": 2, "max_consecutive_violations": None}]})
    seq = compile_sequence(exp, "m01")
    assert len(seq) == 16 and len({t.item_id for t in seq}) == 16
    assert all(t.study_record.critical_index == 8 and t.study_record.dependency == "inner" for t in seq)


def test_release_variants_eos_and_detached_period(tmp_path):
    t, g = tmp_path / "x.text", tmp_path / "x.gold"
    t.write_text("The boy that the girls near the daughter know avoids the sister . <eos>\n"
                 "The people whom the boys that the girl behind the sons greets know are famous\n")
    g.write_text("8\tknow\tknows\t1\n11\tgreets\tgreet\t2\n")
    a, b = import_lakretz_text(t, g)
    assert a.words[-1] == "sister." and (a.structure, a.condition) == ("long_nested", "SPS")
    assert (b.structure, b.condition, list(b.verbs)) == ("long_nested_deeper", "PPSP", ["inner"])


def test_bad_lines_are_named(tmp_path):
    t, g = tmp_path / "bad.text", tmp_path / "bad.gold"
    t.write_text("The boy that the dogs near the daughter knows avoids the sister.\n"  # unknown noun
                 "The boy that the girls near the daughter knows avoids the sister.\n"  # wrong number
                 "The boy that the girl near the daughter knows avoids the sister.\n"  # index not the verb
                 "The boy that the girl near the daughter knows avoids the sister.\n"  # gold form mismatch
                 "The boy  that the girl near the daughter knows avoids the sister.\n")  # double space
    g.write_text("8\tknows\tknow\t0\n8\tknows\tknow\t0\n2\tthat\tthose\t0\n8\tknow\tknows\t0\n9\tknows\tknow\t0\n")
    with pytest.raises(StimulusFileError) as err:
        import_lakretz_text(t, g)
    msg = str(err.value)
    assert "5 bad line(s)" in msg
    assert "line 1: cannot derive the condition" in msg and "N(boy) that the w" in msg
    assert "line 2: the correct form 'knows' is singular but its subject 'girls'" in msg
    assert "line 3: word 2 ('that') is not a verb position" in msg
    assert "line 4: word 8 of the sentence is 'knows', but the gold file's correct form is 'know'" in msg
    assert "line 5: words must be separated by single spaces" in msg


def flat(res) -> str:
    return " ".join(res.output.split())  # rich wraps long messages


def test_cli_errors_are_clean(tmp_path):
    text, gold = pair("inner")
    short = tmp_path / "short.gold"
    short.write_text("8\tknows\tknow\t0\n")
    r = CliRunner()
    res = r.invoke(app, ["stimuli", "import", "lakretz-text", str(text), "--gold", str(short), "--out",
                         str(tmp_path / "o.csv")])
    assert res.exit_code == 2 and "16 line(s)" in flat(res) and "short.gold has 1" in flat(res)
    assert "Traceback" not in res.output and not (tmp_path / "o.csv").exists()
    res = r.invoke(app, ["stimuli", "import", "lakretz-text", str(tmp_path / "none.text"), "--gold", str(gold),
                         "--out", str(tmp_path / "o.csv")])
    assert res.exit_code == 2 and "no such file" in flat(res)
    keep = tmp_path / "keep.csv"
    keep.write_text("precious\n")
    res = r.invoke(app, ["stimuli", "import", "lakretz-text", str(text), "--gold", str(gold), "--out", str(keep)])
    assert res.exit_code == 2 and "exists" in flat(res) and keep.read_text() == "precious\n"
