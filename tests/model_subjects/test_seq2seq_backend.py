"""`--backend seq2seq` (Flan-T5 style) against a plain T5 forward pass, done as the authors' released code
does it (utils/models.py: encoder `prompt-with-<extra_id_0>`, labels `<extra_id_0> answer`, the answer's and
`</s>`'s log-probabilities summed).

No T5 weights or SentencePiece tokenizer can be fetched here, so the model is built from its config with
random weights (seeded): the fast test a tiny T5, the slow one the real flan-t5-small shape (its config
values written out below), each with a small word-level tokenizer made with the `tokenizers` library and
T5's special tokens (<pad> 0, </s> 1, <unk> 2, <extra_id_0..99>).
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from model_subjects.backends.registry import canonical_name, load_backend  # noqa: E402
from model_subjects.requests import LoglikelihoodRequest  # noqa: E402

FIX = Path(__file__).parent.parent / "data" / "hu_levy2023" / "datasets"

# google/flan-t5-small's config.json (the values that fix the architecture)
FLAN_T5_SMALL = dict(vocab_size=32128, d_model=512, d_kv=64, d_ff=1024, num_layers=8, num_decoder_layers=8,
                     num_heads=6, relative_attention_num_buckets=32, relative_attention_max_distance=128,
                     dropout_rate=0.1, layer_norm_epsilon=1e-6, initializer_factor=1.0,
                     feed_forward_proj="gated-gelu", is_encoder_decoder=True, tie_word_embeddings=False,
                     pad_token_id=0, eos_token_id=1, decoder_start_token_id=0, n_positions=512)
TINY = dict(FLAN_T5_SMALL, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4)


def words() -> list[str]:
    text = " ".join(f.read_text(encoding="utf-8") for f in sorted(FIX.rglob("corpus.csv")))
    from reproductions.hu_levy.prompts import TEMPLATES

    text += " " + " ".join(TEMPLATES.values())
    import re

    return sorted(set(re.findall(r"\w+|[^\w\s]", text)))


def build_model(folder: Path, config: dict) -> Path:
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    vocab = {"<pad>": 0, "</s>": 1, "<unk>": 2}
    for w in words():
        vocab.setdefault(w, len(vocab))
    extra = [f"<extra_id_{i}>" for i in range(100)]
    for i, t in enumerate(reversed(extra)):  # T5 puts the sentinels at the end of the vocabulary
        vocab[t] = config["vocab_size"] - 100 + i
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()])
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="</s>", unk_token="<unk>",
                                   additional_special_tokens=extra)
    torch.manual_seed(0)
    model = T5ForConditionalGeneration(T5Config(**config)).eval()
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder


@functools.lru_cache(maxsize=2)
def plain(folder: Path):
    """The saved model and tokenizer, loaded plainly (no twinlab code)."""
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    return T5ForConditionalGeneration.from_pretrained(folder).eval(), AutoTokenizer.from_pretrained(folder)


def reference(folder: Path, context: str, answer: str) -> float:
    """The authors' T5 scoring, written plainly: one unpadded forward pass with labels."""
    model, tok = plain(folder)
    input_ids = tok(context + "<extra_id_0>", return_tensors="pt").input_ids
    labels = tok(f"<extra_id_0> {answer}", return_tensors="pt").input_ids
    assert labels[0, 0].item() == tok.convert_tokens_to_ids("<extra_id_0>") and labels[0, -1].item() == 1
    with torch.no_grad():
        lp = torch.log_softmax(model(input_ids=input_ids, labels=labels).logits.double(), -1)
    return sum(lp[0, j, labels[0, j]].item() for j in range(1, labels.shape[1]))


REQUESTS = [
    LoglikelihoodRequest("A butterfly is a flying insect with four large ", "wings"),
    LoglikelihoodRequest("Here is a sentence: Every child has studied. Is the sentence a good sentence of English? "
                         "Respond with either Yes or No as your answer. Answer: ", "Yes"),
    LoglikelihoodRequest("The archer released the ", "arrow"),
    LoglikelihoodRequest("The archer released the ", "interview"),
    LoglikelihoodRequest("", "The dogs bark ."),
]


def test_tiny_t5_scores_equal_the_plain_forward_pass_and_do_not_depend_on_the_batch(tmp_path):
    folder = build_model(tmp_path / "tiny-t5", TINY)
    assert canonical_name("flan-t5") == "seq2seq"
    lm = load_backend(str(folder), backend="seq2seq", batch_size=8)
    got = lm.loglikelihood(REQUESTS)
    for r, res in zip(REQUESTS, got, strict=False):
        assert res.logprob == pytest.approx(reference(folder, r.context, r.continuation.strip()), abs=1e-4)
        assert res.n_tokens == len(r.continuation.split()) + 1  # the answer's words and </s>
    alone = lm.loglikelihood_alone(REQUESTS)
    # float32 padding noise
    assert [a.logprob for a in alone] == pytest.approx([g.logprob for g in got], rel=1e-6, abs=1e-5)
    plain = load_backend(str(folder), backend="seq2seq", sentinel=False, score_eos=False)
    r = plain.loglikelihood([REQUESTS[0]])[0]
    assert r.n_tokens == 1 and r.logprob != pytest.approx(got[0].logprob)
    assert lm.describe()["backend"] == "seq2seq" and lm.describe()["n_parameters"] > 0
    from model_subjects.backends.base import ModelLoadError

    with pytest.raises(ModelLoadError, match="no BOS"):
        load_backend(str(folder), backend="seq2seq", add_bos=True)


