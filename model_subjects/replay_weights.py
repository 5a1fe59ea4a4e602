"""Twins whose weights learn: `run-model SPEC --replay PEOPLE --learning weights|both`.

A replay subject (model_subjects/replay.py) reads one person's trials in the person's order; here its weights
also take the steps a model's own weight-learning run takes (model_subjects/weight_runs.py, the same
`LearningSubject`), on what the *person* was shown, then it scores the person's next trial:

  --learning both     the context is the person's history (their answers in the task's words, the feedback the
                      spec gives for them), as a frozen replay's; the weights learn too. context_mode
                      `replay+weights:<update-on>`.
  --learning weights  the context is the trial's prompt alone; the person's trials reach the model only through
                      its weights. context_mode `replay:none+weights:<update-on>`.

What a step learns from (`--update-on`, model_subjects/weights.py):
  feedback  after a trial on which the person was shown feedback on a scored answer: the text read and the
            answer the spec says is right (as in a model's own run). A trial whose block gives no feedback, or
            whose answer earned none (not scored: no answer; a panel left unanswered, whose `no_response_text`
            says nothing about the right answer), teaches nothing: the person was not shown it.
  read      after every trial: the sentence read (language modelling), whatever the person answered.

Each replay subject starts from the frozen weights (subject seed from its id); each row carries the weights'
hash after the trial's update; a resume rebuilds the weights by replaying the recorded steps with the person's
history, checking every row's hash (`weight_runs.verify_resumes`), and is refused on a mismatch.
"""
from __future__ import annotations

from typing import Any

from experiments.trials import Trial
from model_subjects.context import history_entry
from model_subjects.person_marks import mark_person
from model_subjects.requests import LoglikelihoodRequest
from model_subjects.weight_runs import LearningSubject

NOT_SHOWN = ("the person was shown no feedback on a scored answer here (no answer, or one the spec does not "
             "score), so the right answer was not shown")


class ReplayLearningSubject(LearningSubject):
    """One person's replay with weights that learn: the person's history (or none), the person's feedback."""

    def __init__(self, runner: Any, st: Any, learner: Any, settings: Any):
        super().__init__(runner, st, learner, settings)
        self.p = st.person
        # `both`: the person's history, its block intros sized by the person's trials (ReplayRunner.sizes)
        self.hist = runner.history(st) if settings.mode == "both" else None

    def update(self, trial: Trial) -> dict[str, Any]:
        """The model run's update, except that a feedback step needs feedback the person was shown on a scored
        answer (the person's trials are checked: model_subjects/people.py)."""
        i = trial.trial_index
        if self.s.update_on == "feedback" and trial.feedback and (self.p.feedback[i] is None
                                                                  or self.p.correct[i] is None):
            return {"on": None, "why": NOT_SHOWN}
        return super().update(trial)

    def commit(self, trial: Trial, response: str, feedback: str | None, answer_text: str | None) -> None:
        """The history holds the person's answer and the feedback it earned (never the model's, as replay.py)."""
        if self.hist is not None:
            i = trial.trial_index
            self.hist.commit_entry(trial, history_entry(self.r.protocol, trial, self.p.responses[i],
                                                        self.p.feedback[i]))

    def shown_feedback(self, trial: Trial, d: Any) -> str | None:
        return self.p.feedback[trial.trial_index]

    def annotate(self, trial: Trial, d: Any, ctxs: list[str]) -> None:
        def word_logprob(word: str) -> float:
            return self.r.backend.loglikelihood([LoglikelihoodRequest(ctxs[0], " " + word)])[0].logprob

        mark_person(self.r, self.p, trial.trial_index, trial, d, word_logprob)
