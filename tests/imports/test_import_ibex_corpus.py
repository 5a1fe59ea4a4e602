"""The Ibex/PCIbex corpus (tests/data/imports/ibex, written through tests/support/ibex_server.py, the port of Ibex's
own results-file code; see PROVENANCE.md there): each file read by twinlab and, independently, by a hand count
here in plain Python (lines split at commas, columns taken by their documented positions: 1 time, 2 MD5,
3 controller, 4 item, 5 element, 6 label, 7 group, then the controller's own columns), never by twinlab's reader.
"""
from __future__ import annotations

import csv
import json
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path
from statistics import mean

import pytest

from participants.imports.api import import_study
from participants.imports.pcibex import default_mapping, read_pcibex
from participants.imports.pcibex_practice import is_practice
from participants.imports.records import ImportInputError, Mapping

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "imports" / "ibex"
FILES = sorted(p for p in CORPUS.iterdir() if p.name.endswith("_results"))
PRACTICE = ("practice", "GuidedPractice1", "GuidedPractice2", "GuidedPractice3", "Practice-1", "Practice-2", "training")


def lines(path: Path) -> list[tuple[int, list[str]]]:
    """(line number, values) of every data line."""
    return [(n, s.split(",")) for n, s in enumerate(path.read_text(encoding="utf-8").split("\n"), 1)
            if s.strip() and not s.startswith("#")]


def session_rows(out: Path) -> list[dict[str, str]]:
    rows = []
    for f in sorted((out / "data").glob("*_data.csv")):
        with open(f, encoding="utf-8", newline="") as fh:
            rows += list(csv.DictReader(fh))
    return rows


def by_trial(path: Path) -> dict[tuple[str, str, int], list[tuple[int, list[str]]]]:
    """Classic Ibex rows grouped by (MD5, item number, showing): consecutive rows of one item."""
    out: dict = defaultdict(list)
    last, showing = None, Counter()
    for n, v in lines(path):
        key = (v[1], v[3])
        if key != last:
            showing[key] += 1
            last = key
        out[(v[1], v[3], showing[key])].append((n, v))
    return out


def test_the_practice_rule_names_the_tools_conventions():
    for label in ("practice", "Practice-good", "GuidedPractice1", "GuidedPractice3", "practice_trials", "training",
                  "train2", "prac", "Practise"):
        assert is_practice(label, default_mapping().practice_values), label
    for label in ("experiment", "filler", "test", "check", "contraction", "extract"):
        assert not is_practice(label, default_mapping().practice_values), label
    assert not is_practice("GuidedPractice1", ("warmup",)) and is_practice("warmup", ("warmup",))


@pytest.mark.parametrize("path", [p for p in FILES if "custom" not in p.name], ids=lambda p: p.name)
def test_every_row_is_in_a_trial_or_excluded_with_its_reason(path):
    result = read_pcibex([path], None)
    got = sorted([e.line for e in result.excluded] + [n for t in result.trials for n in t.rows])
    assert got == [n for n, _ in lines(path)]
    assert result.rows_read[str(path)] == len(lines(path)) and all(e.reason for e in result.excluded)


