"""A task kind's presentation settings, read from the spec's `task:` section (both human runners).

The settings' schema belongs to experiments/tasks/config.py (the task-kinds work); until it lands
they are read defensively here: any attribute or key of `exp.task` with one of the names below is
used, anything else falls back to the default. Names read (docs/participants.md, "Task settings"):

- every kind: `question` (text above the response), `mouse` (clicks/taps answer; default true),
  `hint` (text under the response; default: the kind's own, in the spec's language)
- judgment: `labels` (answer value -> label, or a list of labels = values; default yes/no),
  `keys` (answer value -> key, or a list in the labels' order; default f, j, ...),
  `presentation` (`whole` default, or `rsvp`: word by word with the spec's timing, then the answers)
- choice: `keys` (one per screen position; default f, j for two, 1..n otherwise)
- rating: `scale` (points, default 7), `anchors` ([low end label, high end label]), `keys` (default
  1..k), `presentation` (whole/rsvp)
- lexical_decision: `labels` ({word: .., nonword: ..}), `keys` ({word: j, nonword: f} by default)
- self_paced_reading: `reveal` (`word` default, or `region`), `advance_key` (space), `question_keys`
  (one per comprehension option; default f, j, ...)
- completion: `submit_key` (return)

Key names are PsychoPy's (as everywhere in a spec).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from experiments.screen_texts import key_label, task_text

KINDS = ("judgment", "choice", "rating", "lexical_decision", "self_paced_reading", "completion")
POSITION_KEYS = ("f", "j", "d", "k", "s", "l", "a")

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
                "question": self.question, "presentation": self.presentation, "reveal": self.reveal,
                "advance_key": self.advance_key, "question_keys": list(self.question_keys),
                "question_key_labels": [key_label(k, self.language) for k in self.question_keys],
                "submit_key": self.submit_key, "mouse": self.mouse, "hint": self.hint}


def _raw_task(exp: Any) -> dict[str, Any]:
    task = getattr(exp, "task", None)
    if task is None:
        return {}
    if isinstance(task, dict):
        return dict(task)
    dump = getattr(task, "model_dump", None)
    d = dump() if callable(dump) else dict(vars(task))
    extra = getattr(task, "model_extra", None) or {}
    d.update(extra)
    for sub in ("settings", task_kind(exp) or ""):  # a nested section (e.g. task.judgment: {...}) wins
        if sub and isinstance(d.get(sub), dict):
            d.update(d[sub])
    return d


def task_kind(exp: Any) -> str | None:
    task = getattr(exp, "task", None)
    kind = task.get("kind") if isinstance(task, dict) else getattr(task, "kind", None)
    return kind if isinstance(kind, str) else None


def _pairs(v: Any, where: str) -> list[tuple[str, str]]:
    if isinstance(v, dict):
        return [(str(k), str(x)) for k, x in v.items()]
    if isinstance(v, (list, tuple)):
        return [(str(x), str(x)) for x in v]
    raise SettingsError(f"{where}: expected a mapping value -> label or a list of labels")


def _keys_for(v: Any, values: list[str], default: list[str], where: str) -> tuple[str, ...]:
    if v is None:
        keys = default
    elif isinstance(v, dict):
        missing = [x for x in values if x not in v]
        if missing:
            raise SettingsError(f"{where}: no key for {', '.join(missing)}")
        keys = [str(v[x]) for x in values]
    else:
        keys = [str(k) for k in v]
    if len(keys) < len(values):
        raise SettingsError(f"{where}: {len(values)} answers need {len(values)} keys, got {len(keys)}")
    keys = keys[:len(values)]
    if len(set(keys)) != len(keys):
        raise SettingsError(f"{where}: two answers share a key ({', '.join(keys)})")
    return tuple(keys)


def task_settings(exp: Any, kind: str, overrides: dict[str, Any] | None = None, n_options: int = 2) -> TaskSettings:
    """The settings the runners present `kind` with (the spec's task section, `overrides` on top)."""
    raw = _raw_task(exp) if task_kind(exp) == kind else {}
    raw.update(overrides or {})
    lang = getattr(exp, "language", "en") or "en"
    get = raw.get
    labels: list[tuple[str, str]] = []
    keys: tuple[str, ...] = ()
    if kind in ("judgment", "lexical_decision"):
        values = ("yes", "no") if kind == "judgment" else ("nonword", "word")
        labels = (_pairs(get("labels"), "task.labels") if get("labels")
                  else [(v, task_text(lang, f"label_{v}")) for v in values])
        if kind == "lexical_decision" and sorted(v for v, _ in labels) != ["nonword", "word"]:
            raise SettingsError("task.labels: lexical_decision needs labels for word and nonword")
        default = ["f", "j"] if kind == "lexical_decision" else list(POSITION_KEYS)
        keys = _keys_for(get("keys"), [v for v, _ in labels], default, "task.keys")
    elif kind == "choice":
        default = list(POSITION_KEYS[:2]) if n_options == 2 else [str(i + 1) for i in range(n_options)]
        keys = _keys_for(get("keys"), [str(i) for i in range(n_options)], default, "task.keys")
    elif kind == "rating":
        scale = int(get("scale") or 7)
        if not 2 <= scale <= 9:
            raise SettingsError(f"task.scale: 2 to 9 points, got {scale}")
        keys = _keys_for(get("keys"), [str(i) for i in range(scale)], [str(i + 1) for i in range(scale)], "task.keys")
    anchors = tuple(get("anchors") or ("", ""))
    if len(anchors) != 2:
        raise SettingsError("task.anchors: two labels (low end, high end)")
    presentation = str(get("presentation") or "whole")
    if presentation not in ("whole", "rsvp"):
        raise SettingsError(f"task.presentation: whole or rsvp, got {presentation!r}")
    reveal = str(get("reveal") or "word")
    if reveal not in ("word", "region"):
        raise SettingsError(f"task.reveal: word or region, got {reveal!r}")
    advance, submit = str(get("advance_key") or "space"), str(get("submit_key") or "return")
    hint = get("hint")
    if hint is None:
        hint = (task_text(lang, f"hint_{kind}", key=key_label(advance if kind == "self_paced_reading" else submit, lang))
                if kind in ("self_paced_reading", "completion") else "")
    return TaskSettings(
        kind=kind, language=lang, labels=tuple(labels), keys=keys, scale=int(get("scale") or 7),
        anchors=(str(anchors[0]), str(anchors[1])), question=str(get("question") or ""), presentation=presentation,
        reveal=reveal, advance_key=advance, question_keys=tuple(get("question_keys") or ("f", "j", "d", "k")),
        submit_key=submit, mouse=bool(get("mouse", True)), hint=str(hint))
