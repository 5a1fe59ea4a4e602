"""`twinlab context` rebuilds every trial's context by the run's own rule and verifies it against the
hash the run recorded: every bundled example (running with `direct`/`meta`, `none`, few-shot), a spec with
block intros that say `{trials}`, instructions of several screens and its own feedback texts (also resumed
with another --trials), a second session, and replays (the person's history). A session of a spec that is
not bundled reads the spec from the path the run recorded while it still holds the session's hash; a changed
file, a non-numeric trial_index or an `extra` cell that is not JSON is refused naming what is wrong.

Short sessions of the bundled model (the shared `bundled_backend`): a few trials per spec, enough to cross
into the second block where the first is short."""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "support"))
from twins_people import write_people  # noqa: E402

from experiments.session import read_rows  # noqa: E402
from experiments.spec import load_spec  # noqa: E402

pytestmark = [pytest.mark.model, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
BUNDLED = sorted(p.stem for p in (ROOT / "experiments" / "specs").glob("*.yaml"))
PAIRS = [("The key to the cabinets is rusty.", "The key to the cabinets are rusty."),
         ("The dogs near the house bark.", "The dogs near the house barks."),
         ("The girl with the books sings.", "The girl with the books sing."),
         ("The cars in the street are fast.", "The cars in the street is fast."),
         ("The boy near the trees runs.", "The boy near the trees run."),
         ("The cats behind the door sleep.", "The cats behind the door sleeps.")]
PAGES = ["Decide whether each sentence is acceptable English.", "You will first train, then be tested.",
         "Press SPACE to begin."]
SPEC_TEXT = """name: grammar_intro
seed: 4
design:
  file: items.csv
  factors:
    grammatical: ["true", "false"]
  lists: latin_square
blocks:
  - {name: practice, role: practice, feedback: true, shuffle: false, intro_text: "Training: {trials} sentences."}
  - {name: test, role: test, feedback: false, intro_text: "Test: {trials} sentences, no feedback."}
feedback:
  correct_text: "Right, well done."
  incorrect_text: "No, that was wrong."
task:
  kind: judgment
  presentation: whole
  question: "Is this sentence acceptable English?"
  labels:
    - {value: "yes", text: "Acceptable", key: f}
    - {value: "no", text: "Not acceptable", key: j}
texts:
  instructions:
""" + "".join(f'    - "{p}"\n' for p in PAGES)


def write_intro_spec(folder: Path) -> Path:
    """Two practice items (4 rows, feedback) then four test items (Latin square: 4 rows per list)."""
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


def verify_all(out: Path, spec: Path | None = None) -> int:
    """Every trial of every session under `out` rebuilt and verified; returns the trials checked."""
    from model_subjects.context import sha256
    from model_subjects.show_context import session_context

    n = 0
    files = sorted((out / "data").glob("*_data.csv"))
    assert files, out
    for f in files:
        for row in read_rows(f):
            got = session_context(f, int(row["trial_index"]), spec)
            want = json.loads(row["extra"])["context_sha256"]
            assert got["sha256"] == want == sha256(got["text"]), (f.name, row["trial_index"])
            n += 1
    return n


def _protocols(exp, trials) -> list[str]:
    """`direct` and `meta` where the kind has them and can ask these trials (a `direct` needs each item's pair),
    else the kind's default protocol."""
    from model_subjects.protocols import ProtocolError, default_protocol, get_protocol

    names = []
    for name in ("direct", "meta"):
        try:
            proto = get_protocol(name, panel=exp.task.panel, task=exp.task)
            for t in trials:
                getattr(proto, "check", lambda t: None)(t)
            names.append(name)
        except ProtocolError:
            pass
    return names or [default_protocol(exp.task.kind, exp.task.response)]


def _first_trials(exp, session: int = 1) -> list:
    """Into the second block when the first is short (at most 8 trials), else (one block, or a long first one)
    the first 3."""
    from experiments.design_compiler import compile_sequence
    from experiments.screen_texts import block_sizes

    trials = list(compile_sequence(exp, "m01", None, session=session).trials)
    sizes = list(block_sizes(trials).values())
    return trials[:sizes[0] + 2 if len(sizes) > 1 and sizes[0] <= 8 else 3]


@pytest.mark.parametrize("name", BUNDLED)
def test_every_bundled_example_verifies_every_trial(name, bundled_backend, tmp_path):
    from model_subjects.runner import RunConfig, run_models

    exp = load_spec(name)
    trials = _first_trials(exp)
    n = len(trials)
    runs = [("running", p) for p in _protocols(exp, trials)] + [("none", None), ("fewshot:twoshot", None)]
    for context, proto in runs:
        out = tmp_path / f"{context.replace(':', '_')}-{proto}"
        run_models(RunConfig(spec=name, out=out, context=context, protocol=proto, trials=n), bundled_backend)
        assert verify_all(out) == n, (context, proto)


def _expected_start(n_practice: int) -> str:
    """Trial 0's context written out by hand: every instruction page, the training block's intro with its size."""
    return "".join(p + "\n" for p in PAGES) + f"Training: {n_practice} sentences.\n"


@pytest.mark.parametrize("proto", ["direct", "meta"])
def test_block_intros_with_trials_pages_and_feedback_texts_verify(proto, bundled_backend, tmp_path):
    """The issue's failure: every trial of a `running` session of a spec whose intros say `{trials}` was refused.
    Also resumed with a larger --trials (the test block's `{trials}` changes from the resume on)."""
    from model_subjects.runner import RunConfig, run_models
    from model_subjects.show_context import session_context

    spec = write_intro_spec(tmp_path / "spec")
    out = tmp_path / "run"
    run_models(RunConfig(spec=str(spec), out=out, context="running", protocol=proto, trials=5), bundled_backend)
    run_models(RunConfig(spec=str(spec), out=out, context="running", protocol=proto, trials=8), bundled_backend)
    assert verify_all(out) == 8
    f = next((out / "data").glob("*_data.csv"))
    rows = read_rows(f)
    assert [r["block"] for r in rows] == ["practice"] * 4 + ["test"] * 4
    assert session_context(f, 0)["text"].startswith(_expected_start(4))
    # trial 4 was written by the first run (1 test trial planned), trials 5-7 by the resumed one (4)
    assert "Test: 1 sentences, no feedback.\n" in session_context(f, 4)["text"]
    late = session_context(f, 7)["text"]
    assert "Test: 4 sentences, no feedback.\n" in late and "Test: 1 sentences" not in late
    fb = [r["feedback_text"] for r in rows[:4]]
    assert set(fb) <= {"Right, well done.", "No, that was wrong."} and all(t + "\n" in late for t in fb)
    side = json.loads(f.with_suffix(".json").read_text(encoding="utf-8"))
    assert side["context_block_sizes"] == [{"from_trial": 0, "sizes": {"practice": 4, "test": 1}},
                                           {"from_trial": 5, "sizes": {"practice": 4, "test": 4}}]


@pytest.mark.parametrize("context", ["none", "fewshot:twoshot", "running:3"])
def test_other_contexts_of_the_intro_spec_verify(context, bundled_backend, tmp_path):
    from model_subjects.runner import RunConfig, run_models

    spec = write_intro_spec(tmp_path / "spec")
    run_models(RunConfig(spec=str(spec), out=tmp_path / "run", context=context, protocol="meta", trials=6),
               bundled_backend)
    assert verify_all(tmp_path / "run") == 6


def test_a_second_session_verifies(bundled_backend, tmp_path):
    from model_subjects.runner import RunConfig, run_models

    exp = load_spec("lakretz2021_replication")
    assert exp.sessions == 2
    run_models(RunConfig(spec="lakretz2021_replication", out=tmp_path, context="running", protocol="direct",
                         session=2, trials=len(_first_trials(exp, 2))), bundled_backend)
    f = next((tmp_path / "data").glob("*_session-2_data.csv"))
    assert verify_all(tmp_path) == len(read_rows(f)) > 0


def test_a_replay_shows_the_persons_history_verified(bundled_backend, tmp_path):
    """A replay's context is the person's history (their answers, the feedback they got, the intros as they read
    them: `{trials}` is the person's block size, whatever --trials replays)."""
    from model_subjects.replay import run_replay
    from model_subjects.runner import RunConfig
    from model_subjects.show_context import session_context

    spec = write_intro_spec(tmp_path / "spec")
    exp = load_spec(spec)
    write_people(exp, tmp_path / "people", ["P01"])
    person = read_rows(next((tmp_path / "people" / "data").glob("*_data.csv")))
    run_replay(RunConfig(spec=str(spec), out=tmp_path / "replay", protocol="direct", trials=6),
               tmp_path / "people", backend=bundled_backend)
    assert verify_all(tmp_path / "replay") == 6
    f = next((tmp_path / "replay" / "data").glob("*_data.csv"))
    got = session_context(f, 5)
    assert got["context_mode"] == "replay" and got["text"].startswith(_expected_start(4))
    assert "Test: 4 sentences, no feedback.\n" in got["text"]  # the person's 4 test trials, not the 2 replayed
    for r in person[:5]:  # the person's answers in the task's words, and the feedback the person got
        word = {"yes": "Acceptable", "no": "Not acceptable"}[r["response"]]
        assert f"Answer: {word}\n" + (r["feedback_text"] + "\n" if r["feedback_text"] else "") in got["text"]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "experiments.cli", "context", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def _rewrite(src: Path, dst: Path, change) -> Path:
    with open(src, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        rows, fields = list(reader), reader.fieldnames
    change(rows)
    with open(dst, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    dst.with_suffix(".json").write_text(src.with_suffix(".json").read_text(encoding="utf-8"), encoding="utf-8")
    return dst


def test_the_recorded_spec_path_is_used_while_its_hash_holds_and_bad_cells_are_named(bundled_backend, tmp_path):
    from model_subjects.runner import RunConfig, run_models
    from model_subjects.show_context import ShowContextError, session_context

    spec = write_intro_spec(tmp_path / "spec")
    run_models(RunConfig(spec=str(spec), out=tmp_path / "run", context="running", protocol="meta", trials=3),
               bundled_backend)
    f = next((tmp_path / "run" / "data").glob("*_data.csv"))
    got = session_context(f, 2)
    assert got["spec"] == f"spec read from {spec.resolve()} (hash matches the session's)"
    # bad cells: exit 2 naming the line and column, no traceback (rows start on line 2)
    (tmp_path / "bad").mkdir()
    bad = _rewrite(f, tmp_path / "bad" / f.name, lambda rows: rows[1].update(trial_index="one"))
    p = _cli(str(bad), "--trial", "0")
    assert p.returncode == 2 and "line 3, column trial_index: 'one' is not a whole number" in p.stderr + p.stdout
    assert "Traceback" not in p.stderr
    bad = _rewrite(f, bad, lambda rows: rows[2].update(extra="{not json"))
    with pytest.raises(ShowContextError, match="line 4, column extra: not JSON"):
        session_context(bad, 0)
    # the spec file changed since the run: refused, naming both hashes
    session_hash = read_rows(f)[0]["spec_hash"]
    spec.write_text(SPEC_TEXT.replace("Training:", "Practice:"), encoding="utf-8")
    now = load_spec(spec).spec_hash
    p = _cli(str(f), "--trial", "2")
    assert p.returncode == 2 and session_hash in p.stderr + p.stdout and now in p.stderr + p.stdout
    assert p.stdout.strip() == "" or "Practice:" not in p.stdout
    # gone: not bundled, so --spec is asked for
    spec.unlink()
    with pytest.raises(ShowContextError, match="not a bundled spec.*give its spec with --spec"):
        session_context(f, 2)
