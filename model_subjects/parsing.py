"""Scoring free productions against answer options (Hu & Frank: strict and lenient).

strict: the answer, stripped of surrounding whitespace and closing punctuation, is exactly one
        option label (same case) — what a formatting-sensitive exact-match scorer accepts;
lenient: the earliest whole-word occurrence of any option label anywhere in the answer,
        ignoring case — the answer was produced, whatever the wrapping.
Both return the matched label, or None when the production names no option.
"""
from __future__ import annotations

import re
from typing import Sequence

_CLOSING = " \t\r\n.!?,;:\"')]"


def parse_strict(text: str, labels: Sequence[str]) -> str | None:
    answer = text.strip().rstrip(_CLOSING).strip()
    for label in labels:
        if answer == label:
            return label
    return None


def parse_lenient(text: str, labels: Sequence[str]) -> str | None:
    best: tuple[int, str] | None = None
    for label in labels:
        m = re.search(rf"(?<![A-Za-z0-9]){re.escape(label)}(?![A-Za-z0-9])", text, flags=re.IGNORECASE)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), label)
    return best[1] if best else None
