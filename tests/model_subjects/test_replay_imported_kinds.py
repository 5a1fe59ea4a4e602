"""Replays of imported Maze and self-paced-reading sessions, `--replay` of one session's table, and every session a
replay leaves out named with the reason.

The people are made by the real CLI (`twinlab import pcibex`) from results files in Ibex's layout (the files of
tests/imports/test_import_kinds.py). Expectations come from the people's own tables read with the csv module: the
person's response on each trial, the sentence of the trial's materials, the files a folder holds."""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.spec import load_spec
from model_subjects.context import REPLAY, ContextMode, protocol_for, rebuild_contexts
from model_subjects.people import find_people
from model_subjects.replay import run_replay
from model_subjects.runner import RunConfig, RunError
from tests.imports.test_import_kinds import ibex_file, maze_file

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "experiments.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=600)


def rows_of(f: Path) -> list[dict[str, str]]:
    with open(f, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def imported(tmp_path: Path, kind: str) -> tuple[Path, Path]:
    """(the spec, the sessions folder) of an imported Maze or self-paced reading study (2 people, 4 items each)."""
    if kind == "maze":
        path, mapping = maze_file(tmp_path), "task: maze\n"
    else:
        path, mapping = ibex_file(tmp_path)[0], 'expected: null\nlabels: {"Yes": "Yes", "No": "No"}\n'
    (tmp_path / f"{kind}_map.yaml").write_text(mapping, encoding="utf-8")
    r = cli("import", "pcibex", str(path), "--map", f"{kind}_map.yaml", "--out", f"{kind}_people",
            "--spec-out", f"{kind}.yaml", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return tmp_path / f"{kind}.yaml", tmp_path / f"{kind}_people"


def test_a_maze_person_replayed_from_one_session_file(tmp_path):
    """A Maze row's response is the words picked (import, runners and model alike); `--replay FILE` replays that
    person alone, and the history shows the person's picks (one person made a wrong pick: 'The dog that horses')."""
    spec, people = imported(tmp_path, "maze")
    files = sorted((people / "data").glob("*_data.csv"))
    person = next(f for f in files if "aaa111" in f.name)
    mine = rows_of(person)
    assert mine[1]["response"] == "The dog that horses"   # the wrong pick at word 4 ends the sentence
    r = cli("run-model", str(spec), "--replay", str(person.relative_to(tmp_path)), "--trials", "3",
            "--out", "replay", cwd=tmp_path)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert "replayed 1 person(s), 3 trial(s)" in r.stdout and "left out" not in r.stderr
    out = sorted((tmp_path / "replay" / "data").glob("*_data.csv"))
    assert len(out) == 1 and json.loads(out[0].with_suffix(".json").read_text())["replay"]["person_file"] == \
        str(person.relative_to(tmp_path))
    replay = rows_of(out[0])
    assert [json.loads(x["extra"])["person_response"] for x in replay] == [x["response"] for x in mine[:3]]
    exp = load_spec(spec)
    texts = rebuild_contexts(exp, replay, ContextMode(REPLAY), protocol_for(exp, "choice"))
    assert [json.loads(x["extra"])["context_sha256"] for x in replay] == \
        [__import__("hashlib").sha256(t.encode()).hexdigest() for t in texts]
    assert texts[2].splitlines()[-2:] == [mine[0]["response"], mine[1]["response"]]   # the person's picks, in order


def test_a_reading_replay_shows_the_sentences_and_the_persons_answers(tmp_path, bundled_backend):
    """Self-paced reading (read by surprisal): each earlier trial in the history is the sentence the person read
    and the person's answer to its question, not the answer labels alone."""
    spec, people = imported(tmp_path, "spr")
    run_replay(RunConfig(spec=str(spec), out=tmp_path / "replay", protocol="surprisal", trials=3), people,
               backend=bundled_backend)
    exp = load_spec(spec)
    for f in sorted((tmp_path / "replay" / "data").glob("*_data.csv")):
        replay = rows_of(f)
        person = rows_of(Path(json.loads(f.with_suffix(".json").read_text())["replay"]["person_file"]))
        texts = rebuild_contexts(exp, replay, ContextMode(REPLAY), protocol_for(exp, "surprisal"))
        lines = texts[2].splitlines()
        want = []
        for row in person[:2]:
            mat = json.loads(row["materials"])  # the item's own question where the reader found it, else "Answer:"
            want += [mat["sentence"], f"{mat.get('question') or 'Answer:'} {row['response']}"]
        assert lines[-4:] == want and all(r["response"] in ("Yes", "No") for r in person[:2])


def test_every_session_left_out_is_named_with_the_reason(tmp_path):
    """A folder holding an autopilot's session, an unfinished one and another study's: each is named, with why,
    by the API, by `run-model --replay` (before any model loads) and by `people-jsonl`."""
    spec, people = imported(tmp_path, "maze")
    _, spr = imported(tmp_path, "spr")
    mixed = Path(shutil.copytree(people, tmp_path / "mixed"))
    for f in sorted((spr / "data").glob("*")):
        shutil.copy(f, mixed / "data" / f.name)
    maze_a, maze_b = sorted((mixed / "data").glob("study-maze*_data.csv"))
    for f, change in ((maze_a, {"autopilot": {"accuracy": 0.8, "injection": "keys"}}), (maze_b, {"status": "aborted"})):
        side = f.with_suffix(".json")
        side.write_text(json.dumps({**json.loads(side.read_text()), **change}), encoding="utf-8")
    others = sorted((mixed / "data").glob("study-spr*_data.csv"))
    with pytest.raises(RunError) as err:
        find_people(mixed, load_spec(spec))
    said = str(err.value)
    assert f"{maze_a}: its sidecar says autopilot" in said and f"{maze_b}: its sidecar says status 'aborted'" in said
    assert all(f"{f}: run on spec 'spr'" in said for f in others) and said.count("left out") == 4
    r = cli("run-model", str(spec), "--replay", "mixed", "--out", "replay", cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr and not (tmp_path / "replay").exists()
    assert "mixed/data/" + maze_a.name + ": its sidecar says autopilot" in r.stderr
    # the finished person of this spec is replayed; the three others are named
    side = maze_b.with_suffix(".json")
    side.write_text(json.dumps({**json.loads(side.read_text()), "status": "completed"}), encoding="utf-8")
    left: list = []
    assert [p.csv for p in find_people(mixed, load_spec(spec), left)] == [maze_b]
    assert sorted(x.csv for x in left) == sorted([maze_a, *others])
    r = cli("people-jsonl", str(spec), "mixed", "--out", "people.jsonl", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "wrote 1 session(s)" in r.stdout and "3 left out" in r.stdout and r.stderr.count("left out mixed/") == 3
    r = cli("run-model", str(spec), "--replay", "nowhere.csv", "--out", "replay", cwd=tmp_path)
    assert r.returncode == 2 and "--replay nowhere.csv: no such folder or session file" in r.stderr
