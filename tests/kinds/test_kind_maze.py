"""The Maze kind (kinds/maze/): one folder, found by the one registry; its item checks, its reading of a raw
record (hand-worked examples, both error modes), its sides, its plan read back by its own derive, the
distractor generator (a stand-in scorer), and the analysis' tables against a hand count."""
from __future__ import annotations

import json
import os
import random
import re
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "tests" / "support" / "maze" / "maze.yaml"
MAT = {"sentence": "The dog barked loudly.", "distractors": "fig ran tree."}
SIDES = [0, 1, 0, 1]


def settings(**given):
    from experiments.tasks.presented import task_settings

    return task_settings(None, "maze", given or None)


def trial(mat=MAT, index=0):
    return SimpleNamespace(mat=dict(mat), trial_index=index, task="maze")


def derive(raw, s=None, order=SIDES, mat=MAT):
    from experiments.tasks.record import derive as record_derive

    return record_derive(trial(mat), s or settings(), order, raw)


def press(key, t):
    return {"key": key, "t": t}


def test_the_kind_is_one_folder_and_no_other_file_names_it():
    """Found through the one registry; no product file outside kinds/maze/ names it; on a branch, no file the
    diff against main changes outside kinds/maze/, tests/, docs/ and README.md names it (a change to the core made
    for maze shows; another branch's changes to the core, or the README's list of kinds, do not fail this test)."""
    from analysis.kind_sections import analysis_kinds
    from experiments.kinds import kind_file, kind_names, kind_part
    from model_subjects.tasks.registry import model_kinds
    from participants.tasks import PSYCHOPY
    from participants.web.site import kind_pages

    assert "maze" in kind_names() and kind_part("maze", "task").KIND.name == "maze"
    assert "maze" in PSYCHOPY and "kind-maze.js" in kind_pages() and kind_file("maze", "README.md")
    assert "maze" in model_kinds() and "maze" in analysis_kinds()
    product = ["experiments", "participants", "model_subjects", "analysis", "stimuli", "scripts"]
    hits = subprocess.run(["grep", "-rliw", "--include=*.py", "--include=*.js", "maze", *product], cwd=ROOT,
                          capture_output=True, text=True).stdout.split()
    # the importers name the Maze of PCIbex and jsPsych files they read; nothing else does
    assert all(h.startswith("participants/imports/") for h in hits), hits
    base = subprocess.run(["git", "merge-base", "HEAD", "main"], cwd=ROOT, capture_output=True, text=True)
    if base.returncode != 0:
        pytest.skip("no `main` branch to compare with")
    changed = subprocess.run(["git", "diff", "--name-only", base.stdout.strip()], cwd=ROOT, capture_output=True,
                             text=True).stdout.split()
    allowed = ("kinds/maze/", "tests/", "docs/", "experiments/specs/")  # a bundled example names its kind
    outside = [p for p in changed if not p.startswith(allowed) and p != "README.md" and (ROOT / p).is_file()]
    assert not [p for p in outside if re.search(r"\bmaze\b", (ROOT / p).read_text(encoding="utf-8"), re.I)], outside


@pytest.mark.parametrize("mat,message", [
    ({"sentence": "The dog barked loudly.", "distractors": "fig ran"}, "one per word after the first (3 for"),
    ({"sentence": "The dog barked loudly.", "distractors": "fig Barked tree."}, "equals its word at word 3 'barked'"),
    ({"sentence": "The dog barked loudly.", "distractors": "fig ran loudly"}, "equals its word at word 4"),
    ({"sentence": "Dogs", "distractors": ""}, "at least two words"),
])
def test_the_item_check_names_the_problem(mat, message):
    from experiments.tasks.base import TaskError
    from kinds.maze.task import KIND

    with pytest.raises(TaskError, match=None) as exc:
        KIND.check_item(mat, None, "items.csv: line 7")
    assert str(exc.value).startswith("items.csv: line 7: ") and message in str(exc.value), str(exc.value)


def test_an_ibex_style_distractor_list_with_x_x_x_first_is_taken():
    from kinds.maze.task import KIND, distractors

    mat = {"sentence": "The dog barked loudly.", "distractors": "x-x-x fig ran tree."}
    KIND.check_item(mat, None, "here")
    assert distractors(mat) == ["fig", "ran", "tree."]


def test_validate_names_the_bad_line_of_a_design(tmp_path):
    spec = tmp_path / "maze.yaml"
    spec.write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    rows = (EXAMPLE.parent / "maze_items.csv").read_text(encoding="utf-8").splitlines()
    rows[3] = rows[3].replace("hurt week poem", "Lawyer week poem")  # line 4: 'lawyer' beside 'Lawyer'
    (tmp_path / "maze_items.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    r = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-m", "experiments.cli", "validate", str(spec)],
                       cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert (r.returncode == 2 and "line 4" in r.stdout + r.stderr
            and "'lawyer'" in r.stdout + r.stderr), r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr


