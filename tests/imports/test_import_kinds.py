"""Every task kind the import writes, end to end through `twinlab import` (sessions and the spec read from the
data), each checked against the original file read here directly (csv module, line splitting), not through
the readers: jsPsych judgments (CSV, JSON, JATOS) and the same data as a choice, PCIbex ratings, old-Ibex
self-paced reading with comprehension questions, old-Ibex Maze, a typed completion table; mixed kinds refused.
"""
from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path
from statistics import mean

import pytest

from experiments.spec import load_spec
from participants.imports.api import import_study
from participants.imports.records import ImportInputError

ROOT = Path(__file__).resolve().parents[2]
JSPSYCH = ROOT / "tests" / "data" / "imports" / "jspsych"
RATING = ROOT / "tests" / "data" / "imports" / "pcibex" / "penncontroller_rating_results"
RATING_MAP = {"condition": "Group", "stimulus": "Item number",
              "labels": {str(r): str(r + 1) for r in range(9)}}   # PennController's Scale 0..8 as points 1..9


def session_rows(out: Path) -> list[dict[str, str]]:
    rows = []
    for f in sorted((out / "data").glob("*_data.csv")):
        with open(f, encoding="utf-8", newline="") as fh:
            rows += list(csv.DictReader(fh))
    return rows


def file_rows(paths: list[Path]) -> list[dict]:
    """jsPsych records read directly: CSV with the csv module, JSON / JATOS line by line with json."""
    rows: list[dict] = []
    for p in paths:
        if p.suffix == ".csv":
            with open(p, encoding="utf-8", newline="") as f:
                rows += list(csv.DictReader(f))
        else:
            rows += [r for line in p.read_text(encoding="utf-8").splitlines() if line.strip() for r in json.loads(line)]
    return rows


def per_condition(rows, who, cond, ok, rt, keep) -> dict[tuple[str, str], tuple[float, float]]:
    """(person, condition) -> (share answered correctly: no response counts as not correct, mean RT)."""
    acc, rts = defaultdict(list), defaultdict(list)
    for r in rows:
        if keep(r):
            key = (who(r), str(cond(r)))
            acc[key].append(ok(r))
            if rt(r) is not None:
                rts[key].append(rt(r))
    return {k: (mean(v), mean(rts[k])) for k, v in acc.items()}


@pytest.mark.parametrize("files", ["*.csv", "*.json", "jatos_results.txt"])
def test_jspsych_sessions_equal_a_hand_count_of_the_file(tmp_path, files):
    paths = sorted(JSPSYCH.glob(files))
    report = import_study("jspsych", paths, None, tmp_path / "out", spec_out=tmp_path / "pilot.yaml")
    raw = file_rows(paths)
    assert report.accounted and sum(report.files.values()) == len(raw)
    assert report.trials == sum(1 for r in raw if r.get("item") not in (None, ""))
    assert report.task == "judgment" and report.sessions["new"] == report.people == (2 if "jatos" in files else 3)
    pid = "PROLIFIC_PID" if "jatos" in files else "subject"
    hand = per_condition(raw, lambda r: "".join(c for c in str(r[pid]) if c.isalnum()), lambda r: r["condition"],
                         lambda r: str(r["correct"]).lower() == "true",
                         lambda r: None if r["rt"] in (None, "null") else float(r["rt"]),
                         lambda r: r.get("item") not in (None, "") and r.get("phase") == "test")
    rows = session_rows(tmp_path / "out")
    mine = per_condition(rows, lambda r: r["subject_id"], lambda r: r["condition"], lambda r: r["correct"] == "True",
                         lambda r: float(r["rt_ms"]) if r["rt_ms"] else None, lambda r: r["role"] == "test")
    assert mine.keys() == hand.keys() and all(mine[k] == pytest.approx(hand[k]) for k in hand)
    exp = load_spec(tmp_path / "pilot.yaml")
    assert exp.spec_hash == report.spec_hash and exp.task.kind == "judgment"


