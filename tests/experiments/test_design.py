"""Designs of any shape: Latin-square lists, the file's lists, every item in every
condition, role blocks, max_run, refusals, and the bundled agreement_attraction example.

Counts are made by hand from the `plan --out` tables and the stimulus file, never from the
compiler's own bookkeeping."""
from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from experiments.cli import app
from experiments.design_compiler import compile_sequence
from experiments.spec import SpecError, bundled_spec_path, load_spec
from tests.cli_refusal import refused

runner = CliRunner()
FACTORS = ["head_number", "attractor_number", "grammatical"]
ITEMS_CSV = bundled_spec_path("agreement_attraction").parent / "agreement_attraction_items.csv"


def _plan(spec: str, subject: str, out: Path) -> pd.DataFrame:
    r = runner.invoke(app, ["plan", spec, "-s", subject, "--out", str(out)])
    assert r.exit_code == 0, r.output
    return pd.read_csv(out, dtype=str, keep_default_na=False)


def test_agreement_attraction_latin_square_by_hand(tmp_path):
    """plan -s S01..S08: every subject all 32 items once, each condition 4 times; across the 8
    subjects every item in every condition exactly once; the tables carry item, list, factors."""
    seen: Counter = Counter()
    lists = []
    file_rows = list(csv.DictReader(ITEMS_CSV.open(encoding="utf-8")))
    sentence_of = {(r["item"], r["head_number"], r["attractor_number"], r["grammatical"]): r["sentence"]
                   for r in file_rows if r["role"] == "test"}
    for k in range(1, 9):
        df = _plan("agreement_attraction", f"S0{k}", tmp_path / f"{k}.csv")
        for col in ["item", "list", *FACTORS, "role", "materials"]:
            assert col in df.columns, col
        test = df[df["block"] == "test"]
        practice = df[df["block"] == "practice"]
        assert len(practice) == 8 and set(practice["feedback"]) == {"True"}
        assert set(test["feedback"]) == {"False"}
        assert len(test) == 32
        assert sorted(test["item"], key=int) == [str(i) for i in range(1, 33)]  # every item once
        # the factor columns (grammatical fills the boolean column as True/False)
        cells = Counter(zip(test["head_number"], test["attractor_number"], test["grammatical"], strict=False))
        assert len(cells) == 8 and set(cells.values()) == {4}, cells
        assert set(df["list"]) == {str(k)}  # subject k reads list k (rotation)
        lists.append(int(df["list"].iloc[0]))
        for _, row in test.iterrows():
            g = {"True": "true", "False": "false"}[row["grammatical"]]
            key = (row["item"], row["head_number"], row["attractor_number"], g)
            assert row["words"] == sentence_of[key]  # the trial is the file's row for that condition
            assert row["correct_response"] == ("no_violation" if g == "true" else "violation")
            seen[key] += 1
    assert lists == list(range(1, 9))
    assert len(seen) == 32 * 8 and set(seen.values()) == {1}  # every item x condition exactly once


def test_ninth_subject_wraps_to_list_one_and_sequences_are_deterministic(tmp_path):
    exp = load_spec("agreement_attraction")
    a, b = compile_sequence(exp, "S09"), compile_sequence(exp, "S09")
    assert a.sequence_hash == b.sequence_hash and a.to_json() == b.to_json()
    assert a.design["list"] == 1 and a.design["lists"] == 8
    s1 = compile_sequence(exp, "S01")
    assert sorted(t.item_id for t in a) == sorted(t.item_id for t in s1)  # same list, other order
    assert a.sequence_hash != s1.sequence_hash


def test_max_run_holds_in_the_bundled_spec():
    exp = load_spec("agreement_attraction")
    for k in range(1, 17):
        test = [t for t in compile_sequence(exp, f"P{k}") if t.block == "test"]
        for key, limit in (("grammatical", 3), ("condition", 2)):
            run = best = 0
            prev = None
            for t in test:
                v = t.condition if key == "condition" else t.factor_levels[key]
                run = run + 1 if v == prev else 1
                prev = v
                best = max(best, run)
            assert best <= limit, (k, key, best)


