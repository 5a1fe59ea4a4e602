"""Resumed model sessions: a torn last row is run again once, and the scores equal an uninterrupted run's.

The real bundled model (SmolLM2-135M). A running session's KV cache is rebuilt on resume with the
forward passes the uninterrupted run made (`Stream.replay`), so the scores are bit-identical, not
just close; before, one pass over the whole history moved them by up to 2e-5.
"""
from __future__ import annotations

import json

import pytest

pytestmark = [pytest.mark.model, pytest.mark.slow]

torch = pytest.importorskip("torch")

from experiments.session import read_rows, session_paths  # noqa: E402
from experiments.spec import load_spec  # noqa: E402
from model_subjects.backends.registry import load_backend  # noqa: E402
from model_subjects.context import RULE  # noqa: E402
from model_subjects.runner import RunConfig, Runner  # noqa: E402

SPEC = "lakretz2021_nested"
SCORE_COLUMNS = ("response", "option_logprobs", "margin", "correct", "feedback_text")


@pytest.fixture(scope="module")
def backend():
    return load_backend(None, threads=1)


@pytest.fixture(scope="module")
def exp():
    return load_spec(SPEC)


def run(backend, out, **kw):
    return Runner(RunConfig(spec=SPEC, out=out, **kw), backend).run()


def scores(rows):
    return [{c: r[c] for c in ("trial_index", "item_id", *SCORE_COLUMNS)} for r in rows]