def test_spr_with_yes_no_questions_keeps_ibex_scoring_through_the_import(tmp_path):
    path = CORPUS / "ibex_spr_yesno_results"
    q = [(v[1], v[5], v[8], v[9], float(v[10])) for _, v in lines(path) if v[2] == "Question"]
    right, wrong = sum(x[3] == "1" for x in q), sum(x[3] == "0" for x in q)
    assert (right, wrong) == (34, 8) and right + wrong == len(q) == 42
    result = read_pcibex([path], None)
    assert Counter(t.correct for t in result.trials) == {True: right, False: wrong}
    per_person = Counter(x[0] for x in q)
    assert Counter(t.participant.split("-")[0] for t in result.trials) == per_person
    assert mean(t.rt_ms for t in result.trials) == pytest.approx(mean(x[4] for x in q))
    words = {(k[0], k[1]): [float(v[9]) for _, v in rows if v[2] == "DashedSentence"]
             for k, rows in by_trial(path).items()}
    for t in result.trials:
        assert list(t.word_rts) == words[(t.participant.split("-")[0], t.extra["Item number"])]
    # the item is the Latin-square Group; practice and fillers (Group NULL) are items of their own
    groups = {v[6] for _, v in lines(path) if v[2] == "Question" and v[6] != "NULL"}
    assert {t.item for t in result.trials if t.condition.startswith("rel")} == groups
    assert {t.item for t in result.trials if t.condition == "practice"} == {"practice-1", "practice-2"}
    report = import_study("pcibex", [path], None, tmp_path / "out")
    assert report.task == "self_paced_reading" and report.trials == 42 and report.accounted
    assert report.practice_trials == sum(x[1] == "practice" for x in q) == 6
    rows = session_rows(tmp_path / "out")
    assert Counter(r["correct"] for r in rows) == {"True": right, "False": wrong}


def test_a_negative_reading_time_excludes_its_trial_as_bad_naming_the_line(tmp_path):
    path = CORPUS / "ibex_spr_bad_rt_results"
    bad = [(n, v) for n, v in lines(path) if v[2] == "DashedSentence" and float(v[9]) < 0]
    assert len(bad) == 1 and bad[0][1][9] == "-2080.0"
    line, v = bad[0]
    trial_lines = [n for n, _ in by_trial(path)[(v[1], v[3], 1)]]
    result = read_pcibex([path], None)
    flagged = [e for e in result.excluded if e.bad]
    assert sorted(e.line for e in flagged) == trial_lines and len(trial_lines) == 10
    assert all(f"line {line}" in e.reason and "-2080" in e.reason for e in flagged)
    assert len(result.trials) == 42 - 1
    report = import_study("pcibex", [path], None, tmp_path / "out")   # the file is not refused
    assert report.trials == 41 and report.accounted


def test_item_group_mapped_with_practice_and_fillers_group_null(tmp_path):
    """`item: Group`, as an Ibex study's author writes it: practice and fillers (Group NULL) are items of their
    own, not a refusal; the Latin-square items are the Group values."""
    path = CORPUS / "ibex_spr_yesno_results"
    q = [v for _, v in lines(path) if v[2] == "Question"]
    report = import_study("pcibex", [path], {"item": "Group", "condition": "Type"}, tmp_path / "out")
    assert report.trials == len(q) and report.practice_trials == sum(v[5] == "practice" for v in q)
    rows = session_rows(tmp_path / "out")
    assert {r["item"] for r in rows if r["condition"].startswith("rel")} == {v[6] for v in q if v[6] != "NULL"}
    assert {r["item"] for r in rows if r["role"] == "practice"} == {f"practice-{v[3]}" for v in q if v[5] == "practice"}


def test_chunked_regions_and_item_specific_answers_with_ibex_scoring(tmp_path):
    path = CORPUS / "ibex_spr_chunks_results"
    regions = {(k[0], k[1]): ([v[8] for _, v in rows if v[2] == "DashedSentence"],
                              [float(v[9]) for _, v in rows if v[2] == "DashedSentence"])
               for k, rows in by_trial(path).items()}
    q = [(v[1], v[3], v[5], v[7], v[8], v[9]) for _, v in lines(path) if v[2] == "Question"]
    right_answer = {x[3]: x[4] for x in q if x[5] == "1"}   # the answer scored right, per question
    result = read_pcibex([path], None)
    assert len(result.trials) == len(q) == 27
    assert sum(t.phase == "practice" for t in result.trials) == sum(x[2].startswith("GuidedPractice") for x in q) == 9
    for t in result.trials:
        words, rts = regions[(t.participant.split("-")[0], t.extra["Item number"])]
        assert list(t.words) == words and list(t.word_rts) == rts and all(" " in w for w in words[:3])
    rows_q = {(x[0], x[1]): x for x in q}
    for t in result.trials:
        x = rows_q[(t.participant.split("-")[0], t.extra["Item number"])]
        assert t.expected == right_answer[x[3]] and t.correct is (x[5] == "1") and t.response == x[4]
    report = import_study("pcibex", [path], None, tmp_path / "out", spec_out=tmp_path / "spr.yaml")
    assert report.task == "self_paced_reading" and report.trials == 27 and report.practice_trials == 9
    rows = session_rows(tmp_path / "out")
    assert Counter(r["correct"] for r in rows) == {"True": sum(x[5] == "1" for x in q),
                                                    "False": sum(x[5] == "0" for x in q)}
    assert sorted(sum(json.loads(r["region_rts_ms"]), 0.0) for r in rows) == \
        pytest.approx(sorted(sum(rts) for _, rts in regions.values()))
    with open(tmp_path / "spr_items.csv", encoding="utf-8", newline="") as f:
        items = list(csv.DictReader(f))
    given = defaultdict(set)   # each question's answers in the file: the item's own options
    for x in q:
        given[x[3]].add(x[4])
    for it in items:
        assert set(it["question_options"].split("|")) == given[it["question"]] | {right_answer[it["question"]]}
        assert it["question_answer"] == right_answer[it["question"]]


