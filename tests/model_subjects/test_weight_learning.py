"""Model subjects that learn in their weights: exact (lr 0 = frozen), repeatable, resumable, learning.

The bundled model (tests/conftest.py `bundled_backend`) on a few trials of the demo spec's training block
(feedback on every trial); each run restores the backend's frozen weights when it ends.
"""
from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from tests.cli_refusal import refused, tree

SPEC = "lakretz2021_demo"


def _rows(out: Path, sid: str = "m01") -> list[dict[str, str]]:
    path = next((out / "data").glob(f"*subject-{sid}_session-1_data.csv"))
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _run(backend, out: Path, **kw):
    from model_subjects.runner import RunConfig, Runner

    cfg = RunConfig(spec=SPEC, out=out, **{"trials": 3, "subjects": 2, **kw})
    return Runner(cfg, backend).run()


def _scores(rows: list[dict[str, str]]) -> list[list[float]]:
    return [json.loads(r["option_logprobs"]) for r in rows]


def _hashes(rows: list[dict[str, str]]) -> list[str]:
    return [json.loads(r["extra"])["weights_sha256"] for r in rows]


def _close(a: list[list[float]], b: list[list[float]], tol: float) -> bool:
    return all(math.isclose(x, y, abs_tol=tol)
               for ra, rb in zip(a, b, strict=False) for x, y in zip(ra, rb, strict=False))


def _alone(backend, rows: list[dict[str, str]]) -> list[list[float]]:
    """The frozen model's scores of each row's options, each request alone (batch-invariant: no padding)."""
    from model_subjects.requests import LoglikelihoodRequest

    out = []
    for r in rows:
        prompt = json.loads(r["extra"])["prompt"]
        words = [" Yes", " No"] if json.loads(r["option_labels"]) == ["Yes", "No"] else None
        assert words is not None, r["option_labels"]
        out.append([x.logprob for x in backend.loglikelihood_alone([LoglikelihoodRequest(prompt, w) for w in words])])
    return out


@pytest.mark.model
@pytest.mark.slow
def test_lr0_is_the_frozen_model_and_subjects_start_fresh(bundled_backend, tmp_path):
    frozen_sha = None
    _run(bundled_backend, tmp_path / "frozen")
    _run(bundled_backend, tmp_path / "lr0", learning="weights", lr=0.0)
    _run(bundled_backend, tmp_path / "lr", learning="weights", lr=1e-3)
    for sid in ("m01", "m02"):
        frozen, lr0, learnt = (_rows(tmp_path / k, sid) for k in ("frozen", "lr0", "lr"))
        assert [r["response"] for r in lr0] == [r["response"] for r in frozen]
        # to 1e-6 (the table's rounding) of the frozen model scoring each trial alone; the frozen run's batches
        # (many trials padded together) differ from that by float32 batch noise (runner.py: 1e-4)
        assert _close(_scores(lr0), _alone(bundled_backend, lr0), 1.01e-6), (_scores(lr0), _alone(bundled_backend, lr0))
        assert _close(_scores(lr0), _scores(frozen), 1e-4)
        meta = json.loads(next((tmp_path / "lr0" / "data").glob(f"*{sid}*.json")).read_text())
        frozen_sha = meta["learning"]["frozen_weights_sha256"]
        assert set(_hashes(lr0)) == {frozen_sha}  # lr 0: the weights never moved
        assert {r["context_mode"] for r in lr0} == {"none+weights:feedback"}
        # every subject starts from the frozen weights: its first trial is scored as the frozen model scores it
        assert _close(_scores(learnt)[:1], _scores(lr0)[:1], 1.01e-6)
        assert len(set(_hashes(learnt)) | {frozen_sha}) == 4  # each trial's update moved the weights
        assert not _close(_scores(learnt)[1:], _scores(frozen)[1:], 1e-4)
    from model_subjects.weight_learner import digest_of

    assert digest_of(bundled_backend.model.parameters(), bundled_backend.torch) == frozen_sha  # restored


