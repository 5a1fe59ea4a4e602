"""The protocol contract every response protocol implements (Lakretz protocols in model_subjects.protocols,
the task kinds' in model_subjects.tasks): a trial becomes queries (a prompt and the options scored after
it), the scores become a Decision. Its own module so that the task protocols and the protocol registry
(`get_protocol`, which builds the task protocols) both import it and not each other."""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Sequence

from experiments.tasks.form_pair import pair_missing
from experiments.trials import Trial


class ProtocolError(ValueError):
    """An unknown protocol name or an impossible combination; the message lists what exists."""


@dataclass(frozen=True)
class Option:
    label: str  # what the table records
    continuation: str  # the text scored after the prompt (plain rendering; chat strips the leading space)


@dataclass(frozen=True)
class Query:
    prompt: str  # the trial's own text, up to where the answer begins
    options: tuple[Option, ...]


@dataclass
class Decision:
    response: str
    correct: bool
    option_labels: list[str]
    option_logprobs: list[float]
    margin: float | None
    answer_text: str  # shown after the prompt in a running context (leading space included)
    extra: dict[str, Any] = field(default_factory=dict)
    columns: dict[str, Any] = field(default_factory=dict)  # the row's other columns (experiments/schema.py)


@dataclass(frozen=True)
class Answer:
    """A trial's right answer as the protocol would give it (`Protocol.correct_answer`): what a weight learner
    takes its step on and a running history shows, named by the protocol rather than found by trying scores."""

    response: str  # as the table's `response` records it (a Decision's `response`)
    answer_text: str  # shown after the prompt in a running context (a Decision's `answer_text`)


class Protocol(ABC):
    """Turns a trial into queries and scores into a Decision.

    Every protocol decides with one signature (`decide`), whatever it reads of it: the options' scores always;
    the generation (a protocol that `generates`, greedy up to `until`, at most `max_new_tokens`); the backend's
    results per query and option (token counts, for per-token means); the model-side measures (a protocol
    that `measures` computes them from the model's full next-token distributions, `measure`). It names its right
    answer (`correct_answer`, what a weight learner's step teaches) from the trial and its own options, so nothing
    has to call `decide` with made-up scores to find it."""

    name: str = ""
    generates: bool = False  # production protocols generate text
    measures: bool = False  # `measure` gives per-trial columns from the model's full distributions
    max_new_tokens: int = 8  # a generating protocol's budget
    chat_ok: bool = True  # a question a chat model can answer in its own turn
    needs_pair: bool = False  # compares the critical word with its number-flipped form (Lakretz materials)
    response_mode: str | None = None  # how the answer was given, as the table's `response_mode` records it

    @property
    def until(self) -> tuple[str, ...]:
        """Where a generation stops."""
        return ("\n",)

    def check(self, trial: Trial) -> None:
        """Refuse (ProtocolError naming what is missing) a trial this protocol cannot mean anything on."""
        miss = pair_missing(trial) if self.needs_pair else []
        if miss:
            raise ProtocolError(f"protocol {self.name!r} compares the critical word with its number-flipped form; "
                                f"trial {trial.item_id!r} ({trial.block}) lacks {'; '.join(miss)}")

    @abstractmethod
    def queries(self, trial: Trial) -> list[Query]: ...

    def correct_option_index(self, trial: Trial) -> int | None:
        """The option of the first query that is the trial's right answer, for a protocol whose response is that
        option's label and whose answer text is its continuation (`correct_answer` builds on it). None: no option
        is right; the default, so a protocol names its right answer only where it has one."""
        return None

    def correct_answer(self, trial: Trial) -> Answer | None:
        """The trial's right answer as this protocol would give it: the response and answer text of a decision
        scored correct (a weight learner's step teaches it). None: the trial has no right answer here (a measuring
        protocol, a rating, an item without an answer, or one this protocol can never score correct). Default: the
        option `correct_option_index` names, its label and continuation; a protocol whose response or answer text
        is not the option's overrides this."""
        k = self.correct_option_index(trial)
        if k is None:
            return None
        option = self.queries(trial)[0].options[k]
        return Answer(option.label, option.continuation)

    @abstractmethod
    def decide(self, trial: Trial, scores: list[list[float]], generation: str = "", results: Any = None,
               measured: dict[str, Any] | None = None) -> Decision:
        """`scores[q][o]`: summed log-probability of option o of query q; `generation`: the generated text;
        `results[q][o]`: the backend's LoglikelihoodResult; `measured`: this trial's `measure` columns."""

    def measure(self, backend: Any, trials: Sequence[Trial], contexts: Sequence[str]) -> list[dict[str, Any]]:
        """Per trial, columns computed from the model's full distributions after `contexts` (`measures` only)."""
        return [{} for _ in trials]

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "class": type(self).__name__}