def test_end_mode_hand_worked():
    """sides left,right,left,right; e@600 (word 1 right), i@1400 (word 2 right), i@2000 (word 3 wrong: ends)."""
    raw = {"presses": [press("e", 600.0), press("i", 1400.0), press("i", 2000.0)], "pointers": [],
           "steps": [100.0, 700.0, 1500.0]}
    out = derive(raw)
    assert json.loads(out["word_rts_ms"]) == [500.0, 800.0, 600.0, None]
    assert json.loads(out["region_rts_ms"]) == [500.0, 800.0, 600.0, None]
    assert out["response"] == "The dog ran" and out["correct"] is False and out["rt_ms"] == 1900.0
    ex = out["_extra"]
    assert json.loads(out["word_correct"]) == [True, True, False, None] and out["first_error"] == 2
    assert ex["completed"] is False and "word_correct" not in ex and "first_error" not in ex
    assert ex["maze_sides"] == SIDES and ex["error_mode"] == "end"


def test_redo_mode_hand_worked():
    """The same start; word 3 wrong (i@2000), then right (e@2300); a stray press at 1450 (before word 3's pair,
    shown at 1500) is no answer; word 4 right (i@3000)."""
    raw = {"presses": [press("e", 600.0), press("i", 1400.0), press("e", 1450.0), press("i", 2000.0),
                       press("e", 2300.0), press("i", 3000.0)], "pointers": [], "steps": [100.0, 700.0, 1500.0, 2310.0]}
    out = derive(raw, settings(error_mode="redo"))
    assert json.loads(out["word_rts_ms"]) == [500.0, 800.0, 600.0, 700.0]
    assert out["_extra"]["word_right_rts_ms"] == [500.0, 800.0, 900.0, 700.0]
    assert out["response"] == "The dog ran loudly." and out["correct"] is False and out["rt_ms"] == 2900.0
    assert out["first_error"] == 2 and out["_extra"]["completed"] is True
    assert json.loads(out["word_correct"]) == [True, True, False, True]


def test_a_tap_on_a_box_answers_and_all_right_is_correct():
    raw = {"presses": [press("e", 600.0), press("e", 2000.0)], "pointers": [
        {"type": "touch", "t": 1400.0, "target": 1}, {"type": "touch", "t": 2500.0, "target": 1}],
        "steps": [100.0, 700.0, 1500.0, 2010.0]}
    out = derive(raw)
    assert out["response"] == "The dog barked loudly." and out["correct"] is True
    assert json.loads(out["word_rts_ms"]) == [500.0, 800.0, 600.0, 500.0]
    assert json.loads(out["word_correct"]) == [True] * 4 and out["first_error"] is None


@pytest.mark.parametrize("raw,message", [
    ({"presses": [press("e", 600.0)], "pointers": [], "steps": [100.0, 700.0]}, "waits for an answer at word 2"),
    ({"presses": [press("e", 600.0), press("i", 1400.0), press("i", 2000.0)], "pointers": [],
      "steps": [100.0, 700.0, 1500.0, 2100.0]}, "4 pairs shown, the answers reach word 3"),
    ({"presses": [press("e", 600.0), press("i", 1400.0), press("i", 2000.0)], "pointers": [],
      "steps": [100.0, 500.0, 1500.0]}, "word 2 shown before the answer"),
])
def test_a_record_that_cannot_be_this_trials_is_refused(raw, message):
    from experiments.tasks.record import TaskResultError

    with pytest.raises(TaskResultError, match=message):
        derive(raw)


def test_sides_are_seeded_recorded_and_the_first_word_is_left():
    from kinds.maze.task import screen_order, sides

    t = trial({"sentence": " ".join(["w"] * 41), "distractors": " ".join(["d"] * 40)}, index=3)
    a, b = screen_order(t, 7, "p01", None), screen_order(t, 7, "p01", None)
    assert a == b and a[0] == 0 and len(a) == 41 and 10 <= sum(a) <= 31
    assert screen_order(t, 7, "p02", None) != a and sides(5, "x") == sides(5, "x")


@pytest.mark.parametrize("mode", ["end", "redo"])
def test_the_plan_read_back_by_derive_is_the_plan(mode):
    """The autopilot's presses, stamped at their planned times with the pairs shown as they reveal them, are
    derived back to the plan's intended picks by the one rule."""
    from experiments.tasks.record import plan as record_plan
    from kinds.maze.task import maze_responses, walk

    s = settings(error_mode=mode)
    for seed in range(12):
        p = record_plan(trial(), s, SIDES, seed=f"s{seed}", accuracy=0.5)
        presses = [press(k, 100.0 + 1000 * t) for t, k in p.phases["read"]]
        steps = [100.0]
        while True:
            w = walk(SIDES, steps, maze_responses(s, presses, []), mode)
            if w["completed"] or w["ended"] or len(steps) > w["reached"]:
                break
            steps.append(steps[-1] if w["reached"] == 0 else 100.0 + sum(x for x in w["rt_right"] if x) + 1.0)
        out = derive({"presses": presses, "pointers": [], "steps": steps}, s)
        assert out["response"] == p.intended and out["correct"] == p.intended_correct


