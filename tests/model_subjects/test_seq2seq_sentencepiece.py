"""`--backend seq2seq` on a real SentencePiece tokenizer with T5's 100 sentinels (tests/support/t5_fixture.py),
against plain forward passes written as the authors' released code scores Flan-T5 (utils/models.py `T5_LLM`).

What would break: the sentinel or `</s>` mishandled by a real T5 tokenizer (a word split into several
pieces, "▁" after a special token, a newline the normaliser turns into a space); the answer tokenised
otherwise on its own than after `<extra_id_0>`; the pseudo-log-likelihood masking the wrong words or
counting the sentinels; `reproduce hu-levy2023` not running end to end on such a checkpoint, or not
following the authors' conventions by default.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
spm = pytest.importorskip("sentencepiece")

from model_subjects.backends.registry import load_backend  # noqa: E402
from model_subjects.requests import LoglikelihoodRequest  # noqa: E402
from reproductions.hu_levy.data import load_datasets  # noqa: E402
from reproductions.hu_levy.prompts import all_queries  # noqa: E402
from tests.support.t5_fixture import HU_LEVY_FIXTURE, N_SENTINELS, build_t5, default_texts  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def t5(tmp_path_factory) -> Path:
    return build_t5(tmp_path_factory.mktemp("t5") / "t5-sentencepiece")


@pytest.fixture(scope="module")
def plain(t5):
    """The checkpoint loaded plainly (no twinlab code)."""
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    return T5ForConditionalGeneration.from_pretrained(t5).eval(), AutoTokenizer.from_pretrained(t5)


def forward(plain, enc_text: str, target_text: str, keep) -> tuple[float, int]:
    """One unpadded forward pass with labels, as the authors' code does it: (sum over kept labels, count)."""
    model, tok = plain
    input_ids = tok(enc_text, return_tensors="pt").input_ids
    labels = tok(target_text, return_tensors="pt").input_ids
    with torch.no_grad():
        lp = torch.log_softmax(model(input_ids=input_ids, labels=labels).logits.double(), -1)[0]
    kept = [j for j in range(labels.shape[1]) if keep(j, int(labels[0, j]), labels.shape[1])]
    return sum(lp[j, labels[0, j]].item() for j in kept), len(kept)


def authors_answer(plain, prompt: str, answer: str) -> tuple[float, int]:
    """T5_LLM.get_logprob_of_continuation: the prompt with the answer replaced by <extra_id_0> in the encoder,
    `<extra_id_0> answer` (+ </s>) as labels, every label but the first summed."""
    assert prompt.endswith(answer)
    return forward(plain, prompt[: len(prompt) - len(answer)] + "<extra_id_0>", f"<extra_id_0> {answer}",
                   lambda j, t, n: j >= 1)


def authors_sentence(plain, sentence: str) -> float:
    """T5_LLM.get_full_sentence_logprob: the pseudo-log-likelihood, written out plainly."""
    _, tok = plain
    ignore = set(tok.convert_tokens_to_ids(["<extra_id_0>", "<extra_id_1>", "</s>"]))
    if sentence.endswith("."):
        sentence = sentence[:-1]
    words = sentence.split(" ")
    total = 0.0
    for i, w in enumerate(words):
        inp = (" ".join(words[:i]) + " <extra_id_0> " + " ".join(words[i + 1:])).strip()
        out = f"{w} <extra_id_0>" if i == 0 else f"<extra_id_0> {w}" if i == len(words) - 1 else \
            f"<extra_id_0> {w} <extra_id_1>"
        total += forward(plain, inp, out, lambda j, t, n: t not in ignore)[0]
    return total


def queries(variant: str = "authors"):
    return all_queries(load_datasets(HU_LEVY_FIXTURE, n_items=2, seed=1), ("1", "2", "3a", "3b"), variant)


def test_the_tokenizer_is_t5s_sentencepiece_with_its_sentinels(t5, plain):
    _, tok = plain
    sp = spm.SentencePieceProcessor(model_file=str(t5 / "spiece.model"))
    n = sp.get_piece_size()
    assert len(tok) == n + N_SENTINELS
    assert [sp.id_to_piece(i) for i in range(3)] == ["<pad>", "</s>", "<unk>"]
    assert tok.convert_tokens_to_ids("<extra_id_0>") == n + N_SENTINELS - 1  # last, as in every T5 checkpoint
    assert tok.convert_tokens_to_ids("<extra_id_99>") == n
    lines = [ln for t in default_texts() for ln in t.splitlines() if ln.strip()][:200]
    for ln in lines:  # transformers' reading of the model agrees with SentencePiece's own encoder
        assert tok.convert_ids_to_tokens(tok(ln, add_special_tokens=False).input_ids) == sp.encode(ln, out_type=str)
    assert tok("Answer:\n\nYes").input_ids == tok("Answer: Yes").input_ids  # nmt_nfkc: a newline is a space
    pieces = {w: sp.encode(w, out_type=str) for w in ("interview", "released", "studied")}
    assert any(len(p) > 1 for p in pieces.values()), pieces  # words of several pieces: the case that matters


