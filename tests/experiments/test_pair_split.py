"""A (context, continuation) pair whose context ends in "\n\n": the scored tokens must spell the continuation.

GPT-2-style tokenizers (SmolLM2's) read a trailing "\n\n" as one token at the end of a text but as
"\n", "\n" before a word; cutting the whole text's tokens at the context's own token count then
scored "\n" + "Yes" after "...\n" (the text "...\n\n\nYes"), a silent wrong number for every Hu & Levy
prompt in the authors' text ("...as your answer.\n\nYes"). What would break: that cut coming back.
"""
from __future__ import annotations

import pytest

from model_subjects.requests import split_tokens

pytestmark = [pytest.mark.model]
torch = pytest.importorskip("torch")


def test_split_tokens_rules():
    text = {1: "a", 2: "\n", 3: "\n\n", 4: "Yes", 5: "ab"}
    decode = lambda ids: "".join(text[i] for i in ids)  # noqa: E731
    assert split_tokens((1, 3), (1, 3, 4), "a\n\n", decode) == ((1, 3), (4,))  # the usual case, untouched
    assert split_tokens((1, 3), (1, 2, 2, 4), "a\n\n", decode) == ((1, 2, 2), (4,))  # split where the text ends
    with pytest.raises(ValueError, match="no token boundary"):
        split_tokens((1,), (5,), "a", decode)  # "a" + "b" is one token: nothing of its own to score
    with pytest.raises(ValueError, match="no token boundary"):
        split_tokens((1, 3), (1, 2, 2, 4), "a\n\n", None)  # no way to find the boundary: refused, not guessed


def test_transformers_backend_scores_the_answer_after_the_blank_line():
    from model_subjects.backends.registry import load_backend
    from model_subjects.requests import LoglikelihoodRequest

    lm = load_backend(None)
    tok, model = lm.tokenizer, lm.model
    context, answer = "Respond with either Yes or No as your answer.\n\n", "Yes"
    assert (tok(context, add_special_tokens=False)["input_ids"][-1]
            != tok("\n", add_special_tokens=False)["input_ids"][0])
    whole = tok(context + answer, add_special_tokens=False)["input_ids"]  # the prompt as written, one pass
    with torch.no_grad():
        lp = torch.log_softmax(model(input_ids=torch.tensor([whole])).logits[0].double(), -1)
    assert tok.decode(whole[-1:]) == answer
    want = lp[len(whole) - 2, whole[-1]].item()
    for res in (lm.loglikelihood([LoglikelihoodRequest(context, answer)])[0],
                lm.loglikelihood_alone([LoglikelihoodRequest(context, answer)])[0]):
        assert res.n_tokens == 1 and res.logprob == pytest.approx(want, abs=1e-4)


def test_llamacpp_backend_splits_the_same_way():
    pytest.importorskip("llama_cpp")
    from model_subjects.backends.registry import load_backend

    lm = load_backend(None, backend="llamacpp")
    context = "Respond with either Yes or No as your answer.\n\n"
    ctx, cont = lm.encode_pair(context, "Yes")
    assert lm.decode_ids(ctx) == context and lm.decode_ids(cont) == "Yes" and len(cont) == 1
    assert lm.encode(context)[-1] != ctx[-1]  # alone, the context ends in the one "\n\n" token