def test_acceptability_judgment_on_a_scale_is_a_rating_with_its_times(tmp_path):
    path = CORPUS / "ibex_aj_scale_results"
    q = [(v[1], v[5], int(v[8]), float(v[10])) for _, v in lines(path)
         if v[2] == "AcceptabilityJudgment" and len(v) == 11]
    by_cond = {c: mean(x[2] for x in q if x[1] == c) for c in ("gram", "ungram")}
    result = read_pcibex([path], None)
    assert {t.task for t in result.trials} == {"rating"}
    report = import_study("pcibex", [path], None, tmp_path / "out")
    assert report.task == "rating" and report.trials == len(q) == 30 and report.no_response == 0
    rows = session_rows(tmp_path / "out")
    for c, m in by_cond.items():
        assert mean(float(r["rating"]) for r in rows if r["condition"] == c) == pytest.approx(m)
    assert sorted(float(r["rt_ms"]) for r in rows) == sorted(x[3] for x in q)   # every RT kept


def test_acceptability_judgment_yes_no_stays_a_judgment_and_a_timeout_is_no_answer(tmp_path):
    path = CORPUS / "ibex_aj_yesno_results"
    q = [v for _, v in lines(path) if v[2] == "AcceptabilityJudgment" and len(v) == 11]
    answers = Counter(v[8] if v[8] != "NULL" else None for v in q)
    assert answers[None] == 1 and set(answers) == {"Yes", "No", None}
    result = read_pcibex([path], None)
    assert {t.task for t in result.trials} == {"judgment"}
    assert Counter(t.response for t in result.trials) == answers
    assert all(t.correct is None and t.expected is None for t in result.trials)   # no hasCorrect: no scoring
    assert [t.rt_ms for t in result.trials if t.response is None] == [None]        # the timeout is no RT
    report = import_study("pcibex", [path], None, tmp_path / "out")
    assert report.task == "judgment" and report.trials == len(q) and report.no_response == 1


def test_flash_sentence_then_a_scored_question(tmp_path):
    path = CORPUS / "ibex_flash_question_results"
    q = [(v[8], v[9]) for _, v in lines(path) if v[2] == "Question"]
    result = read_pcibex([path], None)
    assert Counter(t.correct for t in result.trials) == {True: sum(x[1] == "1" for x in q),
                                                           False: sum(x[1] == "0" for x in q)}
    sentences = [v[7] for _, v in lines(path) if v[2] == "FlashSentence"]
    assert [t.stimulus for t in result.trials] == sentences
    report = import_study("pcibex", [path], None, tmp_path / "out")
    assert Counter(r["correct"] for r in session_rows(tmp_path / "out")) == {"True": 9, "False": 3}
    assert report.task == "judgment"


