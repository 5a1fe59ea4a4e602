"""The keys the human runners use for a kind's answers, and the checks that they can work.

The helpers of the key rules; each kind applies them in its own hooks (`TaskKind.human_settings`: the keys
the PsychoPy runner and the page use; `TaskKind.check_keys`: what `validate` refuses; `check_keys` here
dispatches to the kind). The built-in kinds' rules: a label's own `key`, else the position keys
F, J, D, K, S, L, A in order (lexical decision: F, J); choice: `option_keys`, else F/J for two options
and the digits for more; a rating: `scale.keys`, else the digits; self-paced reading's comprehension
answers: `option_keys`. Every key must be one PsychoPy knows, none may be the quit key, two answers
never share a key, and a kind that types (completion) never submits or quits with a key that types.
"""
from __future__ import annotations

from typing import Any

from experiments.tasks.base import get_task

POSITION_KEYS = ("f", "j", "d", "k", "s", "l", "a")
TEXT_MARKS = ("space", "apostrophe", "minus", "period", "comma", "backspace")


class KeySettingError(ValueError):
    """A key setting no runner can honour (the message names the field)."""


def types_text(key: str) -> bool:
    """A key that types or deletes in a completion trial (a letter, space, a few marks, backspace)."""
    return key in TEXT_MARKS or (len(key) == 1 and key.isalpha())


def label_keys(settings: Any, labels_given: bool, default: tuple[str, ...] = POSITION_KEYS) -> list[str]:
    """Judgment / lexical decision: each label's key in screen order, a label without its own `key` taking
    the `default` key of its position (KeySettingError when there are not enough); F, J without labels."""
    if not labels_given:
        return ["f", "j"]
    keys = []
    for k, lab in enumerate(settings.labels):
        if lab.key is None and k >= len(default):
            raise KeySettingError(f"task.labels: {len(settings.labels)} labels but only {len(default)} default keys "
                            f"({', '.join(default)}); give each label a `key`")
        keys.append(lab.key or default[k])
    return keys


def choice_keys(settings: Any, option_keys_given: bool, n: int) -> list[str]:
    """Choice: the key of each screen position for `n` options (KeySettingError when there are not enough)."""
    if option_keys_given:
        if len(settings.option_keys) < n:
            raise KeySettingError(f"task.option_keys: {n} options need {n} keys, got {len(settings.option_keys)}")
        return list(settings.option_keys[:n])
    if n == 2:
        return list(POSITION_KEYS[:2])
    if n > 9:
        raise KeySettingError(f"task.option_keys: {n} options need {n} keys (the digits 1-9 cover 9); give option_keys")
    return [str(i + 1) for i in range(n)]


def clash(field: str, keys: list[str], quit_key: str) -> None:
    """Refuse two answers on one key, and the quit key as an answer's."""
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise KeySettingError(f"{field}: key(s) {', '.join(dup)} given to two answers")
    if quit_key in keys:
        raise KeySettingError(f"{field}: {quit_key!r} is the quit key (task.quit_key): pressing it would end the "
                              "session")


def check_keys(kind: str, settings: Any, given: dict[str, Any], quit_key: str, *, n_options: int = 2,
               n_question_options: int = 0, continue_key: str | None = None) -> None:
    """Refuse (KeySettingError naming the field) keys a human runner cannot honour for `kind` with these
    settings; `n_options`/`n_question_options`: the most options/comprehension options an item has.
    The rule is the kind's own (`TaskKind.check_keys`, in kinds/<kind>/task.py); then no answer may be on the
    continue key (`continue_key`, task.response_key), which also ends the instruction and break screens."""

    hook = get_task(kind).check_keys
    if settings is None or hook is None:
        return
    hook(settings, given, quit_key, n_options, n_question_options)
    if continue_key is not None:
        check_continue_key(kind, settings, given, continue_key, n_options, n_question_options)


def answer_key_field(settings: Any) -> str:
    """The spec field that gives a kind's answer keys (for a message)."""
    fields = type(settings).model_fields if hasattr(type(settings), "model_fields") else {}
    if "labels" in fields:
        return "task.labels (a label's `key`)"
    if "scale" in fields:
        return "task.scale.keys"
    return "task.option_keys"


def check_continue_key(kind: str, settings: Any, given: dict[str, Any], continue_key: str, n_options: int,
                       n_question_options: int) -> None:
    """Refuse an answer key that is the continue key: a press meant to answer would also end a break or
    instruction screen (and the break would swallow an answer). A kind that answers with the continue key
    itself (violation detection's go/no-go key: its settings hold `response_key`) is exempt."""

    hook = get_task(kind).human_settings
    fields = type(settings).model_fields if hasattr(type(settings), "model_fields") else {}
    if hook is None or "response_key" in fields:
        return
    shown = hook(settings, given, "en", n_options)
    keys = list(shown.get("keys") or ()) + list(shown.get("question_keys") or ())[:max(n_question_options, 0)]
    if continue_key in keys:
        raise KeySettingError(f"{answer_key_field(settings)}: the answer key {continue_key!r} is also the continue key "
                              f"(task.response_key: {continue_key!r}), which ends the instruction and break screens; "
                              "give the answer another key, or task.response_key another key")