@pytest.mark.model
@pytest.mark.slow
def test_same_seed_twice_and_resume_equal_one_run(bundled_backend, tmp_path):
    kw = {"learning": "both", "context": "running", "lr": 1e-3, "subjects": 1, "update_on": "read"}
    _run(bundled_backend, tmp_path / "a", trials=4, **kw)
    _run(bundled_backend, tmp_path / "b", trials=2, **kw)  # stopped after 2 trials ...
    _run(bundled_backend, tmp_path / "b", trials=4, **kw)  # ... resumed: the weights rebuilt from the rows
    a, b = _rows(tmp_path / "a"), _rows(tmp_path / "b")
    keys = ("response", "option_logprobs", "context_mode", "feedback_text")
    assert [[r[k] for k in keys] for r in a] == [[r[k] for k in keys] for r in b]
    assert _hashes(a) == _hashes(b) and len(set(_hashes(a))) == 4
    assert ([json.loads(r["extra"])["context_sha256"] for r in a]
            == [json.loads(r["extra"])["context_sha256"] for r in b])
    # a row whose recorded weights differ from what replaying its steps gives: the resume is refused, nothing written
    path = next((tmp_path / "b" / "data").glob("*_data.csv"))
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(_hashes(b)[1], "0" * 64), encoding="utf-8")
    before = tree(tmp_path / "b")
    from model_subjects.runner import RunError

    with pytest.raises(RunError, match="cannot resume: trial 1"):
        _run(bundled_backend, tmp_path / "b", trials=5, **kw)
    assert tree(tmp_path / "b") == before


@pytest.mark.model
@pytest.mark.slow
def test_feedback_steps_make_the_right_answers_likelier(bundled_backend):
    """The loss a step records is the scorer's own -log P(answer) (an independent computation), and a few
    steps on the right answers raise their log-probability as the backend scores it."""
    from experiments.design_compiler import compile_sequence
    from experiments.spec import load_spec
    from model_subjects.context import ContextMode, static_context
    from model_subjects.protocols import get_protocol
    from model_subjects.requests import LoglikelihoodRequest
    from model_subjects.weight_learner import WeightLearner
    from model_subjects.weight_runs import correct_entry
    from model_subjects.weights import LearningSettings

    exp = load_spec(SPEC)
    proto = get_protocol("violation_judgment", task=exp.task)
    trials = compile_sequence(exp, "m01", None).trials[:3]
    pairs = []
    for t in trials:
        entry = correct_entry(proto, t, "twinlab-context-v3")
        # hand rule of the task
        assert entry.answer == (" Yes" if t.study_record.correct_response == "violation" else " No")
        pairs.append((static_context(ContextMode("none"), entry.question), entry.answer))

    def logps() -> list[float]:
        return [r.logprob for r in bundled_backend.loglikelihood([LoglikelihoodRequest(c, a) for c, a in pairs])]

    before = logps()
    learner = WeightLearner(bundled_backend, LearningSettings(mode="weights", lr=1e-3, steps=2))
    try:
        learner.start(1)
        first = []
        for _ in range(2):
            for c, a in pairs:
                losses = learner.train(*learner.units(c, a))
                first.append(losses[0])
        assert math.isclose(first[0], -before[0], abs_tol=1e-4)  # a 1-token answer's loss is -log P, as scored
        after = logps()
    finally:
        learner.close()
    assert all(x > y for x, y in zip(after, before, strict=False)) and sum(after) > sum(before) + 1.0, (before, after)
    assert logps() == pytest.approx(before, abs=1e-5)  # closed: the frozen model again