@pytest.mark.parametrize("context", ["running", "none"])
def test_torn_last_row_is_run_again_once_and_scores_match_an_uninterrupted_run(backend, exp, tmp_path, context):
    n_first, n_all = 5, 9
    run(backend, tmp_path / "a", context=context, trials=n_first)
    csv_path, json_path = session_paths(tmp_path / "a", exp.name, "m01", 1)
    data = csv_path.read_bytes()
    last = data.rstrip(b"\n").rfind(b"\n") + 1
    csv_path.write_bytes(data[: last + (len(data) - last) // 2])  # a power cut in the middle of row 5
    meta = json.loads(json_path.read_text())
    meta["status"] = "running"  # as a killed run leaves it
    json_path.write_text(json.dumps(meta))

    run(backend, tmp_path / "a", context=context, trials=n_all)
    rows = read_rows(csv_path)
    assert [int(r["trial_index"]) for r in rows] == list(range(n_all))  # every trial once
    assert csv_path.read_bytes().startswith(data[:last])  # finished rows untouched
    meta = json.loads(json_path.read_text())
    (resume,) = meta["resumes"]
    assert resume["from_trial"] == n_first - 1 and resume["dropped_partial_line"]
    assert meta["status"] == "completed" and meta["n_trials_written"] == n_all

    run(backend, tmp_path / "b", context=context, trials=n_all)
    straight = read_rows(session_paths(tmp_path / "b", exp.name, "m01", 1)[0])
    if context == "running":
        assert scores(rows) == scores(straight)  # bit-identical (the CSV holds 6 decimals; see the next test)
    else:
        # batched subjects: a trial's padded batch differs between the two runs (the resumed run batches
        # only the trials left), and batch composition moves scores in the last float bits
        # (docs/model_subjects.md); choices are the same and scores agree within 1e-4
        assert [r["response"] for r in rows] == [r["response"] for r in straight]
        diffs = [abs(a - b) for r, s in zip(rows, straight, strict=False)
                 for a, b in zip(json.loads(r["option_logprobs"]), json.loads(s["option_logprobs"]), strict=False)]
        assert max(diffs) < 1e-4


def test_running_subjects_run_together_resume_within_the_batching_tolerance(backend, exp, tmp_path):
    """Several fresh running subjects advance together in one batched cache; a resumed session goes on
    alone (its partners are at other trials), so bit-identity cannot hold: batch composition moves
    scores in the last float bits. Same choices, scores within 1e-4."""
    run(backend, tmp_path / "a", context="running", subjects=2, trials=4)
    run(backend, tmp_path / "a", context="running", subjects=2, trials=8)
    run(backend, tmp_path / "b", context="running", subjects=2, trials=8)
    for sid in ("m01", "m02"):
        resumed = read_rows(session_paths(tmp_path / "a", exp.name, sid, 1)[0])
        straight = read_rows(session_paths(tmp_path / "b", exp.name, sid, 1)[0])
        assert [int(r["trial_index"]) for r in resumed] == list(range(8))
        assert [r["response"] for r in resumed] == [r["response"] for r in straight]
        diffs = [abs(a - b) for r, s in zip(resumed, straight, strict=False)
                 for a, b in zip(json.loads(r["option_logprobs"]), json.loads(s["option_logprobs"]), strict=False)]
        assert max(diffs) < 1e-4


def test_replayed_cache_gives_exactly_the_uninterrupted_logprobs(backend, exp):
    """Unrounded: the stream's log-probabilities after a replayed history equal the live ones bit for bit."""
    from experiments.design_compiler import compile_sequence
    from model_subjects.context import History, option_text
    from model_subjects.protocols import get_protocol

    proto = get_protocol("violation_judgment")
    seq = compile_sequence(exp, "m01")

    def session(replay_until: int) -> list[list[float]]:
        hist = History(exp)
        stream = backend.stream(reuse_cache=True)
        for _, seg in hist.segments:
            stream.extend(seg)
        out = []
        for i in range(8):
            trial = seq[i]
            for seg in hist.begin_trial(trial):
                stream.extend(seg)
            q = proto.queries(trial)[0]
            ctx, conts = hist.trial_context(q.prompt), [option_text(o.continuation, None) for o in q.options]
            if i < replay_until:
                stream.replay(ctx, conts)
                answer = q.options[i % 2].continuation.strip()
            else:
                res = stream.loglikelihood(ctx, conts)
                out.append([r.logprob for r in res])
                answer = q.options[i % 2].continuation.strip()
            stream.extend(hist.commit(trial, q.prompt, answer, None))
        return out

    live = session(0)[4:]
    assert session(4) == live


def test_sidecar_counts_trials_as_they_are_written(backend, exp, tmp_path):
    seen = []
    runner = Runner(RunConfig(spec=SPEC, out=tmp_path, context="running", trials=4), backend)
    csv_path, json_path = session_paths(tmp_path, exp.name, "m01", 1)

    def progress(n, total):
        if n:
            seen.append((json.loads(json_path.read_text())["n_trials_written"], len(read_rows(csv_path))))

    runner.progress = progress
    runner.run()
    assert seen == [(k, k) for k in range(1, 5)]


def test_a_session_started_under_the_older_context_rule_resumes_under_it(backend, exp, tmp_path):
    """A change bumped the context rule (v3: a `direct` history shows its answer); a session begun under v2
    is still resumable, and keeps v2 for the rest of its trials (its identity and rows say so)."""
    run(backend, tmp_path / "a", context="running", protocol="direct", trials=3)
    csv_path, json_path = session_paths(tmp_path / "a", exp.name, "m01", 1)
    text = csv_path.read_text(encoding="utf-8").replace(RULE, "twinlab-context-v2")
    csv_path.write_text(text, encoding="utf-8")
    meta = json.loads(json_path.read_text())
    assert meta["identity"]["context_rule"] == RULE
    meta["identity"]["context_rule"] = "twinlab-context-v2"
    meta["status"] = "incomplete"
    json_path.write_text(json.dumps(meta))

    run(backend, tmp_path / "a", context="running", protocol="direct", trials=5)  # refused before the fix
    rows = read_rows(csv_path)
    assert [int(r["trial_index"]) for r in rows] == list(range(5))
    assert all(json.loads(r["extra"])["context_rule"] == "twinlab-context-v2" for r in rows[3:])
    assert json.loads(json_path.read_text())["identity"]["context_rule"] == "twinlab-context-v2"