def test_jspsych_judgments_imported_as_a_choice(tmp_path):
    """The same key presses as a two-option choice: the choice kind's own derive and score, agreeing with
    jsPsych's own `correct` on every trial (else the import would refuse)."""
    paths = sorted(JSPSYCH.glob("*.csv"))
    m = {"task": "choice", "labels": {"f": "good", "j": "bad"}}
    report = import_study("jspsych", paths, m, tmp_path / "out")
    rows = [r for r in session_rows(tmp_path / "out") if r["response"]]
    raw = {(r["subject"], r["item"]): r for r in file_rows(paths) if r["item"]}
    assert report.task == "choice" and len(rows) == report.trials - report.no_response == 41
    for r in rows:
        src = raw[(r["subject_id"], r["item"])]
        assert r["response"] == {"f": "good", "j": "bad"}[src["response"]]
        assert r["correct"] == str(src["correct"] == "true")
        assert r["chosen_position"] == str({"f": 0, "j": 1}[src["response"]])   # positions: fixed
        assert json.loads(r["materials"])["options"] == ["good", "bad"]


def test_pcibex_ratings_per_condition_equal_a_hand_count(tmp_path):
    """The last Scale choice of each item (a changed answer: the last counts), mean per Latin-square group."""
    start, last = {}, {}
    for line in RATING.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        v = line.split(",")   # 1 time, 2 md5, 4 item, 7 group, 8 element type, 10 parameter, 11 value, 12 time
        key = (v[0], v[1], v[3])
        if v[9] == "_Trial_" and v[10] == "Start":
            start[key] = float(v[11])
        if v[7] == "Scale" and v[9] == "Choice":
            last[key] = (int(v[10]) + 1, float(v[11]) - start[key], v[6])
    report = import_study("pcibex", [RATING], RATING_MAP, tmp_path / "out", spec_out=tmp_path / "ratings.yaml")
    assert report.task == "rating" and report.trials == len(last) == 16 and report.accounted
    rows = session_rows(tmp_path / "out")
    hand, mine = defaultdict(list), defaultdict(list)
    for point, rt, group in last.values():
        hand[group].append((point, rt))
    for r in rows:
        mine[r["condition"]].append((float(r["rating"]), float(r["rt_ms"])))
        assert r["response"] == str(int(float(r["rating"]))) and r["correct"] == ""
    means = lambda by: {(g, what): mean(x[i] for x in v) for g, v in by.items()  # noqa: E731
                        for i, what in enumerate(("rating", "rt"))}
    assert means(mine) == pytest.approx(means(hand)) and len(mine) == 2
    assert load_spec(tmp_path / "ratings.yaml").task.settings().scale.points == 9


