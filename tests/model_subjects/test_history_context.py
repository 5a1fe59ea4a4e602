"""A model's running history reads as a person's -- every earlier trial shows the question, the
answer given in the task's words, then the feedback -- for `direct` as for `meta`; `twinlab context` prints
the exact text a trial read, verified against the row's hash. Run with the bundled model on the bundled
acceptability_yesno spec (2 practice trials with feedback, then test trials without)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.model]
ROOT = Path(__file__).resolve().parents[2]
WORDS = {"yes": "Acceptable", "no": "Not acceptable"}
PAIRS = [("The key to the cabinets is rusty.", "The key to the cabinets are rusty."),
         ("The dogs near the house bark.", "The dogs near the house barks."),
         ("The girl with the books sings.", "The girl with the books sing."),
         ("The cars in the street are fast.", "The cars in the street is fast.")]
SPEC_TEXT = """name: history_yesno
description: Yes/no judgments with minimal pairs, a practice block with feedback, then a test block.
seed: 4
design:
  file: items.csv
  factors:
    grammatical: ["true", "false"]
  lists: latin_square
blocks:
  - {name: practice, role: practice, feedback: true, shuffle: false}
  - {name: test, role: test, feedback: false}
task:
  kind: judgment
  presentation: whole
  question: "Is this sentence acceptable English?"
  labels:
    - {value: "yes", text: "Acceptable", key: f}
    - {value: "no", text: "Not acceptable", key: j}
texts:
  instructions:
    - "Decide whether each sentence is acceptable English."