def test_maze_words_errors_and_practice():
    path = CORPUS / "ibex_maze_results"
    trials = by_trial(path)
    result = read_pcibex([path], None)
    assert len(result.trials) == len(trials) == 24
    for t in result.trials:
        rows = [v for _, v in trials[(t.participant.split("-")[0], t.extra["Item number"], 1)]]
        assert list(t.words) == [v[8] for v in rows]
        assert t.correct is all(v[11] == "yes" for v in rows)
        assert t.phase == ("practice" if rows[0][5] == "practice" else "test")
        assert t.item == (rows[0][6] if rows[0][6] != "NULL" else f"practice-{rows[0][3]}")


def test_a_custom_controller_is_read_through_the_map_and_refused_without_one(tmp_path):
    path = CORPUS / "ibex_custom_controller_results"
    with pytest.raises(ImportInputError, match=r"PictureChoice.*Chosen answer.*map `response:`"):
        read_pcibex([path], None)
    rows = [v for _, v in lines(path)]
    m = Mapping(item="Group", condition="Type", response="Chosen answer", rt="Response time", correct="Accurate",
                stimulus="Picture shown", task="choice")
    result = read_pcibex([path], m)
    assert [t.response for t in result.trials] == [v[8] for v in rows]
    assert [t.rt_ms for t in result.trials] == [float(v[10]) for v in rows]
    assert [t.correct for t in result.trials] == [v[9] == "1" for v in rows]
    with pytest.raises(ImportInputError, match=r'"Chosen anwser".*the response.*Chosen answer'):
        read_pcibex([path], replace(m, response="Chosen anwser"))
    report = import_study("pcibex", [path], {"item": "Group", "condition": "Type", "response": "Chosen answer",
                                             "rt": "Response time", "correct": "Accurate",
                                             "stimulus": "Picture shown"}, tmp_path / "out")
    got = Counter(r["correct"] for r in session_rows(tmp_path / "out"))
    assert got == {"True": sum(v[9] == "1" for v in rows), "False": sum(v[9] == "0" for v in rows)}
    assert report.trials == len(rows)


def test_penncontroller_scale_by_event_time_unclicked_and_repeated_checks(tmp_path):
    path = CORPUS / "pcibex_scale_check_results"
    # columns: 8 element type, 9 name, 10 parameter, 11 value, 12 EventTime, 13 item, 14 condition
    trials: dict = defaultdict(list)
    showing: Counter = Counter()
    for _, v in lines(path):
        if v[9] == "_Trial_" and v[10] == "Start":
            showing[(v[1], v[3])] += 1
        trials[(v[1], v[3], showing[(v[1], v[3])])].append(v)
    hand = {}
    screens = [k for k, rows in trials.items() if not any(v[9] == "Print" for v in rows)]
    assert len(screens) == 3 and all(trials[k][0][12] == "NULL" for k in screens)   # the instructions screens
    for k, rows in trials.items():
        if k in screens:
            continue
        shown = max(float(v[11]) for v in rows if v[9] == "Print")
        choices = [v for v in rows if v[9] == "Choice"]
        hand[k] = (choices[-1][10], float(choices[-1][11]) - shown) if choices else (None, None)
    result = read_pcibex([path], None)
    assert len(result.trials) == len(hand) == 36
    unanswered = sum(r == (None, None) for r in hand.values())
    assert unanswered == 4 and sum(t.response is None for t in result.trials) == unanswered
    seen: Counter = Counter()
    for t in result.trials:
        key = (t.participant.split("-")[0], t.extra["Order number of item"])
        seen[key] += 1
        assert (t.response, t.rt_ms) == hand[(*key, seen[key])]
    checks = [t.item for t in result.trials if t.condition == "check"]
    assert sorted(checks) == sorted(["check", "check#2"] * 3)
    report = import_study("pcibex", [path], None, tmp_path / "out")
    assert report.task == "rating" and report.trials == 36 and report.no_response == 4
    rows = session_rows(tmp_path / "out")
    answered = [v for v in hand.values() if v[0] is not None]
    assert mean(float(r["rating"]) for r in rows if r["rating"]) == pytest.approx(mean(int(v[0]) for v in answered))


