"""A small T5 checkpoint on a real SentencePiece tokenizer, built in the test (no download).

Why: Flan-T5's scoring depends on how T5's SentencePiece tokenizer treats the sentinel tokens
(`<extra_id_0>` ... `<extra_id_99>`), the word-start marker "▁" after a special token and the `</s>` it
appends; a word-level toy tokenizer exercises none of that. So the fixture trains a unigram
SentencePiece model (T5's kind, T5's special ids: <pad> 0, </s> 1, <unk> 2, no BOS; T5's `nmt_nfkc` normalisation,
which turns a newline into a space) on the texts the tests will score, reads it with transformers' `T5Tokenizer`
(`from_pretrained` on the folder's spiece.model, as for a T5 checkpoint; transformers' converter
needs `protobuf`) with `extra_ids=100` (the 100 sentinels at
the end of the vocabulary, as every T5 checkpoint has them), and saves it beside a seeded random
`T5ForConditionalGeneration` of a tiny config. The folder loads like any Flan-T5 checkpoint
(`--backend seq2seq --model FOLDER`, or `AutoModelForSeq2SeqLM`/`AutoTokenizer`).

    from tests.support.t5_fixture import build_t5
    folder = build_t5(tmp_path / "t5", extra_texts=[...])   # extra_texts: whatever else the test scores

Shared by the Hu & Levy tests and the Hu & Frank `--backend seq2seq` tests (pass their stimuli's texts
as `extra_texts`, so that their characters are in the vocabulary rather than `<unk>`).
"""
from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Iterable

ROOT = Path(__file__).resolve().parents[2]
HU_LEVY_FIXTURE = ROOT / "tests" / "data" / "hu_levy2023" / "datasets"

# google/flan-t5-small's config.json (the values that fix the architecture), made tiny
TINY_T5 = dict(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4,
               relative_attention_num_buckets=32, relative_attention_max_distance=128, dropout_rate=0.1,
               layer_norm_epsilon=1e-6, initializer_factor=1.0, feed_forward_proj="gated-gelu",
               is_encoder_decoder=True, tie_word_embeddings=False, pad_token_id=0, eos_token_id=1,
               decoder_start_token_id=0, n_positions=512)
N_SENTINELS = 100


def default_texts() -> list[str]:
    """The Hu & Levy fixture corpora and both prompt texts: what the Hu & Levy tests score."""
    from reproductions.hu_levy.prompts import TEMPLATES

    texts = [f.read_text(encoding="utf-8") for f in sorted(HU_LEVY_FIXTURE.rglob("corpus.csv"))]
    texts += [re.sub(r"\{\w+\}", " ", t) for t in TEMPLATES.values()]
    return texts


def train_sentencepiece(texts: Iterable[str], vocab_size: int = 600) -> bytes:
    """A unigram SentencePiece model (T5's kind and special ids) trained on `texts`, as bytes."""
    import sentencepiece as spm

    lines = [ln.strip() for t in texts for ln in t.splitlines() if ln.strip()]
    chars = sorted({c for ln in lines for c in ln if not c.isspace()})
    lines.append(" ".join(chars))  # every character at least once, so none is <unk>
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=buf, vocab_size=vocab_size,
                                   model_type="unigram", pad_id=0, eos_id=1, unk_id=2, bos_id=-1,
                                   pad_piece="<pad>", eos_piece="</s>", unk_piece="<unk>",
                                   character_coverage=1.0, hard_vocab_limit=False, num_threads=1,
                                   minloglevel=2)
    return buf.getvalue()


def build_t5(folder: Path, extra_texts: Iterable[str] = (), config: dict | None = None, seed: int = 0,
             vocab_size: int = 600) -> Path:
    """Train the tokenizer, build the model, save both into `folder` (returned)."""
    import torch
    from transformers import T5Config, T5ForConditionalGeneration, T5Tokenizer

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    spiece = folder / "spiece.model"
    spiece.write_bytes(train_sentencepiece([*default_texts(), *extra_texts], vocab_size))
    # transformers reads the SentencePiece model as it reads a T5 checkpoint's spiece.model (its converter
    # needs `protobuf`); the sentinels go at the end of the vocabulary, <extra_id_0> last
    tok = T5Tokenizer.from_pretrained(folder, extra_ids=N_SENTINELS)
    n_vocab = len(tok)
    assert tok.convert_tokens_to_ids("<extra_id_0>") == n_vocab - 1, "T5 puts <extra_id_0> last"
    torch.manual_seed(seed)
    cfg = T5Config(**{**TINY_T5, **(config or {}), "vocab_size": n_vocab})
    model = T5ForConditionalGeneration(cfg).eval()
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder
