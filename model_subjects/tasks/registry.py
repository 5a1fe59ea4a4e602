"""The model side's view of the one registry of task kinds (experiments/kinds.py; see
model_subjects/tasks/__init__.py): the ModelKind a kind's `model` part builds, and the look-ups on it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from experiments.kinds import UnknownKind, kind_part, parts
from experiments.tasks import get_task
from experiments.tasks.config import settings_for
from model_subjects.protocol_base import Protocol, ProtocolError

Factory = Callable[[Any, str | None, int], Protocol]  # (kind settings, question, max_new_tokens)


@dataclass(frozen=True)
class ModelKind:
    """One task kind on the model side.

    `protocols`: short name -> factory (the recorded name is `<kind>:<short>`); `resolve`: instead, a
    function (name, question=, max_new_tokens=, panel=, task=) -> Protocol for a kind whose recorded names
    are its own, with `names(task)` listing them; `default(response)`: the protocol a spec of this kind
    gets without --protocol (None: the experiment kind's first `model_protocols`); `surprisal`: the kind
    has sentences, so `surprisal` applies; `typed_answer(trial, response)`: a person's typed answer as the
    replay scores it ('' when there is none to score).
    """

    name: str
    protocols: Mapping[str, Factory] = field(default_factory=dict)
    surprisal: bool = False
    resolve: Callable[..., Protocol] | None = None
    names: Callable[[Any], list[str]] | None = None
    default: Callable[..., str] | None = None
    typed_answer: Callable[[Any, str], str] | None = None


def model_kinds() -> dict[str, ModelKind]:
    """Every kind's ModelKind (its folder's `model` part, `MODEL`), in listing order (experiments/kinds.py)."""

    return parts("model", "MODEL")  # type: ignore[return-value]


def _model(kind: str) -> ModelKind | None:
    try:
        mod = kind_part(kind, "model")
    except UnknownKind:
        return None
    return getattr(mod, "MODEL", None) if mod is not None else None


def model_kind(kind: str) -> ModelKind:
    mk = _model(kind)
    if mk is None:
        raise ProtocolError(f"task kind {kind!r} has no model protocols here")
    return mk


def protocol_names(kind: str, task: Any = None) -> list[str]:
    """Every protocol name a spec of `kind` offers (`task`: the spec's Task, for a kind whose names depend on it)."""
    mk = _model(kind)
    if mk is None:
        return []
    names = list(mk.names(task)) if mk.names is not None else list(mk.protocols)
    return names + (["surprisal"] if mk.surprisal else [])


def default_protocol(kind: str, response: str = "key") -> str:
    """The protocol a spec of `kind` is put to a model with when --protocol is not given."""
    mk = _model(kind)
    if mk is not None and mk.default is not None:
        return mk.default(response)

    return get_task(kind).model_protocols[0]


def typed_answer(trial: Any, response: str) -> str:
    """A person's typed answer as the replay scores it ('' for a kind that records no typed answer)."""
    mk = _model(getattr(trial, "task", None) or "")
    return mk.typed_answer(trial, response) if mk is not None and mk.typed_answer is not None else ""


def task_protocol(kind: str, name: str, *, task: Any = None, question: str | None = None,
                  max_new_tokens: int = 8, panel: Any = None) -> Protocol:
    """The protocol `name` of task kind `kind` (the spec's `task:` settings from `task`); a recorded name
    (`judgment:meta`, as the table's `protocol` column holds it) is accepted too."""
    if name == "surprisal" or name.startswith("surprisal:"):
        # model_subjects.tasks.surprisal loads this module back (an import circle)
        from model_subjects.tasks.surprisal import Surprisal, parse_surprisal

        return Surprisal(kind, parse_surprisal(name))
    mk = model_kind(kind)
    if mk.resolve is not None:
        return mk.resolve(name, question=question, max_new_tokens=max_new_tokens, panel=panel, task=task)
    table = mk.protocols
    if name not in table and name.startswith(kind + ":"):  # the recorded name (the `protocol` column)
        name = name[len(kind) + 1:]
    if name not in table:
        raise ProtocolError(f"unknown protocol {name!r} for task kind {kind!r}; known: "
                            f"{', '.join(protocol_names(kind, task))}")
    settings = task.settings() if task is not None else None
    if settings is None:
        settings = settings_for(kind, {})
    return table[name](settings, question, max_new_tokens)

