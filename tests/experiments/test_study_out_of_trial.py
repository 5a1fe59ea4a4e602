"""The study stays out of the core's trial: `Trial` names none of the Lakretz study's columns (they are behind the
study's record adapter, `Trial.study_record`), and a newcomer's own yes/no judgment study gets a plan and a
session table without them, while a Lakretz plan keeps its columns byte for byte."""
from __future__ import annotations

import ast
import csv
import subprocess
import sys
from pathlib import Path

import yaml

from experiments.design_compiler import compile_sequence
from experiments.spec import load_spec
from experiments.trials import Trial

ROOT = Path(__file__).resolve().parents[2]
LAKRETZ_COLUMNS = ("structure", "dependency", "violation_position", "critical_index", "critical_word", "correct_form",
                   "alternative_word", "lexicon", "rsvp_units")


def test_trial_names_no_lakretz_column():
    names = set(dir(Trial))
    assert not names & set(LAKRETZ_COLUMNS), names & set(LAKRETZ_COLUMNS)
    source = (ROOT / "experiments" / "trials.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    words = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | \
        {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)} | \
        {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    assert not words & set(LAKRETZ_COLUMNS), words & set(LAKRETZ_COLUMNS)


def test_a_lakretz_trial_reads_its_record_through_the_study():
    seq = compile_sequence(load_spec("lakretz2021_demo"), "S01")
    t = next(t for t in seq if t.study_record.violation_position != "none")
    r = t.study_record
    assert type(r).__module__ == "studies.lakretz2021.materials"
    assert t.words[r.critical_index].rstrip(".") == r.critical_word != r.correct_form
    row = t.to_row()
    assert [k for k in row if k in LAKRETZ_COLUMNS] == [c for c in LAKRETZ_COLUMNS if c in row]  # its own order
    assert row["structure"] == r.structure and row["critical_word"] == r.critical_word


def own_judgment_study(tmp: Path) -> Path:
    """A newcomer's yes/no acceptability study: a design file of items, the judgment kind."""
    rows = ["1,good,The keys are on the table.,yes", "1,bad,The keys is on the table.,no",
            "2,good,The dogs bark at night.,yes", "2,bad,The dogs barks at night.,no",
            "3,good,The girl sings well.,yes", "3,bad,The girl sing well.,no",
            "4,good,The boys play outside.,yes", "4,bad,The boys plays outside.,no"]
    (tmp / "items.csv").write_text("item,form,sentence,answer\n" + "\n".join(rows) + "\n", encoding="utf-8")
    data = {"name": "my_judgments", "seed": 7,
            "design": {"file": "items.csv", "factors": {"form": ["good", "bad"]}, "lists": "latin_square"},
            "blocks": [{"name": "test", "role": "test", "feedback": False}],
            "task": {"kind": "judgment", "labels": [{"value": "yes", "text": "Yes"}, {"value": "no", "text": "No"}]},
            "texts": {"instructions": ["Is each sentence good English?"]}}
    p = tmp / "my_judgments.yaml"
    p.write_text(yaml.safe_dump(data), encoding="utf-8")
    return p


def plan_header(spec: Path | str, out: Path) -> list[str]:
    run = subprocess.run([sys.executable, "-m", "experiments.cli", "plan", str(spec), "--subject", "s01", "--out",
                          str(out)], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    return next(csv.reader(out.read_text(encoding="utf-8").splitlines()))


def test_a_judgment_studys_plan_and_session_table_have_no_lakretz_column(tmp_path):
    spec = own_judgment_study(tmp_path)
    header = plan_header(spec, tmp_path / "plan.csv")
    assert not set(header) & set(LAKRETZ_COLUMNS), header
    assert {"item", "list", "task", "role", "materials", "form", "correct_response"} <= set(header)
    seq = compile_sequence(load_spec(spec), "s01")
    assert not set(seq.table_columns()) & set(LAKRETZ_COLUMNS)
    assert not set(plan_header("acceptability_yesno", tmp_path / "bundled.csv")) & set(LAKRETZ_COLUMNS)


def test_a_lakretz_plan_keeps_its_columns(tmp_path):
    header = plan_header("lakretz2021_demo", tmp_path / "plan.csv")
    assert header == ["subject_id", "spec_hash", "sequence_hash", "experiment", "block", "trial_index",
                      "block_trial_index", "item_id", "structure", "condition", "dependency", "violation_position",
                      "words", "critical_index", "critical_word", "correct_form", "alternative_word",
                      "correct_response", "feedback", "lexicon", "rsvp_units", "grammatical"]
