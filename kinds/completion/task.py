"""Completion (cloze): a prefix and a typed answer, scored against the item's `target` and its
`accepted` variants.

Rule (decided here, the same for humans and models): the response and every key are compared after
`normalize_answer` (NFC, case folded, surrounding whitespace and punctuation trimmed: "Dog." and " dog"
match "dog", "dogs" does not). Only the first word of a longer answer counts for a model's generation
(`first_word`); a person's typed text is compared whole. No response (None) is not scored; an empty
typed answer is incorrect.
"""
from __future__ import annotations

import json
import random
from typing import Annotated, Any, Literal

from pydantic import Field, Strict, field_validator

from experiments.screen_texts import key_label, kind_text
from kinds.api import (
    CHAR_KEYS,
    RULE,
    KeySettingError,
    KindSettings,
    TaskError,
    TaskKind,
    TaskPlan,
    TaskResultError,
    TaskSettings,
    Trial,
    event_time,
    is_text_key,
    missing,
    normalize_answer,
    round_ms,
    typeable,
    typed_text,
    types_text,
    valid_key,
)


class CompletionSettings(KindSettings):
    question: str = "What word comes next?"
    max_chars: Annotated[int, Strict(), Field(ge=1, le=200)] = 40
    presentation: Literal["whole", "rsvp"] = "whole"
    submit_key: str = "return"  # humans: ends the typed answer

    @field_validator("submit_key")
    @classmethod
    def _key(cls, v: str) -> str:
        return valid_key(v)


def accepted_answers(mat: dict[str, Any]) -> list[str]:
    """The target and its accepted variants (materials list, or a `|`-separated string), normalized."""
    acc = mat.get("accepted") or ()
    if isinstance(acc, str):
        acc = acc.split("|")
    keys = [mat.get("target", "")] + list(acc)
    return list(dict.fromkeys(k for k in (normalize_answer(x) for x in keys) if k))


def check_item(mat: dict[str, Any], settings: Any, where: str) -> None:
    """A target a person can type: within max_chars, of the characters the typing keys type (letters and
    the marks of experiments.tasks.record.CHAR_KEYS, the table the runners type by), not empty."""
    for key in ("target",):
        t = str(mat.get(key) or "")
        if normalize_answer(t) == "":
            raise TaskError(f"{where}: {key}: {t!r} is empty once punctuation and spaces are trimmed")
        if len(t) > settings.max_chars:
            raise TaskError(f"{where}: {key} {t!r} has {len(t)} characters; task.max_chars is {settings.max_chars}")
        bad = sorted({c for c in t if not typeable(c)})
        if bad:
            marks = "".join(c for c in CHAR_KEYS.values() if c != " ")
            raise TaskError(f"{where}: {key} {t!r} contains {''.join(bad)!r}, which the typed answer cannot contain "
                            f"(letters and {marks!r} and space are typed)")


def score(trial: Trial, response: Any) -> bool | None:
    if missing(response):
        return None
    keys = accepted_answers(trial.mat)
    if not keys:
        return None
    return normalize_answer(str(response)) in keys


def first_word(text: str) -> str:
    """The first whitespace-separated word of a generation ("" if none)."""
    words = str(text).split()
    return words[0] if words else ""


def derive(trial: Trial, s: TaskSettings, order: list[int] | None, raw: dict, presses: list, pointers: list,
           out: dict, extra: dict) -> None:
    """The typed text (what the keys pressed between the prompt and the submit key type), each keystroke's
    time, and the one scoring rule (`score`)."""
    onset = event_time(raw.get("response_onset"), "response_onset")
    submit = event_time(raw.get("submit_time"), "submit_time")
    typed = [p for p in presses if onset <= p["t"] < submit and is_text_key(p["key"])]  # type: ignore[operator]
    sub = [p for p in presses if p["key"] == s.submit_key and p["t"] == submit]
    if not sub:
        raise TaskResultError(f"submit_time: no press of {s.submit_key!r} at that time")
    text = typed_text([p["key"] for p in typed])
    if raw.get("text") != text:
        raise TaskResultError(f"text: the keys typed give {text[:60]!r}, the runner showed "
                              f"{str(raw.get('text'))[:60]!r}")
    if not text.strip():
        raise TaskResultError("text: an empty answer is not submitted")
    out.update(response=text.strip(), response_text=text, correct=score(trial, text),
               keystrokes=json.dumps([[p["key"], round_ms(p["t"] - onset)] for p in typed]),  # type: ignore[operator]
               rt_ms=round_ms(typed[0]["t"] - onset) if typed else None)  # type: ignore[operator]
    extra["submit_ms"] = round_ms(submit - onset)  # type: ignore[operator]


def plan(trial: Trial, s: TaskSettings, order: list[int] | None, rng: random.Random, right: bool) -> TaskPlan:
    """Typing the target (right) or a reversed, never accepted, word (wrong), then the submit key."""
    m = trial.mat
    target = str(m.get("target") or "word")
    word = target.lower() if right else ("".join(reversed(target.lower())) or "x")
    if normalize_answer(word) in accepted_answers(m) and not right:
        word = word + "s"
    keys = [{" ": "space", "'": "apostrophe", "-": "minus"}.get(c, c) for c in word if c.isalpha() or c in " '-"]
    t, typed = 0.4, []
    for k in keys:
        typed.append((round(t, 3), k))
        t += round(rng.uniform(0.06, 0.12), 3)
    typed.append((round(t + 0.15, 3), s.submit_key))
    return TaskPlan({"type": typed}, word, right)


def check_keys(settings: Any, given: dict[str, Any], quit_key: str, n_options: int, n_question_options: int) -> None:
    """The submit key neither quits nor types; the quit key does not type."""
    if settings.submit_key == quit_key:
        raise KeySettingError(f"task.submit_key: {quit_key!r} is the quit key (task.quit_key)")
    if types_text(settings.submit_key):
        raise KeySettingError(f"task.submit_key: {settings.submit_key!r} types text in the answer; use e.g. return")
    if types_text(quit_key):
        raise KeySettingError(f"task.quit_key: {quit_key!r} types text in a completion answer; use e.g. escape")


def human_settings(st: Any, given: dict[str, Any], lang: str, n_options: int) -> dict[str, Any]:
    """The hint that names the submit key."""

    return {"hint": kind_text("completion", lang, "hint", key=key_label(st.submit_key, lang))}


def page_view(trial: Trial, s: TaskSettings, order: list[int] | None, listed: Any) -> dict[str, Any]:
    """The submit key, the accepted answers already normalised and the one rule as data (scoring.RULE):
    the page's feedback compares the typed text by them."""
    return {"submit_key": s.submit_key, "accepted": accepted_answers(trial.mat), "rule": RULE}


# taps: the submit button's taps (touch screens); input_presses: the presses read from the text field's
# input events (an on-screen keyboard sends no key names)
RAW_FIELDS = (frozenset({"presses", "pointers", "response_onset", "submit_time", "text"}),
              frozenset({"taps", "input_presses"}))

KIND = TaskKind(
    name="completion", description="a prefix and a typed answer (cloze)",
    materials=("prefix", "target"), optional_materials=("accepted", "question"),
    recorded=("response", "response_text", "keystrokes", "correct", "rt_ms"),
    runners=("psychopy", "browser", "model"), model_protocols=("direct", "production", "meta", "surprisal"),
    score=score, settings=CompletionSettings,
    check_item=check_item, derive=derive, plan=plan,
    check_keys=check_keys, human_settings=human_settings, page_view=page_view,
    raw_fields=RAW_FIELDS, record_keys=lambda s: (s.submit_key,), types_text=True,
)