def test_sentinel_scores_equal_the_authors_forward_pass(t5, plain):
    lm = load_backend(str(t5), backend="seq2seq", batch_size=8)
    qs = [q for q in queries() if q.context]  # every prompt with an answer (Direct word tasks and all Meta)
    assert {q.experiment for q in qs} == {"1", "2", "3a", "3b"} and len(qs) > 40
    got = lm.loglikelihood([LoglikelihoodRequest(q.context, q.continuation) for q in qs])
    multi = 0
    for q, res in zip(qs, got, strict=False):
        ref, n = authors_answer(plain, q.prompt, q.continuation)
        assert res.logprob == pytest.approx(ref, abs=2e-4), q.prompt
        assert res.n_tokens == n  # the answer's pieces and </s>
        multi += n > 2
    assert multi > 0  # some answers are several pieces


def test_pseudo_loglikelihood_equals_the_authors_loop(t5, plain):
    lm = load_backend(str(t5), backend="seq2seq", batch_size=8)
    sentences = sorted({q.continuation for q in queries() if not q.context})
    assert len(sentences) >= 8
    got = lm.pseudo_loglikelihood(sentences)
    for s, v in zip(sentences, got, strict=False):
        assert v == pytest.approx(authors_sentence(plain, s), abs=5e-4), s


@pytest.mark.long
def test_reproduction_runs_end_to_end_on_the_sentencepiece_t5_with_the_authors_conventions(t5, plain, tmp_path):
    import pandas as pd
    from typer.testing import CliRunner

    from experiments.cli import app

    def run(out, *extra):
        return CliRunner().invoke(app, ["reproduce", "hu-levy2023", "--data", str(HU_LEVY_FIXTURE), "--items", "2",
                                        "--out", str(out), "--backend", "seq2seq", "--model", str(t5),
                                        "--n-boot", "100", "-q", *extra])

    out = tmp_path / "hl"
    res = run(out)
    assert res.exit_code == 0, res.output
    scores = pd.read_csv(out / "tables" / "items_scores.csv", dtype={"experiment": str, "item": str},
                         keep_default_na=False)
    scores["logprob"] = scores["logprob"].astype(float)
    assert set(scores["experiment"]) == {"1", "2", "3a", "3b"} and scores["logprob"].notna().all()
    meta = scores[scores["method"] != "Direct"]
    assert meta["prompt"].str.contains("\n\n").all()  # the authors' text by default
    for r in scores.groupby(["experiment", "method"]).head(1).itertuples():
        want = authors_sentence(plain, r.continuation) if not r.context else \
            authors_answer(plain, r.prompt, r.continuation)[0]
        assert r.logprob == pytest.approx(want, abs=5e-4), (r.experiment, r.method)
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["models"][0]["backend"] == "seq2seq"
    assert prov["conventions"]["prompt_text"] == "authors" and prov["conventions"]["scoring"] == "authors"
    assert (out / "tables" / "table5.csv").is_file() and (out / "tables" / "conventions.csv").is_file()

    # --scoring exact: whole sentences are the decoder's score after a lone sentinel, not the PLL
    out2 = tmp_path / "hl-exact"
    res = run(out2, "--scoring", "exact", "--prompt-text", "paper")
    assert res.exit_code == 0, res.output
    s2 = pd.read_csv(out2 / "tables" / "items_scores.csv", dtype={"experiment": str}, keep_default_na=False)
    whole = s2[s2["context"] == ""].iloc[0]
    ref, _ = forward(plain, "<extra_id_0>", "<extra_id_0> " + whole["continuation"], lambda j, t, n: j >= 1)
    assert float(whole["logprob"]) == pytest.approx(ref, abs=5e-4)
    assert float(whole["logprob"]) != pytest.approx(authors_sentence(plain, whole["continuation"]), abs=1e-3)
    assert not s2.loc[s2["method"] != "Direct", "prompt"].str.contains("\n").any()  # the printed text
    assert json.loads((out2 / "provenance.json").read_text())["conventions"]["scoring"] == "exact"

    # the authors' OpenAI word match means nothing for their T5 code: refused, the folder found to be seq2seq
    res = CliRunner().invoke(app, ["reproduce", "hu-levy2023", "--data", str(HU_LEVY_FIXTURE), "--items", "2",
                                   "--out", str(tmp_path / "hl3"), "--model", str(t5), "--scoring",
                                   "openai-last-token", "-q"])
    assert res.exit_code == 2 and "openai-last-token" in res.output and not (tmp_path / "hl3").exists()
    assert re.search(r"T5 code summed\s+every token", res.output)
