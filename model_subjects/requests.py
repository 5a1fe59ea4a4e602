"""The backend contract's small request/result types (lm-evaluation-harness style).

A protocol turns a trial into requests; a backend answers them. Nothing here imports torch, so
protocols, the context builder and the CLI stay light.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Callable, Sequence


@dataclass(frozen=True)
class LoglikelihoodRequest:
    """log P(continuation | context), summed over exactly the continuation's tokens.

    Tokenisation follows lm-evaluation-harness: trailing spaces of `context` move into the
    continuation, `context + continuation` is encoded as a whole and split at the length of the
    encoded context, so word-boundary tokens are the ones the model saw in training.
    """

    context: str
    continuation: str

    def key(self) -> str:
        """Stable hash of the request (for caching results across runs)."""
        return hashlib.sha256(json.dumps([self.context, self.continuation]).encode()).hexdigest()[:24]


@dataclass(frozen=True)
class LoglikelihoodResult:
    logprob: float  # sum over the continuation tokens (natural log)
    is_greedy: bool  # every continuation token was the argmax
    n_tokens: int  # number of continuation tokens scored
    token_logprobs: tuple[float, ...] = field(default=(), compare=False)
    # why this continuation has no score (logprob is NaN), e.g. a served model's option outside the
    # returned top log-probabilities; the runner writes such a trial as unscorable, never guessed
    unscorable: str | None = field(default=None, compare=False)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class GenerationRequest:
    """Greedy continuation of `context` until one of `until` appears or `max_new_tokens` is reached."""

    context: str
    until: tuple[str, ...] = ("\n",)
    max_new_tokens: int = 16
    skip_leading_whitespace: bool = False  # stop strings count only once the answer has begun


def split_pair(context: str, continuation: str) -> tuple[str, str]:
    """Move trailing spaces of the context into the continuation (as lm-evaluation-harness does).

    Only spaces move: byte-level BPE attaches a space to the word after it, so ' is' must be
    scored as one token. A trailing newline stays in the context (lm-evaluation-harness moves it
    too), so a sentence that starts a new line is scored without the newline's probability.
    Every backend tokenises a (context, continuation) pair by this rule.
    """
    n = len(context) - len(context.rstrip(" "))
    if n:
        continuation = context[-n:] + continuation
        context = context[:-n]
    return context, continuation


def split_tokens(ctx: Sequence[int], whole: Sequence[int], context: str,
                 decode: Callable[[Sequence[int]], str] | None) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The whole text's tokens split at the end of the context: (context part, continuation part).

    Usually the context's own tokens are a prefix of the whole's. Not always: GPT-2-style tokenizers read
    a trailing "\n\n" as one token at the end of a text but as "\n", "\n" before a word, so cutting the
    whole at the context's token count would score the text "\n\n\nYes" for ("...\n\n", "Yes"). Then
    the split is the token boundary of the whole where the context's text ends (found with `decode`),
    and the scored tokens spell the continuation exactly; if no boundary falls there (a token spans
    it), ValueError: the continuation has no tokens of its own.
    """
    ctx, whole = tuple(ctx), tuple(whole)
    if whole[:len(ctx)] == ctx:
        return ctx, whole[len(ctx):]
    if decode is not None:
        for k in range(max(1, len(ctx) - 8), min(len(whole), len(ctx) + 8) + 1):
            if decode(whole[:k]) == context:
                return whole[:k], whole[k:]
    raise ValueError(f"the tokens of context {context[-40:]!r} change when the continuation follows, and no token "
                     "boundary falls at the context's end: the continuation has no tokens of its own")


class PairTokenizer:
    """The one (context, continuation) tokenisation of every local backend (transformers, llama.cpp).

    Encode the whole text and split at the context's length, so boundary tokens are those the model
    saw in training; BOS only when asked (`add_bos`), the start token only for an empty context.
    A backend provides `encode(text) -> tuple[int, ...]`, `add_bos`, `prefix_ids`, `start_id`, `name`.
    """

    split_pair = staticmethod(split_pair)

    def encode_pair(self, context: str, continuation: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(context ids, continuation ids), without the BOS/start token."""
        context, continuation = split_pair(context, continuation)
        ctx = self.encode(context)  # type: ignore[attr-defined]
        whole = self.encode(context + continuation)  # type: ignore[attr-defined]
        ctx, cont = split_tokens(ctx, whole, context, getattr(self, "decode_ids", None))
        if not cont:
            raise ValueError(f"continuation {continuation!r} encodes to no tokens after context {context[-40:]!r}")
        return ctx, cont

    def sequence_start(self, ctx: Sequence[int]) -> tuple[int, ...]:
        """Tokens that precede the context: BOS if add_bos; the start token if there is no context at all."""
        if self.add_bos:  # type: ignore[attr-defined]
            return self.prefix_ids  # type: ignore[attr-defined]
        if not ctx:
            if self.start_id is None:  # type: ignore[attr-defined]
                raise ValueError(f"model {self.name!r} has neither BOS nor EOS to condition an empty context "
                                 "on")  # type: ignore[attr-defined]
            return (self.start_id,)  # type: ignore[attr-defined]
        return ()
