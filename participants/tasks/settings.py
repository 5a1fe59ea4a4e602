"""A task kind's presentation settings for both human runners, from the spec's `task:` section.

The schema is experiments/tasks/config.py (one schema for the model and both human runners; see
docs/spec.md "Tasks"): `labels` (value, text, key), `scale` (points, low_label, high_label, keys),
`question`, `presentation` (whole | rsvp), `option_keys` (choice positions; self-paced reading's
comprehension answers), `reveal` (word | region), `advance_key`, `submit_key`, `mouse`, `hint`.
Defaults the human runners choose themselves: F/J for two options or labels, the digits for a scale.
Key names are PsychoPy's (as everywhere in a spec).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from experiments.screen_texts import key_label, task_text
from experiments.tasks.keys import POSITION_KEYS, KeySettingError, choice_keys, label_keys

KINDS = ("judgment", "choice", "rating", "lexical_decision", "self_paced_reading", "completion")

class SettingsError(ValueError):
    """A task setting that cannot be presented (names the field)."""


@dataclass(frozen=True)
class TaskSettings:
    kind: str
    language: str = "en"
    labels: tuple[tuple[str, str], ...] = ()  # (value, shown label) in screen order: judgment, lexical_decision
    keys: tuple[str, ...] = ()  # one per label / screen position / scale point
    scale: int = 7
    anchors: tuple[str, str] = ("", "")
    question: str = ""
    presentation: str = "whole"  # whole | rsvp
    positions: str = "counterbalance"  # choice: counterbalance | fixed (experiments.tasks.choice.option_order)
    reveal: str = "word"  # word | region
    advance_key: str = "space"
    question_keys: tuple[str, ...] = ("f", "j", "d", "k")
    submit_key: str = "return"
    mouse: bool = True
    hint: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def key_labels(self) -> list[str]:
        return [key_label(k, self.language) for k in self.keys]

    def to_dict(self) -> dict[str, Any]:
        """What the browser page is given (JSON)."""
        return {"kind": self.kind, "labels": [list(p) for p in self.labels], "keys": list(self.keys),
                "key_labels": self.key_labels(), "scale": self.scale, "anchors": list(self.anchors),
                "question": self.question, "presentation": self.presentation, "positions": self.positions,
                "reveal": self.reveal,
                "advance_key": self.advance_key, "question_keys": list(self.question_keys),
                "question_key_labels": [key_label(k, self.language) for k in self.question_keys],
                "submit_key": self.submit_key, "mouse": self.mouse, "hint": self.hint}


def task_kind(exp: Any) -> str | None:
    task = getattr(exp, "task", None)
    kind = task.get("kind") if isinstance(task, dict) else getattr(task, "kind", None)
    return kind if isinstance(kind, str) else None


def _spec_settings(exp: Any, kind: str) -> tuple[Any, dict[str, Any]]:
    """The kind's validated settings (experiments.tasks.config) and the fields the spec itself gave
    (so a default the human runners choose differently, e.g. f/j for two options, can apply)."""
    from experiments.tasks.config import TASK_FIELDS, settings_for

    task = getattr(exp, "task", None)
    if task is None or task_kind(exp) != kind:
        return settings_for(kind, {}), {}
    given = {f: getattr(task, f, None) for f in TASK_FIELDS}
    given = {k: v for k, v in given.items() if v is not None}
    return task.settings(), given


def task_settings(exp: Any, kind: str, overrides: dict[str, Any] | None = None, n_options: int = 2) -> TaskSettings:
    """The settings the runners present `kind` with: the spec's `task:` settings (validated by
    experiments.tasks.config), `overrides` (e.g. {"question": ...}) on top."""
    from experiments.tasks.config import TASK_FIELDS, settings_for

    st, given = _spec_settings(exp, kind)
    over = dict(overrides or {})
    if any(k in TASK_FIELDS for k in over):  # settings given beside the spec (same schema): validated the same way
        given = {**given, **{k: v for k, v in over.items() if k in TASK_FIELDS and v is not None}}
        st = settings_for(kind, given)
    lang = getattr(exp, "language", "en") or "en"
    labels: list[tuple[str, str]] = []
    keys: tuple[str, ...] = ()
    scale, anchors = 7, ("", "")
    if kind in ("judgment", "lexical_decision"):
        try:
            keys = tuple(label_keys(kind, st, "labels" in given))
        except KeySettingError as exc:
            raise SettingsError(str(exc)) from None
        if "labels" in given:
            labels = [(lab.value, lab.text) for lab in st.labels]
        else:
            values = ("yes", "no") if kind == "judgment" else ("nonword", "word")
            labels = [(v, task_text(lang, f"label_{v}")) for v in values]
        if len(set(keys)) != len(keys):
            raise SettingsError(f"task.labels: two answers share a key ({', '.join(keys)})")
    elif kind == "choice":
        try:
            keys = tuple(choice_keys(st, "option_keys" in given, n_options))
        except KeySettingError as exc:
            raise SettingsError(str(exc)) from None
    elif kind == "rating":
        scale = st.scale.points
        if scale > 9 and st.scale.keys is None:
            raise SettingsError(f"task.scale: {scale} points need scale.keys")
        keys = tuple(st.scale.point_keys)
        anchors = (st.scale.low_label, st.scale.high_label)
    presentation = str(getattr(st, "presentation", "whole"))
    positions = str(getattr(st, "positions", "counterbalance"))
    reveal = str(getattr(st, "reveal", "word"))
    advance = str(getattr(st, "advance_key", "space"))
    submit = str(getattr(st, "submit_key", "return"))
    question_keys = tuple(st.option_keys) if kind == "self_paced_reading" else ("f", "j", "d", "k")
    question = over.get("question", given.get("question", ""))
    hint = over.get("hint", st.hint)
    if hint is None:
        hint = (task_text(lang, f"hint_{kind}", key=key_label(advance if kind == "self_paced_reading" else submit, lang))
                if kind in ("self_paced_reading", "completion") else "")
    return TaskSettings(
        kind=kind, language=lang, labels=tuple(labels), keys=keys, scale=scale,
        anchors=(str(anchors[0]), str(anchors[1])), question=str(question or ""),
        presentation="whole" if presentation == "moving_window" else presentation, positions=positions,
        reveal=reveal, advance_key=advance, question_keys=question_keys,
        submit_key=submit, mouse=bool(over.get("mouse", st.mouse)), hint=str(hint))
