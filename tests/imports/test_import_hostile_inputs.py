"""Hostile input on the import surface (`twinlab import ...`, `import_study`): writes only where asked (never
through a link planted in --out, never over an input even with --force, never inside an input folder), a map
with an alias bomb, JSON nested thousands deep, a huge cell, one id in two files, --add with another study,
spreadsheet formulas from any reader, odd participant ids, and API arguments of the wrong type."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from cli_refusal import refused, tree, twinlab

from participants.imports.api import import_study
from participants.imports.records import ImportArgumentError, ImportInputError
from tests.support.patching import patch_everywhere

JSPSYCH = Path(__file__).parent.parent / "data" / "imports" / "jspsych"
TABLE = """participant,session,item,condition,sentence,response,answer,rt
S1,1,1,a,Sentence one.,yes,yes,512
S1,1,2,b,Sentence two.,no,yes,640
S2,1,1,b,Sentence one!,no,no,700
S2,1,2,a,Sentence two!,yes,yes,455
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("sub", ["data", "spec"])
def test_a_link_planted_in_out_is_refused_and_nothing_is_written_through_it(tmp_path, sub):
    f = write(tmp_path / "t.csv", TABLE)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / sub).symlink_to(elsewhere, target_is_directory=True)
    refused("import", "table", str(f), "--out", str(out), match=["symbolic link"])
    assert not list(elsewhere.iterdir())
    refused("import", "table", str(f), "--out", str(out), "--force", match=["symbolic link"])
    assert not list(elsewhere.iterdir())


def test_spec_out_never_replaces_the_map_or_a_results_file_even_with_force(tmp_path):
    f = write(tmp_path / "t.csv", TABLE)
    m = write(tmp_path / "map.yaml", "item: item\n")
    before = tree(tmp_path)
    refused("import", "table", str(f), "--map", str(m), "--out", str(tmp_path / "out"), "--spec-out", str(m),
            "--force", match=["--spec-out", "own input (--map)"])
    assert tree(tmp_path) == before
    # the items file beside --spec-out would be `<name>_items.csv`: here, the results file itself
    results = write(tmp_path / "s" / "study_items.csv", TABLE)
    before = tree(tmp_path)
    refused("import", "table", str(results), "--out", str(tmp_path / "out"), "--spec-out",
            str(tmp_path / "s" / "study.yaml"), "--force", match=["items file beside --spec-out", "own input"])
    assert tree(tmp_path) == before


def test_an_out_inside_the_input_folder_is_refused(tmp_path):
    folder = tmp_path / "in"
    write(folder / "t.csv", TABLE)
    before = tree(tmp_path)
    refused("import", "table", str(folder), "--out", str(folder / "out"), match=["inside", "reads"])
    assert tree(tmp_path) == before


def test_an_alias_bomb_map_is_refused_quickly_without_its_expansion(tmp_path):
    f = write(tmp_path / "t.csv", TABLE)
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True))
    m = write(tmp_path / "map.yaml", bomb + "item: *i\n")
    t0 = time.time()
    msg = refused("import", "table", str(f), "--map", str(m), "--out", str(tmp_path / "out"), match=[str(m)])
    assert time.time() - t0 < 30 and len(msg) < 1000
    with pytest.raises(ImportInputError) as exc:
        import_study("table", [f], m, tmp_path / "out")
    assert len(str(exc.value)) < 1000
    tagged = write(tmp_path / "tag.yaml", "item: !!python/object/apply:os.system ['echo hi']\n")
    refused("import", "table", str(f), "--map", str(tagged), "--out", str(tmp_path / "out"), match=[str(tagged)])
    assert not (tmp_path / "out").exists()


