"""The transformers backend against independent computations (plain unbatched forward passes,
minicons, transformers' own greedy generate), with the bundled model loaded once per module."""
from __future__ import annotations

import pytest

pytestmark = [pytest.mark.model, pytest.mark.slow]

torch = pytest.importorskip("torch")

from model_subjects.backends.base import ModelLoadError  # noqa: E402
from model_subjects.backends.registry import load_backend  # noqa: E402
from model_subjects.requests import GenerationRequest  # noqa: E402
from model_subjects.requests import LoglikelihoodRequest as R  # noqa: E402
from stimuli.prompts import get_prompt_set  # noqa: E402

TOL = 1e-4
PROMPT = get_prompt_set("eightshot_a").text + "\n"


@pytest.fixture(scope="module")
def backend():
    return load_backend(None, threads=1)


def reference(b, context: str, continuation: str, add_bos: bool) -> list[float]:
    """Token log-probs of the continuation: one sequence, one plain forward pass, no cache, no padding.

    Tokenisation written out independently: trailing spaces of the context go to the
    continuation; the whole string is encoded and split at the encoded context's length."""
    n_sp = len(context) - len(context.rstrip(" "))
    if n_sp:
        context, continuation = context[:-n_sp], context[-n_sp:] + continuation
    tok = b.tokenizer
    ctx = tok(context, add_special_tokens=False)["input_ids"]
    whole = tok(context + continuation, add_special_tokens=False)["input_ids"]
    cont = whole[len(ctx):]
    start = [tok.bos_token_id] if (add_bos or not ctx) else []
    ids = torch.tensor([start + ctx + cont])
    with torch.no_grad():
        lp = torch.log_softmax(b.model(input_ids=ids).logits[0].double(), -1)
    n = len(start) + len(ctx)
    return [lp[n - 1 + j, t].item() for j, t in enumerate(cont)]


REQUESTS = [
    R(PROMPT + "The boy that the farmers", " watch"),  # shared few-shot prompt, single-token options
    R(PROMPT + "The boy that the farmers", " watches"),
    R(PROMPT + "The girls near the house", " are"),
    R(PROMPT + "The girls near the house", " is not happy."),  # multi-token, same context
    R(PROMPT + "The keys to the cabinet", " are on the table."),
    R(PROMPT + "The keys to the cabinet ", "is"),  # trailing context space moves into the continuation
    R("The cat", " sat on the mat."),  # short, unshared context
    R("", "The dogs eat meat."),  # empty context: conditioned on the start token
    R(PROMPT, "The dogs eat meat."),  # a sentence on a new line (the newline stays in the context)
    R("Answer:", " Yes"),
    R("Here are two English sentences: 1) A. 2) B. Answer:", " 1"),  # ' 1' is two tokens here
]


@pytest.mark.parametrize("add_bos", [False, True])
def test_loglikelihood_matches_unbatched_reference_for_any_batch_and_padding(backend, add_bos):
    refs = [reference(backend, r.context, r.continuation, add_bos) for r in REQUESTS]
    saved = (backend.add_bos, backend.prefix_ids, backend.batch_size, backend.padding_side, backend.min_prefix,
             backend.prefix_sharing)
    try:
        backend.add_bos = add_bos
        backend.prefix_ids = (backend.bos_id,) if add_bos else ()
        # the prefix tree at several batch sizes; the prompt-only scheme: padding sides x with/without
        # the shared-prompt KV cache (min_prefix 4 / never)
        for sharing, batch_size, side, min_prefix in (
                ("tree", 1, "left", 16), ("tree", 3, "left", 16), ("tree", "auto", "left", 16),
                ("prompt", 1, "left", 10**6), ("prompt", 3, "left", 4), ("prompt", 3, "right", 4),
                ("prompt", 32, "left", 4), ("prompt", 32, "right", 10**6)):
            backend.prefix_sharing, backend.batch_size = sharing, batch_size
            backend.padding_side, backend.min_prefix = side, min_prefix
            res = backend.loglikelihood(REQUESTS)
            for req, r, ref in zip(REQUESTS, res, refs, strict=False):
                assert r.n_tokens == len(ref), req
                assert abs(r.logprob - sum(ref)) < TOL, (sharing, batch_size, side, min_prefix, req, r.logprob)
                assert max(abs(a - b) for a, b in zip(r.token_logprobs, ref, strict=False)) < TOL
    finally:
        (backend.add_bos, backend.prefix_ids, backend.batch_size, backend.padding_side, backend.min_prefix,
         backend.prefix_sharing) = saved


