"""`twinlab import psychopy` with its defaults on real Builder and PsychoJS files (tests/data/imports/psychopy_corpus,
PROVENANCE.md): a lexical decision whose keyboard is `stim_resp` and practice loop `practice_trials` (PsychoPy
2024.2.3), a published PsychoJS 2022-2024 study whose test loop sits among a questionnaire loop, an exposure task's
loops and post-tests, and a nested-loop study PsychoPy 2026.2.5's own ExperimentHandler recorded (training repeated
in an outer loop, blocks with a break row, a questionnaire, another task). Each expected number is a hand count
made here with pandas from the study's own loop and column names, not with twinlab's reader."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from participants.imports.api import import_study, show_map
from participants.imports.psychopy import read_psychopy
from participants.imports.records import ImportInputError

CORPUS = Path(__file__).parent.parent / "data" / "imports" / "psychopy_corpus"
EXPRA = sorted((CORPUS / "expra_lexical_decision" / "data").glob("*.csv"))
BEAT = sorted((CORPUS / "beat_grammar_pavlovia" / "data").glob("*.csv"))
NESTED = sorted((CORPUS / "nested_lexical_decision" / "data").glob("*.csv"))
NESTED_190 = sorted((CORPUS / "nested_lexical_decision_190" / "data").glob("*.csv"))   # PsychoPy 1.90.3's own


def table(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")


def hand(path: Path, loops: dict[str, str], comp: str) -> dict[str, object]:
    """The study's trials counted by hand: the rows of its trial loops (loop -> phase), the keyboard's columns."""
    df = table(path)
    rows = df[sum((df[f"{lp}.thisN"] != "") for lp in loops) > 0]
    phase = rows.apply(lambda r: next(ph for lp, ph in loops.items() if r[f"{lp}.thisN"] != ""), axis=1)
    rt = pd.to_numeric(rows[f"{comp}.rt"].replace("None", ""), errors="coerce") * 1000
    out: dict[str, object] = {"rows": len(df), "trials": len(rows), "practice": int((phase == "practice").sum()),
                              "answered": int((~rows[f"{comp}.keys"].isin(["", "None"])).sum()),
                              "mean_rt": rt.mean()}
    if f"{comp}.corr" in rows:
        out["accuracy"] = {ph: pd.to_numeric(rows[f"{comp}.corr"][phase == ph]).mean() for ph in set(phase)}
    return out


def reader(path: Path, **kw) -> dict[str, object]:
    r = read_psychopy([path], None)
    assert len(r.trials) + len(r.excluded) == r.rows_read[str(path)]           # every row accounted for
    rts = [t.rt_ms for t in r.trials if t.rt_ms is not None]
    out: dict[str, object] = {"rows": r.rows_read[str(path)], "trials": len(r.trials),
                              "practice": sum(t.phase == "practice" for t in r.trials),
                              "answered": sum(t.response is not None for t in r.trials),
                              "mean_rt": sum(rts) / len(rts)}
    if kw.get("accuracy", True):
        phases = {t.phase for t in r.trials}
        out["accuracy"] = {ph: sum(bool(t.correct) for t in r.trials if t.phase == ph)
                           / sum(t.phase == ph for t in r.trials) for ph in phases}
    return out


def same(mine: dict, theirs: dict) -> None:
    assert mine.keys() == theirs.keys()
    for k, v in theirs.items():
        if isinstance(v, dict):
            assert mine[k].keys() == v.keys() and all(mine[k][p] == pytest.approx(v[p]) for p in v), k
        elif isinstance(v, float):
            assert mine[k] == pytest.approx(v), k
        else:
            assert mine[k] == v, k


def test_the_corpus_is_the_tools_own_files():
    assert len(EXPRA) == 1 and len(BEAT) == 4 and len(NESTED) == 2
    versions = {f.name: set(table(f)["psychopyVersion"]) for f in EXPRA + BEAT + NESTED}
    assert versions[EXPRA[0].name] == {"2024.2.3"}
    assert {v for f in BEAT for v in versions[f.name]} == {"2022.2.4", "2022.2.5"}
    assert all("OS" in table(f) and ".ran" in " ".join(table(f)) for f in BEAT)   # what PsychoJS writes
    assert all(versions[f.name] == {"2026.2.5"} for f in NESTED)
    for f in NESTED_190:                            # 1.90's Builder stored no psychopyVersion, its own date format
        df = table(f)
        assert "psychopyVersion" not in df and df["date"].str.fullmatch(r"\d{4}_[A-Z][a-z]{2}_\d{2}_\d{4}").all()
        assert not any(c.startswith("trials.ld_resp") for c in df)          # no loop-prefixed copies before 2023


def test_a_keyboard_not_named_key_resp_and_practice_trials_loop_with_the_defaults():
    """The stim_resp lexical decision: 310 trials with their answers (not without), 10 of them practice."""
    (f,) = EXPRA
    want = hand(f, {"practice_trials": "practice", "trials": "test"}, "stim_resp")
    assert want["trials"] == 310 and want["practice"] == 10 and want["answered"] == 310
    same(reader(f), want)


def test_the_test_loop_among_questionnaire_and_other_task_loops_with_the_defaults():
    """PsychoJS files of a published study: 96 test trials each, not the 772 rows of every loop."""
    for f in BEAT:
        want = hand(f, {"Offline_test": "test"}, "Partz_no_partm")
        assert want["trials"] == 96
        same(reader(f, accuracy=False), want)


def test_nested_loops_outer_rows_repeats_questionnaire_and_another_task_are_not_trials():
    assert len(NESTED_190) == 2
    for f in NESTED + NESTED_190:
        want = hand(f, {"training": "practice", "trials": "test"}, "ld_resp")
        df = table(f)
        same(reader(f), want)
        r = read_psychopy([f], None)
        reasons = {e.reason for e in r.excluded}
        outer = {e.line for e in r.excluded if e.reason.startswith("the row loop blocks")}
        assert len(outer) == (df["blocks.thisN"] != "").sum() - (df["trials.thisN"] != "").sum() == 2
        assert any("questionnaire" in why and "no answer in ld_resp.keys" in why for why in reasons)
        assert any(why.startswith("the row loop training_block") for why in reasons)


def test_a_full_import_of_the_nested_study_equals_the_hand_count(tmp_path):
    f = NESTED[1]                                        # P02: one training pass (P01 repeats the training items)
    want = hand(f, {"training": "practice", "trials": "test"}, "ld_resp")
    report = import_study("psychopy", [f], None, tmp_path / "s")
    assert report.trials == want["trials"] and report.practice_trials == want["practice"]
    assert report.task == "judgment" and report.accounted
    rows = pd.read_csv(next((tmp_path / "s" / "data").glob("*_data.csv")), dtype=str, keep_default_na=False)
    test = rows[rows["role"] == "test"]
    assert (test["correct"] == "True").mean() == pytest.approx(want["accuracy"]["test"])


def test_show_map_shows_the_found_answer_and_the_trial_loops():
    text = show_map("psychopy", [CORPUS / "expra_lexical_decision" / "data"])
    assert "stim_resp.keys" in text and "practice_trials, trials" in text and "task: judgment (--map)" not in text


def test_answers_that_cannot_be_found_are_refused_naming_what_is_missing(tmp_path):
    df = table(NESTED[0])
    gone = df.drop(columns=[c for c in df.columns if c.endswith((".keys", ".response", ".corr", ".rt"))])
    path = tmp_path / "no_answers.csv"
    gone.to_csv(path, index=False)
    with pytest.raises(ImportInputError, match="answers cannot be found.*response: COMPONENT.keys"):
        read_psychopy([path], None)
    with pytest.raises(ImportInputError, match="no loop's row holds an answer in intro_key.keys"):
        from participants.imports.mapping import mapping_from_dict
        from participants.imports.psychopy import default_mapping

        read_psychopy([NESTED[0]], mapping_from_dict({"response": "intro_key.keys"}, default_mapping()))


def test_a_mapped_trial_loop_and_a_bad_value(tmp_path):
    from participants.imports.mapping import mapping_from_dict
    from participants.imports.psychopy import default_mapping

    f = NESTED[0]
    m = mapping_from_dict({"loops": ["trials"], "response": "ld_resp.keys"}, default_mapping())
    r = read_psychopy([f], m)
    assert len(r.trials) == (table(f)["trials.thisN"] != "").sum() and {t.phase for t in r.trials} == {"test"}
    with pytest.raises(ImportInputError, match="'nope', which is not a loop"):
        read_psychopy([f], mapping_from_dict({"loops": ["nope"]}, default_mapping()))
    df = table(f)
    line = df.index[df["trials.thisN"] == "2"][0]
    df.loc[line, "ld_resp.rt"] = "-2.08"
    bad = tmp_path / f.name
    df.to_csv(bad, index=False)
    r = read_psychopy([bad], None)
    (e,) = [e for e in r.excluded if e.bad]
    assert e.line == line + 2 and "-2.08" in e.reason and len(r.trials) + len(r.excluded) == len(df)



def test_a_slider_answer_states_a_rating_with_its_own_rt():
    """A map naming a Slider's `.response` and its loop: rating trials, the slider's own `.rt` (hand: pandas)."""
    from participants.imports.mapping import mapping_from_dict
    from participants.imports.psychopy import default_mapping

    f = NESTED[0]
    df = table(f)
    q = df[df["questionnaire.thisN"] != ""]
    m = mapping_from_dict({"response": "q_slider.response", "loops": ["questionnaire"], "item": "q_id",
                           "stimulus": "statement"}, default_mapping())
    r = read_psychopy([f], m)
    assert [(t.task, t.item, t.response) for t in r.trials] == [("rating", i, v) for i, v in
                                                               zip(q["q_id"], q["q_slider.response"], strict=True)]
    assert [t.rt_ms for t in r.trials] == pytest.approx([float(x) * 1000 for x in q["q_slider.rt"]])


def test_a_press_space_to_start_key_on_every_trial_is_not_the_answer(tmp_path):
    """A routine before each trial ended by a `start_key` (space, on every row, first in the header): the
    answer is still the scored keyboard that varies."""
    f = NESTED[1]
    df = table(f)
    loop_rows = (df["training.thisN"] != "") | (df["trials.thisN"] != "")
    df.insert(0, "start_key.keys", ["space" if x else "" for x in loop_rows])
    path = tmp_path / f.name
    df.to_csv(path, index=False)
    r = read_psychopy([path], None)
    assert len(r.trials) == loop_rows.sum() and any("hold ld_resp.keys" in n for n in r.notes)


def test_the_lexical_decision_with_its_authors_map_imports_whole(tmp_path):
    """The map its author would write (the study's own practice column; the word as the item: its item_nr
    numbers practice and test words alike): sessions, accuracy and RT equal the hand count."""
    (f,) = EXPRA
    want = hand(f, {"practice_trials": "practice", "trials": "test"}, "stim_resp")
    m = {"item": "text", "response": "stim_resp.keys", "correct": "stim_resp.corr", "rt": "stim_resp.rt",
         "expected": "corr_ans", "practice": "is_practice_trial", "practice_values": ["True"]}
    report = import_study("psychopy", [f], m, tmp_path / "s")
    assert (report.trials, report.practice_trials, report.people) == (want["trials"], want["practice"], 1)
    rows = pd.read_csv(next((tmp_path / "s" / "data").glob("*_data.csv")), dtype=str, keep_default_na=False)
    for role, phase in (("practice", "practice"), ("test", "test")):
        got = rows[rows["role"] == role]
        assert (got["correct"] == "True").mean() == pytest.approx(want["accuracy"][phase]), role
    rts = pd.to_numeric(rows["rt_ms"], errors="coerce")
    assert rts.mean() == pytest.approx(want["mean_rt"], abs=1e-3)


def test_a_practice_loop_whose_keyboard_has_another_name(tmp_path):
    """Practice with its own keyboard `prac_resp` (a copied routine), test with `ld_resp`: both imported, each
    with its own answer, accuracy and RT equal to the hand count of the original."""
    f = NESTED[1]
    df = table(f)
    want = hand(f, {"training": "practice", "trials": "test"}, "ld_resp")
    practice = df["training.thisN"] != ""
    for part in ("keys", "corr", "rt", "duration"):
        df.insert(df.columns.get_loc(f"ld_resp.{part}"), f"prac_resp.{part}", df[f"ld_resp.{part}"].where(practice, ""))
        df.loc[practice, f"ld_resp.{part}"] = ""
    path = tmp_path / f.name
    df.to_csv(path, index=False)
    same(reader(path), want)
    assert any("training's answer: prac_resp.keys" in n for n in read_psychopy([path], None).notes)


def test_the_psyexp_and_conditions_files_given_with_the_data(tmp_path):
    """The whole experiment folder and its .psyexp: the conditions files the study names are not read as results,
    the correct answer is the column the study scores its keyboard against, and a data file of another study
    (loops the .psyexp lacks) is refused."""
    folder = CORPUS / "expra_lexical_decision"
    psyexp = folder / "study" / "demo_experiment.psyexp"
    files = sorted(p for p in folder.rglob("*.csv"))
    assert len(files) == 3                                        # the data file and the two conditions files
    r = read_psychopy([*files, psyexp], None)
    assert list(r.rows_read) == [str(EXPRA[0])] and len(r.trials) == 310
    assert sum("a conditions file of the study" in n for n in r.notes) == 2
    assert r.mappings[str(EXPRA[0])].expected == "corr_ans" and "stim_resp scored against corr_ans" in r.notes[0]
    with pytest.raises(ImportInputError, match="not all loops of the study given"):
        read_psychopy([NESTED[0], psyexp], None)
    bad = tmp_path / "broken.psyexp"
    bad.write_text("<PsychoPy2experiment><Routines>", encoding="utf-8")
    with pytest.raises(ImportInputError, match="broken.psyexp: line 1: not a Builder .psyexp"):
        read_psychopy([EXPRA[0], bad], None)


@pytest.mark.parametrize("name, practice", [("practice", True), ("practice_trials", True), ("PracLoop", True),
                                            ("training", True), ("block_prac", True), ("trials", False),
                                            ("constraint_trials", False), ("mainTrials", False)])
def test_the_one_practice_rule_for_loop_names(name, practice):
    from participants.imports.psychopy_loops import is_practice_loop

    assert is_practice_loop(name) is practice
