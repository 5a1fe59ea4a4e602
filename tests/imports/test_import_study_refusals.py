"""Bad input to `twinlab import psychopy|table`: one message naming the file, line and column, exit 2,
nothing written; or an honest import that states what it did (markup kept as text, rows excluded)."""
from __future__ import annotations

import csv
import io
import os
from pathlib import Path

import pytest
from cli_refusal import refused, tree, twinlab

from participants.imports.api import import_study
from participants.imports.records import ImportInputError

DATA = Path(__file__).parent.parent / "data" / "imports" / "psychopy" / "data"
P01 = sorted(DATA.glob("*.csv"))[0]
GOOD_TABLE = """participant,session,item,condition,sentence,response,answer,rt
S1,1,1,a,Sentence one.,yes,yes,512
S1,1,2,b,Sentence two.,no,yes,640
S2,1,1,b,Sentence one!,no,no,700
S2,1,2,a,Sentence two!,yes,yes,455
"""


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8-sig").splitlines(keepends=True)


def check_refused(tmp_path: Path, args: list[str], match: list[str]) -> None:
    out = tmp_path / "out"
    before = tree(tmp_path)
    refused("import", *args, "--out", str(out), match=match)
    assert not out.exists() and tree(tmp_path) == before


def test_a_plain_table_imports_and_its_counts_are_the_files(tmp_path):
    f = write(tmp_path / "t.csv", GOOD_TABLE)
    r = import_study("table", [f], None, tmp_path / "out")
    assert r.trials == 4 and r.people == 2 and r.factors == {"condition": ["a", "b"]}
    assert r.labels == {"no": "no", "yes": "yes"} and r.sessions["new"] == 2


def test_a_mapping_naming_a_column_the_file_lacks(tmp_path):
    f = write(tmp_path / "t.csv", GOOD_TABLE)
    m = write(tmp_path / "map.yaml", "item: item_number\n")
    check_refused(tmp_path, ["table", str(f), "--map", str(m)], [f"{f}: line 1", "item names column 'item_number'"])


def test_a_mapping_field_twinlab_does_not_have(tmp_path):
    f = write(tmp_path / "t.csv", GOOD_TABLE)
    m = write(tmp_path / "map.yaml", "itme: item\n")
    check_refused(tmp_path, ["table", str(f), "--map", str(m)], [str(m), "'itme' is not a mapping field"])


def test_a_participant_with_two_sessions_files(tmp_path):
    a = write(tmp_path / "a.csv", GOOD_TABLE)
    b = write(tmp_path / "b.csv", GOOD_TABLE.replace("S1,1,", "S1,2,").replace("S2,1,", "S3,1,"))
    check_refused(tmp_path, ["table", str(a), str(b)], [f"{b}: line 2", "participant 'S1' has data of two sessions"])


def test_a_response_not_among_the_labels(tmp_path):
    f = write(tmp_path / "t.csv", GOOD_TABLE.replace("S2,1,2,a,Sentence two!,yes", "S2,1,2,a,Sentence two!,maybe"))
    m = write(tmp_path / "map.yaml", "labels: {'yes': 'yes', 'no': 'no'}\n")
    check_refused(tmp_path, ["table", str(f), "--map", str(m)], [f"{f}: line "
                                                                 "5", "response 'maybe' is not among the labels"])


def test_rows_out_of_order_in_a_builder_file(tmp_path):
    lines = lines_of(P01)
    rows = list(csv.DictReader(io.StringIO("".join(lines))))
    k = next(i for i, r in enumerate(rows) if r["trials.thisN"] == "0") + 1  # the first trials-loop row's line
    lines[k], lines[k + 1] = lines[k + 1], lines[k]
    f = tmp_path / P01.name
    f.write_text("".join(lines), encoding="utf-8")
    check_refused(tmp_path, ["psychopy", str(f)], [f"{f}: line {k + 1}", "(trials.thisN): rows out of order"])


def test_rows_out_of_order_by_a_tables_order_column(tmp_path):
    f = write(tmp_path / "t.csv", "participant,order,item,condition,sentence,response\n"
                                  "S1,2,1,a,x one,yes\nS1,1,2,b,x two,no\n")
    m = write(tmp_path / "map.yaml", "order: order\n")
    check_refused(tmp_path, ["table", str(f), "--map", str(m)], [f"{f}: line 3, column 2 (order): rows out of order"])


