"""Which answers a person's row may hold: the trial's own answers, or for a typed answer, text that can never
change what a model or a transcript reads.

A label kind (judgment, lexical decision), a choice, a rating, a reading trial's question, violation detection:
the response is exactly one of the values the human runners offer on this trial (kinds/<kind>/task.py
`answers`, with the settings the runners present it with: experiments/tasks/presented.py), or for violation detection's
panel the unanswered `none`. A typed answer (completion) is free text, refused (never rewritten) when it holds a
character of Unicode categories Cc (control characters: line ends, tab, ESC, BEL), Cf (format characters: zero-width
spaces, direction overrides), Zl/Zp (U+2028, U+2029), Cs/Co/Cn (surrogates, private use, unassigned), or `<` or `>`
(which would open or close the Psych-201 transcript's answer marks `<<...>>`), or is longer than MAX_FREE_TEXT.
twinlab's own runners cannot produce any of these (their typing rule types letters, space and ' - . ,
experiments/tasks/record.py), so only an edited or foreign table is refused.
"""
from __future__ import annotations

import unicodedata
from typing import Any

from experiments.tasks import get_task
from experiments.tasks.earned import NO_ANSWER, kind_of, renders_rsvp, rsvp_rules
from experiments.tasks.presented import trial_settings

MAX_FREE_TEXT = 1_000  # characters of one typed answer (a typed word or phrase; longer is not an answer)
BAD_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
MARK_CHARS = "<>"


def free_text_problem(text: str) -> str | None:
    """Why a typed answer cannot be read into a context or a transcript (None: it can)."""
    if len(text) > MAX_FREE_TEXT:
        return f"a typed answer of {len(text)} characters (at most {MAX_FREE_TEXT})"
    for ch in text:
        cat = unicodedata.category(ch)
        if cat in BAD_CATEGORIES:
            name = unicodedata.name(ch, "unnamed")
            return (f"a typed answer holding U+{ord(ch):04X} {name} (category {cat}: control, format and "
                    "line/paragraph "
                    "separator characters are refused)")
        if ch in MARK_CHARS:
            return f"a typed answer holding {ch!r} (the transcript marks answers <<...>>; < and > are refused)"
    return None


def answer_values(exp: Any, trial: Any) -> tuple[str, ...] | None:
    """The responses a person's row may hold on `trial` (None: free text); ValueError when no human runner
    presents its kind."""

    kind = get_task(kind_of(exp, trial))
    if kind.types_text:
        return None
    if renders_rsvp(exp, trial):  # the RSVP kind's answers (violation detection's ANSWERS)
        return tuple(rsvp_rules(exp, trial, "ANSWERS")) + (
            (NO_ANSWER,) if getattr(exp.task, "response", "") == "panel" else ())
    if kind.answers is None or kind.human_settings is None:
        raise ValueError(f"task kind {kind.name!r} is not presented to people (no human runner implements it)")

    values = tuple(str(a.value) for a in kind.answers(trial, trial_settings(exp, trial), None))
    return values or ("",)  # a trial that asks nothing (reading without a question): no response


def response_problem(exp: Any, trial: Any, response: str) -> str | None:
    """Why `response` cannot be this trial's answer (None: it can). A kind whose `response` column is not one
    of its answers' values (the words picked beside distractors) says so itself (its `person_response`)."""

    own = get_task(kind_of(exp, trial)).person_response
    if own is not None:
        return own(trial, trial_settings(exp, trial), response)
    try:
        values = answer_values(exp, trial)
    except ValueError as exc:
        return str(exc)
    if values is None:
        return free_text_problem(response)
    if response in values:
        return None
    shown = ", ".join(repr(v) for v in values[:12]) + (", ..." if len(values) > 12 else "")
    return f"response {response[:80]!r} is not one of this trial's answers ({shown})"
