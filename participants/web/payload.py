"""What the browser page is given: the spec's paradigm (timing, keys, texts) and compiled trials.

The trials always come from twinlab's compiler (`experiments.design_compiler.compile_sequence`); the page
never builds or reorders a sequence. Build mode embeds precompiled sequences per participant slot;
serve mode sends a participant's own sequence when the session starts.
"""
from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Any

from experiments.screen_texts import key_label
from experiments.spec import Experiment
from experiments.tasks import get_task, registry
from experiments.tasks.record import CHAR_KEYS, TYPING, answers, sentence_of
from experiments.trials import Trial, TrialSequence, thaw
from participants.tasks import settings_for
from participants.tasks.logic import screen_order
from participants.web.texts import page_texts


class PageKinds(Collection[str]):
    """The kinds the page's task plugin presents (the kinds' page.js builders registered into twinlab-task.js; a test
    checks the page has a builder for each): every kind whose TaskKind.runners names browser and whose renderer is
    the task plugin's (a kind with a renderer of its own, violation detection's RSVP, has its own plugin,
    twinlab-rsvp.js). Read from the task registry at each look-up (a kind registered later is found too)."""

    def _names(self) -> tuple[str, ...]:
        return tuple(name for name, kind in registry().items() if "browser" in kind.runners and kind.renderer == "task")

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())


BROWSER_KINDS: Collection[str] = PageKinds()

# PsychoPy's names of the browser's keys (KeyboardEvent.key -> name), for every plugin of the page (it
# names a key by this table only, else by the key in lower case): the keys with names, and the marks
# the typing keys type (experiments.tasks.record.CHAR_KEYS, inverted), so a press of "." is "period" as
# in PsychoPy, on every kind of trial
BROWSER_KEY_NAMES: dict[str, str] = {
    " ": "space", "Spacebar": "space", "Escape": "escape", "Enter": "return", "ArrowLeft": "left",
    "ArrowRight": "right", "ArrowUp": "up", "ArrowDown": "down", "Backspace": "backspace", "Tab": "tab",
} | {ch: name for name, ch in CHAR_KEYS.items() if ch != " "}

SLOT_PREFIX = "web"  # build mode: slot k (1-based) runs the sequence compiled for subject id web<k:03d>


def slot_subject(k: int) -> str:
    return f"{SLOT_PREFIX}{k:03d}"


def trial_payload(trial: Trial) -> dict[str, Any]:
    """One compiled trial as the page needs it (RSVP units, the answer that is right, feedback)."""
    return {
        "trial_index": trial.trial_index, "block": trial.block, "block_trial_index": trial.block_trial_index,
        "item_id": trial.item_id, "units": list(trial.words), "critical_index": trial.study_record.critical_index,
        "correct_response": trial.study_record.correct_response, "feedback": bool(trial.feedback),
    }


def task_view(trial: Trial, seq: TrialSequence, exp: Experiment,
              overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the page shows for a task trial: texts, the answers in screen order with their keys (the
    choice options already counterbalanced, logic.screen_order), and the kind's own view (TaskKind.page_view:
    the self-paced reading units, the completion's accepted answers and rule, the rating's scale ends)."""
    s = settings_for(exp, trial, overrides)
    order = screen_order(trial, seq, s)
    lang = exp.language
    m = trial.mat
    kind = get_task(trial.task)

    def listed(ans):
        # `correct`: the kind's own score of this answer (experiments.tasks), for the feedback screen only
        return [{"value": a.value, "label": a.label, "key": a.key, "key_label": key_label(a.key, lang),
                 "correct": kind.score(trial, a.value)} for a in ans]

    view: dict[str, Any] = {"question": str(m.get("question") or s.question), "hint": s.hint, "mouse": s.mouse,
                            "presentation": s.presentation, "sentence": sentence_of(trial),
                            "prefix": str(m.get("prefix") or "")}
    if kind.page_view is not None:  # the kind's own view (self-paced reading's units, completion's rule, ...)
        view.update(kind.page_view(trial, s, order, listed))
    else:
        view.update(answers=listed(answers(trial, s, order)), anchors=None)
    if kind.renders_as is not None:  # presented by another kind's builder
        view["builder"] = kind.renders_as
    return view


def sequence_payload(seq: TrialSequence, start: int = 0, n: int | None = None, exp: Experiment | None = None,
                     overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    n = len(seq) if n is None else n
    trials = []
    for i in range(start, n):
        t = trial_payload(seq[i])
        if seq[i].task in BROWSER_KINDS and exp is not None:
            t.update(task=seq[i].task, materials=thaw(seq[i].materials), view=task_view(seq[i], seq, exp, overrides))
        trials.append(t)
    return {"subject_id": seq.subject_id, "session": seq.session, "seed": seq.seed, "spec_hash": seq.spec_hash,
            "sequence_hash": seq.sequence_hash, "n_trials": n, "trials": trials, "start": start}


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
        # the key names that type (experiments.tasks.record.TYPING, the table typed_text reads): the page
        # names keys and turns them into text with this data only, so its typed text is the record's
        "typing": TYPING, "key_names": BROWSER_KEY_NAMES,
    }
