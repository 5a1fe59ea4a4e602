"""A running context on one growing KV cache (the transformers backend's `stream`).

A running session's context only grows: instructions, then every finished trial with the answer
and feedback. `KVStream` keeps that history's keys/values in one cache that is extended trial by
trial, so each token of the session is encoded once and a trial costs its new tokens plus attention
over the history, not a re-encoding of it.
"""
from __future__ import annotations

from typing import Any, Protocol, Sequence

from model_subjects.backends.base import Stream
from model_subjects.requests import LoglikelihoodResult


class TorchLM(Protocol):
    """What a KV-cache stream needs of its backend (the transformers backend provides it).

    Declared here, not imported, so this module does not depend on the backend that uses it.
    """

    torch: Any
    model: Any  # a transformers causal LM
    tokenizer: Any
    input_device: Any
    prefix_ids: tuple[int, ...]  # what every sequence starts with (BOS or nothing)
    start_id: int | None  # conditions the first token of an empty context
    pad_id: int
    num_layers: int

    def encode(self, text: str) -> tuple[int, ...]: ...

    def encode_pair(self, context: str, continuation: str) -> tuple[tuple[int, ...], tuple[int, ...]]: ...


class KVStream(Stream):
    """A running context on one growing KV cache.

    Committed tokens are the concatenation of the encodings of each `extend` segment (segments
    end in a newline, so this equals encoding the whole text for byte-level BPE tokenisers; a
    test checks it for the bundled model). A query encodes its own context after the committed
    tokens and leaves it in the cache; when the next segment begins with those tokens (the trial
    just scored, now followed by the answer and feedback), they are kept, so every token of the
    session is encoded once.
    """

    def __init__(self, backend: TorchLM, reuse_cache: bool = True, start: Sequence[int] | None = None):
        from model_subjects.kvcache import growing_cache  # model_subjects.kvcache loads torch

        self.b = backend
        self.reuse_cache = reuse_cache
        self.ids: list[int] = list(backend.prefix_ids if start is None else start)
        self._segments: list[str] = []
        self.cache = growing_cache(backend.num_layers)
        self.n_valid = 0  # committed tokens whose keys/values are in the cache
        self.tentative: tuple[int, ...] = ()  # query context tokens in the cache after the committed ones
        self._tentative_lp: Any = None  # next-token log-probs after the tentative context
        self.tokens_encoded = 0  # tokens run through the model (for the benchmark)

    @property
    def text(self) -> str:
        return "".join(self._segments)

    def extend(self, text: str) -> None:
        seg = self.b.encode(text)
        if self.tentative and seg[: len(self.tentative)] == self.tentative:
            self.n_valid += len(self.tentative)
        self.tentative = ()
        self._tentative_lp = None
        self.ids.extend(seg)
        self._segments.append(text)

    def _forward(self, new: Sequence[int]) -> Any:
        torch = self.b.torch
        ids = torch.tensor([list(new)], device=self.b.input_device)
        self.tokens_encoded += len(new)
        out = self.b.model(input_ids=ids, past_key_values=self.cache, use_cache=True, logits_to_keep=1)
        return torch.log_softmax(out.logits[0, -1].float(), dim=-1)

    def _prepare(self, ctx: Sequence[int]) -> Any:
        """Put committed + ctx into the cache; return log-probs of the next token."""
        from model_subjects.kvcache import crop_cache  # model_subjects.kvcache loads torch

        if not self.reuse_cache:
            self.n_valid = 0
        elif self._tentative_lp is not None and tuple(ctx) == self.tentative and self.tentative:
            return self._tentative_lp
        full = self.ids + list(ctx)
        if not full:
            full = [self.b.start_id]
            self.ids = full[:]
        keep = min(self.n_valid, len(full) - 1)  # at least one token must run to get its logits
        crop_cache(self.cache, keep)
        lp = self._forward(full[keep:])
        self.n_valid = min(len(self.ids), len(full))
        if len(full) > len(self.ids):
            self.tentative = tuple(full[len(self.ids):])
        else:
            self.tentative = ()
        self._tentative_lp = lp if self.tentative else None
        return lp

    def loglikelihood(self, context: str, continuations: Sequence[str]) -> list[LoglikelihoodResult]:
        from model_subjects.kvcache import crop_cache  # model_subjects.kvcache loads torch

        torch = self.b.torch
        pairs = [self.b.encode_pair(context, c) for c in continuations]
        results: list[LoglikelihoodResult | None] = [None] * len(pairs)
        with torch.inference_mode():
            for ctx in dict.fromkeys(ctx for ctx, _ in pairs):
                lp0 = self._prepare(ctx)
                base = self.n_valid + len(self.tentative)
                for i, (c, cont) in enumerate(pairs):
                    if c != ctx:
                        continue
                    lps = [float(lp0[cont[0]])]
                    greedy = int(lp0.argmax()) == cont[0]
                    if len(cont) > 1:
                        ids = torch.tensor([list(cont[:-1])], device=self.b.input_device)
                        self.tokens_encoded += len(cont) - 1
                        out = self.b.model(input_ids=ids, past_key_values=self.cache, use_cache=True)
                        more = torch.log_softmax(out.logits[0].float(), dim=-1)
                        tgt = torch.tensor(list(cont[1:]), device=more.device)
                        lps += more[torch.arange(len(cont) - 1, device=more.device), tgt].tolist()
                        greedy = greedy and bool((more.argmax(-1) == tgt).all())
                        crop_cache(self.cache, base)
                    results[i] = LoglikelihoodResult(float(sum(lps)), bool(greedy), len(cont), tuple(lps))
        return results  # type: ignore[return-value]

    def replay(self, context: str, continuations: Sequence[str]) -> None:
        """A finished trial's scoring again, for the cache only: same forward passes, same chunks.

        Why not one pass over the whole history: keys and values computed in other chunk shapes
        differ in the last float bits (other matmul shapes, other summation order), which moved a
        resumed session's scores by up to 2e-5 from an uninterrupted run's.
        """
        KVStream.loglikelihood(self, context, continuations)

    def replay_generate(self, context: str, until: Sequence[str] = ("\n",), max_new_tokens: int = 16,
                        skip_leading_whitespace: bool = False) -> None:
        KVStream.generate(self, context, until, max_new_tokens, skip_leading_whitespace)

    def generate(self, context: str, until: Sequence[str] = ("\n",), max_new_tokens: int = 16,
                 skip_leading_whitespace: bool = False) -> str:
        """Greedy continuation, cut before the first stop string (after leading whitespace if asked)."""
        from model_subjects.kvcache import crop_cache  # model_subjects.kvcache loads torch

        torch = self.b.torch
        tok = self.b.tokenizer
        ctx = self.b.encode(context.rstrip(" ")) if context else ()
        stops = {t for t in (tok.eos_token_id, getattr(self.b.model.generation_config, "eos_token_id", None))
                 if isinstance(t, int)}

        def body_start(text: str) -> int:
            return len(text) - len(text.lstrip()) if skip_leading_whitespace else 0

        new: list[int] = []
        text = ""
        with torch.inference_mode():
            lp = self._prepare(ctx)
            base = self.n_valid + len(self.tentative)
            for _ in range(max_new_tokens):
                nxt = int(lp.argmax())
                if nxt in stops:
                    break
                new.append(nxt)
                text = tok.decode(new, skip_special_tokens=True)
                if any(s in text[body_start(text):] for s in until):
                    break
                lp = self._forward([nxt])
            crop_cache(self.cache, base)
        b0 = body_start(text)
        cut = min([text.index(s, b0) for s in until if s in text[b0:]] or [len(text)])
        return text[:cut]
