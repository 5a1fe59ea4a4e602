"""Model protocols of the task kinds against a plain transformers forward pass (one sequence, no cache,
no padding) and hand-computed decisions, with the bundled model loaded once per module; and the runner
on generic trials (batched and running context)."""
from __future__ import annotations

import csv
import json
import math

import pytest

pytestmark = [pytest.mark.model, pytest.mark.slow]

torch = pytest.importorskip("torch")

from experiments.tasks.config import settings_for  # noqa: E402
from experiments.trials import Trial, TrialSequence, freeze_pairs  # noqa: E402
from model_subjects.backends.registry import load_backend  # noqa: E402
from model_subjects.decisions import Scored, decide  # noqa: E402
from model_subjects.protocols import ProtocolError, get_protocol  # noqa: E402
from model_subjects.requests import GenerationRequest  # noqa: E402
from model_subjects.requests import LoglikelihoodRequest as R  # noqa: E402
from tests.support.patching import patch_everywhere  # noqa: E402

TOL = 1e-4


@pytest.fixture(scope="module")
def backend():
    return load_backend(None, threads=1)


def ref_tokens(b, context: str, continuation: str) -> list[float]:
    """Continuation token log-probs from one plain forward pass (tokenisation written out: trailing
    context spaces move to the continuation; encode the whole and split; BOS only for an empty context)."""
    n = len(context) - len(context.rstrip(" "))
    if n:
        context, continuation = context[:-n], context[-n:] + continuation
    tok = b.tokenizer
    ctx = tok(context, add_special_tokens=False)["input_ids"]
    cont = tok(context + continuation, add_special_tokens=False)["input_ids"][len(ctx):]
    start = [tok.bos_token_id] if not ctx else []
    ids = torch.tensor([start + ctx + cont])
    with torch.no_grad():
        lp = torch.log_softmax(b.model(input_ids=ids).logits[0].double(), -1)
    k = len(start) + len(ctx)
    return [lp[k - 1 + j, t].item() for j, t in enumerate(cont)]


def trial(task: str, **mat) -> Trial:
    return Trial(experiment="t", block="test", trial_index=0, block_trial_index=0, item_id="1:a",
                 feedback=True, item="1", task=task, role="test", materials=freeze_pairs(mat))


class _Task:
    def __init__(self, kind: str, **given):
        self.kind = kind
        self.given = given

    def settings(self):
        return settings_for(self.kind, self.given)


def ask(b, proto, t: Trial):
    """Run one trial as the batched runner does: score every query's options, generate, measure, decide."""
    qs = proto.queries(t)
    res = [b.loglikelihood([R(q.prompt, o.continuation) for o in q.options]) for q in qs]
    scores = [[r.logprob for r in rs] for rs in res]
    text = b.generate_until([GenerationRequest(qs[0].prompt, proto.until, proto.max_new_tokens, True)])[0] \
        if proto.generates else ""
    measured = proto.measure(b, [t], [qs[0].prompt])[0] if proto.measures else None
    return qs, scores, decide(proto, t, Scored(scores, res, text, measured)), text


def proto(kind: str, name: str, **given):
    return get_protocol(name, task=_Task(kind, **given))


def test_judgment_meta_scores_labels_after_the_question(backend):
    p = proto("judgment", "meta")
    t = trial("judgment", sentence="The cats sleeps on the mat.", answer="no")
    qs, scores, d, _ = ask(backend, p, t)
    assert qs[0].prompt == "The cats sleeps on the mat.\nIs this sentence acceptable? (Yes / No)\nAnswer:"
    ref = [sum(ref_tokens(backend, qs[0].prompt, c)) for c in (" Yes", " No")]
    assert scores[0] == pytest.approx(ref, abs=TOL)
    chosen = "yes" if ref[0] > ref[1] else "no"
    assert d.response == chosen and d.correct == (chosen == "no")
    assert d.margin == pytest.approx(ref[1] - ref[0], abs=TOL) and p.name == "judgment:meta"


