"""`twinlab reproduce`: bad arguments fail cleanly before any model is loaded; the plan follows the paper."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from experiments.cli import app
from reproductions.common import ReproError
from reproductions.lampinen2024 import Options, arms_for, column_condition, plan_subtasks
from stimuli.files import save_items
from studies.lakretz2021.texts import import_lakretz_text

DATA = Path(__file__).parent.parent / "data" / "lakretz_text"


def flat(res) -> str:
    return " ".join(res.output.split())


@pytest.mark.parametrize("args,expected", [
    (["--prompts", "none,fivehot"], "--prompts: unknown 'fivehot'"),
    (["--dependency", "middle"], "--dependency must be inner or outer"),
    (["--items", "nowhere.csv"], "nowhere.csv: does not exist"),
    (["--items-per-condition", "0"], "--items-per-condition must be at least 1"),
    (["--humans", "no_humans_here"], "--humans: no_humans_here: no such file or folder"),
])
def test_lampinen_bad_arguments_exit_2_without_loading_a_model(tmp_path, args, expected):
    loaded = "torch" in sys.modules
    res = CliRunner().invoke(app, ["reproduce", "lampinen2024", "--out", str(tmp_path / "o"), "-q"] + args)
    assert res.exit_code == 2, res.output
    assert expected in flat(res) and "Traceback" not in res.output
    assert loaded or "torch" not in sys.modules


@pytest.mark.parametrize("paper", ["lampinen2024", "hu-levy2023", "hu-frank2024"])
@pytest.mark.parametrize("batch", [[], ["--batch-size", "auto"], ["--batch-size", "AUTO"], ["--batch-size", "8"]])
def test_a_missing_model_is_one_clean_error(tmp_path, paper, batch):
    """Every batch size run-model takes (a number or auto) passes the options: the model is what fails."""
    res = CliRunner().invoke(app, ["reproduce", paper, "--out", str(tmp_path / "o"), "-n", "1", "-q",
                                   "--model", str(tmp_path / "no_such_model")] + batch)
    assert res.exit_code == 2 and "no_such_model' does not exist" in flat(res) and "Traceback" not in res.output


def test_out_must_be_a_folder(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    res = CliRunner().invoke(app, ["reproduce", "lampinen2024", "--out", str(f)])
    assert res.exit_code == 2 and "is a file" in flat(res)


def test_default_plan_is_the_papers_grid(tmp_path):
    opt = Options(models=[None], out=tmp_path, items_per_condition=3)
    subtasks = plan_subtasks(opt)
    assert [s.name for s in subtasks] == ["long_nested_inner_english", "long_nested_outer_english",
                                          "long_nested_inner_english_harder_more_center_distractors",
                                          "long_nested_inner_english_harder_more_depth"]
    assert all(s.n_per_condition == 3 and len(s.conditions) == 8 for s in subtasks)
    arms = arms_for(opt, None, subtasks)
    per_subtask = {s.name: sorted(a.context for a in arms if a.labels["subtask"] == s.name) for s in subtasks}
    # inner: none + 3 two-shot + 3 eight-shot + 3 recombined + 9 interpolated; outer: none + 3 + 3; harder: 3 each
    assert [len(v) for v in per_subtask.values()] == [19, 7, 3, 3]
    assert "fewshot:interp_8" in per_subtask["long_nested_inner_english"]
    assert per_subtask["long_nested_inner_english_harder_more_depth"] == [f"fewshot:eightshot_{x}" for x in "abc"]
    assert column_condition("long_nested_deeper", "PPSP") == "PSP"
    only_outer = plan_subtasks(Options(models=[None], out=tmp_path / "b", items_per_condition=2, dependency="outer",
                                       prompts=["none", "eightshot_b"]))
    assert [(s.name, s.prompts) for s in only_outer] == [("long_nested_outer_english", ("none", "eightshot_b"))]


def test_items_files_give_subtasks_by_their_critical_verb_and_equal_conditions(tmp_path):
    inner = import_lakretz_text(DATA / "long_nested_inner_english.text", DATA / "long_nested_inner_english.gold")
    f = save_items(inner[:-1], tmp_path / "inner.csv")  # PPP now has one item fewer
    subtasks = plan_subtasks(Options(models=[None], out=tmp_path / "o", items=[f]))
    assert [(s.name, s.n_per_condition) for s in subtasks] == [("long_nested_inner_english", 1)]
    assert subtasks[0].notes and "using 1 per condition" in subtasks[0].notes[0]
    with pytest.raises(ReproError, match="no items with an outer verb"):
        plan_subtasks(Options(models=[None], out=tmp_path / "p", items=[f], dependency="outer"))


@pytest.mark.parametrize("paper", ["lampinen2024", "hu-levy2023", "hu-frank2024"])
@pytest.mark.parametrize("args,expected", [
    (["--threads", "-1"], "--threads must be from 0 to 1024"),
    (["--device", "tpu"], "--device must be cpu, cuda"),
    (["--dtype", "int8"], "--dtype must be one of"),
    (["--batch-size", "0"], "--batch-size must be from 1"),
    (["--batch-size", "many"], "--batch-size must be a positive whole number or 'auto'"),
])
def test_runner_options_follow_run_models_rules_before_any_model_loads(tmp_path, paper, args, expected):
    """The same rules as `run-model` (experiments/options.py), checked before a model is loaded."""
    res = CliRunner().invoke(app, ["reproduce", paper, "--out", str(tmp_path / "o"), "-q",
                                   "--model", str(tmp_path / "no_such_model")] + args)
    assert res.exit_code == 2 and expected in flat(res) and "Traceback" not in res.output
    assert not (tmp_path / "o").exists()
