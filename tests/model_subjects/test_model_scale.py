"""Model subjects at scale: batch-invariant choices, running subjects advancing together."""
from __future__ import annotations

import json

import pytest

pytestmark = [pytest.mark.model, pytest.mark.slow]

torch = pytest.importorskip("torch")

from experiments.session import read_rows, session_paths  # noqa: E402
from experiments.spec import load_spec  # noqa: E402
from model_subjects.backends.registry import load_backend  # noqa: E402
from model_subjects.invariance import TIE_MARGIN, closest_gap  # noqa: E402
from model_subjects.runner import RunConfig, Runner  # noqa: E402

SPEC = "lakretz2021_nested"


@pytest.fixture(scope="module")
def bf16():
    return load_backend(None, threads=1, dtype="bfloat16")


def _choices(backend, out, batch_size, tie_margin=None, trials=48):
    backend.batch_size = batch_size
    cfg = RunConfig(spec=SPEC, out=out, protocol="forced_choice", trials=trials, batch_size=batch_size,
                    tie_margin=tie_margin, subjects=2)
    Runner(cfg, backend).run()
    exp = load_spec(SPEC)
    rows = [r for sid in ("m01", "m02") for r in read_rows(session_paths(out, exp.name, sid, 1)[0])]
    return rows


def test_choices_identical_at_batch_1_32_512_in_bfloat16(bf16, tmp_path):
    runs = {bs: _choices(bf16, tmp_path / f"b{bs}", bs) for bs in (1, 32, 512)}
    picks = {bs: [r["response"] for r in rows] for bs, rows in runs.items()}
    assert picks[1] == picks[32] == picks[512]
    # near ties were re-scored alone and recorded; their scores are then the same at every batch size
    eps = TIE_MARGIN["bfloat16"]
    for bs, rows in runs.items():
        assert any(json.loads(r["extra"]).get("rescored_alone") for r in rows), bs  # the mechanism is exercised
        for r in rows:
            if not json.loads(r["extra"]).get("rescored_alone"):
                assert closest_gap([json.loads(r["option_logprobs"])]) > eps
    assert_rescored_alike({bs: [(json.loads(r["extra"]).get("rescored_alone", False), r["option_logprobs"],
                                 float(r["margin"])) for r in rows] for bs, rows in runs.items()}, eps)
    meta = json.loads(session_paths(tmp_path / "b32", "lakretz2021_nested", "m01", 1)[1].read_text())
    assert meta["batch_invariance"]["tie_margin"] == eps


def assert_rescored_alike(runs: dict, eps: float) -> None:
    """runs: batch size -> [(re-scored alone?, option scores, decision margin)] per trial, same trials.

    A trial re-scored alone in two runs has bit-identical scores in both (alone = one unpadded
    sequence per forward pass, so the same shapes and kernels whatever the batch). Which trials are
    re-scored is decided on the batched scores, which move with the batch (bfloat16 here: up to
    0.39 nats; more with the shape-chosen kernels of AMX-BF16 CPUs): a trial whose margin lies near
    the threshold may be re-scored in one run and not in another. There its batched margin is
    above the tie margin, so its choice cannot differ (checked by the callers), but its scores do.
    """
    sizes = sorted(runs)
    for a in sizes:
        for b in sizes:
            for i, ((fa, sa, _), (fb, _sb, mb)) in enumerate(zip(runs[a], runs[b], strict=False)):
                if fa and fb:
                    assert sa == _sb, (a, b, i)
                elif fa:  # re-scored at batch a only: at batch b it was no near tie
                    assert abs(mb) > eps, (a, b, i, mb)


