"""Twins whose weights learn (model_subjects/replay_weights.py): `--replay --learning both|weights`.

One shared set-up (module scope): two people of acceptability_yesno (2 practice trials with feedback, then test),
replays of their first 4 trials with the bundled model: frozen, `both` at lr 0, `both` at lr 1e-3 (and the same
stopped after 2 trials and resumed), `weights` at lr 1e-3."""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "support"))
from twins_people import write_people  # noqa: E402

from experiments.session import read_rows  # noqa: E402
from experiments.spec import load_spec  # noqa: E402
from model_subjects.replay import run_replay  # noqa: E402
from model_subjects.runner import RunConfig, RunError  # noqa: E402
from tests.cli_refusal import tree  # noqa: E402

pytestmark = [pytest.mark.model, pytest.mark.slow]
SPEC = "acceptability_yesno"
N = 4
KINDS = {"frozen": {}, "lr0": {"learning": "both", "lr": 0.0}, "lr": {"learning": "both", "lr": 1e-3},
         "weights": {"learning": "weights", "lr": 1e-3}}


def _replay(out: Path, people: Path, backend, trials: int = N, **kw):
    return run_replay(RunConfig(spec=SPEC, out=out, protocol="meta", trials=trials, **kw), people, backend=backend)


@pytest.fixture(scope="module")
def runs(tmp_path_factory, bundled_backend):
    out = tmp_path_factory.mktemp("replay_weights")
    exp = load_spec(SPEC)
    write_people(exp, out / "people", ["P01", "P02"])
    for name, kw in KINDS.items():
        _replay(out / name, out / "people", bundled_backend, **kw)
    _replay(out / "resumed", out / "people", bundled_backend, trials=2, **KINDS["lr"])  # stopped after 2 ...
    _replay(out / "resumed", out / "people", bundled_backend, **KINDS["lr"])  # ... and resumed
    return out, exp


def _rows(out: Path, pid: str) -> list[dict[str, str]]:
    return read_rows(next((out / "data").glob(f"*replay{pid}_session-1_data.csv")))


def _extra(rows, key):
    return [json.loads(r["extra"]).get(key) for r in rows]


def _scores(rows) -> list[list[float]]:
    return [json.loads(r["option_logprobs"]) for r in rows]


def _close(a, b, tol: float) -> bool:
    return all(math.isclose(x, y, abs_tol=tol)
               for ra, rb in zip(a, b, strict=False) for x, y in zip(ra, rb, strict=False))


def _alone(backend, exp, rows) -> list[list[float]]:
    """The frozen model's scores of each row's options, each request alone, in the context the table rebuilds by
    the running rule with the person's answers (an independent computation of what the replay read)."""
    from model_subjects.context import ContextMode, option_text, rebuild_contexts, row_trial, sha256
    from model_subjects.protocols import get_protocol
    from model_subjects.requests import LoglikelihoodRequest

    proto = get_protocol("meta", panel=exp.task.panel, task=exp.task)
    ctxs = rebuild_contexts(exp, rows, ContextMode("running"), proto)
    assert [sha256(c) for c in ctxs] == _extra(rows, "context_sha256")
    out = []
    for c, r in zip(ctxs, rows, strict=False):
        options = proto.queries(row_trial(exp, r))[0].options
        out.append([x.logprob for x in backend.loglikelihood_alone([LoglikelihoodRequest(c, option_text(o.continuation,
                                                                                                        False))
                                                                    for o in options])])
    return out


def test_lr0_replay_is_the_frozen_replay(runs, bundled_backend):
    out, exp = runs
    for pid in ("P01", "P02"):
        frozen, lr0 = _rows(out / "frozen", pid), _rows(out / "lr0", pid)
        assert len(lr0) == N and {r["context_mode"] for r in lr0} == {"replay+weights:feedback"}
        assert [r["response"] for r in lr0] == [r["response"] for r in frozen]
        for key in ("context_sha256", "person_response", "replay_of", "answer_text"):
            assert _extra(lr0, key) == _extra(frozen, key), key
        assert [r["feedback_text"] for r in lr0] == [r["feedback_text"] for r in frozen]
        # the same weights (hashes below) on the same texts: the scores differ only by float32 summation order.
        # Measured: 2e-6 from the frozen model scoring each request alone (the learner pads a trial's options of
        # unequal length into one batch), 9e-6 from the frozen replay (which extends one KV cache segment by
        # segment); a real step moves them by 1e-2 and more (next test)
        assert _close(_scores(lr0), _alone(bundled_backend, exp, lr0), 1e-5)
        assert _close(_scores(lr0), _scores(frozen), 2e-5)
        side = json.loads(next((out / "lr0" / "data").glob(f"*replay{pid}_*.json")).read_text())
        assert side["learning"]["mode"] == "both" and side["replay"]["person"] == pid
        assert set(_extra(lr0, "weights_sha256")) == {side["learning"]["frozen_weights_sha256"]}