def test_bad_learning_options_are_refused_before_anything(tmp_path):
    from experiments.options import OptionError
    from model_subjects.runner import RunConfig
    from model_subjects.weights import check_learning

    def bad(match: str, **kw) -> None:
        with pytest.raises(OptionError, match=match):
            check_learning(RunConfig(spec=SPEC, **{"learning": "weights", **kw}))

    for lr in (-1e-4, float("nan"), float("inf"), 2.0):
        bad("--lr must be a number from 0 to 1", lr=lr)
    for steps in (0, 101, 10**9):
        bad("--steps must be from 1 to 100", steps=steps)
    bad("--learning must be one of context, weights, both", learning="gradient")
    bad("--update-on must be one of feedback, read", update_on="answers")
    bad("backend 'llamacpp' gives no gradients.*weights learn on: transformers", backend="llamacpp")
    bad("is `--learning both`", context="running")
    bad("learns in context too", learning="both", context="none")
    check_learning(RunConfig(spec=SPEC, learning="both", context="running:5", lr=0.0, steps=100))
    from model_subjects.weights import peft_missing

    if peft_missing():
        bad("--adapter lora: the `peft` package is not installed", adapter="lora")
    out = tmp_path / "out"
    refused("run-model", SPEC, "--learning", "weights", "--lr", "nan", "-o", str(out), match="--lr must be")
    refused("run-model", SPEC, "--learning", "weights", "--backend", "llamacpp", "-o", str(out),
            match=["gives no gradients", "transformers"])
    assert not out.exists()


@pytest.mark.model
@pytest.mark.slow
def test_lora_lr0_is_the_frozen_model(bundled_backend, tmp_path):
    """A fresh LoRA adapter (B = 0) changes no score; its hash is the adapter's and stays put at lr 0."""
    pytest.importorskip("peft")
    from model_subjects.weight_learner import digest_of

    frozen_sha = digest_of(bundled_backend.model.parameters(), bundled_backend.torch)
    _run(bundled_backend, tmp_path / "lora", subjects=1, learning="weights", adapter="lora", rank=4, lr=0.0)
    rows = _rows(tmp_path / "lora")
    # B = 0 adds exact zeros, but peft's copy of the model sums in another order: within 1e-6 before rounding
    assert _close(_scores(rows), _alone(bundled_backend, rows), 2e-6)
    assert len(set(_hashes(rows))) == 1 and _hashes(rows)[0] != frozen_sha  # the adapter's bytes, not the model's
    meta = json.loads(next((tmp_path / "lora" / "data").glob("*.json")).read_text())
    assert meta["learning"]["frozen_weights_sha256"] == frozen_sha and meta["learning"]["rank"] == 4
    assert bundled_backend.model.__class__.__name__ == "LlamaForCausalLM"  # the backend scores the frozen model again
    assert digest_of(bundled_backend.model.parameters(), bundled_backend.torch) == frozen_sha


def test_analysis_groups_learners_by_mode():
    """The runner's label (model_subjects.weights.context_label) and the analysis' reading of it agree: context,
    weights and both are three groups; weight learners see their history (learning fits), frozen `none` does not."""
    import pandas as pd

    from analysis.learning.general import sees_history
    from analysis.load.prepare import group_label, learning_mode
    from model_subjects.weights import LearningSettings, context_label, context_part

    cases = {("none", "context"): "context", ("running", "context"): "context", ("none", "weights"): "weights",
             ("fewshot:twoshot_a", "weights"): "weights", ("running", "both"): "both", ("running:5", "both"): "both"}
    labels = {}
    for (ctx, mode), want in cases.items():
        label = context_label(ctx, LearningSettings(mode=mode, update_on="read"))
        assert learning_mode(label) == want and context_part(label) == ctx
        labels[(ctx, mode)] = label
    assert labels[("none", "weights")] == "none+weights:read" and labels[("none", "context")] == "none"
    d = pd.DataFrame({"subject_kind": ["model"] * 3, "model": ["m"] * 3, "protocol": ["p"] * 3,
                      "context_mode": ["none", "none+weights:feedback", "running+weights:feedback"]})
    d["group"] = group_label(d)
    assert d["group"].nunique() == 3
    assert [sees_history(d, g) for g in d["group"]] == [False, True, True]