def test_rescoring_alone_runs_each_request_unpadded_at_its_own_length(bf16, tmp_path):
    """What makes re-scored scores batch-invariant on any CPU (shape-chosen bf16 kernels included):
    every forward pass of a re-scoring is one row, no padding or mask, exactly the request's
    tokens (all but the last scored one), whatever the batch size the run was given."""
    from model_subjects.requests import LoglikelihoodRequest as R

    reqs = [R("The keys to the cabinet", " are"), R("The boy that the girls like", " smiles on the bench"),
            R("", "The dogs near the car bark.")]
    want = [len(bf16._units([r])[0].full) - 1 for r in reqs]
    seen = []
    h = bf16.model.register_forward_pre_hook(
        lambda mod, a, kw: seen.append((tuple(kw["input_ids"].shape), kw.get("attention_mask") is None,
                                        kw.get("past_key_values") is None)), with_kwargs=True)
    try:
        for bs in (1, 512):
            bf16.batch_size = bs
            seen.clear()
            first = bf16.loglikelihood_alone(reqs)
            assert seen == [((1, n), True, True) for n in want], (bs, seen)
            batched = bf16.loglikelihood(reqs * 3)  # a padded batch in between changes nothing
            again = bf16.loglikelihood_alone(reqs[::-1])[::-1]
            assert [x.token_logprobs for x in again] == [x.token_logprobs for x in first]
    finally:
        h.remove()
        bf16.batch_size = "auto"
    assert len(batched) == 9


@pytest.fixture(scope="module")
def fp32():
    return load_backend(None, threads=1)


# tie margins that flag some trials but not all: the comparison's decision margin averages both answer
# orders, and this model answers "1" to nearly everything, so its margins are small
@pytest.mark.long
@pytest.mark.parametrize("protocol, "
                         "margin", [("violation_judgment", 0.5), ("sentence_comparison:MetaQuestionSimple", 0.05)])
def test_running_subjects_together_equal_one_at_a_time(fp32, tmp_path, protocol, margin):
    exp = load_spec(SPEC)
    calls = []
    h = fp32.model.register_forward_pre_hook(lambda mod, a, kw: calls.append(kw["input_ids"].shape[0]),
                                             with_kwargs=True)
    try:
        out = {}
        for together in (True, False):
            calls.clear()
            cfg = RunConfig(spec=SPEC, out=tmp_path / str(together), protocol=protocol, context="running",
                            trials=4, subjects=3, parallel_running=together, tie_margin=margin)
            Runner(cfg, fp32).run()
            out[together] = ([read_rows(session_paths(cfg.out, exp.name, f"m0{k}", 1)[0]) for k in (1, 2, 3)],
                             list(calls))
    finally:
        h.remove()
    (par, par_calls), (seq, seq_calls) = out[True], out[False]
    n_alone = sum(len(json.loads(r["option_logprobs"])) for rows in par for r in rows
                  if json.loads(r["extra"]).get("rescored_alone"))
    group = [c for c in par_calls if c == 3]  # one pass per step for all three subjects
    assert set(par_calls) <= {1, 3} and set(seq_calls) == {1}
    assert par_calls.count(1) == n_alone  # the only single-row passes: near ties scored alone
    assert len(group) * 3 >= len(seq_calls) - n_alone >= 2 * len(group)
    for rows_p, rows_s in zip(par, seq, strict=False):
        assert [r["response"] for r in rows_p] == [r["response"] for r in rows_s]
        for a, b in zip(rows_p, rows_s, strict=False):
            ea, eb = json.loads(a["extra"]), json.loads(b["extra"])
            assert ea.get("rescored_alone") == eb.get("rescored_alone")  # near ties: re-scored alone in both
            assert ea["context_sha256"] == eb["context_sha256"]  # each subject saw only its own history
            la, lb = json.loads(a["option_logprobs"]), json.loads(b["option_logprobs"])
            assert max(abs(x - y) for x, y in zip(la, lb, strict=False)) < 1e-4
    flags = [json.loads(r["extra"]).get("rescored_alone", False) for rows in par for r in rows]
    assert any(flags) and not all(flags)
    # the subjects' sequences differ, so their histories do
    assert par[0][1]["item_id"] != par[1][1]["item_id"] or par[0][1]["extra"] != par[1][1]["extra"]