def test_judgment_direct_compares_the_minimal_pair(backend):
    p = proto("judgment", "direct")
    good, bad = "The keys to the cabinet are on the table.", "The keys to the cabinet is on the table."
    for s, pair, answer in ((good, bad, "yes"), (bad, good, "no")):
        _, scores, d, _ = ask(backend, p, trial("judgment", sentence=s, pair_sentence=pair, answer=answer))
        ls, lp = sum(ref_tokens(backend, "", s)), sum(ref_tokens(backend, "", pair))
        assert scores[0] == pytest.approx([ls, lp], abs=TOL)
        assert (d.response == ("yes" if ls > lp else "no")
                and d.columns["sentence_logprob"] == pytest.approx(ls, abs=TOL))
    assert d.correct is True  # the model prefers the grammatical sentence of this pair
    with pytest.raises(ProtocolError, match="pair_sentence"):
        p.queries(trial("judgment", sentence=good))


def test_choice_direct_sum_and_mean(backend):
    opts = ["mat.", "refrigerator in the kitchen."]
    t = trial("choice", prefix="The cat sat on the", options=opts, answer="mat.")
    for name in ("direct", "direct:mean"):
        p = proto("choice", name)
        _, scores, d, _ = ask(backend, p, t)
        toks = [ref_tokens(backend, "The cat sat on the", " " + o) for o in opts]
        sums, means = [sum(x) for x in toks], [sum(x) / len(x) for x in toks]
        assert scores[0] == pytest.approx(sums, abs=TOL)
        assert d.columns["option_mean_logprobs"] == pytest.approx(means, abs=TOL)
        basis = sums if name == "direct" else means
        k = max(range(2), key=lambda i: basis[i])
        assert d.response == opts[k] and d.correct == (k == 0)
        assert d.margin == pytest.approx(basis[0] - basis[1], abs=TOL)


def test_choice_meta_asks_both_orders(backend):
    p = proto("choice", "meta")
    opts = ["The cat sleeps.", "The cat sleep.", "Cat the sleeps."]
    t = trial("choice", options=opts, answer="The cat sleeps.")
    qs, scores, d, _ = ask(backend, p, t)
    assert "1) The cat sleeps.\n2) The cat sleep.\n3) Cat the sleeps." in qs[0].prompt
    assert "1) Cat the sleeps.\n2) The cat sleep.\n3) The cat sleeps." in qs[1].prompt
    ref = [[sum(ref_tokens(backend, q.prompt, f" {k}")) for k in (1, 2, 3)] for q in qs]
    assert scores == [pytest.approx(r, abs=TOL) for r in ref]
    per = [(ref[0][i] + ref[1][2 - i]) / 2 for i in range(3)]
    assert d.option_logprobs == pytest.approx(per, abs=TOL)
    assert d.response == opts[max(range(3), key=lambda i: per[i])]


def test_choice_production_parses_the_generation(backend):
    p = proto("choice", "production")
    t = trial("choice", options=["yes", "no"], answer="yes")
    qs, _, d, text = ask(backend, p, t)
    assert d.extra["generation"] == text and d.columns["response_text"] == text
    from kinds.choice.model import parse_choice

    assert parse_choice("2", ["a", "b"]) == ("b", "b") and parse_choice(" b.", ["a", "b"]) == ("b", "b")
    assert parse_choice("I think 1", ["a", "b"]) == (None, "a") and parse_choice("maybe", ["a", "b"]) == (None, None)
    assert d.response == (parse_choice(text, ["yes", "no"])[0] or "none")


def test_rating_meta_distribution(backend):
    p = proto("rating", "meta", scale={"points": 5, "low_label": "bad", "high_label": "good"})
    t = trial("rating", sentence="The cat sleeps.")
    qs, _, d, _ = ask(backend, p, t)
    assert qs[0].prompt.endswith("Answer on a scale from 1 to 5 (1 = bad, 5 = good).\nAnswer:")
    ref = [sum(ref_tokens(backend, qs[0].prompt, f" {k}")) for k in range(1, 6)]
    z = sum(math.exp(x) for x in ref)
    expected = sum((k + 1) * math.exp(x) / z for k, x in enumerate(ref))
    assert d.columns["rating_expected"] == pytest.approx(expected, abs=1e-4)
    assert d.columns["rating"] == 1 + max(range(5), key=lambda i: ref[i]) and d.correct is None