"""


def write_spec(folder: Path) -> Path:
    import csv

    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "items.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["item", "grammatical", "role", "sentence", "pair_sentence", "answer"])
        for i, (good, bad) in enumerate(PAIRS, 1):
            role = "practice" if i <= 2 else "test"
            w.writerow([i, "true", role, good, bad, "yes"])
            w.writerow([i, "false", role, bad, good, "no"])
    (folder / "spec.yaml").write_text(SPEC_TEXT, encoding="utf-8")
    return folder / "spec.yaml"


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    from model_subjects.backends.registry import load_backend
    from model_subjects.runner import RunConfig, run_models

    out = tmp_path_factory.mktemp("hist")
    spec = write_spec(out / "spec")
    backend = load_backend(None, threads=1)
    for proto in ("direct", "meta"):
        run_models(RunConfig(spec=str(spec), out=out / proto, context="running", protocol=proto), backend)
    return out


def _session(sessions: Path, proto: str) -> Path:
    return next((sessions / proto).rglob("*_data.csv"))


@pytest.mark.parametrize("proto", ["direct", "meta"])
def test_every_earlier_trial_shows_its_answer_before_its_feedback(sessions, proto):
    from experiments.session import read_rows
    from model_subjects.show_context import session_context

    path = _session(sessions, proto)
    rows = read_rows(path)
    last = len(rows) - 1  # 4 practice trials, then the test trials
    got = session_context(path, last, sessions / "spec" / "spec.yaml")
    text = got["text"]
    assert got["sha256"] == json.loads(rows[last]["extra"])["context_sha256"] and last >= 5
    pos = 0
    for r in rows[:last]:
        sentence = json.loads(r["materials"])["sentence"]
        q = text.index(sentence, pos)
        block = text[q:].split("\n")
        assert block[1].startswith("Is this sentence acceptable English?")  # the question
        answer = f"Answer: {WORDS[r['response']]}"  # the label the subject chose, in the task's words
        a = text.index(answer, q)
        pos = a + len(answer)
        if r["feedback_text"]:
            assert text[pos:].startswith("\n" + r["feedback_text"] + "\n")  # the feedback right after the answer
    # practice gives feedback, the test none
    assert all(bool(r["feedback_text"]) == (r["block"] == "practice") for r in rows) and rows[0]["feedback_text"]


def test_the_person_replay_entry_takes_the_persons_answer(sessions):
    """The history entry is a function of the answer: a person's answer in place of the model's."""
    from experiments.session import read_rows
    from experiments.spec import load_spec
    from experiments.trials import Trial
    from model_subjects.context import history_entry, protocol_for

    exp = load_spec(sessions / "spec" / "spec.yaml")
    row = read_rows(_session(sessions, "direct"))[0]
    trial = Trial.from_dict({**row, "feedback": True, "trial_index": 0, "block_trial_index": 0, "critical_index": -1},
                            factor_names=list(exp.design.factors))
    for proto in ("direct", "judgment:meta"):
        p = protocol_for(exp, proto)
        for answer in ("yes", "no"):
            e = history_entry(p, trial, answer, "Correct!")
            assert e.question.endswith("Answer:") and e.answer == " " + WORDS[answer] and e.feedback == "Correct!"


def test_context_command_prints_the_verified_text_and_refuses_a_changed_row(sessions, tmp_path):
    path = _session(sessions, "meta")
    spec = ["--spec", str(sessions / "spec" / "spec.yaml")]
    env_cmd = [sys.executable, "-m", "experiments.cli", "context", str(path), "--trial", "2"] + spec
    p = subprocess.run(env_cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "verified" in p.stderr and "Is this sentence acceptable English?" in p.stdout
    # a row whose recorded answer was edited no longer rebuilds to the recorded hash: refused, exit 2
    import csv

    bad = tmp_path / path.name
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        rows, fields = list(reader), reader.fieldnames
    extra = json.loads(rows[0]["extra"])
    extra["answer_text"] = " Not acceptable" if extra["answer_text"] == " Acceptable" else " Acceptable"
    rows[0]["extra"] = json.dumps(extra)
    with open(bad, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    bad.with_suffix(".json").write_text(path.with_suffix(".json").read_text(encoding="utf-8"), encoding="utf-8")
    p = subprocess.run(env_cmd[:4] + [str(bad), "--trial", "2"] + spec, cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 2 and "does not match" in p.stdout + p.stderr and "Traceback" not in p.stderr


def test_rebuild_contexts_takes_the_recorded_protocol_names():
    from experiments.spec import bundled_spec_path, load_spec
    from model_subjects.context import protocol_for
    from model_subjects.protocols import get_protocol

    exp = load_spec(bundled_spec_path("acceptability_yesno"))
    assert protocol_for(exp, "judgment:meta").name == protocol_for(exp, "meta").name == "judgment:meta"
    assert get_protocol("judgment:meta", task=exp.task).name == "judgment:meta"


def test_lakretz_direct_histories_show_the_question_and_the_chosen_answer():
    """The Lakretz `direct` (and Hu & Levy's sentence_judgment:Direct) read the sentence; their history
    entry asks the task's question and gives the answer the log-probabilities chose; a person's response
    value becomes the words of the question protocols (a replay)."""
    from experiments.design_compiler import compile_sequence
    from experiments.spec import bundled_spec_path, load_spec
    from kinds.violation_detection.model import QUESTION
    from model_subjects.context import history_entry
    from model_subjects.protocols import get_protocol

    exp = load_spec(bundled_spec_path("lakretz2021_demo"))
    trial = next(t for t in compile_sequence(exp, "m01", 0).trials if t.study_record.critical_index >= 0)
    for name in ("direct", "sentence_judgment:Direct"):
        e = history_entry(get_protocol(name), trial, "violation", "Wrong!", answer_text=" ignored")
        assert e.question == f"{trial.sentence}\n{QUESTION}\nAnswer:" and e.answer == " Yes" and e.feedback == "Wrong!"
        assert history_entry(get_protocol(name), trial, "no_violation", None).answer == " No"
        # a v2 session is rebuilt as it was run: the sentence read, no answer
        old = history_entry(get_protocol(name), trial, "violation", "Wrong!", " x", rule="twinlab-context-v2")
        assert old.answer == " x"
    # question protocols keep the model's own answer text; a person's response is put in the same words
    vj = get_protocol("violation_judgment")
    assert history_entry(vj, trial, "violation", None, " Yes").answer == " Yes"
    assert history_entry(vj, trial, "no_violation", None).answer == " No"
