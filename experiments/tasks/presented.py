"""A task kind's presentation settings for both human runners, from the spec's `task:` section.

Here (not in participants/) because a people's folder read later asks what the runners offered on a trial
(model_subjects/person_answers.py), and participants and model_subjects never import each other
(DESIGN.md); participants.tasks re-exports these names (`settings_for`, `task_settings`, `TaskSettings`).

The schema is experiments/tasks/config.py (one schema for the model and both human runners; see
docs/spec.md "Tasks"): `labels` (value, text, key), `scale` (points, low_label, high_label, keys),
`question`, `presentation` (whole | rsvp), `option_keys` (choice positions; self-paced reading's
comprehension answers), `reveal` (word | region), `advance_key`, `submit_key`, `mouse`, `hint`.
Defaults the human runners choose themselves: F/J for two options or labels, the digits for a scale.
Key names are PsychoPy's (as everywhere in a spec).
"""
from __future__ import annotations

from typing import Any

from experiments.tasks import get_task
from experiments.tasks.config import settings_for, task_fields
from experiments.tasks.keys import KeySettingError
from experiments.tasks.shown import TaskSettings
from experiments.trials import Trial


class SettingsError(ValueError):
    """A task setting that cannot be presented (names the field)."""


def task_kind(exp: Any) -> str | None:
    task = getattr(exp, "task", None)
    kind = task.get("kind") if isinstance(task, dict) else getattr(task, "kind", None)
    return kind if isinstance(kind, str) else None


def _spec_settings(exp: Any, kind: str) -> tuple[Any, dict[str, Any]]:
    """The kind's validated settings (experiments.tasks.config) and the fields the spec itself gave
    (so a default the human runners choose differently, e.g. f/j for two options, can apply)."""
    task = getattr(exp, "task", None)
    if task is None or task_kind(exp) != kind:
        return settings_for(kind, {}), {}
    return task.settings(), task.given_settings()


def task_settings(exp: Any, kind: str, overrides: dict[str, Any] | None = None, n_options: int = 2) -> TaskSettings:
    """The settings the runners present `kind` with: the spec's `task:` settings (validated by
    experiments.tasks.config), `overrides` (e.g. {"question": ...}) on top; what is the kind's own (its
    labels, keys, scale, default hint) comes from its `TaskKind.human_settings` hook."""
    st, given = _spec_settings(exp, kind)
    over = dict(overrides or {})
    fields = task_fields()
    if any(k in fields for k in over):  # settings given beside the spec (same schema): validated the same way
        given = {**given, **{k: v for k, v in over.items() if k in fields and v is not None}}
        st = settings_for(kind, given)
    lang = getattr(exp, "language", "en") or "en"
    hook = get_task(kind).human_settings
    try:
        own = dict(hook(st, given, lang, n_options)) if hook is not None and st is not None else {}
    except KeySettingError as exc:
        raise SettingsError(str(exc)) from None
    default_hint = own.pop("hint", "")
    hint = over.get("hint", getattr(st, "hint", None))
    presentation = str(getattr(st, "presentation", "whole"))
    fields: dict[str, Any] = dict(
        kind=kind, language=lang, question=str(over.get("question", given.get("question", "")) or ""),
        presentation="whole" if presentation == "moving_window" else presentation,
        positions=str(getattr(st, "positions", "counterbalance")), reveal=str(getattr(st, "reveal", "word")),
        advance_key=str(getattr(st, "advance_key", "space")), submit_key=str(getattr(st, "submit_key", "return")),
        mouse=bool(over.get("mouse", getattr(st, "mouse", True))), hint=str(default_hint if hint is None else hint))
    return TaskSettings(**{**fields, **own})


def trial_settings(exp: Any, trial: Trial, overrides: dict[str, Any] | None = None) -> TaskSettings:
    """The settings `trial` is presented with (a choice trial's option count sets its default keys)."""
    return task_settings(exp, trial.task, overrides, n_options=len(trial.mat.get("options") or ()) or 2)