def test_a_rating_scale_that_is_not_1_to_k_is_refused_saying_how_to_map_it(tmp_path):
    with pytest.raises(ImportInputError, match=r"ratings 0\.\.8: twinlab's scale is 1\.\.k.*labels"):
        import_study("pcibex", [RATING], {"condition": "Group", "stimulus": "Item number"}, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def ibex_file(tmp_path: Path, maze: bool = False) -> tuple[Path, list[tuple]]:
    """Two submissions of an old-Ibex self-paced reading study (DashedSentence + Question, two conditions), in
    the layout of Ibex's server.py; with `maze`, a Maze item too. Returns the file and what it holds."""
    spr = ["Time results were received", "MD5 hash of participant's IP address", "Controller name", "Item number",
           "Element number", "Type", "Group", "Word number", "Word", "Reading time", "Newline?",
           "Sentence (or sentence MD5)"]
    question = spr[:7] + ["Question (NULL if none)", "Answer", "Whether or not answer was correct (NULL if N/A)",
                          "Time taken to answer"]
    head = lambda cols: "# Columns below this comment are as follows:\n" + "".join(  # noqa: E731
        f"# {i}. {c}.\n" for i, c in enumerate(cols, 1))
    sentences = {"subj": "The boy that the girl saw left.", "obj": "The boy that saw the girl left."}
    text, truth = "", []
    for s, (md5, when) in enumerate([("aaa111", 1583973840), ("bbb222", 1583974000)]):
        text += f"#\n# Results on Thursday March 12 2020.\n# Design number was non-random = {s}\n#\n"
        for k, item in enumerate((1, 2, 3, 4)):
            cond = ("subj", "obj")[(k + s) % 2]
            words = sentences[cond].split()
            rts = [300 + 10 * i + 7 * k + s for i in range(len(words))]
            text += head(spr) + "".join(f"{when},{md5},DashedSentence,{item},0,{cond},{item},{i + 1},{w},{rt},false,"
                                        f"{sentences[cond]}\n"
                                        for i, (w, rt) in enumerate(zip(words, rts, strict=False)))
            answer, ok = ("Yes", 1) if (k + s) % 3 else ("No", 0)
            text += head(question) + (f"{when},{md5},Question,{item},1,{cond},{item},Did the boy leave?,"
                                      f"{answer},{ok},{900 + k}\n")
            truth.append((md5, str(item), cond, words, rts, answer, bool(ok), 900.0 + k))
        if maze:
            text += head(spr[:7] + ["Word number", "Word", "Alternative", "Word on (0=left, 1=right)", "Correct",
                                    "Reading time", "Sentence"])
            text += f"{when},{md5},Maze,9,0,maze,9,0,The,x-x-x,0,yes,800,The dog ran.\n"
    path = tmp_path / "results"
    path.write_text(text, encoding="utf-8")
    return path, truth


def test_self_paced_reading_word_times_and_questions_as_written(tmp_path):
    path, truth = ibex_file(tmp_path)
    m = {"expected": None, "labels": {"Yes": "Yes", "No": "No"}}
    report = import_study("pcibex", [path], m, tmp_path / "out", spec_out=tmp_path / "spr.yaml")
    assert report.task == "self_paced_reading" and report.trials == 8 and report.accounted
    rows = {(r["subject_id"][:6], r["item"]): r for r in session_rows(tmp_path / "out")}
    for md5, item, cond, words, rts, answer, ok, qrt in truth:
        r = rows[(md5, item)]
        assert r["condition"] == cond and json.loads(r["materials"])["sentence"] == " ".join(words)
        assert json.loads(r["word_rts_ms"]) == pytest.approx(rts)
        assert json.loads(r["region_rts_ms"]) == pytest.approx(rts)   # no regions: each word its own
        assert (r["response"], float(r["rt_ms"])) == (answer, qrt)
        assert json.loads(r["extra"])["tool_correct"] is ok
    exp = load_spec(tmp_path / "spr.yaml")
    assert exp.task.kind == "self_paced_reading"


def test_maze_and_mixed_kinds_refused_or_excluded_by_name(tmp_path):
    path, _ = ibex_file(tmp_path, maze=True)
    with pytest.raises(ImportInputError, match=r"several task kinds \(8 self_paced_reading, 2 maze\).*task: KIND"):
        import_study("pcibex", [path], None, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    report = import_study("pcibex", [path], {"task": "self_paced_reading", "labels": {"Yes": "Yes", "No": "No"}},
                          tmp_path / "out")
    assert report.trials == 8 and report.excluded["a maze trial, not of the study's task self_paced_reading "
                                                  "(`task:` in --map)"] == 2 and report.accounted


MAZE_SENTENCES = {"subj": ("The dog that chased the cat ran.", "x-x-x eat pay horses wind sky arms."),
                  "obj": ("The dog that the cat chased ran.", "x-x-x eat pay wind sky horses arms.")}


def maze_file(tmp_path: Path) -> Path:
    """Two submissions of an old-Ibex Maze study (4 items, 2 conditions) in server.py's layout (the Maze rows of
    tests/imports/test_import_pcibex.py's old_ibex_file): a wrong pick ends the sentence, its later words have no
    time."""
    from tests.imports.test_import_pcibex import IBEX_HEADER, numbered

    base = ["Time results were received", "MD5 hash of participant's IP address", "Controller name",
            "Item number", "Element number", "Type", "Group"]
    cols = base + ["Word number", "Word", "Alternative", "Word on (0=left, 1=right)", "Correct", "Reading time",
                   "Sentence"]
    errors = {("aaa111", 2): 3, ("bbb222", 3): 5, ("bbb222", 4): 1}   # (person, item) -> the wrong word's index
    text = ""
    for s, (md5, when) in enumerate([("aaa111", 1583973840), ("bbb222", 1583974000)]):
        text += IBEX_HEADER.format(design=s) + numbered(cols)
        for item in (1, 2, 3, 4):
            cond = ("subj", "obj")[(item + s) % 2]
            sentence, foils = MAZE_SENTENCES[cond]
            wrong = errors.get((md5, item))
            for k, (w, f) in enumerate(zip(sentence.split(), foils.split(), strict=False)):
                side = 0 if k == 0 else (k + item) % 2
                ok = "no" if wrong is not None and k >= wrong else "yes"
                rt = "None" if wrong is not None and k > wrong else str(400 + 37 * k + 11 * item + 5 * s)
                text += f"{when},{md5},Maze,{item},0,{cond},{item},{k},{w},{f},{side},{ok},{rt},{sentence}\n"
    path = tmp_path / "maze_results"
    path.write_text(text, encoding="utf-8")
    return path


def test_old_ibex_maze_word_times_and_errors_equal_a_hand_count(tmp_path):
    """Maze imports into the maze kind: per word, the file's reading time where shown (none after the first
    error), its correctness and side; per person and condition, mean time of the right picks and error count."""
    path = maze_file(tmp_path)
    hand: dict[tuple[str, str], dict] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        v = line.split(",")   # 2 md5, 4 item, 6 type, 9 word, 10 alternative, 11 side, 12 correct, 13 reading time
        h = hand.setdefault((v[1], v[3]), {"cond": v[5], "rts": [], "ok": [], "sides": [], "foils": []})
        h["rts"].append(None if v[12] == "None" else float(v[12]))
        h["ok"].append(None if v[12] == "None" else v[11] == "yes")
        h["sides"].append(int(v[10]))
        h["foils"].append(v[9])
    report = import_study("pcibex", [path], {"task": "maze"}, tmp_path / "out", spec_out=tmp_path / "maze.yaml")
    assert report.task == "maze" and report.trials == len(hand) == 8 and report.accounted and report.people == 2
    rows = {(r["subject_id"][:6], r["item"]): r for r in session_rows(tmp_path / "out")}
    assert rows.keys() == hand.keys()
    for key, h in hand.items():
        r, extra = rows[key], json.loads(rows[key]["extra"])
        assert r["condition"] == h["cond"] and json.loads(r["word_rts_ms"]) == h["rts"]
        assert json.loads(r["word_correct"]) == h["ok"] and extra["maze_sides"] == h["sides"]
        assert r["correct"] == str(False not in h["ok"])
        assert r["first_error"] == (str(h["ok"].index(False)) if False in h["ok"] else "")
        assert "word_correct" not in extra and "first_error" not in extra  # the kind's columns, not `extra`
        mat = json.loads(r["materials"])
        assert mat["sentence"] == MAZE_SENTENCES[h["cond"]][0] and mat["distractors"] == " ".join(h["foils"][1:])
    by = lambda rts, oks: [t for t, ok in zip(rts, oks, strict=False) if ok]  # noqa: E731  the right picks' times
    for person in ("aaa111", "bbb222"):
        for cond in ("subj", "obj"):
            mine = [(by(json.loads(r["word_rts_ms"]), json.loads(r["word_correct"])),
                     json.loads(r["word_correct"]).count(False))
                    for (who, _), r in rows.items() if who == person and r["condition"] == cond]
            theirs = [(by(h["rts"], h["ok"]), h["ok"].count(False)) for (who, _), h in hand.items()
                      if who == person and h["cond"] == cond]
            assert mean(t for x, _ in mine for t in x) == pytest.approx(mean(t for x, _ in theirs for t in x))
            assert sum(n for _, n in mine) == sum(n for _, n in theirs)
    assert sum(h["ok"].count(False) for h in hand.values()) == 3
    exp = load_spec(tmp_path / "maze.yaml")
    assert exp.task.kind == "maze" and exp.task.settings().error_mode == "end"


def test_a_redo_maze_study_is_refused_naming_the_line(tmp_path):
    path = maze_file(tmp_path)
    lines = path.read_text(encoding="utf-8").splitlines()
    n = next(i for i, line in enumerate(lines) if ",no,None," in line)
    lines[n] = lines[n].replace(",no,None,", ",no,812,")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ImportInputError, match=rf"line {n + 1}, column 'Reading time'.*redo"):
        import_study("pcibex", [path], {"task": "maze"}, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_jspsych_maze_plugin_is_the_maze_kind_and_refused_without_its_words(tmp_path):
    """jsPsych's `maze` plugin names the kind; its per-word data are not read: refused, naming the line."""
    f = tmp_path / "s1.csv"
    f.write_text('"trial_type","trial_index","time_elapsed","rt","stimulus","subject","item","condition"\n'
                 '"maze","0","900","850","The dog ran.","p1","1","a"\n'
                 '"maze","1","1900","820","The cat sat.","p1","2","b"\n', encoding="utf-8")
    with pytest.raises(ImportInputError, match=r"s1\.csv: line 2: a maze trial without its words.*jsPsych reader"):
        import_study("jspsych", [f], None, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_completion_typed_answers_scored_by_the_kind(tmp_path):
    table = tmp_path / "cloze.csv"
    table.write_text("participant,item,condition,sentence,response,answer,rt\n"
                     "p1,1,high,The cat chased the,mouse,mouse,800\n"
                     "p1,2,low,She opened the,Door.,door,900\n"
                     "p1,3,high,He drank a cup of,tea,coffee,700\n"
                     "p1,4,low,They sailed across the,,ocean,\n", encoding="utf-8")
    report = import_study("table", [table], {"task": "completion", "expected": "answer"}, tmp_path / "out",
                          spec_out=tmp_path / "cloze.yaml")
    rows = session_rows(tmp_path / "out")
    assert report.task == "completion" and [r["correct"] for r in rows] == ["True", "True", "False", ""]
    assert [r["response"] for r in rows] == ["mouse", "Door.", "tea", ""]
    assert [r["keystrokes"] for r in rows] == ["", "", "", ""]   # the tool kept no keystroke times
    assert [r["rt_ms"] for r in rows] == ["800.0", "900.0", "700.0", ""]
    assert load_spec(tmp_path / "cloze.yaml").task.kind == "completion"


def test_an_unknown_kind_is_refused_listing_the_kinds(tmp_path):
    with pytest.raises(ImportInputError, match="cannot write task kind 'cloze'.*judgment, lexical_decision, choice, "
                                               "rating, self_paced_reading, completion"):
        import_study("jspsych", sorted(JSPSYCH.glob("*.csv")), {"task": "cloze"}, tmp_path / "out")


def penn_spr_file(tmp_path: Path) -> Path:
    """PennController's layout (as the held-out PCIbex file KoheiHaneda/WSS_EN_SPR writes it): DashedSentence
    chunks of several words per press, then a Key `rating`; one trial's key never pressed (EventTime Never)."""
    cols = ["Results reception time", "MD5 hash of participant's IP address", "Controller name",
            "Order number of item", "Inner element number", "Label", "Latin.Square.Group", "PennElementType",
            "PennElementName", "Parameter", "Value", "EventTime", "item_id", "condition", "Reading time",
            "Newline?", "Sentence (or sentence MD5)", "Comments"]
    head = "# Columns below this comment are as follows:\n" + "".join(f"# {i}. {c}.\n" for i, c in enumerate(cols, 1))
    text = "#\n# Results on Monday January 27 2025.\n#\n" + head
    chunks = {"a": ["Noah", "was leaving", "early."], "b": ["Noah", "left", "early."]}
    for n, (item, cond, key) in enumerate([("i1", "a", "F"), ("i2", "b", "J"), ("i3", "a", None), ("i4", "b", "F")]):
        p = f"1737733243,49f6bed4,PennController,{n + 3},0,experiment,NULL"
        text += f"{p},PennController,{n},_Trial_,Start,1000,{item},{cond},NULL,NULL,NULL,NULL\n"
        for w, chunk in enumerate(chunks[cond]):
            text += (f"{p},Controller-DashedSentence,DashedSentence,{w + 1},{chunk},1001,{item},{cond},"
                     f"{300 + 10 * n + w},false,{' '.join(chunks[cond])},NULL\n")
        text += (f"{p},Key,rating,PressedKey,{key},2500,{item},{cond},NULL,NULL,NULL,NULL\n" if key else
                 f"{p},Key,rating,Key,NA,Never,{item},{cond},NULL,NULL,NULL,NULL\n")
        text += f"{p},PennController,{n},_Trial_,End,2600,{item},{cond},NULL,NULL,NULL,NULL\n"
    path = tmp_path / "penn_results"
    path.write_text(text, encoding="utf-8")
    return path


def test_penncontroller_chunks_read_by_region_and_a_key_never_pressed(tmp_path):
    path = penn_spr_file(tmp_path)
    m = {"task": "self_paced_reading", "response": "rating", "item": "item_id", "condition": "condition",
         "labels": {"F": "yes", "J": "no"}}
    report = import_study("pcibex", [path], m, tmp_path / "out", spec_out=tmp_path / "spr.yaml")
    rows = {r["item"]: r for r in session_rows(tmp_path / "out")}
    assert report.accounted and report.trials == 4 and report.no_response == 1
    assert json.loads(rows["i1"]["region_rts_ms"]) == [300.0, 301.0, 302.0] and rows["i1"]["word_rts_ms"] == ""
    assert json.loads(rows["i1"]["materials"])["regions"] == "Noah | was leaving | early."
    assert (rows["i2"]["response"], rows["i3"]["response"], rows["i4"]["response"]) == ("no", "", "yes")
    assert json.loads(rows["i3"]["region_rts_ms"]) == [320.0, 321.0, 322.0]   # read, not answered
    assert load_spec(tmp_path / "spr.yaml").task.settings().reveal == "region"


def test_jspsych_map_over_defaults_a_file_without_them(tmp_path):
    """A --map over the defaults on a file without the default `subject` field (each file a person, as the
    held-out jsPsychHelpeR files are), and an instructions screen with the item field is still no trial."""
    with open(JSPSYCH / "s01.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    rows[0]["item"] = "Instructions_001"
    cols = [c for c in rows[0] if c != "subject"]
    path = tmp_path / "person7.csv"
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, cols, quoting=csv.QUOTE_ALL, extrasaction="ignore", lineterminator="\r\n")
        w.writeheader()
        w.writerows(rows)
    report = import_study("jspsych", [path], {"labels": {"f": "good", "j": "bad"}}, tmp_path / "out")
    assert report.people == 1 and report.trials == 14 and report.accounted
    assert [r["subject_id"] for r in session_rows(tmp_path / "out")] == ["person7"] * 14
