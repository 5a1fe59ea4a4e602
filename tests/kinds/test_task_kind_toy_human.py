"""A kind brings its hooks: a toy kind installed by this test only (tests/support/kinds/colour_toy/, with a
setting no built-in kind has) is taken by `validate` and the spec (its setting checked, hashed, refused
for other kinds and when the kind is not registered), gets its PsychoPy unit, answers, keys and plan,
and appears in the page's payload with its own labels and keys; the server derives its row by the one
rule. Nothing in twinlab names it (the model runner and the report are tested on their side)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

from experiments.session import read_rows
from experiments.spec import SpecError, load_spec, parse_spec

sys.path.insert(0, str(Path(__file__).parent.parent / "support"))
import toy_kinds  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def toy(tmp_path):
    from experiments.tasks import get_task

    with toy_kinds.installed("colour_toy", tmp_path / "site"):
        yield get_task("colour_toy")


def _seq(exp):
    from experiments.design_compiler import compile_sequence

    return compile_sequence(exp, "p01", 1)


def test_validate_and_the_spec_take_the_toys_own_setting(toy, tmp_path):
    from experiments.cli import app

    p = toy_kinds.toy_spec(tmp_path)
    r = CliRunner().invoke(app, ["validate", str(p)])
    assert r.exit_code == 0, r.output
    assert "task=colour_toy" in r.output and "runners: PsychoPy (run-human), the browser (web)" in r.output
    exp = load_spec(p)
    assert exp.task.given_settings() == {"colour_text": "A colour", "question": "Colour?"}
    assert exp.task.settings().colour_text == "A colour" and exp.task.settings().other_text == "Other"
    from experiments.spec_model import Task

    assert Task.model_validate(exp.task.model_dump()) == exp.task  # a dumped Task holds its kind's settings
    # the kind's own setting is hashed where the spec gives it, as the built-in kinds' are
    other = load_spec(toy_kinds.toy_spec(tmp_path, {"kind": "colour_toy", "colour_text": "Colourful",
                                                    "question": "Colour?"}))
    assert other.spec_hash != exp.spec_hash
    # its key check is the kind's own; its setting is no other kind's
    with pytest.raises(SpecError, match="task.colour_key: .*'escape' is the quit key"):
        load_spec(toy_kinds.toy_spec(tmp_path, {"kind": "colour_toy", "colour_key": "escape"}))
    data = {"name": "j", "task": {"kind": "judgment", "colour_text": "x"}, "texts": {"instructions": ["x"]}}
    with pytest.raises(SpecError, match="colour_text: not a setting of task kind 'judgment'"):
        parse_spec(data)


def test_without_the_toy_its_setting_is_an_unknown_field():
    data = {"name": "j", "task": {"kind": "judgment", "colour_text": "x"}, "texts": {"instructions": ["x"]}}
    with pytest.raises(SpecError, match="task.colour_text: unknown field"):
        parse_spec(data)


def test_psychopy_presents_the_toy_with_its_answers_keys_and_plan(toy, tmp_path):
    from experiments.tasks.record import answers, derive, plan
    from participants.tasks import PSYCHOPY, settings_for

    exp = load_spec(toy_kinds.toy_spec(tmp_path))
    seq = _seq(exp)
    assert "colour_toy" in PSYCHOPY and PSYCHOPY["colour_toy"].__name__ == "kinds.judgment.view"
    t = seq[0]
    s = settings_for(exp, t)
    assert [(a.value, a.label, a.key) for a in answers(t, s)] == [("colour", "A colour", "c"), ("other", "Other", "m")]
    assert s.question == "Colour?"
    for _i, trial in enumerate(seq):  # the autopilot's presses, derived back by the one rule, are its intention
        p = plan(trial, s, None, seed="x", accuracy=1.0)
        (at, key), = p.phases["answer"]
        raw = {"response_onset": 100.0, "presses": [{"key": key, "t": 100.0 + at * 1000}], "pointers": [],
               "answered_by": f"key:{key}", "answer_time": 100.0 + at * 1000}
        out = derive(trial, s, None, raw)
        assert out["response"] == p.intended == trial.mat["answer"] and out["correct"] is True


def test_the_page_payload_and_the_server_present_the_toy(toy, tmp_path):
    from participants.web.payload import BROWSER_KINDS, sequence_payload
    from participants.web.results import web_task_row

    exp = load_spec(toy_kinds.toy_spec(tmp_path))
    seq = _seq(exp)
    assert "colour_toy" in BROWSER_KINDS
    pay = sequence_payload(seq, exp=exp)
    first = pay["trials"][0]
    view = first["view"]
    assert first["task"] == "colour_toy" and view["builder"] == "judgment" and view["question"] == "Colour?"
    assert [(a["label"], a["key"]) for a in view["answers"]] == [("A colour", "c"), ("Other", "m")]
    assert [a["correct"] for a in view["answers"]] == [seq[0].mat["answer"] == "colour",
                                                       seq[0].mat["answer"] == "other"]
    # the page's record of a right answer becomes the row the PsychoPy runner would write
    t = seq[0]
    key = "c" if t.mat["answer"] == "colour" else "m"
    now = datetime.now(timezone.utc).isoformat()
    raw = {"presses": [{"key": key, "t": 640.5}], "pointers": [], "response_onset": 150.0,
           "answered_by": f"key:{key}", "answer_time": 640.5}
    rec = {"trial_index": t.trial_index, "item_id": t.item_id, "task": "colour_toy", "frame_ms": 1000 / 60, "raw": raw,
           "word_onsets": [], "feedback_onset": 660.0, "iti_onset": 900.0, "end": 1000.0,
           "feedback_text": exp.feedback.correct_text, "started_at": now, "ended_at": now}
    assert exp.feedback.correct_text  # (the spec language's, filled in on load)
    row = web_task_row(rec, t, seq, exp, subject_id="p01", session=1)
    assert (row["task"], row["response"], row["correct"], row["rt_ms"]) == ("colour_toy", t.mat["answer"], True, 490.5)


@pytest.mark.gui
@pytest.mark.slow
@pytest.mark.long
def test_a_two_trial_psychopy_session_of_the_toy(tmp_path):
    """run-human, in a real window under Xvfb, with the toy installed as a package (its entry point on the child
    process's path)."""
    if shutil.which("xvfb-run") is None:
        pytest.skip("xvfb-run is not installed")
    spec, out, shots = toy_kinds.toy_spec(tmp_path), tmp_path / "data", tmp_path / "shots"
    code = "from experiments.cli import app; app()"  # the toy found as an installed package is
    args = ["xvfb-run", "-a", "-s", "-screen 0 1280x1024x24", sys.executable, "-c", code, "run-human", str(spec),
            "--participant", "autopilot1", "--out", str(out), "--autopilot", "--autopilot-accuracy", "1.0",
            "--trials", "2", "--screenshots", str(shots), "--allow-refresh-mismatch"]
    env = {**os.environ, "PYTHONPATH": f"{toy_kinds.pythonpath('colour_toy', tmp_path / 'site')}:{ROOT}"}
    r = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    csv = next(out.rglob("*_data.csv"))
    rows = read_rows(csv)
    assert [row["task"] for row in rows] == ["colour_toy", "colour_toy"]
    assert all(row["response"] in ("colour", "other") and row["correct"] in ("True", True) for row in rows)
    assert any("colour_toy" in f.name for f in shots.rglob("*.png"))


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.long
def test_a_session_of_the_toy_in_chromium(toy, tmp_path):
    """The page presents the toy with the judgment's builder; its rows are the autopilot's intended answers."""
    chromium = "/usr/bin/chromium"
    if not Path(chromium).exists():
        pytest.skip(f"Debian's chromium is not installed ({chromium})")
    sync_api = pytest.importorskip("playwright.sync_api")
    from task_server import ThreadedServer

    from experiments.session import session_paths
    from experiments.tasks.record import plan
    from participants.tasks import settings_for
    from participants.web.server import create_app

    exp = load_spec(toy_kinds.toy_spec(tmp_path))
    pid = "autopilot1"
    with ThreadedServer(create_app(exp, tmp_path / "web"), start_timeout_s=20.0, stop_timeout_s=10.0) as srv, \
            sync_api.sync_playwright() as p:
        from experiments.design_compiler import compile_sequence

        seq = compile_sequence(exp, pid, exp.seed)
        b = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        page = b.new_page(viewport={"width": 1024, "height": 768})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{srv.url}/?participant={pid}")
        page.wait_for_function("() => (document.body.dataset.screen || '').startsWith('instructions')", timeout=30_000)
        page.wait_for_timeout(350)
        page.keyboard.press(" ")
        intended = []
        for t in seq:
            pl = plan(t, settings_for(exp, t), None, seed=pid, accuracy=0.75)
            intended.append(pl.intended)
            page.wait_for_function(f"() => {{ const s = document.querySelector('.tl-stage'); return !!s && "
                                   f"+s.dataset.trial === {t.trial_index} && s.dataset.screen === 'colour_toy'; }}",
                                   timeout=20_000)
            labels = page.evaluate("() => [...document.querySelectorAll('.tl-stage .tl-box')].map(e => e.innerText)")
            assert any("A colour" in x for x in labels) and any("Other" in x for x in labels), labels
            page.wait_for_timeout(150)
            page.keyboard.press(pl.phases["answer"][0][1])
        page.wait_for_function("() => document.body.dataset.screen === 'end'", timeout=30_000)
        b.close()
    assert not errors, errors
    rows = read_rows(session_paths(tmp_path / "web", exp.name, pid, 1)[0])
    assert [r["task"] for r in rows] == ["colour_toy"] * len(seq)
    assert [r["response"] for r in rows] == intended


def test_the_toys_parts_are_found_through_the_one_registry(toy):
    """The toy is one folder: its task part is found by name, it has no view or page of its own (the judgment's
    present it), and the layers' registries all read the same discovery; without the folder it is unknown."""
    from experiments.kinds import kind_file, kind_names, kind_part
    from model_subjects.tasks.registry import model_kinds
    from participants.web.site import kind_pages

    assert "colour_toy" in kind_names() and kind_part("colour_toy", "task").KIND is toy
    assert kind_part("colour_toy", "view") is None and kind_file("colour_toy", "page.js") is None
    assert "kind-colour_toy.js" not in kind_pages() and "colour_toy" not in model_kinds()


def test_without_the_folder_the_toy_is_unknown():
    from experiments.kinds import kind_names
    from experiments.tasks import TaskError, get_task

    assert "colour_toy" not in kind_names()
    with pytest.raises(TaskError, match="unknown task kind 'colour_toy'"):
        get_task("colour_toy")