def test_bos_setting_changes_scores(backend):
    """A BOS-sensitive first-token score: with add_bos the sequence really starts with BOS."""
    no = reference(backend, "The", " boy", False)[0]
    yes = reference(backend, "The", " boy", True)[0]
    assert abs(no - yes) > 1e-3


def test_prompt_scheme_shares_one_pass_for_alternatives_and_encodes_prompt_once(backend):
    """The ablation scheme (prefix_sharing="prompt"): one pass over the prompt, one batch of prefixes."""
    calls = []

    def hook(module, args, kwargs):
        calls.append(tuple(kwargs["input_ids"].shape) if "input_ids" in kwargs else tuple(args[0].shape))

    prefixes = ["The boy that the farmers", "The girls near the house", "The doctor behind the chairs",
                "The friends of the actor", "The mothers that the girl"]
    reqs = [R(PROMPT + p, w) for p in prefixes for w in (" is", " are")]
    saved = backend.batch_size, backend.prefix_sharing
    h = backend.model.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        backend.batch_size, backend.prefix_sharing = 32, "prompt"
        res = backend.loglikelihood(reqs)
    finally:
        backend.batch_size, backend.prefix_sharing = saved
        h.remove()
    n_prompt = len(backend.encode(PROMPT.rstrip()))
    assert len(calls) == 2, calls
    assert calls[0][0] == 1 and calls[0][1] >= n_prompt
    assert calls[1][0] == len(prefixes) and calls[1][1] < 12
    for r, q in zip(res, reqs, strict=False):
        assert abs(r.logprob - sum(reference(backend, q.context, q.continuation, False))) < TOL


def test_prefix_tree_encodes_each_shared_opening_once_and_equals_plain_passes(backend):
    """Templated stimuli share openings; the tree runs every distinct prefix once (and no more)."""
    from model_subjects.prefix_tree import build_tree

    openings = ["The actor that the boys near the", "The actor that the girls near the",
                "The actor that the boys behind the", "The actress that the boys near the", "The dogs"]
    nouns = [" house", " cabinets"]
    ctxs = [o + n for o in openings for n in nouns] + [PROMPT + "The boy that the farmers"]
    reqs = [R(c, w) for c in ctxs for w in (" is", " are", " are not")]  # ' are not': two tokens
    seen = []

    def hook(module, args, kwargs):
        seen.append(kwargs["input_ids"].shape[0])

    saved = backend.batch_size, backend.prefix_sharing
    h = backend.model.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        backend.batch_size, backend.prefix_sharing = "auto", "tree"
        res = backend.loglikelihood(reqs)
    finally:
        backend.batch_size, backend.prefix_sharing = saved
        h.remove()
    for r, q in zip(res, reqs, strict=False):
        assert abs(r.logprob - sum(reference(backend, q.context, q.continuation, False))) < TOL, q
    # tokens run = distinct prefixes of all inputs (inputs: context + all but the last scored token)
    inputs = {backend.encode(c) + backend.encode_pair(c, w)[1][:-1] for c in ctxs for w in (" is", " are not")}
    distinct = {s[:i] for s in inputs for i in range(1, len(s) + 1)}
    assert backend.last_tree_tokens == len(distinct) < sum(len(s) for s in inputs) // 2
    assert backend.last_forward_calls == len(seen) <= 6
    tree = build_tree(sorted(inputs))
    assert tree.n_tokens == len(distinct)


def test_build_tree_small_cases():
    from model_subjects.prefix_tree import build_tree

    seqs = [(1, 2), (1, 2, 3, 4), (1, 2, 3, 5), (1, 6), (7,)]
    t = build_tree(seqs)
    assert t.n_tokens == len({s[:i] for s in seqs for i in range(1, len(s) + 1)}) == 7
    for s, seq in enumerate(seqs):
        # walking up from a sequence's end node covers exactly its tokens
        toks, k = [], t.terminal[s]
        while k >= 0:
            n = t.nodes[k]
            toks = list(t.seqs[n.seq][n.start:n.end]) + toks
            k = n.parent
        assert tuple(toks[: len(seq)]) == seq
        assert t.nodes[t.node_at(s, len(seq) - 1)].end >= len(seq)
    with pytest.raises(ValueError):
        build_tree([(2,), (1,)])