def test_out_of_memory_backs_off_and_loses_nothing(fp32):
    """A batch that runs out of memory is retried in halves; scores equal each request scored alone."""
    from model_subjects.requests import LoglikelihoodRequest as R

    reqs = [R(f"The {n} that the {m} near the house", w) for n in ("boy", "girls", "actor", "doctors")
            for m in ("farmer", "teachers", "cat") for w in (" is", " are")]

    def hook(module, args, kwargs):
        if kwargs["input_ids"].shape[0] > 3:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB (simulated by a test hook)")

    fp32.batch_size = 16
    h = fp32.model.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        res = fp32.loglikelihood(reqs)
        backoffs = fp32.sizer.oom_backoffs
    finally:
        h.remove()
        fp32.batch_size = "auto"
    assert backoffs >= 1
    alone = fp32.loglikelihood_alone(reqs)
    assert max(abs(a.logprob - b.logprob) for a, b in zip(res, alone, strict=False)) < 1e-4


@pytest.mark.long  # about a minute: the long pass (scripts/test.sh)
def test_pairs_path_choices_identical_at_batch_1_32_512_in_bfloat16(bf16, tmp_path):
    """Hu & Levy's minimal pairs (reproductions.pairs.score_protocols) get the runner's near-tie
    re-scoring: the same choices whatever the batch size and chunking, re-scored jobs flagged, and
    their scores identical at every batch size; a re-run from the cache computes nothing."""
    from pathlib import Path

    from model_subjects.protocols import get_protocol
    from reproductions.pairs import ScoreCache, load_blimp_jsonl, pair_trials, pairs_from_items, score_protocols
    from studies.lakretz2021.stimuli.generate import generate_items

    pairs = (pairs_from_items(generate_items("long_nested", "test", 1), "inner")
             + load_blimp_jsonl(Path(__file__).parent.parent / "data" / "blimp" / "anaphor_gender_agreement.jsonl"))
    jobs = []
    for p in pairs:
        g, b = pair_trials(p)
        for pt in ("Direct", "MetaQuestionSimple"):
            jobs += [(g, get_protocol(f"sentence_judgment:{pt}")), (b, get_protocol(f"sentence_judgment:{pt}")),
                     (g, get_protocol(f"sentence_comparison:{pt}"))]
    eps = TIE_MARGIN["bfloat16"]
    runs = {}
    for bs, chunk in ((1, 16), (32, 64), (512, 1024)):
        bf16.batch_size = bs
        cache = ScoreCache(tmp_path / f"c{bs}.jsonl")
        runs[bs], _ = score_protocols(bf16, cache, jobs, chunk=chunk)
        cache.close()
    picks = {bs: [(d.response, d.correct) for d in ds] for bs, ds in runs.items()}
    assert picks[1] == picks[32] == picks[512]
    for bs, ds in runs.items():
        assert any(d.extra.get("rescored_alone") for d in ds), bs  # near ties exist here: the mechanism is exercised
        for d in ds:
            if not d.extra.get("rescored_alone"):
                assert abs(d.margin) > eps  # the decision's margin (both answer orders), not one query's gap
    assert_rescored_alike({bs: [(bool(d.extra.get("rescored_alone")), d.option_logprobs, d.margin) for d in ds]
                           for bs, ds in runs.items()}, eps)
    # the scores computed alone are the same in every run's cache, whichever jobs each run re-scored
    from reproductions.pairs import ALONE

    alone = {}
    for bs in runs:
        for line in (tmp_path / f"c{bs}.jsonl").read_text().splitlines():
            key, val = json.loads(line)
            if key.startswith(ALONE):
                assert alone.setdefault(key, val) == val, (bs, key)
    assert alone
    cache = ScoreCache(tmp_path / "c32.jsonl")
    again, n_now = score_protocols(bf16, cache, jobs, chunk=64)
    cache.close()
    assert n_now == 0 and [(d.response, d.option_logprobs) for d in again] == [
        (d.response, d.option_logprobs) for d in runs[32]]
