"""How a replay row shows the person: the person's answer in the task's words (the history's rule), a typed
answer's log-probability, and the person's outcome in `extra`. Its own module, below replay.py, so that the
frozen replay (replay.py) and the replay that learns in its weights (replay_weights.py) share it without an
import circle."""
from __future__ import annotations

from typing import Any

from experiments.trials import Trial
from model_subjects.context import history_entry, option_text
from model_subjects.people import Person
from model_subjects.tasks.registry import typed_answer


def person_answer_text(runner: Any, trial: Trial, response: str) -> str:
    """The person's answer in the task's words, as the history shows a model's own (see `answer_words`)."""
    return answer_words(runner.protocol, trial, response, bool(runner.chat))


def answer_words(protocol: Any, trial: Trial, response: str, chat: bool = False) -> str:
    """The person's answer in the words the running history shows (context.history_entry: the same rule as a
    model's own answer, e.g. judgment `direct`: the task's question, then the label)."""
    return option_text(history_entry(protocol, trial, response, None).answer, chat)


def typed_word(trial: Trial, response: str) -> str:
    """A typed answer as its kind scores it (completion: the first word, punctuation trimmed); '' otherwise."""

    return typed_answer(trial, response)


def mark_person(runner: Any, p: Person, i: int, trial: Trial, d: Any, word_logprob: Any) -> None:
    """A replay row's decision, in place: the person's answer and its outcome in `extra`; `word_logprob(word)`
    scores a typed answer as the person typed it (completion) in the context the model read."""
    response, row = p.responses[i], p.rows[i]
    typed = typed_word(trial, response)
    if typed:  # a typed answer (completion): log P(the person's word), as the person typed it
        d.extra["person_word"] = typed
        d.extra["person_word_logprob"] = round(float(word_logprob(typed)), 6)
    # the history shows the person's answer (extra.answer_text, as context.rebuild_contexts reads it);
    # the model's own best option stays in `response` and extra.model_answer_text
    d.extra["model_answer_text"] = d.answer_text
    d.answer_text = person_answer_text(runner, trial, response)
    d.extra.update({"replay_of": p.subject_id, "person_response": response,
                    "person_correct": row.get("correct"), "person_rt_ms": row.get("rt_ms") or None})
