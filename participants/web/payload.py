"""What the browser page is given: the spec's paradigm (timing, keys, texts) and compiled trials.

The trials always come from twinlab's compiler (`experiments.compiler.compile_sequence`); the page
never builds or reorders a sequence. Build mode embeds precompiled sequences per participant slot;
serve mode sends a participant's own sequence when the session starts.
"""
from __future__ import annotations

from typing import Any

from experiments.spec import Experiment
from experiments.trials import Trial, TrialSequence
from participants.web.texts import page_texts

SLOT_PREFIX = "web"  # build mode: slot k (1-based) runs the sequence compiled for subject id web<k:03d>


def slot_subject(k: int) -> str:
    return f"{SLOT_PREFIX}{k:03d}"


def trial_payload(trial: Trial) -> dict[str, Any]:
    """One compiled trial as the page needs it (RSVP units, the answer that is right, feedback)."""
    return {
        "trial_index": trial.trial_index, "block": trial.block, "block_trial_index": trial.block_trial_index,
        "item_id": trial.item_id, "units": list(trial.words), "critical_index": trial.critical_index,
        "correct_response": trial.correct_response, "feedback": bool(trial.feedback),
    }


def sequence_payload(seq: TrialSequence, start: int = 0, n: int | None = None) -> dict[str, Any]:
    n = len(seq) if n is None else n
    return {"subject_id": seq.subject_id, "session": seq.session, "seed": seq.seed, "spec_hash": seq.spec_hash,
            "sequence_hash": seq.sequence_hash, "n_trials": n,
            "trials": [trial_payload(seq[i]) for i in range(start, n)], "start": start}


def page_config(exp: Experiment, mode: str) -> dict[str, Any]:
    """Everything about the paradigm the page needs, from the spec (JSON-serialisable)."""
    tm, task = exp.timing, exp.task
    bundle = page_texts(exp)
    panel = task.panel if task.response == "panel" else None
    online = exp.online
    return {
        "mode": mode, "experiment": exp.name, "spec_hash": exp.spec_hash, "language": exp.language,
        "sessions": exp.sessions, "response": task.response, "respond_during_sentence": task.respond_during_sentence,
        "timing": {k: getattr(tm, k) for k in ("fixation_ms", "word_ms", "gap_ms", "response_ms", "feedback_ms",
                                               "iti_ms", "panel_delay_ms", "expected_refresh_hz",
                                               "refresh_tolerance_hz")},
        "keys": {"response": task.response_key, "continue": task.response_key},
        "panel": None if panel is None else {"keys": dict(panel.keys), "left": panel.left, "mouse": panel.mouse},
        "colors": {"correct": exp.feedback.correct_color, "incorrect": exp.feedback.incorrect_color},
        "texts": bundle["texts"], "instructions": bundle["instructions"], "block_intros": bundle["block_intros"],
        "break_after": {b.name: b.break_after for b in exp.blocks},
        "completion": {"code": online.completion_code if online else None,
                       "url": online.completion_url if online else None},
    }