def test_json_nested_thousands_deep_is_refused_by_name(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    refused("import", "jspsych", str(deep), "--out", str(tmp_path / "out"), match=[str(deep), "nested too deeply"])
    assert not (tmp_path / "out").exists()


def test_a_huge_cell_is_refused_before_anything_is_written(tmp_path):
    f = write(tmp_path / "t.csv", TABLE.replace("Sentence two.", "x" * 2_000_000))
    out = tmp_path / "out"
    refused("import", "table", str(f), "--out", str(out), match=[f"{f}: line 3", "stimulus", "characters"])
    assert not out.exists()


def test_one_participant_in_two_files_is_refused_naming_both(tmp_path):
    a = write(tmp_path / "a.csv", TABLE)
    b = write(tmp_path / "b.csv", TABLE.replace("S2", "S3"))
    refused("import", "table", str(a), str(b), "--out", str(tmp_path / "out"), match=[str(b), str(a), "'S1'"])
    assert not (tmp_path / "out").exists()


def test_add_with_another_studys_dataset_is_refused(tmp_path):
    f = write(tmp_path / "t.csv", TABLE)
    out = tmp_path / "out"
    r = twinlab("import", "table", str(f), "--out", str(out), "--spec-out", str(tmp_path / "first.yaml"))
    assert r.returncode == 0, r.stderr
    g = write(tmp_path / "g.csv", TABLE.replace("S1", "T1").replace("S2", "T2"))
    before = tree(out)
    for extra in (["--add"], ["--force"], []):
        refused("import", "table", str(g), "--out", str(out), "--spec-out", str(tmp_path / "second.yaml"), *extra,
                match=["another study"])
    assert tree(out) == before


def _jspsych_with(tmp_path: Path, field: str, value: str) -> Path:
    rows = json.loads((JSPSYCH / "s01.json").read_text(encoding="utf-8"))
    k = next(i for i, r in enumerate(rows) if r.get("item"))
    rows[k][field] = value
    return write(tmp_path / "s01.json", json.dumps(rows))


@pytest.mark.parametrize("cell", ['=HYPERLINK("http://x","y")', "@SUM(A1)", "+cmd|' /C calc'!A0"])
def test_a_formula_from_jspsych_is_never_written_into_a_csv(tmp_path, cell):
    f = _jspsych_with(tmp_path, "stimulus", cell)
    refused("import", "jspsych", str(f), "--out", str(tmp_path / "out"), match=[str(f), "spreadsheet formula"])
    assert not (tmp_path / "out").exists()


def test_a_participant_id_holding_a_line_break_is_refused(tmp_path):
    rows = json.loads((JSPSYCH / "s01.json").read_text(encoding="utf-8"))
    f = write(tmp_path / "s01.json", json.dumps([{**r, "subject": "s01\nnote: all good"} for r in rows]))
    refused("import", "jspsych", str(f), "--out", str(tmp_path / "out"), match=[str(f), "control character"])
    g = write(tmp_path / "t.csv", TABLE.replace("S1,", '"S1\nS9",'))
    refused("import", "table", str(g), "--out", str(tmp_path / "out"), match=[str(g), "control character"])
    assert not (tmp_path / "out").exists()


def test_a_path_like_participant_id_stays_inside_out(tmp_path):
    f = write(tmp_path / "t.csv", TABLE.replace("S1", "../../etc/passwd").replace("S2", "/dev/null"))
    out = tmp_path / "out"
    r = import_study("table", [f], None, out)
    assert r.people == 2
    names = sorted(p.name for p in (out / "data").iterdir())
    assert all("/" not in n and ".." not in n for n in names) and len(names) == 4
    assert {p.name for p in tmp_path.iterdir()} == {"t.csv", "out"}


@pytest.mark.parametrize("kwargs,name", [({"force": "no"}, "force"), ({"add": 1}, "add"),
                                         ({"bad_trials": "skip"}, "bad_trials"), ({"encoding": 8}, "encoding")])
def test_api_arguments_of_the_wrong_type_are_refused_by_name(tmp_path, kwargs, name):
    f = write(tmp_path / "t.csv", TABLE)
    with pytest.raises(ImportArgumentError) as exc:
        import_study("table", [f], None, tmp_path / "out", **kwargs)
    assert str(exc.value).startswith(f"{name}:") and isinstance(exc.value, TypeError)
    assert not (tmp_path / "out").exists()
    with pytest.raises(ImportArgumentError, match="^paths:"):
        import_study("table", str(f), None, tmp_path / "out")
    with pytest.raises(ImportArgumentError, match="^out:"):
        import_study("table", [f], None, 3)


def test_an_imported_session_that_lost_rows_is_not_analysed_as_whole(tmp_path):
    from analysis.load import load

    f = write(tmp_path / "t.csv", TABLE)
    out = tmp_path / "out"
    import_study("table", [f], None, out)
    df, info = load([out / "data"])
    assert set(df["session_status"]) == {"completed"}
    table = next((out / "data").glob("*subject-S1_*_data.csv"))
    lines = table.read_text(encoding="utf-8").splitlines(keepends=True)
    table.write_text("".join(lines[:-1]), encoding="utf-8")   # the last row lost
    df, info = load([out / "data"])
    s1 = df[df["source_file"] == str(table)]
    assert len(s1) == 1 and set(s1["session_status"]) == {"altered"}
    assert any(table.name in n and "changed since it was written" in n for n in info.notes)


def test_an_import_that_fails_while_writing_leaves_nothing_behind(tmp_path, monkeypatch):
    """A fault after the spec and a first session were written (a full disk, simulated on the second session):
    every file and folder the import began is removed, the input stays."""
    import participants.imports.sessions as sessions

    f = write(tmp_path / "t.csv", TABLE)
    real = sessions.write_session
    calls = []

    def failing(out, exp, plan):
        calls.append(plan)
        if len(calls) == 2:
            raise ImportInputError("no space left on device (simulated)")
        return real(out, exp, plan)

    patch_everywhere(monkeypatch, sessions, "write_session", failing)
    with pytest.raises(ImportInputError, match="simulated"):
        import_study("table", [f], None, tmp_path / "out")
    assert len(calls) == 2 and [p.name for p in tmp_path.iterdir()] == ["t.csv"]
