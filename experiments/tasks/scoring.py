"""The one normaliser and the shared pieces of the kinds' scoring functions (pure: no I/O, no state).

`normalize_answer` is THE rule by which a response is compared with an item's answer, for every kind
and every runner (PsychoPy, the browser server, the model runner, the analysis). The browser page
gets the same rule as data (`RULE`, generated from the constants below and shipped in each
completion trial's payload) with the answers already normalised here, so it holds no copy of its own.

The rule: Unicode NFC; lower case (Unicode's default full lower-case mapping: Python's `str.lower`,
JavaScript's `toLowerCase`, which agree; "Straße" and "STRASSE" stay different); leading and trailing
punctuation (category P*) and white space trimmed; inner white space collapsed to one space.
"Bread." and " bread" match "bread"; "breads" and "bre ad" do not; punctuation inside ("don't") stays.
"""
from __future__ import annotations

import unicodedata
from typing import Any

# white space the rule trims and collapses: Unicode separators (Z*) and these controls (JavaScript's \s)
_SPACE_CONTROLS = "\t\n\v\f\r\ufeff"
# the same classes as a JavaScript (u-flag) regular-expression character class, shipped to the page
JS_TRIM_CLASS = "[\\p{P}\\p{Z}\\t\\n\\v\\f\\r\\ufeff]"
JS_SPACE_CLASS = "[\\p{Z}\\t\\n\\v\\f\\r\\ufeff]"
RULE: dict[str, str] = {"unicode": "NFC", "case": "lower", "trim": JS_TRIM_CLASS, "space": JS_SPACE_CLASS}


def missing(response: Any) -> bool:
    """No response at all (timed out, or not asked): the trial is not scored."""
    return response is None or (isinstance(response, float) and response != response)


def _space(ch: str) -> bool:
    return unicodedata.category(ch).startswith("Z") or ch in _SPACE_CONTROLS


def _trimmed(ch: str) -> bool:
    return unicodedata.category(ch).startswith("P") or _space(ch)


def normalize_answer(text: Any) -> str:
    """A response or an answer as compared: NFC, lower case, surrounding punctuation and white space
    trimmed, inner white space collapsed ("The." -> "the", " DOG! " -> "dog", "don't" stays)."""
    t = unicodedata.normalize("NFC", unicodedata.normalize("NFC", str(text)).lower())
    start, end = 0, len(t)
    while start < end and _trimmed(t[start]):
        start += 1
    while end > start and _trimmed(t[end - 1]):
        end -= 1
    out: list[str] = []
    for ch in t[start:end]:
        if _space(ch):
            if out and out[-1] != " ":
                out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


def equals_answer(answer: Any, response: Any) -> bool | None:
    """Whether `response` is the item's `answer` under the one rule; None when the item has no answer
    or there is no response (the trial is not scored)."""
    if missing(answer) or str(answer).strip() == "" or missing(response):
        return None
    return normalize_answer(response) == normalize_answer(answer)


