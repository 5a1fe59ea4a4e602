"""Shared pieces of the kinds' scoring functions (pure: no I/O, no state)."""
from __future__ import annotations

import unicodedata
from typing import Any


def missing(response: Any) -> bool:
    """No response at all (timed out, or not asked): the trial is not scored."""
    return response is None or (isinstance(response, float) and response != response)


def normalize_answer(text: str) -> str:
    """A typed word as compared with a target: Unicode NFC, case folded, surrounding whitespace and
    punctuation trimmed ("The." -> "the", " DOG! " -> "dog"); punctuation inside a word stays ("don't")."""
    t = unicodedata.normalize("NFC", str(text)).strip().casefold()
    is_punct = lambda ch: unicodedata.category(ch).startswith("P")  # noqa: E731
    start, end = 0, len(t)
    while start < end and (is_punct(t[start]) or t[start].isspace()):
        start += 1
    while end > start and (is_punct(t[end - 1]) or t[end - 1].isspace()):
        end -= 1
    return t[start:end]


def equals_answer(answer: Any, response: Any) -> bool | None:
    """response == answer as text (both stripped); None when the item has no answer or there is no response."""
    if answer in (None, "") or missing(response):
        return None
    return str(response).strip() == str(answer).strip()