def test_a_torn_last_line(tmp_path):
    text = P01.read_text(encoding="utf-8-sig")
    f = write(tmp_path / P01.name, text[: text.rstrip("\n").rfind(",", 0, len(text) - 400)])
    check_refused(tmp_path, ["psychopy", str(f)], [str(f), "the last line is cut short"])


@pytest.mark.parametrize("cell", ["=HYPERLINK(\"http://x\")", "@SUM(A1)", "+cmd|' /C calc'!A0"])
def test_a_spreadsheet_formula_in_a_cell(tmp_path, cell):
    buf = io.StringIO()
    rows = list(csv.reader(io.StringIO(GOOD_TABLE)))
    rows[3][4] = cell
    csv.writer(buf, lineterminator="\n").writerows(rows)
    f = write(tmp_path / "t.csv", buf.getvalue())
    check_refused(tmp_path, ["table", str(f)], [f"{f}: line 4, column 5 (sentence)", "spreadsheet formula"])


def test_markup_in_a_cell_is_imported_as_text_and_said(tmp_path):
    f = write(tmp_path / "t.csv", GOOD_TABLE.replace("Sentence two.", "<b>Sentence</b> two."))
    r = twinlab("import", "table", str(f), "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert "note: t.csv: line 3, column 5 (sentence): markup kept as text" in r.stdout
    rows = (tmp_path / "out" / "data").glob("*subject-S1_*_data.csv")
    assert "<b>Sentence</b> two." in next(rows).read_text(encoding="utf-8")


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path):
    f = tmp_path / "huge.csv"
    with open(f, "wb") as fh:
        fh.truncate(200 * 1024 * 1024)  # sparse: 200 MB on paper, nothing on disk
    check_refused(tmp_path, ["table", str(f)], [str(f), "larger than the 100 MiB limit"])
    os.unlink(f)


def test_a_file_of_another_tool(tmp_path):
    f = write(tmp_path / "jspsych.csv", "rt,stimulus,response,trial_type,trial_index,time_elapsed,internal_node_id\n"
                                        "512,<p>dog</p>,f,html-keyboard-response,0,600,0.0-0.0\n")
    check_refused(tmp_path, ["psychopy", str(f)], [f"{f}: line 1", "not a PsychoPy Builder data file",
                                                   "use `twinlab import jspsych`"])


def test_the_tools_scoring_must_agree_with_the_answers(tmp_path):
    text = P01.read_text(encoding="utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text)))
    k = next(i for i, r in enumerate(rows) if r["trials.thisN"])
    rows[k]["key_resp.corr"] = "0" if rows[k]["key_resp.corr"] == "1" else "1"
    buf = io.StringIO()
    w = csv.DictWriter(buf, list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    f = write(tmp_path / P01.name, buf.getvalue())
    check_refused(tmp_path, ["psychopy", str(f)], [f"{f}: line {k + 2}", "the tool scored this trial"])


def test_an_item_twice_for_one_person_is_refused_naming_both_lines(tmp_path):
    f = write(tmp_path / "t.csv", GOOD_TABLE + "S1,1,1,a,Sentence one.,yes,yes,300\n")
    with pytest.raises(ImportInputError, match=r"line 6: participant 'S1' got item '1' in a again \(first on line 2\)"):
        import_study("table", [f], None, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_an_existing_session_of_other_files_is_not_overwritten(tmp_path):
    f = write(tmp_path / "t.csv", GOOD_TABLE)
    import_study("table", [f], None, tmp_path / "out")
    before = tree(tmp_path / "out")
    g = write(tmp_path / "t.csv", GOOD_TABLE.replace("512", "513"))
    refused("import", "table", str(g), "--out", str(tmp_path / "out"), match=["already exists", "--force"])
    assert tree(tmp_path / "out") == before


@pytest.mark.parametrize("tool", ["psychopy", "table", "jspsych", "pcibex"])
def test_one_size_limit_for_every_reader(tmp_path, tool):
    """The issue's 200 MB results file is refused by every reader, by the one limit (records.MAX_FILE_BYTES),
    before a byte is read (a sparse file: no disk used)."""
    from participants.imports.records import MAX_FILE_BYTES

    f = tmp_path / "results.csv"
    with open(f, "wb") as out:
        out.truncate(200_000_000)
    assert 200_000_000 > MAX_FILE_BYTES
    check_refused(tmp_path, [tool, str(f)], [str(f), "larger than the 100 MiB limit"])
