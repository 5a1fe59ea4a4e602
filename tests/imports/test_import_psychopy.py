"""`twinlab import psychopy` on files the real PsychoPy 2026.2.5 wrote (tests/support/psychopy_builder_study.py):
every row accounted for, the people's accuracy and RTs equal a count of the original CSV made here with the csv
module, the spec read from the data compiles each person's own trials in the person's order, a re-import
changes nothing."""
from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path

import pytest

from experiments.design_compiler import compile_sequence
from experiments.session import read_rows
from experiments.spec import load_spec
from participants.imports.api import import_study, show_map
from participants.imports.records import ImportInputError

DATA = Path(__file__).parent.parent / "data" / "imports" / "psychopy" / "data"
FILES = sorted(DATA.glob("*.csv"))
MAP = {"labels": {"f": "yes", "j": "no"}}


def original(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8-sig", newline="") as fh:
        return list(csv.DictReader(fh))


def loop_rows(path: Path) -> list[dict[str, str]]:
    """The rows of the practice and trials loops, in file order (a hand reading of Builder's file)."""
    return [r for r in original(path) if r.get("practice.thisN") or r.get("trials.thisN")]


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    out = tmp_path_factory.mktemp("pp")
    report = import_study("psychopy", [DATA], MAP, out / "sessions", spec_out=out / "spec" / "builder_study.yaml")
    return out, report


def test_the_fixtures_are_psychopys_own_files():
    assert len(FILES) == 3
    for f in FILES:
        rows = original(f)
        assert ({r["psychopyVersion"] for r in rows} == {"2026.2.5"}
                and {r["expName"] for r in rows} == {"acceptability"})


def test_every_row_is_accounted_for(imported):
    _, report = imported
    n_rows = sum(len(original(f)) for f in FILES)
    n_loop = sum(len(loop_rows(f)) for f in FILES)
    assert sum(report.files.values()) == n_rows
    assert report.trials == n_loop and sum(report.excluded.values()) == n_rows - n_loop > 0
    assert report.practice_trials == sum(1 for f in FILES for r in original(f) if r.get("practice.thisN"))
    assert report.sessions == {"new": 3, "unchanged": 0, "replaced": 0, "kept": 0} and report.rows_written == n_loop


def test_accuracy_and_mean_rt_per_person_and_condition_equal_a_count_of_the_original(imported):
    out, _ = imported
    hand: dict[tuple[str, str], list[tuple[int, float]]] = defaultdict(list)
    for f in FILES:
        for r in loop_rows(f):
            hand[(r["participant"], r["condition"])].append((int(r["key_resp.corr"]), float(r["key_resp.rt"]) * 1000))
    got: dict[tuple[str, str], list[tuple[int, float]]] = defaultdict(list)
    for f in sorted((out / "sessions" / "data").glob("*_data.csv")):
        for r in read_rows(f):
            cond = r["condition"] if r["role"] == "test" else "practice"
            got[(r["subject_id"], cond)].append((int(r["correct"] == "True"), float(r["rt_ms"])))
    assert set(got) == set(hand)
    for key, trials in hand.items():
        acc = sum(c for c, _ in trials) / len(trials)
        rt = sum(t for _, t in trials) / len(trials)
        assert sum(c for c, _ in got[key]) / len(got[key]) == acc, key
        assert sum(t for _, t in got[key]) / len(got[key]) == pytest.approx(rt, abs=1e-2), key


def test_the_spec_compiles_each_persons_items_in_the_persons_order(imported):
    out, report = imported
    exp = load_spec(out / "spec" / "builder_study.yaml")
    assert exp.spec_hash == report.spec_hash and exp.design.lists == "given"
    assert ([b.name for b in exp.blocks] == ["practice", "test"]
            and exp.blocks[0].feedback and not exp.blocks[1].feedback)
    for k, f in enumerate(FILES, start=1):
        rows = loop_rows(f)
        pid = rows[0]["participant"]
        seq = compile_sequence(exp, pid, list_number=k)
        assert [(t.item, t.mat["sentence"], t.role) for t in seq] == \
            [(r["item"], r["sentence"], "practice" if r.get("practice.thisN") else "test") for r in rows]
        assert [dict(t.factors).get("condition") for t in seq if t.role == "test"] == \
            [r["condition"] for r in rows if r.get("trials.thisN")]
        assert [t.mat["answer"] for t in seq] == [{"f": "yes", "j": "no"}[r["corrAns"]] for r in rows]
        table = read_rows(next((out / "sessions" / "data").glob(f"*subject-{pid}_session-1_data.csv")))
        assert [r["sequence_hash"] for r in table] == [seq.sequence_hash] * len(seq)
        side = json.loads(next((out / "sessions" / "data").glob(f"*subject-{pid}_session-1_data.json")).read_text())
        assert side["status"] == "completed" and side["imported"]["tool_version"] == ["2026.2.5"]
        assert side["imported"]["source_files"][0]["name"] == f.name and side["list_assignment"]["list"] == k


def test_every_original_field_is_kept_in_extra(imported):
    out, _ = imported
    f = FILES[0]
    rows = loop_rows(f)
    table = read_rows(next((out / "sessions" / "data").glob(f"*subject-{rows[0]['participant']}_session-1_data.csv")))
    for src, row in zip(rows, table, strict=False):
        assert json.loads(row["extra"])["source"] == {
            **{k: v for k, v in src.items() if v != ""},
            "psychopy.loop": "practice" if src.get("practice.thisN") else "trials"}


def test_a_reimport_changes_nothing(imported):
    out, _ = imported
    before = {p: p.read_bytes() for p in sorted((out / "sessions").rglob("*"))
              if p.is_file() and "import_" not in p.name}
    again = import_study("psychopy", [DATA], MAP, out / "sessions", spec_out=out / "spec" / "builder_study.yaml")
    assert again.sessions == {"new": 0, "unchanged": 3, "replaced": 0, "kept": 0} and again.rows_written == 0
    assert {p: p.read_bytes() for p in before} == before


def test_new_files_add_sessions_with_force(tmp_path):
    import_study("psychopy", FILES[:2], MAP, tmp_path / "s")
    with pytest.raises(ImportInputError, match="--force"):
        import_study("psychopy", FILES, MAP, tmp_path / "s")
    assert len(list((tmp_path / "s" / "data").glob("*_data.csv"))) == 2
    r = import_study("psychopy", FILES, MAP, tmp_path / "s", force=True)
    assert r.sessions == {"new": 1, "unchanged": 0, "replaced": 2, "kept": 0}
    hashes = {json.loads(p.read_text())["spec_hash"] for p in (tmp_path / "s" / "data").glob("*_data.json")}
    assert hashes == {r.spec_hash}


def test_show_map_counts_and_writes_nothing(tmp_path):
    text = show_map("psychopy", [DATA])
    assert "participant  participant                         3" in text and "nothing was written" in text
    assert "excluded 6: not a loop iteration" in text
    assert not list(tmp_path.iterdir())