def test_rating_direct_logprob_per_token_and_slor(backend):
    p = proto("rating", "direct")
    s = "The cat sleeps."
    _, _, d, _ = ask(backend, p, trial("rating", sentence=s, unigram_logprob=-30.0))
    toks = ref_tokens(backend, "", s)
    assert d.columns["sentence_logprob"] == pytest.approx(sum(toks), abs=TOL)
    assert d.extra["logprob_per_token"] == pytest.approx(sum(toks) / len(toks), abs=TOL)
    assert d.extra["slor"] == pytest.approx((sum(toks) + 30.0) / len(toks), abs=TOL)


def test_completion_direct_logprob_and_rank(backend):
    p = proto("completion", "direct")
    prefix, target = "He drank a cup of", "tea"
    _, _, d, _ = ask(backend, p, trial("completion", prefix=prefix, target=target))
    assert d.columns["target_logprob"] == pytest.approx(sum(ref_tokens(backend, prefix, " " + target)), abs=TOL)
    tok = backend.tokenizer
    ids = tok(prefix, add_special_tokens=False)["input_ids"]
    first = tok(prefix + " " + target, add_special_tokens=False)["input_ids"][len(ids)]
    with torch.no_grad():
        logits = backend.model(input_ids=torch.tensor([ids])).logits[0, -1]
    order = torch.argsort(logits, descending=True).tolist()
    assert d.columns["target_rank"] == order.index(first) + 1
    assert d.correct == (order[0] == first) and d.response == tok.decode([order[0]]).strip()


def test_completion_production_and_meta_score_the_first_word(backend):
    for name in ("production", "meta"):
        p = proto("completion", name)
        t = trial("completion", prefix="The capital of France is", target="Paris", accepted=["paris."])
        qs, _, d, text = ask(backend, p, t)
        ref = backend.model.generate(**backend.tokenizer(qs[0].prompt, return_tensors="pt"), max_new_tokens=8,
                                     do_sample=False)
        assert text.strip().split("\n")[0] in backend.tokenizer.decode(ref[0]).split(qs[0].prompt.split("\n")[-1], 1)[1]
        word = text.split()[0] if text.split() else ""
        assert d.response == word and d.columns["response_text"] == text
        assert d.correct == (word.strip(".,!").lower() == "paris")


def test_lexical_decision_direct_and_meta(backend):
    _, _, d, _ = ask(backend, proto("lexical_decision", "direct"),
                     trial("lexical_decision", sentence="blick", answer="nonword"))
    assert d.columns["sentence_logprob"] == pytest.approx(sum(ref_tokens(backend, "", "blick")), abs=TOL)
    assert d.correct is None
    qs, scores, d, _ = ask(backend, proto("lexical_decision", "meta"),
                           trial("lexical_decision", sentence="table", answer="word"))
    assert [o.continuation for o in qs[0].options] == [" Word", " Non-word"]
    ref = [sum(ref_tokens(backend, qs[0].prompt, c)) for c in (" Word", " Non-word")]
    assert d.response == ("word" if ref[0] > ref[1] else "nonword")


# ---------------------------------------------------------------------------------- the runner
def _runner(tmp_path, monkeypatch, backend, kind: str, trials: list[Trial], **cfg):
    import yaml

    from experiments.spec import bundled_spec_path, parse_spec
    from model_subjects import runner as runner_mod

    data = yaml.safe_load(bundled_spec_path("lakretz2021_demo").read_text())
    data["task"] = {"kind": kind}
    exp = parse_spec(data)
    import experiments.design_compiler  # the run's plan (experiments/run_prep.py) compiles through it

    patch_everywhere(monkeypatch, experiments.design_compiler, "compile_sequence",
                     lambda exp, sid, seed, session=1, list_number=None: TrialSequence(
                         experiment=exp.name, subject_id=sid, seed=0, spec_hash=exp.spec_hash,
                         trials=tuple(trials)))
    rc = runner_mod.RunConfig(spec="x", out=tmp_path, **cfg)
    return runner_mod.Runner(rc, backend, exp=exp)


