"""Per-word surprisal in bits, for the model's own tokenizer (self-paced reading, `--protocol surprisal`).

Definitions (equal to minicons' `IncrementalLMScorer.word_score_tokenized`, tests check 1e-4 bits):
  * words are the trial's `words` split on spaces; a word's tokens are those whose text ends inside it
    (the fast tokenizer's offsets; a leading space belongs to the word after it, as GPT-2-style byte-level
    BPE attaches it), and its probability is the product over its tokens:
        s(w_i) = -log2 P(tokens of w_i | everything before);
  * `bow_correction` (Oh & Schuler 2024; Pimentel & Meister 2024): with a tokenizer whose tokens carry
    the space at the *beginning* of a word, P(tokens of " w") also depends on the next word beginning,
    and the first token of w already carries the previous word's end. The corrected probability is
        P(w_i) = P(tokens of w_i) * P_bow(after w_i) / P_bow(before w_i)     (no division for the first word)
    where P_bow(at t) is the total probability of the tokens that begin a word (those starting with the
    tokenizer's space symbol) at position t. The end of the sentence is treated as a word boundary.
    Default: OFF (`bow_correction=False`, as minicons' default); the setting is recorded in every row.
  * BOS: an explicit choice (`bos=True` by default): the tokenizer's BOS token is prepended so the first
    word is scored; with `bos=False` and no context the first token has nothing to condition on and the
    first word's surprisal is None (never guessed). The token used is recorded.
  * a `context` (a few-shot text) is encoded before the sentence and conditions it; it is not scored.

One forward pass per batch of sentences (right-padded, length-sorted), float32 log-softmax.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

LN2 = math.log(2.0)
# model types whose logits are exactly output_embeddings(last hidden state) (surprisal skips the padding there)
PLAIN_HEAD_TYPES = {"llama", "mistral", "qwen2", "gpt2", "gpt_neox", "olmo", "olmo2"}


@dataclass(frozen=True)
class SurprisalSettings:
    bow_correction: bool = False
    bos: bool = True

    def describe(self, tokenizer: Any) -> dict[str, Any]:
        return {"unit": "bits", "word_probability": "product over the word's tokens",
                "bow_correction": self.bow_correction,
                "bow_correction_reference": "Oh & Schuler 2024; Pimentel & Meister 2024 (minicons bow_correction)",
                "bos": self.bos, "bos_token": tokenizer.bos_token if self.bos else None,
                "words": "the trial's words split on spaces", "reference": "minicons word_score_tokenized"}


class SurprisalError(ValueError):
    """A sentence that cannot be aligned to the tokenizer, or a model without what a setting needs."""


def bow_token_ids(tokenizer: Any) -> list[int]:
    """Tokens that begin a word: those whose text starts with the tokenizer's space symbol (as minicons)."""
    sym = tokenizer.convert_ids_to_tokens(tokenizer(" ", add_special_tokens=False).input_ids[0])[0]
    if sym in (tokenizer.bos_token, tokenizer.eos_token):
        raise SurprisalError("this tokenizer has no beginning-of-word space symbol: bow_correction does not apply")
    ids = {idx for tok, idx in tokenizer.get_vocab().items() if tok and tok[0] == sym}
    ids |= {idx for idx, d in tokenizer.added_tokens_decoder.items() if getattr(d, "lstrip", False)}
    return sorted(ids)


def align(tokenizer: Any, words: Sequence[str], prefix: str = "") -> tuple[list[int], list[int]]:
    """(token ids of prefix + sentence, word index of each token; -1 for the prefix's tokens)."""
    sentence = " ".join(words)
    text = prefix + sentence
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    ends, pos = [], len(prefix)
    for w in words:
        if not w or any(c.isspace() for c in w):
            raise SurprisalError(f"word {w!r} of {sentence!r}: words are non-empty and have no spaces")
        pos += len(w)
        ends.append(pos)  # exclusive end of word k in `text`
        pos += 1
    owner: list[int] = []
    k = 0
    for s, e in enc["offset_mapping"]:
        if e <= len(prefix):
            if owner and owner[-1] != -1:
                raise SurprisalError(f"the tokenizer splits {text!r} out of order")
            owner.append(-1)
            continue
        if s < len(prefix):
            raise SurprisalError(f"a token spans the context and the sentence {sentence!r}; end the context "
                                 "with a newline or a space")
        while k < len(words) and e > ends[k]:
            k += 1
        if k >= len(words) or (owner and owner[-1] > k):
            raise SurprisalError(f"cannot align the tokens of {sentence!r} to its words")
        owner.append(k)
    got = set(owner)
    lost = [words[i] for i in range(len(words)) if i not in got]
    if lost:
        raise SurprisalError(f"words {lost} of {sentence!r} share a token with a neighbour")
    return list(enc["input_ids"]), owner


