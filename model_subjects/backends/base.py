"""The backend interface: everything a protocol may ask of a language model.

Two batch entry points, as in lm-evaluation-harness (`loglikelihood`, `generate_until`), plus a
`stream` for running contexts that grow trial by trial. Another engine (e.g. vLLM) implements
this class and every protocol, context mode and the runner work unchanged.

This module is the contract only: it imports no implementation. Implementations register
themselves by name (`model_subjects.backends.registry.register_backend`) and are loaded through
`model_subjects.backends.registry.load_backend(model, backend=NAME, **settings)`.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Callable, ClassVar, Sequence

from model_subjects.requests import GenerationRequest, LoglikelihoodRequest, LoglikelihoodResult

Progress = Callable[[int], None]  # called with the number of requests just finished


class ModelLoadError(RuntimeError):
    """A model that cannot be found or loaded; the message names it and says what was tried."""


class Stream(ABC):
    """A context that only grows (a running session): committed text, then per-trial queries.

    `extend` commits a segment (it becomes part of every later context); `loglikelihood` and
    `generate` look at `committed + context` without committing anything.
    """

    @abstractmethod
    def extend(self, text: str) -> None: ...

    @abstractmethod
    def loglikelihood(self, context: str, continuations: Sequence[str]) -> list[LoglikelihoodResult]: ...

    @abstractmethod
    def generate(self, context: str, until: Sequence[str] = ("\n",), max_new_tokens: int = 16,
                 skip_leading_whitespace: bool = False) -> str: ...

    @property
    @abstractmethod
    def text(self) -> str:
        """The committed context as text."""

    def replay(self, context: str, continuations: Sequence[str]) -> None:  # noqa: B027 (a deliberate no-op default)
        """Redo a finished trial's `loglikelihood` for its side effects on the stream's state only.

        A stream without a cache has none; a cached stream overrides this to run the same forward
        passes in the same chunks, so a resumed session's cache is bit-identical to an uninterrupted one.
        """

    def replay_generate(  # noqa: B027 (a deliberate no-op default)
            self, context: str, until: Sequence[str] = ("\n",), max_new_tokens: int = 16,
            skip_leading_whitespace: bool = False) -> None:
        """As `replay`, for a finished trial's `generate`."""


class TextStream(Stream):
    """Engine-independent stream: re-sends the whole history with every query (correct, not fast)."""

    def __init__(self, backend: "Backend"):
        self.backend = backend
        self._segments: list[str] = []

    def extend(self, text: str) -> None:
        self._segments.append(text)

    @property
    def text(self) -> str:
        return "".join(self._segments)

    def loglikelihood(self, context: str, continuations: Sequence[str]) -> list[LoglikelihoodResult]:
        ctx = self.text + context
        return self.backend.loglikelihood([LoglikelihoodRequest(ctx, c) for c in continuations])

    def generate(self, context: str, until: Sequence[str] = ("\n",), max_new_tokens: int = 16,
                 skip_leading_whitespace: bool = False) -> str:
        req = GenerationRequest(self.text + context, tuple(until), max_new_tokens, skip_leading_whitespace)
        return self.backend.generate_until([req])[0]


class Backend(ABC):
    """A causal language model behind the twinlab contract."""

    name: str = "backend"  # the model's name (what the progress line and errors show)
    backend_name: ClassVar[str] = ""  # the registered backend name (set by @register_backend)

    @abstractmethod
    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest],
                      progress: Progress | None = None) -> list[LoglikelihoodResult]:
        """Score every request; results in request order."""

    @abstractmethod
    def generate_until(self, requests: Sequence[GenerationRequest],
                       progress: Progress | None = None) -> list[str]:
        """Greedy generations (text after the context, cut before the first stop string)."""

    def loglikelihood_alone(self, requests: Sequence[LoglikelihoodRequest]) -> list[LoglikelihoodResult]:
        """Each request scored on its own (one sequence per forward pass, no padding, no shared cache).

        The result does not depend on what else is being scored: near-tie choices are re-scored
        this way so that they never depend on batch size or composition.
        """
        out: list[LoglikelihoodResult] = []
        for r in requests:
            out += self.loglikelihood([r])
        return out

    def stream(self, **kwargs: Any) -> Stream:
        """A growing context; engines with a KV cache override this to extend it instead of re-encoding."""
        return TextStream(self)

    def describe(self) -> dict[str, Any]:
        """What the session sidecar records about the model (name, weights hash, dtype, device, ...)."""
        return {"name": self.name}

    def chat_template(self, messages: list[dict[str, str]], add_generation_prompt: bool) -> str:
        raise NotImplementedError(f"backend {self.name!r} has no chat template")

