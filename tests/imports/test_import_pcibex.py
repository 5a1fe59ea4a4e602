"""The PCIbex/Ibex reader on results files the real PennController wrote (tests/data/imports/pcibex, copied from
PennController's own repository) and on old-Ibex files laid out as Ibex's server.py writes them.

Each check is against the file read here line by line (not by the reader): every data row is in a trial or
excluded with its reason, the ratings, RTs and per-word reading times equal a count of the file, and bad input
is refused naming the file, line and column.
"""
from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from statistics import mean

import pytest

from participants.imports.pcibex import default_mapping, read_pcibex
from participants.imports.records import MAX_FILE_BYTES, ImportInputError

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "imports" / "pcibex"
DEV = DATA / "penncontroller_dev_results"
RATING = DATA / "penncontroller_rating_results"
PENN = ["Results reception time", "MD5 hash of participant's IP address", "Controller name",
        "Order number of item", "Inner element number", "Label", "Latin.Square.Group", "PennElementType",
        "PennElementName", "Parameter", "Value", "EventTime"]


def data_lines(path: Path) -> list[tuple[int, list[str]]]:
    return [(n, line.split(",")) for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if line.strip() and not line.startswith("#")]


def accounted(result, path: Path) -> list[int]:
    lines = [e.line for e in result.excluded if e.source_file == str(path)]
    for t in result.trials:
        if t.source_file == str(path):
            lines += [r["line"] for r in json.loads(t.extra["_rows"])]
    return sorted(lines)


@pytest.mark.parametrize("path", [DEV, RATING])
def test_every_row_is_in_a_trial_or_excluded(path):
    result = read_pcibex([path], None)
    raw = data_lines(path)
    assert result.rows_read[str(path)] == len(raw)
    assert accounted(result, path) == [n for n, _ in raw]
    assert all(e.reason for e in result.excluded)


def test_ratings_and_rts_equal_a_count_of_the_file():
    """The last Scale choice of each item, its time from the trial's start, mean per Latin-square group."""
    start, last = {}, {}
    for _, v in data_lines(RATING):   # columns 4 item, 7 group, 8 element type, 10 parameter, 11 value, 12 time
        key = (v[0], v[1], v[3])
        if v[9] == "_Trial_" and v[10] == "Start":
            start[key] = float(v[11])
        if v[7] == "Scale" and v[9] == "Choice":
            last[key] = (v[10], float(v[11]) - start[key], v[6])
    result = read_pcibex([RATING], None)
    mine = {(t.extra["Time results were received"], t.extra["MD5 hash of participant's IP address"], t.item):
            (t.response, t.rt_ms, t.extra["Group"]) for t in result.trials}
    assert mine == last and len(mine) == 16
    by_group, hand = defaultdict(list), defaultdict(list)
    for t in result.trials:
        by_group[t.extra["Group"]].append(t.rt_ms)
    for _response, rt, group in last.values():
        hand[group].append(rt)
    assert {g: mean(v) for g, v in by_group.items()} == pytest.approx({g: mean(v) for g, v in hand.items()})
    assert {t.task for t in result.trials} == {"rating"}
    assert len({t.participant for t in result.trials}) == 2   # two submissions of one IP: two people


def test_self_paced_reading_words_and_times_as_written():
    result = read_pcibex([DEV], None)
    spr = [t for t in result.trials if t.words]
    raw = [v for _, v in data_lines(DEV) if v[7] == "Controller-DashedSentence"]
    assert sum(len(t.words) for t in spr) == len(raw)
    assert [w for t in spr for w in t.words] == [v[10] for v in raw]
    assert [x for t in spr for x in t.word_rts] == [float(v[12]) for v in raw]
    assert all(t.task == "self_paced_reading" and t.response is None for t in spr)
    choices = [t for t in result.trials if t.response == "second"]
    assert len(choices) == 4   # the Selector of the four March submissions


IBEX_HEADER = """#
# Results on Thursday March 12 2020 00:44:00 UTC.
# USER AGENT: Mozilla/5.0
# Design number was non-random = {design}
#
"""


def numbered(names: list[str]) -> str:
    return "# Columns below this comment are as follows:\n" + "".join(
        f"# {i}. {n}.\n" for i, n in enumerate(names, 1))


