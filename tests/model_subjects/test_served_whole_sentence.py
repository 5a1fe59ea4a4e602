"""A served model's whole-sentence score when no BOS precedes the sentence (`-B whole_sentence=...`).

vLLM serving a model without BOS echoes a prompt's first token with no log-probability. The Hu & Levy
authors' OpenAI code summed `token_logprobs[1:]` there; twinlab's served backend refuses by default
(`exact`) and sums after the first token under `after-first` (what `reproduce hu-levy2023 --scoring
authors` sets). No vLLM runs on this CPU machine in a test's time, so the server here is a small
vLLM-shaped stand-in (tests/served_support.FakeServer) whose every number comes from the bundled
SmolLM2 run in process with transformers: it answers /v1/completions as vLLM does (echo: the prompt's
tokens as text, their offsets, `None` for the first; generation: the greedy token and its log-probability),
so the probe passes on it. The reference is a plain forward pass over the sentence's tokens.

What would break: the first token's missing value turned into an error under `after-first`, or summed
as 0 / counted under `exact`; a token after the first left out; the count of such sentences lost.
"""
from __future__ import annotations

import pytest

pytestmark = [pytest.mark.model, pytest.mark.slow]
torch = pytest.importorskip("torch")

from served_support import FakeServer, models_list  # noqa: E402

from model_subjects.loading import resolve_model  # noqa: E402
from model_subjects.requests import LoglikelihoodRequest  # noqa: E402
from model_subjects.served import ServedBackend, ServerError  # noqa: E402

SENTENCES = ["Every child has studied.", "The window that the boy wiped shattered."]


@pytest.fixture(scope="module")
def lm():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = resolve_model(None).path
    return AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval(), AutoTokenizer.from_pretrained(path)


def vllm_like(lm):
    """/v1/completions as vLLM answers it for a model without BOS, computed by the real model."""
    model, tok = lm

    def handler(path, body):
        if path == "/v1/models":
            return 200, models_list("smollm2")
        if path != "/v1/completions":
            return 404, {"detail": "Not Found"}
        prompt = body["prompt"]
        ids = tok(prompt, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            lp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].double(), -1)
        g = int(lp[-1].argmax())
        gen_text, gen_lp = tok.decode([g]), float(lp[-1, g])
        if body.get("echo"):
            texts = [tok.decode([i]) for i in ids] + [gen_text]
            offsets, at = [], 0
            for t in texts:
                offsets.append(at)
                at += len(t)
            vals = [None] + [float(lp[k - 1, ids[k]]) for k in range(1, len(ids))] + [gen_lp]
            tops = [None] + [{texts[k]: vals[k]} for k in range(1, len(texts))]
            logprobs = {"tokens": texts, "text_offset": offsets, "token_logprobs": vals, "top_logprobs": tops}
            text = prompt + gen_text
        else:
            logprobs = {"tokens": [gen_text], "text_offset": [len(prompt)], "token_logprobs": [gen_lp],
                        "top_logprobs": [{gen_text: gen_lp}]}
            text = gen_text
        return 200, {"id": "x", "object": "text_completion", "model": "smollm2",
                     "choices": [{"index": 0, "text": text, "logprobs": logprobs, "finish_reason": "length"}]}

    return handler


def after_first(lm, sentence: str) -> tuple[float, int]:
    """Plain forward pass: the sum of log P(token k | tokens < k) for k >= 1 (no BOS), and how many."""
    model, tok = lm
    ids = tok(sentence, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        lp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].double(), -1)
    return sum(float(lp[k - 1, ids[k]]) for k in range(1, len(ids))), len(ids) - 1


def test_whole_sentences_after_the_first_token_or_refused(lm, tmp_path):
    with FakeServer(vllm_like(lm)) as srv:
        b = ServedBackend(srv.url, cache_dir=tmp_path / "c1", whole_sentence="after-first")
        assert b.echo_ok, b.probe.reason  # the stand-in's echo agrees with its generations, as vLLM's does
        assert b.describe()["whole_sentence"] == "after-first"
        got = b.loglikelihood([LoglikelihoodRequest("", s) for s in SENTENCES])
        for s, res in zip(SENTENCES, got, strict=False):
            want, n = after_first(lm, s)
            assert res.logprob == pytest.approx(want, abs=1e-6) and res.n_tokens == n >= 4
        assert b.n_first_token_skipped == len(SENTENCES)
        # an answer after a context is unchanged by the rule: every token of it
        r = b.loglikelihood([LoglikelihoodRequest("The archer released the", " arrow")])[0]
        ids = lm[1]("The archer released the arrow", add_special_tokens=False)["input_ids"]
        n_ctx = len(lm[1]("The archer released the", add_special_tokens=False)["input_ids"])
        assert r.n_tokens == len(ids) - n_ctx
        b.close()
        strict = ServedBackend(srv.url, cache_dir=tmp_path / "c2")  # the default: exact
        with pytest.raises(ServerError, match="no log-probability for the first token"):
            strict.loglikelihood([LoglikelihoodRequest("", SENTENCES[0])])
        strict.close()
    with pytest.raises(ServerError, match="whole_sentence"):
        ServedBackend("http://127.0.0.1:9", whole_sentence="sum")
