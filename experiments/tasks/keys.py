"""The keys the human runners use for a kind's answers, and the checks that they can work.

One place for the key rules (the PsychoPy runner and the page take their keys from here through
participants/tasks/settings.py; `validate` checks them): a label's own `key`, else the position keys
F, J, D, K, S, L, A in order (lexical decision: F, J); choice: `option_keys`, else F/J for two options
and the digits for more; a rating: `scale.keys`, else the digits; self-paced reading's comprehension
answers: `option_keys`. Every key must be one PsychoPy knows, none may be the quit key, two answers
never share a key, and a kind that types (completion) never submits or quits with a key that types.
"""
from __future__ import annotations

from typing import Any

POSITION_KEYS = ("f", "j", "d", "k", "s", "l", "a")
TEXT_MARKS = ("space", "apostrophe", "minus", "period", "comma", "backspace")


class KeySettingError(ValueError):
    """A key setting no runner can honour (the message names the field)."""


def types_text(key: str) -> bool:
    """A key that types or deletes in a completion trial (a letter, space, a few marks, backspace)."""
    return key in TEXT_MARKS or (len(key) == 1 and key.isalpha())


def label_keys(kind: str, settings: Any, labels_given: bool) -> list[str]:
    """Judgment / lexical decision: each label's key in screen order (KeySettingError when there are not enough)."""
    if not labels_given:
        return ["f", "j"]
    default = ["f", "j"] if kind == "lexical_decision" else list(POSITION_KEYS)
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


def _clash(field: str, keys: list[str], quit_key: str) -> None:
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise KeySettingError(f"{field}: key(s) {', '.join(dup)} given to two answers")
    if quit_key in keys:
        raise KeySettingError(f"{field}: {quit_key!r} is the quit key (task.quit_key): pressing it would end the session")


def check_keys(kind: str, settings: Any, given: dict[str, Any], quit_key: str, *, n_options: int = 2,
               n_question_options: int = 0) -> None:
    """Refuse (KeySettingError naming the field) keys a human runner cannot honour for `kind` with these
    settings; `n_options`/`n_question_options`: the most options/comprehension options an item has."""
    if settings is None:
        return
    if kind in ("judgment", "lexical_decision"):
        _clash("task.labels", label_keys(kind, settings, "labels" in given), quit_key)
    elif kind == "choice":
        _clash("task.option_keys", choice_keys(settings, "option_keys" in given, max(2, n_options)), quit_key)
    elif kind == "rating":
        _clash("task.scale.keys", list(settings.scale.point_keys), quit_key)
    elif kind == "self_paced_reading":
        qk = list(settings.option_keys)
        if n_question_options > len(qk):
            raise KeySettingError(f"task.option_keys: comprehension questions with {n_question_options} options need "
                            f"{n_question_options} keys, got {len(qk)} ({', '.join(qk)})")
        _clash("task.option_keys", qk[:max(n_question_options, 0)] or qk, quit_key)
        if settings.advance_key == quit_key:
            raise KeySettingError(f"task.advance_key: {quit_key!r} is the quit key (task.quit_key)")
        if settings.advance_key in qk[:n_question_options]:
            raise KeySettingError(f"task.advance_key: {settings.advance_key!r} is also a comprehension answer key "
                            "(task.option_keys)")
    elif kind == "completion":
        if settings.submit_key == quit_key:
            raise KeySettingError(f"task.submit_key: {quit_key!r} is the quit key (task.quit_key)")
        if types_text(settings.submit_key):
            raise KeySettingError(f"task.submit_key: {settings.submit_key!r} types text in the answer; use e.g. return")
        if types_text(quit_key):
            raise KeySettingError(f"task.quit_key: {quit_key!r} types text in a completion answer; use e.g. escape")