def old_ibex_file(tmp_path: Path) -> Path:
    """Two submissions of an old-Ibex study in server.py's layout: Maze items and DashedSentence + Question."""
    base = ["Time results were received", "MD5 hash of participant's IP address", "Controller name",
            "Item number", "Element number", "Type", "Group"]
    maze = numbered(base + ["Word number", "Word", "Alternative", "Word on (0=left, 1=right)", "Correct",
                            "Reading time", "Sentence"])
    groups = ("# The lines below this comment are in groups of 2.\n"
              "# The formats of the lines in each of these groups are as follows:\n#\n")
    spr = base + ["Word number", "Word", "Reading time", "Newline?", "Sentence (or sentence MD5)"]
    question = base + ["Question (NULL if none)", "Answer", "Whether or not answer was correct (NULL if N/A)",
                       "Time taken to answer"]
    text = ""
    for s, (md5, t) in enumerate([("aaa111", 1583973840), ("bbb222", 1583974000)]):
        p = f"{t},{md5}"
        text += IBEX_HEADER.format(design=s) + maze
        text += f"{p},Maze,27,0,practice,104,0,The,x-x-x,0,yes,{900 + s},The dog ran%2C fast.\n"
        text += f"{p},Maze,27,0,practice,104,1,dog,sky,1,yes,{800 + s},The dog ran%2C fast.\n"
        text += f"{p},Maze,11,0,and_comma,48,0,The,x-x-x,0,yes,{700 + s},The cat sat.\n"
        text += f"{p},Maze,11,0,and_comma,48,1,cat,joy,1,no,{1500 + s},The cat sat.\n"
        text += f"{p},Maze,11,0,and_comma,48,2,sat.,won.,0,no,None,The cat sat.\n"
        text += groups + "".join(f"# Line {i}:\n" + "".join(f"#     Col. {j}: {n}.\n" for j, n in enumerate(f, 1))
                                 for i, f in enumerate([spr, spr], 1))
        text += f"{p},DashedSentence,30,0,relative,2,1,The,{350 + s},false,The boy left.\n"
        text += f"{p},DashedSentence,30,0,relative,2,2,boy,{410 + s},false,The boy left.\n"
        text += numbered(spr) + f"{p},DashedSentence,30,0,relative,2,3,left.,{505 + s},false,The boy left.\n"
        text += numbered(question) + f"{p},Question,30,1,relative,2,Did the boy stay?,No,{1 - s},{1200 + s}\n"
    path = tmp_path / "ibex_results"
    path.write_text(text, encoding="utf-8")
    return path


def test_old_ibex_maze_spr_and_questions(tmp_path):
    path = old_ibex_file(tmp_path)
    result = read_pcibex([path], None)
    assert result.rows_read[str(path)] == len(data_lines(path)) == 18   # 5 Maze + 3 SPR + 1 Question rows each
    assert accounted(result, path) == [n for n, _ in data_lines(path)]
    by = {(t.participant.split("-")[0], t.extra["Item number"]): t for t in result.trials}
    assert len(by) == 6
    assert {t.item for t in result.trials} == {"104", "48", "2"}   # classic Ibex: the item is its Group
    first = by[("aaa111", "27")]
    assert first.task == "maze" and first.phase == "practice" and first.correct is True
    assert first.words == ("The", "dog") and first.word_rts == (900.0, 800.0)
    assert first.stimulus == "The dog ran, fast."
    failed = by[("aaa111", "11")]
    assert failed.correct is False and failed.word_rts[:2] == (700.0, 1500.0) and failed.word_rts[2] != \
        failed.word_rts[2]   # NaN: a word Maze never showed after the error
    spr = by[("bbb222", "30")]
    assert spr.task == "self_paced_reading" and spr.word_rts == (351.0, 411.0, 506.0)
    assert (spr.response, spr.correct, spr.rt_ms) == ("No", False, 1201.0)
    assert by[("aaa111", "30")].correct is True and spr.condition == "relative" and spr.phase == "test"


def refused(tmp_path: Path, text: str, mapping=None) -> str:
    path = tmp_path / "bad_results"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ImportInputError) as err:
        read_pcibex([path], mapping)
    assert str(path) in str(err.value)
    return str(err.value)


def test_refusals_name_file_line_and_column(tmp_path):
    text = RATING.read_text(encoding="utf-8")
    lines = text.splitlines()
    last = data_lines(RATING)[-1][0]
    torn = "\n".join(lines[:last])[:-30]
    assert f"line {last}" in refused(tmp_path, torn) and "torn" in refused(tmp_path, torn)
    jspsych = (ROOT / "tests" / "data" / "imports" / "jspsych" / "s01.csv").read_text(encoding="utf-8")
    assert "not a PCIbex/Ibex results file" in refused(tmp_path, jspsych)
    msg = refused(tmp_path, text, replace(default_mapping(), condition="Cond"))
    assert '"Cond"' in msg and "condition" in msg
    rows = [i for i, line in enumerate(lines) if ",experiment,4,Scale," in line]
    moved = lines[:rows[0]] + lines[rows[0] + 1:rows[2]] + [lines[rows[0]]] + lines[rows[2]:]
    msg = refused(tmp_path, "\n".join(moved) + "\n")
    assert "out of order" in msg and f"line {rows[2]}" in msg


def test_over_the_size_limit_refused_before_reading(tmp_path, monkeypatch):
    big = tmp_path / "results"
    with open(big, "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail("read before the size check"))
    with pytest.raises(ImportInputError, match="larger than the 100 MiB limit"):
        read_pcibex([big], None)


def test_several_files_appended_and_a_logged_participant_column():
    result = read_pcibex([DEV, RATING], None)
    assert set(result.rows_read) == {str(DEV), str(RATING)}
    people = {t.participant for t in result.trials}
    assert len(people) == 6 + 2
    old = read_pcibex([RATING], None).trials
    assert PENN[0] not in old[0].extra and "Time results were received" in old[0].extra   # 2018: old names
    mapped = read_pcibex([RATING], default_mapping()).trials   # PennController's names mean the old ones too
    assert [(t.item, t.condition, t.response) for t in mapped] == [(t.item, t.condition, t.response) for t in old]
