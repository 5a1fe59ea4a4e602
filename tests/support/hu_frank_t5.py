"""A tiny T5 checkpoint for `reproduce hu-frank2024 --data DIR --backend seq2seq`: a unigram SentencePiece
tokenizer (T5's special ids: <pad> 0, </s> 1, <unk> 2, no BOS) trained on the very texts the run scores (the
release fixture's prompts and options), read by transformers' T5Tokenizer with T5's 100 sentinel tokens, and a
seeded random T5ForConditionalGeneration of flan-t5-small's shape made tiny. No download.

(helper "hulevy" builds the same kind of fixture for Hu & Levy in tests/support/t5_fixture.py; this one takes
the Hu & Frank items as its corpus.)
"""
from __future__ import annotations

import io
from pathlib import Path

TINY_T5 = dict(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4,
               relative_attention_num_buckets=32, relative_attention_max_distance=128, dropout_rate=0.1,
               layer_norm_epsilon=1e-6, feed_forward_proj="gated-gelu", is_encoder_decoder=True,
               tie_word_embeddings=False, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)


def item_texts(release: Path) -> list[str]:
    """Every prompt and option of the release's four domains (what the run will score)."""
    from reproductions.hu_frank import stimuli as st

    texts = []
    for items in st.load_all(release).values():
        for it in items:
            texts.append(it.prompt)
            texts += [str(v) for v in it.options.values()]
            texts += [str(v) for v in it.extra.values() if isinstance(v, str)]
    return texts


def more_t5(folder: Path, like: Path, seed: int, **config) -> Path:
    """Another checkpoint on `like`'s tokenizer: other random weights (seed) and optionally another shape."""
    import shutil

    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for f in Path(like).iterdir():
        if f.name not in ("model.safetensors", "config.json", "generation_config.json"):
            shutil.copy2(f, folder / f.name)
    n_vocab = T5Config.from_pretrained(like).vocab_size
    torch.manual_seed(seed)
    T5ForConditionalGeneration(T5Config(**{**TINY_T5, **config}, vocab_size=n_vocab)).eval().save_pretrained(folder)
    return folder


def build_t5(folder: Path, texts: list[str], seed: int = 0, vocab_size: int = 400) -> Path:
    import sentencepiece as spm
    import torch
    from transformers import T5Config, T5ForConditionalGeneration, T5Tokenizer

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    lines = [ln.strip() for t in texts for ln in t.splitlines() if ln.strip()]
    lines.append(" ".join(sorted({c for ln in lines for c in ln if not c.isspace()})))  # every character once
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=buf, vocab_size=vocab_size,
                                   model_type="unigram", pad_id=0, eos_id=1, unk_id=2, bos_id=-1,
                                   pad_piece="<pad>", eos_piece="</s>", unk_piece="<unk>", character_coverage=1.0,
                                   hard_vocab_limit=False, num_threads=1, minloglevel=2)
    (folder / "spiece.model").write_bytes(buf.getvalue())
    tok = T5Tokenizer.from_pretrained(folder, extra_ids=100)
    assert tok.convert_tokens_to_ids("<extra_id_0>") == len(tok) - 1
    torch.manual_seed(seed)
    model = T5ForConditionalGeneration(T5Config(**TINY_T5, vocab_size=len(tok))).eval()
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder
