"""The texts the browser page shows, from the spec (one function, so the source can move).

The shared screen-text module (`experiments.screen_texts`, English defaults and a complete Italian
set, read by the PsychoPy runner too) gives everything; without it (an older checkout) the page
gets the spec's own texts and English for the runner's words.
"""
from __future__ import annotations

from typing import Any

from experiments.spec import Experiment

_ENGLISH = {
    "continue_hint": "Press {key} to continue", "block_start_hint": "Press {key} to start",
    "resume_text": "Welcome back. The session continues with sentence {trial} of {total}.",
    "next_session_text": "Your next session: session {next} of {sessions}.",
    "start_button": "Start", "tap_continue_hint": "Tap the screen to continue", "loading_text": "Loading…",
    "refresh_refused_text": ("Your screen refreshes at {measured} Hz, but this study needs {expected} Hz. "
                             "Please take part on another device."),
    "completion_code_text": "Your completion code is {code}.",
    "redirect_text": "You will now be taken back to the study site.",
    "already_done_text": "This session is already complete. Thank you!",
    "save_error_text": ("Your answers could not be saved. Please check your internet connection; "
                        "the experiment will try again."),
}


def page_texts(exp: Experiment) -> dict[str, Any]:
    """{'texts': key -> text, 'instructions': pages, 'block_intros': block -> text or None, ...}."""
    try:
        from experiments.screen_texts import screen_bundle
    except ImportError:
        return _fallback(exp)
    return screen_bundle(exp)


def _fallback(exp: Experiment) -> dict[str, Any]:
    key = exp.task.response_key.upper()
    texts = {k: v.replace("{key}", key) for k, v in _ENGLISH.items()}
    fb = exp.feedback
    texts.update(break_text=exp.texts.break_text, end_text=exp.texts.end_text, correct_text=fb.correct_text,
                 incorrect_text=fb.incorrect_text, no_response_text=fb.no_response_text,
                 response_prompt=exp.task.response_prompt, continue_key_label=key)
    panel = exp.task.panel if exp.task.response == "panel" else None
    if panel is not None:
        texts["panel_question"] = panel.question
        for answer in ("violation", "no_violation"):
            texts[f"panel_label_{answer}"] = panel.labels[answer]  # type: ignore[index]
            texts[f"panel_key_{answer}"] = panel.keys[answer].upper()  # type: ignore[index]
    return {"language": exp.language, "texts": texts,
            "instructions": [" ".join(p.split()) for p in exp.texts.instructions],
            "block_intros": {b.name: b.intro_text for b in exp.blocks}, "untranslated": []}
