"""The jsPsych reader on data the real jsPsych 8 wrote (tests/data/imports/jspsych: a Chromium run of an
acceptability study, `.csv()` and `.json()` of three people and a JATOS two-component file).

Each check is against the file read directly (csv / json here, not the reader): every row is a trial or an
exclusion with its reason, accuracy and mean RT per person and condition equal a count of the file, the CSV
and JSON of one run give the same trials, and bad input is refused naming the file, line and field.
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import pytest

from participants.imports.jspsych import default_mapping, read_jspsych
from participants.imports.records import MAX_FILE_BYTES, ImportInputError

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "imports" / "jspsych"
PEOPLE = ("s01", "s02", "s03")
JATOS = DATA / "jatos_results.txt"


def csv_rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def json_rows(path: Path) -> list[dict]:
    """Every record of a jsPsych .json() file or of JATOS's one-array-per-line file."""
    return [rec for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
            for rec in json.loads(line)]


def hand_count(rows: list[dict], pid: str) -> dict[tuple[str, str], tuple[float, float]]:
    """(person, condition) -> (accuracy, mean RT in ms) of the test judgments, from the raw records."""
    acc, rts = defaultdict(list), defaultdict(list)
    for r in rows:
        if r.get("item") in (None, "") or r.get("phase") != "test":
            continue
        key = (str(r[pid]), r["condition"])
        acc[key].append(str(r["correct"]).lower() == "true")
        if r["rt"] not in (None, "null"):
            rts[key].append(float(r["rt"]))
    return {k: (sum(v) / len(v), sum(rts[k]) / len(rts[k])) for k, v in acc.items()}


def reader_count(result) -> dict[tuple[str, str], tuple[float, float]]:
    acc, rts = defaultdict(list), defaultdict(list)
    for t in result.trials:
        if t.phase == "test":
            acc[(t.participant, t.condition)].append(t.correct)
            if t.rt_ms is not None:
                rts[(t.participant, t.condition)].append(t.rt_ms)
    return {k: (sum(v) / len(v), sum(rts[k]) / len(rts[k])) for k, v in acc.items()}


def same(mine: dict, hand: dict) -> bool:
    return mine.keys() == hand.keys() and all(mine[k] == pytest.approx(hand[k]) for k in hand)


@pytest.mark.parametrize("ext", ["csv", "json"])
def test_every_row_is_a_trial_or_excluded(ext):
    paths = [DATA / f"{p}.{ext}" for p in PEOPLE]
    result = read_jspsych(paths, None)
    for path in paths:
        raw = csv_rows(path) if ext == "csv" else json_rows(path)
        assert result.rows_read[str(path)] == len(raw) == 34
        mine = [t.line for t in result.trials if t.source_file == str(path)]
        mine += [e.line for e in result.excluded if e.source_file == str(path)]
        first = 2 if ext == "csv" else 1   # CSV: line 1 is the header (no field holds a line break here)
        assert sorted(mine) == list(range(first, first + len(raw)))
        items = [r for r in raw if r.get("item") not in (None, "")]
        assert len([t for t in result.trials if t.source_file == str(path)]) == len(items) == 14
    assert all(e.reason for e in result.excluded)


@pytest.mark.parametrize("ext", ["csv", "json"])
def test_accuracy_and_rt_per_condition_equal_a_hand_count(ext):
    paths = [DATA / f"{p}.{ext}" for p in PEOPLE]
    raw = [r for p in paths for r in (csv_rows(p) if ext == "csv" else json_rows(p))]
    expected = hand_count(raw, "subject")
    assert len(expected) == 6
    assert same(reader_count(read_jspsych(paths, None)), expected)


def test_jatos_file_of_two_components_per_person():
    result = read_jspsych([JATOS], None)
    assert result.rows_read[str(JATOS)] == len(json_rows(JATOS))
    assert len(result.trials) + len(result.excluded) == len(json_rows(JATOS))
    assert same(reader_count(result), hand_count(json_rows(JATOS), "PROLIFIC_PID"))
    by_person = defaultdict(list)
    for t in result.trials:
        by_person[t.participant].append(t)
    assert set(by_person) == {r["PROLIFIC_PID"] for r in json_rows(JATOS)}
    for trials in by_person.values():   # the two components make one person's 2 + 12 trials, in order
        assert [t.order for t in trials] == list(range(14))
        assert [t.phase for t in trials] == ["practice"] * 2 + ["test"] * 12


def test_csv_and_json_of_one_run_give_the_same_trials():
    for p in PEOPLE:
        a = read_jspsych([DATA / f"{p}.csv"], None).trials
        b = read_jspsych([DATA / f"{p}.json"], None).trials
        assert [replace(t, source_file="", line=0) for t in a] == [replace(t, source_file="", line=0) for t in b]


def test_fields_kept_verbatim_and_read_from_the_trial_row():
    path = DATA / "s02.csv"
    raw = csv_rows(path)
    result = read_jspsych([path], None)
    for t in result.trials:
        row = raw[t.line - 2]
        assert t.extra == row
        assert (t.item, t.condition, t.expected, t.stimulus) == (row["item"], row["condition"],
                                                                 row["correct_response"], row["stimulus"])
    timed_out = [t for t in result.trials if t.response is None]
    assert len(timed_out) == 1 and timed_out[0].rt_ms is None and timed_out[0].correct is False
    assert "html-keyboard-response 2.2.0" in result.tool_version[str(path)]


