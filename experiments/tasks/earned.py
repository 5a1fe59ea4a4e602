"""What a person's answer earned: whether it is right and the feedback text it was shown, from the spec's trial.

The human runners decide both as a trial ends (participants/rsvp.py for the RSVP renderer, the task window
and the page for the other kinds); a people's folder read later (`run-model --replay`, `people-jsonl`,
model_subjects/people.py) asks the same question of a recorded answer, to check a row's `correct` and
`feedback_text` against the spec instead of taking them from the row. The rules:

- the RSVP renderer (a kind whose `renderer` is "rsvp": violation detection, a Lakretz spec's trials): the
  kind's own `outcome` (violation detection's: right when the answer is the trial's correct response, a
  filler's too); a panel left unanswered (response `none`) is neither, and its feedback is `no_response_text`;
- every other kind: the kind's own `score` (kinds/<kind>/task.py), no response not scored; feedback
  only for a scored answer;
- feedback only on a trial of a block that gives it (`Trial.feedback`), in the spec's words (`exp.feedback`,
  the language's defaults filled in when the spec is loaded): `feedback_earned`, which the runners call too.
"""
from __future__ import annotations

from typing import Any

from experiments.kinds import kind_attrs
from experiments.tasks import get_task

NO_ANSWER = "none"  # the response of a violation-detection panel left unanswered (participants/rsvp.py)


def kind_of(exp: Any, trial: Any) -> str:
    """The trial's task kind: its own, else the spec's (a Lakretz trial has none of its own)."""
    return str(trial.task or exp.task.kind)


def renders_rsvp(exp: Any, trial: Any) -> bool:
    """Whether the RSVP renderer presents the trial (its own outcome and no-response rules)."""

    return get_task(kind_of(exp, trial)).renderer == "rsvp"


def rsvp_rules(exp: Any, trial: Any, *names: str) -> Any:
    """The RSVP renderer's rules of the trial's own kind, from its task part (kinds/<kind>/task.py): a kind whose
    `renderer` is "rsvp" declares `ANSWERS`, `key_response`, `outcome`, `response_times` and `autopilot_answer`
    there (violation detection does); one value, or a tuple in the order asked."""

    return kind_attrs(kind_of(exp, trial), "task", *names)


def person_outcome(exp: Any, trial: Any, response: str) -> bool | None:
    """Whether `response` (as the table records it) is right on `trial`; None: not scored."""

    if renders_rsvp(exp, trial):
        return rsvp_rules(exp, trial, "outcome")(trial, response, answered=response != NO_ANSWER)
    kind = get_task(kind_of(exp, trial))
    if response == "" and not kind.types_text:  # no answer (a reading trial without a question)
        return None
    return kind.score(trial, response)


def feedback_earned(exp: Any, trial: Any, correct: bool | None, *, rsvp: bool) -> str | None:
    """The feedback text an answer judged `correct` (None: not scored) earned on `trial`; None: no feedback
    screen. The one rule every runner shows and every reader checks: the PsychoPy task window and RSVP
    presenter, the page's reports (participants/web/results.py), a people's folder (person_feedback), a
    model's history (model_subjects/context.py). `rsvp`: the RSVP renderer, which shows `no_response_text`
    for a panel left unanswered; the other kinds show nothing for an unscored answer. A loaded spec's texts
    are always strings (the language's defaults fill the ones it leaves out), so None means no screen."""
    if not trial.feedback or (correct is None and not rsvp):
        return None
    fb = exp.feedback
    if correct is None:
        return fb.no_response_text
    return fb.correct_text if correct else fb.incorrect_text


def person_feedback(exp: Any, trial: Any, response: str) -> str | None:
    """The feedback text `response` earned on `trial` (None: none shown)."""
    if not trial.feedback:
        return None
    return feedback_earned(exp, trial, person_outcome(exp, trial, response), rsvp=renders_rsvp(exp, trial))