def test_kv_stream_equals_reencoding_and_encodes_each_token_once(backend):
    segs = ["Read each sentence.\n", "The boy that the farmers watch knows the teacher.\nAnswer: No\nCorrect!\n",
            "The girls near the house is happy.\nAnswer: Yes\nCorrect!\n"]
    fast, naive = backend.stream(), backend.stream(reuse_cache=False)
    text = ""
    for k in range(4):
        for s in (fast, naive):
            s.extend(segs[k % len(segs)])
        text += segs[k % len(segs)]
        prompt = f"The dogs{' that the cat' * (k % 2)} eat meat.\nAnswer:"
        conts = [" Yes", " Maybe not"]
        a = fast.loglikelihood(prompt, conts)
        b = naive.loglikelihood(prompt, conts)
        for ra, rb, cont in zip(a, b, conts, strict=False):
            ref = sum(reference(backend, text + prompt, cont, False))
            assert abs(ra.logprob - ref) < TOL and abs(rb.logprob - ref) < TOL
        # the segment tokens concatenate to the whole-text tokens (newline boundaries)
        assert fast.ids == list(backend.encode(text))
        nxt = prompt + " Yes\nCorrect!\n"
        for s in (fast, naive):
            s.extend(nxt)
        text += nxt
    # every token of the session went through the model once, plus one re-run token per query
    # and the extra tokens of multi-token options
    assert fast.tokens_encoded <= len(fast.ids) + 4 * 2
    assert naive.tokens_encoded > 2 * fast.tokens_encoded  # re-encodes the growing history every query


def test_generate_until_matches_transformers_greedy(backend):
    prompt = "The capital of France is"
    out = backend.generate_until([GenerationRequest(prompt, ("\n",), 6)])[0]
    ids = torch.tensor([backend.tokenizer(prompt, add_special_tokens=False)["input_ids"]])
    with torch.no_grad():
        gen = backend.model.generate(ids, max_new_tokens=6, do_sample=False, attention_mask=torch.ones_like(ids),
                                     pad_token_id=backend.pad_id)
    text = backend.tokenizer.decode(gen[0, ids.shape[1]:], skip_special_tokens=True).split("\n")[0]
    assert out == text and out.strip()
    stream = backend.stream()
    stream.extend("Read this.\n")
    assert stream.generate(prompt, ("\n",), 6) == backend.generate_until(
        [GenerationRequest("Read this.\n" + prompt, ("\n",), 6)])[0]


def test_agrees_with_minicons(backend):
    scorer = pytest.importorskip("minicons.scorer")
    mc = scorer.IncrementalLMScorer(backend.model, device="cpu", tokenizer=backend.tokenizer)
    pre = [PROMPT + "The boy that the farmers", "The girls near the house"]
    stim = ["watches", "is happy."]
    theirs = mc.conditional_score(pre, stim, reduction=lambda x: x.sum(0).item())
    ours = backend.loglikelihood([R(p, " " + s) for p, s in zip(pre, stim, strict=False)])
    for a, b in zip(ours, theirs, strict=False):
        assert abs(a.logprob - b) < TOL


def test_sidecar_description_records_weights_and_settings(backend):
    d = backend.describe()
    assert d["name"] == "SmolLM2-135M-Instruct" and len(d["weights_sha256"]) == 64
    assert d["dtype"] == "float32" and d["device"] == "cpu" and d["add_bos"] is False
    assert d["source"]["source_sha256"] and d["versions"]["transformers"]


def test_bad_model_names_give_clear_errors(tmp_path):
    with pytest.raises(ModelLoadError, match="no-such-org/no-such-model"):
        load_backend("no-such-org/no-such-model")
    with pytest.raises(ModelLoadError, match="does not exist"):
        load_backend(str(tmp_path / "missing" / "model"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelLoadError, match="no config.json"):
        load_backend(str(tmp_path / "empty"))
