"""What a newcomer reads from the command line: help that wraps at 80 columns without cutting an option's text,
one whole sentence per command in `twinlab --help`, a log without the progress bar's control characters,
validation messages that name the field by its full path with the accepted form, and an answer key that is
also the continue key refused."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
import typer
import yaml

from experiments.spec import SpecError, load_spec

ROOT = Path(__file__).resolve().parents[2]
YESNO = ROOT / "experiments" / "specs" / "acceptability_yesno.yaml"


def twinlab(*args: str, env: dict | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    e = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "experiments.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env=e)


def words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("command", [["run-model"], ["analyze"], ["power"], ["validate"]])
def test_help_at_80_columns_shows_every_option_text_whole(command):
    from experiments.cli import app

    r = twinlab(*command, "--help", env={"COLUMNS": "80"})
    assert r.returncode == 0, r.stderr
    assert "…" not in r.stdout
    assert max(len(line) for line in r.stdout.splitlines()) <= 80 or all(
        " " not in line.strip() for line in r.stdout.splitlines() if len(line) > 80)  # only one unbreakable word
    group = typer.main.get_command(app)
    cmd = group.get_command(click.Context(group), command[0])
    flat = "".join(r.stdout.split())  # wrapping moves text to the next line (at a space or a hyphen), never drops it
    for p in cmd.get_params(click.Context(cmd)):
        if getattr(p, "help", None):
            assert "".join(p.help.split()) in flat, (p.name, p.help)


def test_root_help_gives_each_command_one_whole_sentence_and_no_file_names():
    r = twinlab("--help", env={"COLUMNS": "80"})
    assert r.returncode == 0, r.stderr
    listing = r.stdout.split("Commands:")[1]
    entries: dict[str, str] = {}
    name = None
    for line in listing.splitlines():
        if line.startswith("  ") and not line.startswith("   "):
            name, _, text = line.strip().partition(" ")
            entries[name] = text.strip()
        elif name and line.strip():
            entries[name] += " " + line.strip()
    assert {"validate", "run-model", "analyze", "power", "import", "people-jsonl", "context"} <= set(entries)
    for name, text in entries.items():
        assert text.endswith("."), (name, text)  # whole, never cut with "..."
        assert not text.endswith("..."), (name, text)
        assert ".py" not in text and "model_subjects/" not in text, (name, text)
        assert text.count(". ") == 0, (name, text)  # one sentence
    imp = entries["import"]
    for tool in ("PsychoPy", "jsPsych", "PCIbex", "table", "released"):
        assert tool in imp, imp


def test_a_log_gets_plain_progress_lines_without_control_characters(tmp_path):
    """stderr to a file with FORCE_COLOR set (CI runners set it): rich would write the bar's carriage returns,
    cursor moves and colours into the log; the run's log has plain lines instead."""
    log = tmp_path / "run.log"
    with open(log, "w", encoding="utf-8") as fh:
        r = subprocess.run([sys.executable, "-m", "experiments.cli", "run-model", "lakretz2021_demo", "--trials", "3",
                            "-o", str(tmp_path / "s")], cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT, timeout=600,
                           env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "FORCE_COLOR": "1",
                                "PYTHONPATH": str(ROOT)})
    text = log.read_text(encoding="utf-8")
    assert r.returncode == 0, text
    assert "\x1b" not in text and "\r" not in text, repr(text[:400])
    assert "3/3 trials" in text and "ran 3 trial(s)" in text


def test_plain_progress_writes_lines_at_the_end_of_each_task(monkeypatch, tmp_path):
    from experiments.cli_common import PlainProgress, progress_bar, stderr_console

    monkeypatch.setenv("FORCE_COLOR", "1")
    with open(tmp_path / "err.txt", "w", encoding="utf-8") as fh:
        monkeypatch.setattr(sys, "stderr", fh)
        assert not stderr_console().is_terminal
        bar = progress_bar("trials")
        assert isinstance(bar, PlainProgress)
        with bar:
            t = bar.add_task("fits", total=4)
            for _ in range(4):
                bar.advance(t)
    assert (tmp_path / "err.txt").read_text(encoding="utf-8") == "fits: 4/4 trials, 0 s (done)\n"


def _spec(tmp_path: Path, edit) -> Path:
    data = yaml.safe_load(YESNO.read_text(encoding="utf-8"))
    data["design"]["file"] = str(YESNO.with_name("acceptability_yesno_items.csv"))
    edit(data)
    p = tmp_path / "study.yaml"
    p.write_text(yaml.safe_dump(data), encoding="utf-8")
    return p


def _refusal(tmp_path: Path, edit) -> str:
    with pytest.raises(SpecError) as e:
        load_spec(_spec(tmp_path, edit))
    return str(e.value)


def test_missing_texts_names_texts_instructions_with_an_example(tmp_path):
    msg = _refusal(tmp_path, lambda d: d.pop("texts"))
    assert "texts.instructions: Field required" in msg and "instructions: [" in msg, msg


def test_labels_as_a_mapping_shows_the_list_form(tmp_path):
    def edit(d):
        d["task"]["labels"] = {"yes": "Acceptable", "no": "Not acceptable"}
    msg = _refusal(tmp_path, edit)
    assert "task.labels:" in msg and "labels: [{value: yes, text: Yes, key: f}" in msg, msg
    assert "task: labels" not in msg


def test_a_keys_setting_says_where_keys_go(tmp_path):
    def edit(d):
        d["task"]["keys"] = {"yes": "f", "no": "j"}
    msg = _refusal(tmp_path, edit)
    assert "task.keys: unknown field" in msg and "a label's `key`" in msg and "option_keys: [f, j]" in msg, msg


def test_a_wrong_nested_value_names_its_full_path_and_form(tmp_path):
    def edit(d):
        d["task"]["labels"][0] = "yes"
    msg = _refusal(tmp_path, edit)
    assert "task.labels.0:" in msg and "{value: yes, text: Yes, key: f}" in msg, msg


def test_the_command_line_shows_brackets_of_the_accepted_form(tmp_path):
    def edit(d):
        d["task"]["keys"] = {"yes": "f"}
    r = twinlab("validate", str(_spec(tmp_path, edit)))
    assert r.returncode == 2 and "option_keys: [f, j]" in r.stderr, r.stderr


@pytest.mark.parametrize("edit,field", [
    (lambda d: d["task"]["labels"][0].update(key="space"), "task.labels"),
    (lambda d: (d["task"].update(response_key="j")), "task.labels"),
])
def test_an_answer_key_equal_to_the_continue_key_is_refused_naming_both(tmp_path, edit, field):
    msg = _refusal(tmp_path, edit)
    assert field in msg and "task.response_key" in msg and "continue key" in msg, msg


def test_a_choice_key_on_the_continue_key_is_refused_by_validate(tmp_path):
    spec = ROOT / "experiments" / "specs" / "minimal_pairs_2afc.yaml"
    data = yaml.safe_load(spec.read_text(encoding="utf-8"))
    data["design"]["file"] = str(spec.with_name("minimal_pairs_2afc_items.csv"))
    data["task"]["option_keys"] = ["space", "j"]
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump(data), encoding="utf-8")
    r = twinlab("validate", str(p))
    assert r.returncode == 2 and "task.option_keys" in r.stderr and "task.response_key" in r.stderr, r.stderr


def test_violation_detection_answers_with_the_continue_key_as_designed():
    assert load_spec("lakretz2021_demo").task.response_key == "space"