def _generic_trials(n: int, task: str, **mat) -> list[Trial]:
    from dataclasses import replace

    base = trial(task, **mat)
    return [replace(base, trial_index=k, block_trial_index=k, item_id=f"{k}:a", item=str(k)) for k in range(n)]


def test_runner_writes_generic_columns_and_running_history_describes_the_trial(tmp_path, monkeypatch, backend):
    trials = _generic_trials(2, "choice", prefix="The cat sat on the", options=["mat.", "moon."], answer="mat.")
    r = _runner(tmp_path, monkeypatch, backend, "choice", trials, context="running", protocol="direct")
    r.run()
    path = next(tmp_path.rglob("*.csv"))
    rows = list(csv.DictReader(path.open()))
    assert [row["protocol"] for row in rows] == ["choice:direct"] * 2
    cols = [json.loads(row["extra"]).get("columns") or row for row in rows]
    from model_subjects.context import History, sha256

    hist = History(r.exp)
    hist.begin_trial(trials[0])
    first_context = hist.text + "The cat sat on the"  # the instructions and the block's intro, then the prefix
    assert sha256(first_context) == json.loads(rows[0]["extra"])["context_sha256"]
    toks = [ref_tokens(backend, first_context, " " + o) for o in ("mat.", "moon.")]
    means = json.loads(cols[0]["option_mean_logprobs"])
    assert means == pytest.approx([sum(x) / len(x) for x in toks], abs=1e-4)
    # the second trial's context holds the first one: its prefix, the model's answer, the feedback
    extra = json.loads(rows[1]["extra"])
    assert json.loads(rows[0]["extra"])["answer_text"] in (" mat.", " moon.")
    hist.commit(trials[0], "The cat sat on "
                           "the", json.loads(rows[0]["extra"])["answer_text"], rows[0]["feedback_text"] or None)
    hist.begin_trial(trials[1])
    assert rows[0]["feedback_text"] and rows[0]["feedback_text"] in hist.text
    assert sha256(hist.text + "The cat sat on the") == extra["context_sha256"]


def test_runner_refuses_an_item_without_the_protocols_materials(tmp_path, monkeypatch, backend):
    from model_subjects.runner import RunError

    trials = _generic_trials(1, "judgment", sentence="The cat sleeps.")
    with pytest.raises(RunError, match="pair_sentence"):
        _runner(tmp_path, monkeypatch, backend, "judgment", trials, protocol="direct").run()


def test_running_subjects_together_equal_one_at_a_time(tmp_path, monkeypatch, backend):
    """Judgment meta in a running context: two subjects advanced together (one batched cache) score
    as each alone (1e-4), with the same answers."""
    trials = _generic_trials(3, "judgment", sentence="The cats sleeps.", answer="no")
    got = {}
    for together in (True, False):
        out = tmp_path / str(together)
        _runner(out, monkeypatch, backend, "judgment", trials, context="running", protocol="meta", subjects=2,
                parallel_running=together).run()
        got[together] = [list(csv.DictReader(p.open())) for p in sorted(out.rglob("*.csv"))]
    for a_rows, b_rows in zip(got[True], got[False], strict=False):
        assert [r["response"] for r in a_rows] == [r["response"] for r in b_rows]
        for a, b in zip(a_rows, b_rows, strict=False):
            assert json.loads(a["option_logprobs"]) == pytest.approx(json.loads(b["option_logprobs"]), abs=1e-4)
            assert a["protocol"] == "judgment:meta" and a["correct"] in ("True", "False")