def test_validate_names_kept_columns():
    r = runner.invoke(app, ["validate", "agreement_attraction"], env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    assert "lexical_item" in r.output and "kept" in r.output
    assert "8 list(s) of 32 test trials" in r.output
    exp = load_spec("agreement_attraction")
    t = [t for t in compile_sequence(exp, "S01") if t.role == "test"][0]
    assert t.mat["lexical_item"]  # kept in the trial's materials under its own name


def test_a_kinds_declared_materials_are_no_kept_columns(tmp_path):
    """The material keys are the registered kinds' declared ones (maze's `distractors` has a role); a column
    no kind declares is kept and named."""
    from experiments.design import read_design
    from experiments.tasks.base import registry

    union = {key for k in registry().values() for key in (*k.materials, *k.optional_materials)}
    assert {"distractors", "sentence", "regions", "question_options"} <= union and "lexical_item" not in union
    maze = Path(__file__).parent.parent / "support" / "maze" / "maze.yaml"
    r = runner.invoke(app, ["validate", str(maze)], env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    assert "no role in the task" not in r.output
    (tmp_path / "items.csv").write_text("item,a,sentence,distractors,regions,lexical_item,option_1\n"
                                        "1,x,The cat sat.,dog ran.,The cat | sat.,cat,o\n"
                                        "1,y,The dog sat.,cat ran.,The dog | sat.,dog,o\n", encoding="utf-8")
    assert read_design(tmp_path / "items.csv", {"a": ["x", "y"]}, "all").unknown_columns == ("lexical_item",)


# ---- small designs written here ------------------------------------------------------------------
def _write(tmp_path: Path, rows: list[dict], spec_extra: dict | None = None, factors: dict | None = None,
           name: str = "items.csv", blocks: list | None = None) -> Path:
    cols = list(dict.fromkeys(k for r in rows for k in r))
    with open(tmp_path / name, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    spec = {
        "name": "mini", "seed": 3,
        "design": {"file": name, "factors": factors or {"a": ["x", "y"], "b": ["u", "v"]}},
        "blocks": blocks or [{"name": "test", "role": "test"}],
        "task": {"kind": "violation_detection", "response": "panel",
                 "panel": {"labels": {"violation": "BAD", "no_violation": "GOOD"}}},
        "texts": {"instructions": ["Read."]},
    }
    for k, v in (spec_extra or {}).items():
        spec[k] = v
    path = tmp_path / "mini.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def _crossed(n_items: int, a=("x", "y"), b=("u", "v"), extra: dict | None = None) -> list[dict]:
    return [{"item": f"i{i}", "a": x, "b": y, "sentence": f"item {i} {x} {y}", "answer": "no_violation",
             **(extra or {})} for i in range(1, n_items + 1) for x in a for y in b]


def test_list_column_and_all_modes(tmp_path):
    conds = [("x", "u"), ("x", "v"), ("y", "u"), ("y", "v")]
    rows = []  # the user's own lists: item i in condition i in list 1, condition i+2 in list 2
    for i in range(4):
        for ln, c in ((1, conds[i]), (2, conds[(i + 2) % 4])):
            rows.append({"item": f"i{i}", "a": c[0], "b": c[1], "list": ln, "sentence": f"s {i} {c}",
                         "answer": "no_violation"})
    path = _write(tmp_path, rows, {"design": {"file": "items.csv", "factors": {"a": ["x", "y"], "b": ["u", "v"]},
                                              "lists": "column"}})
    exp = load_spec(path)
    s1, s2, s3 = (compile_sequence(exp, f"S{k}") for k in (1, 2, 3))
    assert (s1.design["list"], s2.design["list"], s3.design["list"]) == (1, 2, 1)
    assert sorted((t.item, t.condition) for t in s1) == [("i0", "x-u"), ("i1", "x-v"), ("i2", "y-u"), ("i3", "y-v")]
    assert sorted((t.item, t.condition) for t in s2) == [("i0", "y-u"), ("i1", "y-v"), ("i2", "x-u"), ("i3", "x-v")]
    from experiments.sources.design_rows import load_design

    assert "every list has each condition equally often" in load_design(exp).summary()
    rows[1]["a"], rows[1]["b"] = "x", "u"  # list 2 now has x-u twice and y-u never
    path = _write(tmp_path, rows, {"design": {"file": "items.csv", "factors": {"a": ["x", "y"], "b": ["u", "v"]},
                                              "lists": "column"}})
    note = load_design(load_spec(path)).summary()
    assert "UNBALANCED" in note and "list 2: x-u 2, x-v 1, y-u 0, y-v 1" in note
    path = _write(tmp_path, _crossed(3), {"design": {"file": "items.csv", "factors": {"a": ["x", "y"], "b": ["u", "v"]},
                                                     "lists": "all"}})
    seq = compile_sequence(load_spec(path), "S1")
    assert len(seq) == 12 and len({t.item_id for t in seq}) == 12 and seq.design["lists"] == 1
    # `all` with a between-item factor: each item in the conditions it has, every row once
    rows = [r for r in _crossed(4) if (r["a"] == "x") == (r["item"] in ("i1", "i2"))]
    path = _write(tmp_path, rows, {"design": {"file": "items.csv", "factors": {"a": ["x", "y"], "b": ["u", "v"]},
                                              "lists": "all"}})
    exp = load_spec(path)
    seq = compile_sequence(exp, "S1")
    assert sorted(t.item_id for t in seq) == sorted(f"{r['item']}:{r['a']}-{r['b']}" for r in rows)
    from experiments.sources.design_rows import load_design

    assert "4 of 4 items are not in every condition" in load_design(exp).summary()


def test_fillers_practice_and_yaml_booleans(tmp_path):
    rows = _crossed(4, b=("true", "false"))
    rows += [{"item": f"f{k}", "role": "filler", "sentence": f"filler {k}", "answer": "violation"} for k in range(3)]
    rows += [{"item": f"p{k}", "role": "practice", "sentence": f"practice {k}", "answer": "no_violation"}
             for k in range(2)]
    blocks = [{"name": "practice", "role": "practice", "feedback": True},
              {"name": "main", "role": "test", "fillers": True, "feedback": False, "max_run": {"b": 2}}]
    path = _write(tmp_path, rows, factors={"a": ["x", "y"], "b": [True, False]}, blocks=blocks)
    exp = load_spec(path)
    assert exp.design.factors["b"] == ["true", "false"]  # YAML booleans as levels: normalised
    seq = compile_sequence(exp, "S2")
    roles = Counter((t.block, t.role) for t in seq)
    assert roles == {("practice", "practice"): 2, ("main", "test"): 4, ("main", "filler"): 3}
    assert [t.block for t in seq][:2] == ["practice", "practice"]
    fill = [t for t in seq if t.role == "filler"][0]
    assert fill.factors == () and fill.study_record.correct_response == "violation" and fill.list_number == 2


def test_generic_session_table_header_resume_and_loader(tmp_path):
    """The writer's header for a design: the core's columns + its factors (no study's column); resume; the
    loader reads it."""
    from analysis.load import load
    from experiments.schema import GENERAL_COLUMN_NAMES, added_columns
    from experiments.session import SessionWriter, session_paths

    exp = load_spec("agreement_attraction")
    seq = compile_sequence(exp, "S05")

    def open_writer(resume: bool) -> SessionWriter:
        return SessionWriter.create(tmp_path, experiment=exp.name, subject_id="S05", session=1, subject_kind="model",
                                    spec_hash=seq.spec_hash, sequence_hash=seq.sequence_hash, n_trials=len(seq),
                                    resume=resume, sequence=seq)

    def row(t):
        return {**t.to_row(), "subject_id": "S05", "subject_kind": "model", "session": 1, "spec_hash": seq.spec_hash,
                "sequence_hash": seq.sequence_hash, "response": t.mat["answer"], "correct": True}

    w = open_writer(False)
    for t in seq.trials[:5]:
        w.append(row(t))
    w.close("aborted")
    csv_path, json_path = session_paths(tmp_path, exp.name, "S05", 1)
    header = csv_path.read_text(encoding="utf-8").splitlines()[0].split(",")
    # the core's columns, its kind's (violation detection's RSVP columns), its factors: none of the study's
    assert header == GENERAL_COLUMN_NAMES + added_columns(["violation_detection"]) + ["head_number", "attractor_number"]
    assert not set(header) & set(LAKRETZ_ONLY[:-1])
    side = json.loads(json_path.read_text(encoding="utf-8"))
    assert side["design"]["list"] == 5 and side["design"]["lists"] == 8 and side["design"]["mode"] == "latin_square"
    assert list(side["design"]["factors"]) == FACTORS
    w = open_writer(True)  # resume: same header, the kept rows are the sequence's first trials
    assert w.n_rows == 5
    for t in seq.trials[5:]:
        w.append(row(t))
    w.close("completed")
    df, _ = load([csv_path])
    assert len(df) == len(seq) == 40
    test = df[df["role"] == "test"]
    assert Counter(zip(test["head_number"], test["attractor_number"], test["grammatical"], strict=False)) == \
        Counter({(h, a, g): 4 for h in ("sg", "pl") for a in ("sg", "pl") for g in (True, False)})
    assert set(df["list"]) == {5} and test["item"].nunique() == 32


# the Lakretz study's columns: only its own sessions' tables carry them
LAKRETZ_ONLY = ("structure", "dependency", "violation_position", "critical_index", "critical_word", "correct_form",
                "alternative_word", "lexicon", "rsvp_units")


def test_a_session_written_with_the_earlier_general_layout_resumes_with_it(tmp_path):
    """A design's session written when general tables led with the Lakretz columns keeps that header when
    resumed, and its new rows hold the values its earlier rows hold (a hand-written copy of them)."""
    import csv as csv_module

    from experiments.session import SessionWriter, session_paths
    from studies.lakretz2021.columns import EARLIER_GENERAL_HEADER

    exp = load_spec("agreement_attraction")
    seq = compile_sequence(exp, "S05")
    earlier = list(EARLIER_GENERAL_HEADER) + ["head_number", "attractor_number"]
    assert seq.table_columns(earlier=True) == earlier and seq.table_columns() != earlier

    def row(t):
        return {**t.to_row(), "subject_id": "S05", "subject_kind": "model", "session": 1, "spec_hash": seq.spec_hash,
                "sequence_hash": seq.sequence_hash, "response": t.mat["answer"], "correct": True}

    w = SessionWriter.create(tmp_path, experiment=exp.name, subject_id="S05", session=1, subject_kind="model",
                             spec_hash=seq.spec_hash, sequence_hash=seq.sequence_hash, n_trials=len(seq),
                             sequence=seq, columns=earlier)  # as an earlier version wrote it
    def by_hand(t):  # what general designs' rows held in the study's columns (a violation item: "other")
        return {"structure": exp.name, "dependency": None, "critical_index": -1, "critical_word": "",
                "violation_position": "other" if t.mat["answer"] == "violation" else "none", "correct_form": "",
                "alternative_word": "", "lexicon": ""}

    for t in seq.trials[:3]:
        w.append({**row(t), **by_hand(t)})
    w.close("aborted")
    csv_path, _ = session_paths(tmp_path, exp.name, "S05", 1)
    w = SessionWriter.create(tmp_path, experiment=exp.name, subject_id="S05", session=1, subject_kind="model",
                             spec_hash=seq.spec_hash, sequence_hash=seq.sequence_hash, n_trials=len(seq),
                             resume=True, sequence=seq)
    assert w.n_rows == 3 and w.columns == earlier
    for t in seq.trials[3:6]:
        w.append(row(t))
    w.close("aborted")
    rows = list(csv_module.DictReader(csv_path.read_text(encoding="utf-8").splitlines()))
    assert csv_path.read_text(encoding="utf-8").splitlines()[0] == ",".join(earlier)
    assert len(rows) == 6
    for r, t in zip(rows, seq.trials, strict=False):
        assert {k: r[k] for k in by_hand(t)} == {k: "" if v is None else str(v) for k, v in by_hand(t).items()}
        assert r["correct_response"] == t.mat["answer"]


def test_lakretz_header_unchanged(tmp_path):
    from experiments.schema import COLUMN_NAMES
    from experiments.session import SessionWriter

    exp = load_spec("lakretz2021_demo")
    seq = compile_sequence(exp, "S01")
    assert seq.design is None and seq.table_columns() == COLUMN_NAMES
    w = SessionWriter.create(tmp_path, experiment=exp.name, subject_id="S01", session=1, subject_kind="model",
                             spec_hash=seq.spec_hash, sequence_hash=seq.sequence_hash, n_trials=len(seq), sequence=seq)
    w.close("aborted")
    assert w.csv_path.read_text(encoding="utf-8").splitlines()[0] == ",".join(COLUMN_NAMES)
    assert "design" not in json.loads(w.json_path.read_text(encoding="utf-8"))


# ---- refusals: exit 2, one clear message naming the file and line -----------------------------------
REFUSALS = [
    ("level with no row", lambda: [r for r in _crossed(4) if r["b"] != "v"], {},
     ["factor 'b'", "'v'", "no test row"]),
    ("item missing a condition", lambda: _crossed(4)[:-1], {}, ["item 'i4'", "no row for condition(s) y-v"]),
    ("duplicate item x condition", lambda: _crossed(4) + [_crossed(4)[0]], {},
     ["line 18", "item 'i1' in condition 'x-u' again (first on line 2)"]),
    ("too few items", lambda: _crossed(3), {}, ["3 item(s) for 4 conditions (a x b): too few items"]),
    ("items not a multiple", lambda: _crossed(5), {}, ["5 items for 4 conditions", "multiple of 4",
                                                       "add 3 or remove 1 item(s)"]),
    ("factor absent from file", lambda: [{k: v for k, v in r.items() if k != "b"} for r in _crossed(4)], {},
     ["items.csv: line 1: no column for factor 'b'"]),
    ("unknown role", lambda: _crossed(4) + [{"item": "z", "role": "warmup", "sentence": "s", "answer": "violation"}],
     {}, ["line 18: role 'warmup' is not one of test, filler, practice"]),
    ("undeclared level", lambda: _crossed(4) + [{"item": "i9", "a": "w", "b": "u", "sentence": "s",
                                                  "answer": "violation"}], {}, ["line 18: a 'w' is not a declared "
                                                                                "level"]),
    ("violation task without answer", lambda: [{**r, "answer": ""} for r in _crossed(4)], {},
     ["needs an `answer` column of violation or no_violation", "line(s) 2, 3"]),
    ("max_run unknown factor", lambda: _crossed(4), {"blocks": [{"name": "t", "role": "test", "max_run": {"zz": 1}}]},
     ["max_run names 'zz'"]),
    ("max_run feasible: never the same level twice", lambda: _crossed(4, a=("x", "y", "z")),
     {"design": {"file": "items.csv", "factors": {"a": ["x", "y", "z"], "b": ["u", "v"]}, "lists": "all"},
      "blocks": [{"name": "t", "role": "test", "max_run": {"b": 1, "a": 1}, "trials": None}]}, None),
    ("lakretz field on a role block", lambda: _crossed(4),
     {"blocks": [{"name": "t", "role": "test", "max_consecutive_violations": 2}]},
     ["max_consecutive_violations: not used by a block with `role`"]),
    ("design and stimuli.file", lambda: _crossed(4), {"stimuli": {"file": "items.csv"}},
     ["either as `design:`", "not both"]),
    ("filler rows no block takes", lambda: _crossed(4) + [{"item": "f1", "role": "filler", "sentence": "s",
                                                           "answer": "violation"}], {},
     ["1 filler row(s) (line(s) 18) but no block takes them", "fillers: true"]),
]


@pytest.mark.parametrize("what,rows,extra,match", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_design_refusals(tmp_path, what, rows, extra, match):
    path = _write(tmp_path, rows(), extra)
    if match is None:  # feasible: every order obeys the limits
        seq = compile_sequence(load_spec(path), "S1")
        for key in ("a", "b"):
            levels = [t.factor_levels[key] for t in seq]
            assert all(x != y for x, y in zip(levels, levels[1:], strict=False)), levels
        return
    with pytest.raises(SpecError) as err:
        load_spec(path)
    for m in match:
        assert m in str(err.value), str(err.value)
    assert str(path) in str(err.value)


def test_refusals_through_the_cli_exit_2(tmp_path):
    path = _write(tmp_path, _crossed(4)[:-1])
    refused("plan", str(path), "-s", "S1", match=["items.csv", "item 'i4'", "y-v"])
    path = _write(tmp_path, _crossed(4), {"design": {"file": "items.csv",
                                                     "factors": {"a": ["x", "y"], "b": ["u", "v"]}},
                                          "blocks": [{"name": "t", "role": "test", "structures": ["single"]}]})
    refused("validate", str(path), match=["blocks.0", "`role` or `structures`"])


def test_max_run_beyond_the_counting_bound_is_refused(tmp_path):
    """3 of 4 trials share a level: no order keeps runs of that level to 1 (3 > 1 x (4 - 3 + 1))."""
    rows = [{"item": f"i{i}", "a": "x", "list": 1, "sentence": "s", "answer": "violation"} for i in range(3)]
    rows.append({"item": "i9", "a": "y", "list": 1, "sentence": "s", "answer": "violation"})
    path = _write(tmp_path, rows, {"design": {"file": "items.csv", "factors": {"a": ["x", "y"]}, "lists": "column"}},
                  blocks=[{"name": "t", "role": "test", "max_run": {"a": 1}}])
    with pytest.raises(SpecError) as err:
        load_spec(path)
    assert "3 of its 4 trials have a = 'x', too many for max_run a: 1" in str(err.value)


def test_max_run_on_item_and_answer_in_a_within_subject_design(tmp_path):
    """lists: all shows each item in 4 conditions: max_run item 1 keeps an item's versions apart, and
    answer 2 bounds runs of the same correct answer (fillers included)."""
    rows = _crossed(6)
    for r in rows:
        r["answer"] = "violation" if r["b"] == "v" else "no_violation"
    rows += [{"item": f"f{k}", "role": "filler", "sentence": "filler", "answer": "violation"} for k in range(4)]
    path = _write(tmp_path, rows, {"design": {"file": "items.csv", "factors": {"a": ["x", "y"], "b": ["u", "v"]},
                                              "lists": "all"}},
                  blocks=[{"name": "t", "role": "test", "fillers": True, "max_run": {"item": 1, "answer": 2}}])
    exp = load_spec(path)
    for sid in ("S1", "S2", "S3"):
        seq = compile_sequence(exp, sid)
        assert len(seq) == 6 * 4 + 4
        items = [t.item for t in seq]
        assert all(x != y for x, y in zip(items, items[1:], strict=False)), items
        answers = [t.study_record.correct_response for t in seq]
        assert all(len(set(answers[i:i + 3])) > 1 for i in range(len(answers) - 2)), answers


def test_tsv_file_with_spreadsheet_booleans_and_an_extra_column(tmp_path):
    """A TSV whose grammatical cells read TRUE/FALSE (a spreadsheet's) matches the levels true/false;
    an extra column is kept in the materials; option_<n> columns become the list `options`."""
    lines = ["item\tgrammatical\tsentence\tanswer\tnote\toption_2\toption_1"]
    for i in range(1, 5):
        for g, ans in (("TRUE", "no_violation"), ("False", "violation")):
            lines.append(f"{i}\t{g}\tsentence {i} {g}\t{ans}\tnote {i}\tb{i}\ta{i}")
    (tmp_path / "items.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    path = _write(tmp_path, [], {"design": {"file": "items.tsv", "factors": {"grammatical": [True, False]}}},
                  name="unused.csv")
    exp = load_spec(path)
    seqs = [compile_sequence(exp, f"S{k}") for k in (1, 2)]
    for seq in seqs:
        assert Counter(t.factor_levels["grammatical"] for t in seq) == {"true": 2, "false": 2}
        for t in seq:
            assert t.mat["note"] == f"note {t.item}" and t.mat["options"] == (f"a{t.item}", f"b{t.item}")
            assert t.to_row()["grammatical"] is (t.factor_levels["grammatical"] == "true")
    both = Counter((t.item, t.condition) for s in seqs for t in s)
    assert len(both) == 8 and set(both.values()) == {1}


def test_violation_items_are_checked_by_the_kind_naming_every_bad_line(tmp_path):
    """the kind's own item check (experiments/tasks/violation_detection.py), not a branch on the
    kind's name in design_rows.py, refuses the file, naming every bad line grouped by what each lacks."""
    rows = _crossed(4)
    for k in (0, 1, 6):  # lines 2, 3 and 8: no answer
        rows[k]["answer"] = ""
    rows[9]["answer"] = "maybe"  # line 11
    rows[12]["sentence"] = ""  # line 14: no sentence
    path = _write(tmp_path, rows)
    with pytest.raises(SpecError) as err:
        load_spec(path)
    msg = str(err.value)
    assert "line(s) 2, 3, 8: task violation_detection needs an `answer` column of violation or no_violation (got '')" \
        in msg, msg
    assert "line 11: task violation_detection needs an `answer` column of violation or no_violation (got 'maybe')" \
        in msg and "line 14: task violation_detection needs a `sentence` on every row" in msg and str(path) in msg
    source = (Path(__file__).resolve().parents[2] / "experiments" / "sources" / "design_rows.py").read_text()
    assert "violation_detection" not in source