def test_penncontroller_key_with_a_logged_id_and_a_second_training_pass(tmp_path):
    path = CORPUS / "pcibex_key_training_results"
    rows = [v for _, v in lines(path)]
    ids = {v[1]: v[12] for v in rows}
    keys = [(v[12], v[5], v[10]) for v in rows if v[7] == "Key"]
    result = read_pcibex([path], replace(default_mapping(), participant="ID", item="item", condition="condition",
                                         stimulus="sentence"))
    assert [(t.participant, t.extra["Label"], t.response) for t in result.trials] == keys
    assert {t.participant for t in result.trials} == set(ids.values())
    assert sum(t.phase == "practice" for t in result.trials) == sum(k[1] == "training" for k in keys) == 8
    prints = [float(v[11]) for v in rows if v[9] == "Print"]
    presses = [float(v[11]) for v in rows if v[7] == "Key"]
    assert [t.rt_ms for t in result.trials] == [b - a for a, b in zip(prints, presses, strict=True)]
    assert sorted({t.item for t in result.trials if t.phase == "practice"}) == \
        ["training-1", "training-1#2", "training-2", "training-2#2"]
    listed = "elements that logged: ID, start, fixation, sentence, answer"
    with pytest.raises(ImportInputError, match=rf'"anwser".*{listed}'):
        read_pcibex([path], replace(default_mapping(), response="anwser"))
    report = import_study("pcibex", [path], None, tmp_path / "out")   # defaults: the Template's item column
    assert report.task == "judgment" and report.trials == len(keys) and report.practice_trials == 8
    assert len(report.excluded_rows) == sum(v[5] == "intro" for v in rows)   # the ID screen, outside the items


def test_penncontroller_controller_elements_read_word_times_and_scored_question(tmp_path):
    path = CORPUS / "pcibex_controllers_results"
    rows = [v for _, v in lines(path)]
    words = defaultdict(list)
    for v in rows:
        if v[7] == "Controller-DashedSentence":
            words[(v[1], v[3])].append(float(v[12]))
    q = [(v[1], v[3], v[13], v[14]) for v in rows if v[7] == "Controller-Question"]
    result = read_pcibex([path], None)
    assert len(result.trials) == len(q) == 8
    for t in result.trials:
        key = (t.participant.split("-")[0], t.extra["Order number of item"])
        assert list(t.word_rts) == words[key]
    assert Counter(t.correct for t in result.trials) == Counter(x[3] == "1" for x in q)
    report = import_study("pcibex", [path], None, tmp_path / "out")
    assert Counter(r["correct"] for r in session_rows(tmp_path / "out")) == \
        Counter(str(x[3] == "1") for x in q)
    assert report.task == "self_paced_reading"


def test_two_versions_of_a_study_in_one_file_each_imported_with_its_map(tmp_path):
    """A results file holding submissions of two versions (the second names its item column ItemID): each import
    takes the version its map names and excludes the other's submissions, counted with the reason."""
    one = (CORPUS / "pcibex_scale_check_results").read_text(encoding="utf-8")
    two = one.replace("# 13. item.", "# 13. ItemID.")
    path = tmp_path / "results"
    path.write_text(one + two, encoding="utf-8")
    n_one = len([s for s in one.split("\n") if s.strip() and not s.startswith("#")])
    first = read_pcibex([path], None)
    assert len(first.trials) == 36 and all(t.line <= len(one.split("\n")) for t in first.trials)
    other = [e for e in first.excluded if "another version" in e.reason]
    assert len(other) == n_one and all("ItemID" not in e.reason and "'item'" in e.reason for e in other)
    second = read_pcibex([path], replace(default_mapping(), item="ItemID", condition="condition"))
    assert len(second.trials) == 36 and all(t.line > len(one.split("\n")) for t in second.trials)
    assert sorted(t.item for t in second.trials) == sorted(t.item for t in first.trials)
    for result in (first, second):
        assert sorted([e.line for e in result.excluded] + [n for t in result.trials for n in t.rows]) == \
            [n for n, _ in lines(path)]