def test_latin_square_lists_and_practice_feedback():
    result = read_jspsych([DATA / f"{p}.csv" for p in PEOPLE], None)
    seen = defaultdict(dict)
    for t in result.trials:
        if t.phase == "test":
            seen[t.participant][t.item] = t.condition
        else:
            assert t.feedback == ("<p>Correct!</p>" if t.correct else "<p>Wrong.</p>")
    assert all(len(v) == 12 for v in seen.values())
    assert seen["s01"] == seen["s03"]
    assert all(seen["s01"][i] != seen["s02"][i] for i in seen["s01"])
    assert all(t.feedback is None for t in result.trials if t.phase == "test")


def test_person_from_the_file_or_the_jatos_study_result(tmp_path):
    m = replace(default_mapping(), participant=None)
    one = tmp_path / "anna.csv"
    shutil.copyfile(DATA / "s01.csv", one)
    assert {t.participant for t in read_jspsych([one], m).trials} == {"anna"}
    comp = tmp_path / "study_result_41" / "comp-result_87" / "data.txt"
    comp.parent.mkdir(parents=True)
    shutil.copyfile(DATA / "s01.json", comp)
    assert {t.participant for t in read_jspsych([comp], m).trials} == {"jatos_study_result_41"}
    with pytest.raises(ImportInputError, match="4 runs.*no participant field"):
        read_jspsych([JATOS], replace(default_mapping(), participant=None))


def refused(tmp_path: Path, text: str, mapping=None, name: str = "bad.csv") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8", newline="")
    with pytest.raises(ImportInputError) as err:
        read_jspsych([path], mapping)
    assert str(path) in str(err.value)
    return str(err.value)


def test_refusals_name_file_line_and_field(tmp_path):
    text = (DATA / "s01.csv").read_bytes().decode("utf-8")
    lines = text.split("\r\n")
    assert "line 35" in refused(tmp_path, text[:-40])                       # torn last line
    assert "torn" in refused(tmp_path, (DATA / "s01.json").read_text()[:-300], name="bad.json")
    swapped = lines[:5] + [lines[6], lines[5]] + lines[7:]
    msg = refused(tmp_path, "\r\n".join(swapped))
    assert "line 7" in msg and '"trial_index"' in msg and "out of order" in msg
    msg = refused(tmp_path, text, replace(default_mapping(), condition="cond"))
    assert '"cond"' in msg and "condition" in msg
    assert "PsychoPy" in refused(tmp_path, "trials.thisN,key_resp.keys,psychopyVersion\r\n0,f,2024.2.4\r\n")
    pcibex = "# Results on Friday.\n# 1. Results reception time.\n1,abc,PennController\n"
    assert "not jsPsych data" in refused(tmp_path, pcibex, name="results.txt")
    inter = lines[:5] + [line.replace('"s01"', '"s09"') for line in lines[5:]]
    msg = refused(tmp_path, "\r\n".join(inter))
    assert "interleaved" in msg and "line 6" in msg


def bad_trials(tmp_path: Path, rows: list[dict[str, str]]) -> list:
    path = tmp_path / "bad.csv"
    path.write_text(as_csv(rows), encoding="utf-8", newline="")
    result = read_jspsych([path], None)
    assert len(result.trials) + len(result.excluded) == len(rows)   # every row still accounted for
    return [e for e in result.excluded if e.bad]


def test_a_trials_broken_value_excludes_that_trial_as_bad(tmp_path):
    """A glitched value excludes its trial (Excluded.bad: the import's --bad-trials decides), never the file."""
    rows = csv_rows(DATA / "s01.csv")
    line = next(i for i, r in enumerate(rows) if r["item"] not in ("", "null"))
    for field, value in (("rt", "fast"), ("rt", "-2080"), ("correct", "maybe")):
        changed = [dict(r) for r in rows]
        changed[line][field] = value
        (bad,) = bad_trials(tmp_path, changed)
        assert bad.line == line + 2 and f'"{field}"' in bad.reason and value in bad.reason


def as_csv(rows: list[dict[str, str]]) -> str:
    """Rows written back as jsPsych writes its CSV (every field quoted, CRLF)."""
    import io
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=list(rows[0]), quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    w.writeheader()
    w.writerows(rows)
    return out.getvalue()


def test_over_the_size_limit_refused_before_reading(tmp_path, monkeypatch):
    big = tmp_path / "big.csv"
    with open(big, "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)   # sparse: no disk used
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail("read before the size check"))
    with pytest.raises(ImportInputError, match="big.csv.*larger than the 100 MiB limit"):
        read_jspsych([big], None)


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.long
@pytest.mark.untimed
def test_regenerated_by_the_real_jspsych(tmp_path):
    """The committed fixture's script re-run: jsPsych in Chromium writes files the reader reads the same way."""
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("Debian's chromium is not installed")
    pytest.importorskip("playwright.sync_api")
    nm = ROOT / "participants" / "web" / "js" / "node_modules" / "@jspsych" / "plugin-survey-text"
    if not nm.exists():
        pytest.skip("the pinned jsPsych plugins are not installed (npm ci in participants/web/js)")
    run = subprocess.run([sys.executable, str(ROOT / "tests" / "support" / "jspsych_fixture.py"), str(tmp_path)],
                         capture_output=True, text=True, timeout=600, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert run.returncode == 0, run.stderr
    for ext in ("csv", "json"):
        paths = [tmp_path / f"{p}.{ext}" for p in PEOPLE]
        result = read_jspsych(paths, None)
        raw = [r for p in paths for r in (csv_rows(p) if ext == "csv" else json_rows(p))]
        assert len(result.trials) == 42 and len(result.trials) + len(result.excluded) == len(raw)
        assert same(reader_count(result), hand_count(raw, "subject"))