@pytest.mark.slow
def test_flan_t5_small_shape_matches_the_plain_forward_pass_and_runs_the_reproduction(tmp_path):
    folder = build_model(tmp_path / "flan-t5-small-random", FLAN_T5_SMALL)
    cfg = json.loads((folder / "config.json").read_text())
    assert (cfg["d_model"], cfg["num_layers"], cfg["num_heads"], cfg["vocab_size"]) == (512, 8, 6, 32128)
    lm = load_backend(str(folder), backend="seq2seq")
    # by hand: embeddings 32128*512; encoder 8 x (4*512*384 + 3*512*1024 + 2*512) + 32*6 + 512; decoder 8 x
    # (8*512*384 + 3*512*1024 + 3*512) + 32*6 + 512; plus an untied lm_head (77M, flan-t5-small's), except that
    # transformers 5 always ties T5's lm_head to the embeddings (60.5M)
    body = 32128 * 512 + 8 * (4 * 512 * 384 + 3 * 512 * 1024 + 2 * 512) + 32 * 6 + 512 \
        + 8 * (8 * 512 * 384 + 3 * 512 * 1024 + 3 * 512) + 32 * 6 + 512
    assert lm.describe()["n_parameters"] in (body, body + 32128 * 512)
    # random weights give log-probabilities of -50 a token; float32 noise grows with them, so a padded batch
    # is held to 1e-6 relative, a request scored alone (no padding) to 1e-4 absolute
    refs = [reference(folder, r.context, r.continuation.strip()) for r in REQUESTS]
    assert [x.logprob for x in lm.loglikelihood(REQUESTS)] == pytest.approx(refs, rel=1e-6)
    assert [x.logprob for x in lm.loglikelihood_alone(REQUESTS)] == pytest.approx(refs, abs=1e-4)
    del lm
    # the reproduction recognises the encoder-decoder folder and runs every experiment on it
    from typer.testing import CliRunner

    from experiments.cli import app

    out = tmp_path / "hl"
    res = CliRunner().invoke(app, ["reproduce", "hu-levy2023", "--data", str(FIX), "--items", "2", "--out", str(out),
                                   "--model", str(folder), "--n-boot", "100", "-q"])
    assert res.exit_code == 0, res.output
    import pandas as pd

    scores = pd.read_csv(out / "tables" / "items_scores.csv", dtype={"experiment": str}, keep_default_na=False)
    assert set(scores["experiment"]) == {"1", "2", "3a", "3b"} and scores["logprob"].notna().all()
    r = scores[(scores["experiment"] == "2") & (scores["method"] == "MetaQuestionComplex")].iloc[0]
    assert r["logprob"] == pytest.approx(reference(folder, r["context"], r["continuation"]), rel=1e-6)
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["models"][0]["backend"] == "seq2seq"


def reference_pll(folder: Path, sentence: str) -> float:
    """The authors' T5 full-sentence pseudo-log-likelihood, transcribed (utils/models.py), one pass per word."""
    model, tok = plain(folder)
    ignore = tok.convert_tokens_to_ids(["<extra_id_0>", "<extra_id_1>", "</s>"])
    if sentence.endswith("."):
        sentence = sentence[:-1]
    words = sentence.split(" ")
    total = 0.0
    for i, w in enumerate(words):
        inpt = (" ".join(words[:i]) + " <extra_id_0> " + " ".join(words[i + 1:])).strip()
        out = f"{w} <extra_id_0>" if i == 0 else f"<extra_id_0> {w}" if i == len(words) - 1 else \
            f"<extra_id_0> {w} <extra_id_1>"
        input_ids, labels = tok(inpt, return_tensors="pt").input_ids, tok(out, return_tensors="pt").input_ids
        with torch.no_grad():
            lp = torch.log_softmax(model(input_ids=input_ids, labels=labels).logits.double(), -1)
        total += sum(lp[0, j, t].item() for j, t in enumerate(labels[0].tolist()) if t not in ignore)
    return total


def test_whole_sentences_get_the_papers_pseudo_log_likelihood(tmp_path):
    folder = build_model(tmp_path / "tiny-t5", TINY)
    lm = load_backend(str(folder), backend="seq2seq", batch_size=4)
    sentences = ["Every child has studied.", "Every child have studied.", "The dogs bark.", "Mary"]
    got = lm.pseudo_loglikelihood(sentences)
    assert got == pytest.approx([reference_pll(folder, s) for s in sentences], rel=1e-6, abs=1e-4)
    # the reproduction's whole-sentence (Direct 3a/3b) requests use it
    from reproductions.hu_levy.prompts import Query
    from reproductions.hu_levy.score import score_queries
    from reproductions.pairs import ScoreCache

    cache = ScoreCache(tmp_path / "cache.jsonl")
    q = Query("3a", "blimp", "1", "Direct", "none", "pair", "good", "", "The dogs bark.")
    df, n, _ = score_queries(lm, cache, [q])
    cache.close()
    assert n == 1 and df["logprob"].iloc[0] == pytest.approx(got[2])