def test_the_generator_picks_the_least_likely_matched_candidate(tmp_path):
    """A stand-in scorer (log P = minus the candidate's letters' alphabet positions summed): the distractor is
    the matched candidate with the largest sum; length-matched, seeded, the punctuation kept, recorded."""
    from kinds.maze.model import Entry, generate_distractors

    def score(context, conts):
        return [-sum(ord(c) - 96 for c in x.strip(" .").lower()) for x in conts]

    vocab = [Entry(w, None) for w in ["cat", "zoo", "fig", "rat", "tree", "yawn", "quiz", "sky", "mop", "bread"]]
    rows = [{"item": "1", "sentence": "A dog ate the tree.", "distractors": ""},
            {"item": "2", "sentence": "A cat sat.", "distractors": "zoo mop."}]
    out, rec = generate_distractors(rows, score, vocab, seed=3, n_candidates=20)
    assert out[0]["distractors"] == "zoo zoo zoo quiz." and out[1]["distractors"] == "zoo mop."
    assert rec["matched_by"] == ["length"] and rec["frequencies"] is False and rec["seed"] == 3
    assert rec["items"][0]["words"][0]["candidates"] and "tree" not in rec["items"][0]["words"][3]["candidates"]
    again, _ = generate_distractors(rows, score, vocab, seed=3, n_candidates=2)
    again2, _ = generate_distractors(rows, score, vocab, seed=3, n_candidates=2)
    assert again == again2


def test_the_generator_matches_frequency_where_the_list_gives_it():
    from kinds.maze.model import Entry, candidates

    vocab = [Entry("cat", 1000.0), Entry("fig", 900.0), Entry("zoo", 10.0), Entry("dog", 1200.0)]
    got, how = candidates("dog", vocab, {"dog"}, 10, random.Random(0))
    assert how == "length+frequency" and sorted(got) == ["cat", "fig"]


def _words_frame():
    """Two people's rows and a model's, by hand: the analysis' tables against a count of these numbers."""
    mat = {"sentence": "The dog barked loudly.", "distractors": "fig ran tree.", "regions": "The dog | barked loudly."}
    rows = []
    for sid, cond, rts, right in [("p1", "a", [500, 800, 600, None], [True, True, False, None]),
                                  ("p1", "b", [400, 700, 650, 900], [True, True, True, True]),
                                  ("p2", "a", [450, 750, 610, 880], [True, True, True, True])]:
        rows.append({"task": "maze", "group": "people", "subject_kind": "human", "subject_id": sid, "item_id": "1",
                     "cond": cond, "materials": json.dumps(mat), "word_rts_ms": json.dumps(rts),
                     "extra": json.dumps({"word_correct": right}), "word_surprisal_bits": None})
    rows.append({"task": "maze", "group": "model", "subject_kind": "model", "subject_id": "m1", "item_id": "1",
                 "cond": "a", "materials": json.dumps(mat), "word_rts_ms": None,
                 "extra": json.dumps({"word_correct": [True, False, None, None]}),
                 "word_surprisal_bits": json.dumps([10.0, 4.0, 8.0, 6.0])})
    return pd.DataFrame(rows)


def test_the_analysis_tables_equal_a_hand_count():
    from kinds.maze.analysis import errors_by_position, kept_rts, region_rts, rt_by_surprisal, word_rows

    words = word_rows(_words_frame(), ["cond"])
    kept, n = kept_rts(words)
    assert n == {"words_with_rt": 11, "first_words_dropped": 3, "wrong_first_picks_dropped": 1, "kept": 7}
    t = region_rts(kept).set_index(["group", "condition", "region"])["mean_rt_ms"].to_dict()
    # region 1 = words 1-2 (word 1 dropped): a: 800, 750; b: 700. region 2 = words 3-4: a: 880 (600 wrong), 610; b: 650,
    # 900
    assert t == {("people", "a", 1): 775.0, ("people", "a", 2): (610 + 880) / 2, ("people", "b", 1): 700.0,
                 ("people", "b", 2): 775.0}
    e = errors_by_position(words).set_index(["group", "position"])
    assert e.loc[("people", 3), "n_reached"] == 3 and e.loc[("people", 3), "n_errors"] == 1
    assert e.loc[("people", 4), "n_reached"] == 2 and e.loc[("model", 2), "error_rate"] == 1.0
    assert ("model", 3) not in e.index
    rs = rt_by_surprisal(kept, words)
    import numpy as np

    # the kept words beside the model's surprisal of the same word (word 2: 4 bits, 3: 8, 4: 6)
    order = kept.sort_values(["subject_id", "condition", "position"])
    assert len(order) == 7 and rs.iloc[0]["n_words"] == 7
    xs = order["position"].map({2: 4.0, 3: 8.0, 4: 6.0}).to_numpy()
    slope, _ = np.polyfit(xs, order["rt_ms"].to_numpy(), 1)
    assert rs.iloc[0]["slope_ms_per_bit"] == pytest.approx(slope)
    assert rs.iloc[0]["pearson_r"] == pytest.approx(np.corrcoef(xs, order["rt_ms"].to_numpy())[0, 1])