def test_learning_replay_steps_only_after_feedback_and_its_scores_move(runs, bundled_backend):
    out, exp = runs
    for pid in ("P01", "P02"):
        prow = read_rows(next((out / "people" / "data").glob(f"*subject-{pid}_*.csv")))[:N]
        lr0, learnt = _rows(out / "lr0", pid), _rows(out / "lr", pid)
        frozen_sha = _extra(lr0, "weights_sha256")[0]
        hashes = [frozen_sha] + _extra(learnt, "weights_sha256")
        shown = [r["feedback_text"] != "" for r in prow]
        assert shown == [True, True, False, False]  # the spec's practice block gives feedback, the test block none
        for k in range(N):  # the weights move exactly after a trial whose feedback the person was shown
            assert (hashes[k + 1] != hashes[k]) == shown[k], (pid, k)
        updates = _extra(learnt, "weights_update")
        assert [u["on"] for u in updates] == ["feedback", "feedback", None, None]
        assert _close(_scores(learnt)[:1], _scores(lr0)[:1], 1.01e-6)  # a fresh subject: the frozen weights
        assert not _close(_scores(learnt)[1:], _scores(lr0)[1:], 1e-4)  # after a step: other scores
        assert _extra(learnt, "context_sha256") == _extra(lr0, "context_sha256")  # the same person's history


def test_weights_only_replay_reads_the_prompt_alone(runs):
    out, _ = runs
    for pid in ("P01", "P02"):
        rows = _rows(out / "weights", pid)
        assert {r["context_mode"] for r in rows} == {"replay:none+weights:feedback"}
        assert _extra(rows, "context_chars") == [len(p) for p in _extra(rows, "prompt")]  # no history in context
        assert _extra(rows, "person_response") == _extra(_rows(out / "frozen", pid), "person_response")
        assert len(set(_extra(rows, "weights_sha256"))) == 2  # two feedback steps, then the test block: no more


def test_resumed_learning_replay_equals_one_run_and_a_changed_hash_is_refused(runs, bundled_backend):
    out, _ = runs
    keys = ("response", "option_logprobs", "context_mode", "feedback_text", "extra")
    for pid in ("P01", "P02"):
        a, b = _rows(out / "lr", pid), _rows(out / "resumed", pid)
        strip = [[(r[k] if k != "extra" else {x: y for x, y in json.loads(r[k]).items() if x != "rescored_alone"})
                  for k in keys] for r in a]
        assert strip == [[(r[k] if k != "extra" else {x: y for x, y in json.loads(r[k]).items()
                                                     if x != "rescored_alone"}) for k in keys] for r in b]
    path = next((out / "resumed" / "data").glob("*replayP01_session-1_data.csv"))
    first = _extra(_rows(out / "resumed", "P01"), "weights_sha256")[0]
    path.write_text(path.read_text(encoding="utf-8").replace(first, "0" * 64), encoding="utf-8")
    before = tree(out / "resumed")
    with pytest.raises(RunError, match="cannot resume: trial 0"):
        _replay(out / "resumed", out / "people", bundled_backend, trials=N + 1, **KINDS["lr"])
    assert tree(out / "resumed") == before


def test_a_trial_whose_answer_earned_no_feedback_teaches_nothing(runs, bundled_backend):
    """A person's practice answer that was not scored (no feedback shown) is never a step, though its block
    gives feedback: the person was not shown the right answer."""
    from dataclasses import replace

    from model_subjects.people import find_people
    from model_subjects.replay import ReplayRunner
    from model_subjects.replay_weights import NOT_SHOWN, ReplayLearningSubject
    from model_subjects.weight_learner import WeightLearner

    out, exp = runs
    person = find_people(out / "people", exp)[0]
    person = replace(person, feedback=(None,) + person.feedback[1:], correct=(None,) + person.correct[1:])
    cfg = RunConfig(spec=SPEC, out=out / "unused", protocol="meta", trials=N, **KINDS["lr"])
    runner = ReplayRunner(cfg, bundled_backend, [person], exp=exp)
    st = runner.prepare_subjects()[0]
    runner.learner = WeightLearner(bundled_backend, runner.learning)
    try:
        subject = ReplayLearningSubject(runner, st, runner.learner, runner.learning)
        before = runner.learner.digest()
        assert subject.update(st.seq.trials[0]) == {"on": None, "why": NOT_SHOWN}
        assert runner.learner.digest() == before
        assert subject.update(st.seq.trials[1])["on"] == "feedback" and runner.learner.digest() != before
    finally:
        runner.learner.close()
    assert not (out / "unused").exists()


def test_analysis_counts_learning_replays_as_replays(runs):
    from analysis import api
    from analysis.twins.answers import is_replay, likelihood

    out, _ = runs
    df = api.load_sessions([out / "people", out / "frozen", out / "lr", out / "weights"])
    assert int(is_replay(df).sum()) == 3 * 2 * N
    lk = likelihood(df, n_boot=20)
    assert set(lk.trials["context"]) == {"replay", "replay+weights:feedback", "replay:none+weights:feedback"}
    assert (lk.trials.groupby("context").size() == 2 * N).all()
