"""Completion (cloze) for models.

  direct      log P(target | prefix), summed over the target's tokens (`target_logprob`), and the rank of
              the target's first token in the next-token distribution after the prefix (`target_rank`,
              1 = the most probable; needs the transformers backend); the response is the most probable
              next token (stripped), correct when the target's first token is it (rank 1)
  production  greedy generation after the prefix; its first word is the response, scored as a person's
              typed answer (experiments.tasks.completion: case-folded, punctuation trimmed, target or an
              accepted variant); the target's log-probability is stored too
  meta        the question ("What word comes next?") and the prefix as a prompt; the model writes the word
              (greedy), scored as in production
"""
from __future__ import annotations

from typing import Any, Sequence

from kinds.api import Trial
from kinds.completion.task import first_word
from model_subjects.protocol_base import Answer, Decision, Option, ProtocolError, Query
from model_subjects.tasks.base import TaskProtocol, decision, need


def _prefix(trial: Trial, protocol: str) -> str:
    return str(need(trial, "prefix", protocol))


def _target(trial: Trial, protocol: str) -> str:
    return str(need(trial, "target", protocol))


class CompletionDirect(TaskProtocol):
    kind, short = "completion", "direct"
    chat_ok = False
    measures = True

    def queries(self, trial: Trial) -> list[Query]:
        t = _target(trial, self.name)
        return [Query(_prefix(trial, self.name), (Option(t, " " + t),))]

    def decide(self, trial: Trial, scores: list[list[float]], generation: str = "", results: Any = None,
               measured: dict[str, Any] | None = None) -> Decision:
        lp = scores[0][0]
        m = measured or {}
        rank = m.get("target_rank")
        top = m.get("top_token", "")
        return decision(top, None if rank is None else rank == 1, [_target(trial, self.name)], [lp], None,
                        " " + _target(trial, self.name), extra={"top_token": top},
                        columns={"target_logprob": lp, "target_rank": rank})

    def measure(self, backend: Any, trials: Sequence[Trial], contexts: Sequence[str]) -> list[dict[str, Any]]:
        return [next_token_rank(backend, ctx, " " + _target(t, self.name))
                for t, ctx in zip(trials, contexts, strict=False)]


def next_token_rank(backend: Any, context: str, continuation: str) -> dict[str, Any]:
    """Rank (1 = most probable) of the continuation's first token after `context`, and the top token's text."""
    if not (hasattr(backend, "model") and hasattr(backend, "encode_pair")):
        raise ProtocolError("completion:direct ranks the target in the full next-token distribution; this backend "
                            "does not give it (use the transformers backend)")
    import torch  # torch loads only when a model runs

    ctx, cont = backend.encode_pair(context, continuation)
    ids = list(backend.sequence_start(ctx)) + list(ctx)
    with torch.no_grad():
        logits = backend.model(input_ids=torch.tensor([ids], device=backend.model.device)).logits[0, -1].float()
    target = logits[cont[0]]
    rank = int((logits > target).sum().item()) + 1
    top = backend.tokenizer.decode([int(logits.argmax())]).strip()
    return {"target_rank": rank, "top_token": top}


class CompletionProduction(TaskProtocol):
    kind, short = "completion", "production"
    generates = True
    chat_ok = False

    def prompt(self, trial: Trial) -> str:
        return _prefix(trial, self.name)

    def queries(self, trial: Trial) -> list[Query]:
        t = _target(trial, self.name)
        return [Query(self.prompt(trial), (Option(t, " " + t),))]

    def correct_answer(self, trial: Trial) -> Answer | None:
        """The target's first word (the response is the generation's first word), when the kind scores it correct;
        `direct` measures the target's rank and names no answer (the base's None)."""
        word = first_word(_target(trial, self.name))
        return Answer(word, " " + word) if word and self.score(trial, word) else None

    def decide(self, trial: Trial, scores: list[list[float]], generation: str = "", results: Any = None,
               measured: dict[str, Any] | None = None) -> Decision:
        word = first_word(generation)
        lp = scores[0][0]
        return decision(word, self.score(trial, word), [_target(trial, self.name)], [lp], None,
                        (" " + word) if word else "", extra={"generation": generation},
                        columns={"response_text": generation, "target_logprob": lp})


class CompletionMeta(CompletionProduction):
    kind, short = "completion", "meta"
    chat_ok = True

    def __init__(self, settings: Any = None, max_new_tokens: int = 8, question: str | None = None):
        super().__init__(settings, max_new_tokens)
        self.question = question or settings.question

    def prompt(self, trial: Trial) -> str:
        q = trial.mat.get("question") or self.question
        return f'{q}\n"{_prefix(trial, self.name)} ..."\nAnswer:'

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "question": self.question}


def typed_answer(trial: Trial, response: str) -> str:
    """A person's typed answer as the replay scores it: its first word, surrounding punctuation trimmed."""
    if not response.strip():
        return ""
    return first_word(response).strip().strip(".,;:!?\"'")


from model_subjects.tasks.registry import ModelKind  # noqa: E402 (beside the kind's MODEL it builds)

MODEL = ModelKind("completion", surprisal=True, typed_answer=typed_answer, protocols={
    "direct": lambda s, q, n: CompletionDirect(s, n), "production": lambda s, q, n: CompletionProduction(s, n),
    "meta": lambda s, q, n: CompletionMeta(s, n, q)})