def test_task_rating_in_the_map_reads_an_unscored_worded_scale_as_ratings(tmp_path):
    """A judgment scale of words (`as: ["No", "Yes"]` here) mapped as `task: rating` with `labels:` is read as
    ratings, not refused as having no rating trials."""
    path = CORPUS / "ibex_aj_yesno_results"
    q = [v for _, v in lines(path) if v[2] == "AcceptabilityJudgment" and len(v) == 11]
    report = import_study("pcibex", [path], {"task": "rating", "labels": {"No": "1", "Yes": "2"}}, tmp_path / "out")
    assert report.task == "rating" and report.trials == len(q) and report.no_response == 1
    rows = session_rows(tmp_path / "out")
    assert mean(float(r["rating"]) for r in rows if r["rating"]) == \
        pytest.approx(mean({"No": 1, "Yes": 2}[v[8]] for v in q if v[8] != "NULL"))


def test_dashed_acceptability_judgment_speeded_with_its_scoring(tmp_path):
    path = CORPUS / "ibex_dashed_aj_results"
    q = [v for _, v in lines(path) if v[2] == "DashedAcceptabilityJudgment" and len(v) == 11]
    sentences = [v[7] for _, v in lines(path) if v[2] == "DashedAcceptabilityJudgment" and len(v) == 8]
    result = read_pcibex([path], None)
    assert [t.stimulus for t in result.trials] == sentences and len(q) == len(sentences) == 16
    assert [(t.response, t.correct) for t in result.trials] == [(v[8], v[9] == "1") for v in q]
    assert sum(t.phase == "practice" for t in result.trials) == sum(v[5].startswith("Practice") for v in q) == 4
    report = import_study("pcibex", [path], None, tmp_path / "out")
    assert report.task == "judgment" and report.practice_trials == 4
    assert Counter(r["correct"] for r in session_rows(tmp_path / "out")) == \
        Counter(str(v[9] == "1") for v in q)


def test_a_map_that_leaves_the_item_keeps_the_files_own_default():
    """A map naming only other fields (`task:`) reads a classic Ibex item as its Group, as without a map, not each
    item x condition's number (which would double the items)."""
    path = CORPUS / "ibex_spr_yesno_results"
    groups = {v[6] for _, v in lines(path) if v[2] == "Question" and v[6] != "NULL"}
    m = replace(default_mapping(), task="self_paced_reading")
    result = read_pcibex([path], m)
    assert {t.item for t in result.trials if t.condition.startswith("rel")} == groups and len(groups) == 8


def test_the_right_answer_implied_by_ibex_scoring_per_question_or_item():
    from participants.imports.pcibex_scoring import implied_answers
    from participants.imports.records import SourceTrial

    def t(line: int, item: str, response: str, correct: bool) -> SourceTrial:
        return SourceTrial(tool="pcibex", source_file="f", line=line, participant=f"p{line}", session="", order=0,
                           phase="test", item=item, response=response, correct=correct)
    trials = [t(1, "1", "a car", False), t(2, "1", "a boat", True), t(3, "2", "Yes", False),
              t(4, "3", "x", False), t(5, "3", "y", False), t(6, "3", "z", True)]
    keys = [("Question", "item 1"), ("Question", "item 1"), ("Q2", "Did he?"), ("Question", "item 3"),
            ("Question", "item 3"), ("Question", "item 3")]
    trials += [t(7, "4", "No", True)]
    keys += [("Q2", "Did she?")]
    got = [x.expected for x in implied_answers(trials, keys)]
    # item 1: the answer another person was scored right for; "Did he?": the other of Q2's two answers
    assert got == ["a boat", "a boat", "No", "z", "z", "z", "No"]
    with pytest.raises(ImportInputError, match=r"line 8: the tool scored the answer 'p' wrong.*map `expected:`"):
        implied_answers(trials + [t(8, "5", "p", False)], keys + [("Question", "item 5")])