class SurprisalScorer:
    """Per-word surprisal for a transformers causal LM and its (fast) tokenizer."""

    def __init__(self, model: Any, tokenizer: Any, settings: SurprisalSettings = SurprisalSettings(),
                 max_batch_tokens: int = 8192):
        import torch  # torch loads only when a model runs

        self.torch = torch
        self.model = model
        self.tokenizer = tokenizer
        self.settings = settings
        self.max_batch_tokens = max_batch_tokens
        if settings.bos and tokenizer.bos_token_id is None:
            raise SurprisalError("the model has no BOS token; use bos=False (and a context) for its first word")
        self.bow_ids = torch.tensor(bow_token_ids(tokenizer)) if settings.bow_correction else None
        self.device = next(model.parameters()).device
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)

    @classmethod
    def from_backend(cls, backend: Any, settings: SurprisalSettings = SurprisalSettings()) -> "SurprisalScorer":
        if not (hasattr(backend, "model") and hasattr(backend, "tokenizer")):
            raise SurprisalError(f"the surprisal protocol needs the model's full next-token distributions; backend "
                                 f"{getattr(backend, 'backend_name', '') or type(backend).__name__!r} does not give "
                                 "them (use the transformers backend)")
        return cls(backend.model, backend.tokenizer, settings)

    def describe(self) -> dict[str, Any]:
        return self.settings.describe(self.tokenizer)

    def score(self, sentences: Sequence[Sequence[str]],
              contexts: Sequence[str] | None = None) -> list[list[float | None]]:
        """Surprisal (bits) of every word of every sentence; `contexts[i]` conditions sentence i."""
        contexts = list(contexts) if contexts is not None else [""] * len(sentences)
        seqs = []
        for words, ctx in zip(sentences, contexts, strict=False):
            ids, owner = align(self.tokenizer, words, ctx)
            if self.settings.bos:
                ids, owner = [self.tokenizer.bos_token_id] + ids, [-1] + owner
            seqs.append((ids, owner, len(words)))
        order = sorted(range(len(seqs)), key=lambda i: -len(seqs[i][0]))
        out: list[list[float | None]] = [[] for _ in seqs]
        batch: list[int] = []
        for i in order:
            if batch and (len(batch) + 1) * len(seqs[batch[0]][0]) > self.max_batch_tokens:
                self._run(batch, seqs, out)
                batch = []
            batch.append(i)
        if batch:
            self._run(batch, seqs, out)
        return out

    def _real_logits(self, ids: Any, mask: Any, real: Any) -> Any:
        """Float32 logits at the non-padding positions only, [N, V] in row-major order.

        For the model types whose logits are the output embedding of the last hidden state (no
        scaling or soft-capping), the output layer runs on the real positions alone; otherwise the
        whole forward pass runs and the padding positions are dropped afterwards."""
        m = self.model
        head = m.get_output_embeddings() if hasattr(m, "get_output_embeddings") else None
        base = getattr(m, "base_model", None)
        if (getattr(m.config, "model_type", "") in PLAIN_HEAD_TYPES and head is not None and base is not None
                and base is not m):
            hidden = base(input_ids=ids, attention_mask=mask).last_hidden_state
            return head(hidden[real]).float()
        return m(input_ids=ids, attention_mask=mask).logits[real].float()

    def _run(self, batch: list[int], seqs: list, out: list) -> None:
        torch = self.torch
        width = max(len(seqs[i][0]) for i in batch)
        ids = torch.full((len(batch), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for r, i in enumerate(batch):
            n = len(seqs[i][0])
            ids[r, :n] = torch.tensor(seqs[i][0])
            mask[r, :n] = 1
        real = mask.bool()
        nxt = torch.cat([ids[:, 1:], torch.full((len(batch), 1), self.pad_id, dtype=torch.long)], 1)[real]
        with torch.inference_mode():
            logits = self._real_logits(ids.to(self.device), mask.to(self.device), real.to(self.device))  # [N, V]
            norm = logits.logsumexp(-1)
            flat_tok = logits.gather(-1, nxt[:, None].to(self.device))[:, 0] - norm  # predicts the next token
            tok_lp = torch.zeros((len(batch), width), dtype=torch.float32)
            tok_lp[real] = flat_tok.cpu()  # tok_lp[r, t] = log P(token t+1 | tokens <= t); the last one unused
            bow_lp = None
            if self.bow_ids is not None:
                flat_bow = logits.index_select(-1, self.bow_ids.to(self.device)).logsumexp(-1) - norm
                bow_lp = torch.zeros((len(batch), width), dtype=torch.float32)
                bow_lp[real] = flat_bow.cpu()  # P_bow of the token after position t
        tok_lp = tok_lp.double().cpu()
        bow_lp = bow_lp.double().cpu() if bow_lp is not None else None
        for r, i in enumerate(batch):
            tokens, owner, n_words = seqs[i]
            first = [None] * n_words
            last = [None] * n_words
            for t in range(len(tokens)):
                w = owner[t]
                if w < 0:
                    continue
                if first[w] is None:
                    first[w] = t
                last[w] = t
            words: list[float | None] = []
            for w in range(n_words):
                a, b = first[w], last[w]
                if a == 0:  # nothing before the sentence's first token (bos=False, no context)
                    words.append(None)
                    continue
                lp = float(tok_lp[r, a - 1:b].sum())
                if bow_lp is not None:
                    lp += float(bow_lp[r, b])  # the next token begins a word (the end counts as one)
                    if w > 0:
                        lp -= float(bow_lp[r, a - 1])  # this word's first token already said "a word begins"
                words.append(-lp / LN2)
            out[i] = words


def region_surprisals(word_bits: Sequence[float | None], regions: Sequence[Sequence[int]]) -> list[float | None]:
    """Per-word surprisals summed per region (None when a word of the region has none)."""
    out: list[float | None] = []
    for r in regions:
        vals = [word_bits[i] for i in r]
        out.append(None if any(v is None for v in vals) else float(sum(vals)))  # type: ignore[arg-type]
    return out
