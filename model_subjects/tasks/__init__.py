"""The model runner's task kinds: for each kind it implements, its protocols by name.

`MODEL_TASKS` is this runner's registry; a test checks it against `experiments.tasks` (`TaskKind.runners`
contains "model" exactly for these kinds, and `TaskKind.model_protocols` lists these protocols).
`surprisal` applies to every kind with sentences (and the Lakretz kinds).
"""
from __future__ import annotations

from typing import Any, Callable

from model_subjects.protocol_base import Protocol, ProtocolError

Factory = Callable[[Any, str | None, int], Protocol]  # (kind settings, question, max_new_tokens)


def _judgment() -> dict[str, Factory]:
    from model_subjects.tasks.judgment import JudgmentDirect, LabelMeta

    return {"meta": lambda s, q, n: LabelMeta("judgment", s, q, n), "direct": lambda s, q, n: JudgmentDirect(s, n)}


def _choice() -> dict[str, Factory]:
    from model_subjects.tasks.choice import ChoiceDirect, ChoiceMeta, ChoiceProduction

    return {"direct": lambda s, q, n: ChoiceDirect(s, n), "direct:mean": lambda s, q, n: ChoiceDirect(s, n, by="mean"),
            "meta": lambda s, q, n: ChoiceMeta(s, n, q), "production": lambda s, q, n: ChoiceProduction(s, n, q)}


def _rating() -> dict[str, Factory]:
    from model_subjects.tasks.rating import RatingDirect, RatingMeta

    return {"meta": lambda s, q, n: RatingMeta(s, n, q), "direct": lambda s, q, n: RatingDirect(s, n)}


def _completion() -> dict[str, Factory]:
    from model_subjects.tasks.completion import CompletionDirect, CompletionMeta, CompletionProduction

    return {"direct": lambda s, q, n: CompletionDirect(s, n), "production": lambda s, q, n: CompletionProduction(s, n),
            "meta": lambda s, q, n: CompletionMeta(s, n, q)}


def _lexical() -> dict[str, Factory]:
    from model_subjects.tasks.judgment import LabelMeta, LexicalDirect

    return {"direct": lambda s, q, n: LexicalDirect(s, n), "meta": lambda s, q, n: LabelMeta("lexical_decision", s, q, n)}


MODEL_TASKS: dict[str, Callable[[], dict[str, Factory]]] = {
    "judgment": _judgment, "choice": _choice, "rating": _rating, "completion": _completion,
    "self_paced_reading": dict, "lexical_decision": _lexical,
}
SURPRISAL_KINDS = ("violation_detection", "forced_choice", "judgment", "rating", "self_paced_reading",
                   "lexical_decision", "completion", "choice")


def protocol_names(kind: str) -> list[str]:
    names = list(MODEL_TASKS[kind]()) if kind in MODEL_TASKS else []
    return names + (["surprisal"] if kind in SURPRISAL_KINDS else [])


def task_protocol(kind: str, name: str, *, task: Any = None, question: str | None = None,
                  max_new_tokens: int = 8) -> Protocol:
    """The protocol `name` of task kind `kind` (the spec's `task:` settings from `task`)."""
    if name == "surprisal" or name.startswith("surprisal:"):
        from model_subjects.tasks.surprisal import Surprisal, parse_surprisal

        return Surprisal(kind, parse_surprisal(name))
    if kind not in MODEL_TASKS:
        raise ProtocolError(f"task kind {kind!r} has no model protocols here")
    table = MODEL_TASKS[kind]()
    if name not in table and name.startswith(kind + ":"):  # the recorded name (the `protocol` column)
        name = name[len(kind) + 1:]
    if name not in table:
        raise ProtocolError(f"unknown protocol {name!r} for task kind {kind!r}; known: "
                            f"{', '.join(protocol_names(kind))}")
    settings = task.settings() if task is not None else None
    if settings is None:
        from experiments.tasks.config import settings_for

        settings = settings_for(kind, {})
    return table[name](settings, question, max_new_tokens)
