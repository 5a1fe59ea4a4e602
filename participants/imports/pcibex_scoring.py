"""The correct answer an Ibex file's own scoring implies.

Ibex's Question (and a custom controller's correctness column) states whether each answer was right, not what the
right answer was; twinlab scores a trial against its item's answer, so without one the tool's scoring would
silently vanish from every analysis. The answer is recovered from the file alone: a right answer is the answer;
for a wrong one, the answer others gave to the same question and were scored right for, else the other of the
question's (or the controller's) two answers. A wrong answer whose right one the file never shows is refused.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Optional

from participants.imports.records import ImportInputError, SourceTrial

Key = tuple[str, str]   # (controller, the question's text, else "item ITEM": a question without a logged text)


def implied_answers(trials: list[SourceTrial], keys: list[Key]) -> list[SourceTrial]:
    """`trials` with `expected` set where the tool scored them and no answer column was mapped (`keys`: each
    trial's controller and question, a question that logged no text taken per item)."""
    right: dict[Key, set[str]] = defaultdict(set)
    options: dict[Key, set[str]] = defaultdict(set)
    of_controller: dict[str, set[str]] = defaultdict(set)
    scored = [(t, k) for t, k in zip(trials, keys, strict=True) if _scored(t)]
    for t, k in scored:
        options[k].add(t.response)
        of_controller[k[0]].add(t.response)
        if t.correct:
            right[k].add(t.response)
    out = []
    for t, k in zip(trials, keys, strict=True):
        out.append(replace(t, expected=_answer(t, k, right, options, of_controller)) if _scored(t) else t)
    return out


def _scored(t: SourceTrial) -> bool:
    return t.correct is not None and t.response is not None and t.expected is None


def _answer(t: SourceTrial, k: Key, right: dict[Key, set[str]], options: dict[Key, set[str]],
            of_controller: dict[str, set[str]]) -> Optional[str]:
    if t.correct:
        return t.response
    if len(right[k]) == 1:
        return next(iter(right[k]))
    for seen in (options[k], of_controller[k[0]]):
        if len(seen) == 2:
            return next(iter(seen - {t.response}))
    raise ImportInputError(f"{t.source_file}: line {t.line}: the tool scored the answer {t.response!r} wrong, and no "
                           f"trial of the file shows the right answer to this question ({k[1] or k[0]}): map "
                           "`expected:` to a column holding it in --map")


def question_options(trials: list[SourceTrial], keys: list[Key]) -> list[SourceTrial]:
    """`trials` with extra `_question` (the question's text, where the Question logged one) and
    `_question_options`: the answers the file shows for it (those given and the implied right one; an option
    nobody chose is not known)."""
    seen: dict[Key, set[str]] = defaultdict(set)
    for t, k in zip(trials, keys, strict=True):
        if k[1]:
            seen[k].update(x for x in (t.response, t.expected) if x is not None)
    return [replace(t, extra={**t.extra, "_question": k[1], "_question_options": "|".join(sorted(seen[k]))})
            if k[1] and seen[k] else t for t, k in zip(trials, keys, strict=True)]
