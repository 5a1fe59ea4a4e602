"""Running model subjects that learn in their weights, trial by trial; `Runner` calls in here.

Each trial: score it with the weights as they are (the trial's requests through the backend's own scorer,
with the context the subject's mode gives: the prompt alone, a few-shot prompt, or the running history
re-encoded, since a KV cache of older weights would be stale), then take the trial's update (see
model_subjects/weights.py), then write the row with the hash of the weights after the update.

Resume: the weights are rebuilt by replaying the steps of the rows already written (an update depends
on the trial, the running history and the settings, never on the scores), each row's `weights_sha256`
checked after its step. `verify_resumes` does this for every unfinished session before any session file
is opened, so a mismatch refuses the run with nothing written.
"""
from __future__ import annotations

import json
from typing import Any

from experiments.options import OptionError
from experiments.screen_texts import block_sizes
from experiments.session import now_iso, read_rows, session_paths
from experiments.trials import Trial
from model_subjects.backends.registry import DEFAULT_BACKEND
from model_subjects.context import History, HistoryEntry, feedback_for, history_entry, option_text, static_context
from model_subjects.decisions import RunError, Scored
from model_subjects.protocol_base import Protocol
from model_subjects.requests import GenerationRequest
from model_subjects.tasks.base import sentence_of
from model_subjects.trial_step import per_query, requests, score_trial
from model_subjects.weight_learner import WeightLearner
from model_subjects.weights import (
    GRADIENT_BACKENDS,
    OPTIMIZER_TEXT,
    LearningSettings,
    check_learn_blocks,
    check_learning,
    subject_seed,
)


class ResumeMismatch(RuntimeError):
    """Replaying a session's recorded steps did not give the weights its rows record."""


def correct_entry(proto: Protocol, trial: Trial, rule: str) -> HistoryEntry | None:
    """The right answer of `trial` as the history shows an answer (question, answer in the task's words), as the
    protocol names it (`correct_answer`). None: no right answer."""
    answer = proto.correct_answer(trial)
    if answer is None:
        return None
    return history_entry(proto, trial, answer.response, None, answer.answer_text, rule)


class LearningSubject:
    """One subject's run: its history (running context), its weights (a `WeightLearner`) and its updates."""

    def __init__(self, runner: Any, st: Any, learner: Any, settings: LearningSettings):
        self.r = runner
        self.st = st
        self.learner = learner
        self.s = settings
        self.chat = runner.chat
        sizes = block_sizes(st.seq.trials[:st.planned])
        self.hist = (History(runner.exp, chat=self.chat, window=st.mode.window, sizes=sizes)
                     if st.mode.kind == "running" else None)
        learner.start(subject_seed(st.seq.seed, st.subject_id))

    # ------------------------------------------------------------------ contexts
    def context(self, trial: Trial, prompt: str) -> str:
        """The text before the answer: the running history (windowed) and the prompt, or the static context."""
        if self.hist is None:
            return static_context(self.st.mode, prompt, self.chat)
        return self.hist.windowed_text(trial.trial_index) + self.hist.trial_context(prompt)

    def update(self, trial: Trial) -> dict[str, Any]:
        """The trial's steps (none when it teaches nothing); what the row records of them."""
        s = self.s
        if s.blocks and trial.block not in s.blocks:
            return {"on": None, "why": f"block {trial.block!r} does not teach (--learn-blocks {','.join(s.blocks)})"}
        if s.update_on == "read":
            text = sentence_of(trial).strip()
            if not text:
                return {"on": None, "why": "the trial has no sentence to read"}
            ids, n = self.learner.units("", text)
            return {"on": "read", "tokens": n, "losses": _rounded(self.learner.train(ids, n))}
        if not trial.feedback:
            return {"on": None, "why": "no feedback on this trial"}
        entry = correct_entry(self.r.protocol, trial, self.st.rule)
        if entry is None:
            return {"on": None, "why": "the trial has no right answer"}
        ids, n = self.learner.units(self.context(trial, entry.question), option_text(entry.answer, bool(self.chat)))
        return {"on": "feedback", "answer": entry.answer, "tokens": n,
                "losses": _rounded(self.learner.train(ids, n))}

    # ------------------------------------------------------------------ resume
    def replay(self, rows: list[dict[str, str]]) -> None:
        """Redo the steps of the rows already written, each row's weights hash checked (ResumeMismatch)."""
        for row in rows:
            trial = self.st.seq.trials[int(row["trial_index"])]
            if self.hist is not None:
                self.hist.begin_trial(trial)
            self.update(trial)
            extra = json.loads(row.get("extra") or "{}")
            got = self.learner.digest()
            if extra.get("weights_sha256") != got:
                raise ResumeMismatch(f"trial {trial.trial_index} ({trial.item_id}): the row records weights "
                                     f"{str(extra.get('weights_sha256'))[:12]}..., replaying its steps gives "
                                     f"{got[:12]}...")
            self.commit(trial, row.get("response") or "", row.get("feedback_text") or None,
                        extra.get("answer_text", ""))

    # ------------------------------------------------------------------ trials
    def score(self, trial: Trial) -> tuple[list[str], list, Scored]:
        """The trial's contexts, queries and scores with the current weights (the backend's own scorer)."""
        r, proto = self.r, self.r.protocol
        qs = proto.queries(trial)
        ctxs = [self.context(trial, q.prompt) for q in qs]
        reqs, spans = requests(qs, ctxs, bool(self.chat))
        results = r.backend.loglikelihood(reqs)
        text = ""
        if proto.generates:
            text = r.backend.generate_until([GenerationRequest(ctxs[0], proto.until, proto.max_new_tokens,
                                                               skip_leading_whitespace=True)])[0]
        measured = proto.measure(r.backend, [trial], [ctxs[0]])[0] if proto.measures else None
        scores = [[[results[a + i].logprob for i in range(n)] for a, n in spans]]
        alone = r._rescore_near_ties(reqs, [(qs, ctxs, spans)], scores, [x.n_tokens for x in results], [trial])
        return ctxs, qs, Scored(scores[0], per_query(results, spans), text, measured, bool(alone))

    def commit(self, trial: Trial, response: str, feedback: str | None, answer_text: str | None) -> None:
        """The finished trial into the running history (none: nothing): the answer given and its feedback."""
        if self.hist is not None:
            self.hist.commit_entry(trial, history_entry(self.r.protocol, trial, response, feedback, answer_text,
                                                        self.st.rule))

    def shown_feedback(self, trial: Trial, d: Any) -> str | None:
        """The feedback text the row records (and a running history shows) for the answer `d`."""
        learns_feedback = self.s.update_on == "feedback" and trial.feedback
        return feedback_for(self.r.exp, trial, bool(d.correct)) if (self.hist is not None or learns_feedback) else None

    def annotate(self, trial: Trial, d: Any, ctxs: list[str]) -> None:
        """What a variant adds to the row's decision before the update (a replay: the person's answer)."""

    def run_trial(self, trial: Trial) -> None:
        st = self.st
        started = now_iso()
        if self.hist is not None:
            self.hist.begin_trial(trial)
        ctxs, qs, scored = self.score(trial)

        def learn(d: Any) -> str | None:
            """The feedback the row records, then the trial's update: the weights the row's hash names."""
            fb = self.shown_feedback(trial, d)
            self.annotate(trial, d, ctxs)
            upd = self.update(trial)
            d.extra["weights_sha256"] = self.learner.digest()
            d.extra["weights_update"] = upd
            return fb

        d, fb = score_trial(self.r, st, trial, qs, scored, context_text=ctxs[0], started=started, after=learn)
        st.writer.save_sidecar()
        self.commit(trial, d.response, fb, d.answer_text)
        self.r.progress(1, None)


def _rounded(xs: list[float]) -> list[float]:
    return [round(float(x), 6) for x in xs]


def subject_for(runner: Any, st: Any) -> LearningSubject:
    """A fresh subject of the run (a replay's own kind where the runner makes one: `learning_subject`)."""
    make = getattr(runner, "learning_subject", None)
    return make(st) if make is not None else LearningSubject(runner, st, runner.learner, runner.learning)


def done_rows(runner: Any, st: Any) -> list[dict[str, str]]:
    """The complete rows an unfinished session already has (none: a new session)."""
    csv_path = session_paths(runner.out, runner.exp.name, st.subject_id, runner.cfg.session)[0]
    if not csv_path.exists():
        return []
    return read_rows(csv_path)[: st.planned]


def learning_metadata(settings: LearningSettings, learner: Any, dtype: str | None, threads: int) -> dict[str, Any]:
    """The sidecar's `learning` block: what a reader needs to know which weights answered."""

    return {"mode": settings.mode, "update_on": settings.update_on, "lr": float(settings.lr),
            "steps": settings.steps, "adapter": settings.adapter,
            "blocks": list(settings.blocks) or "every block",
            "rank": settings.rank if settings.adapter == "lora" else None,
            "lora_targets": ["q_proj", "k_proj", "v_proj", "o_proj"] if settings.adapter == "lora" else None,
            "optimizer": OPTIMIZER_TEXT[settings.optimizer], "dtype": dtype, "threads": threads,
            "seed_rule": "torch.manual_seed(int(sha256('<sequence seed>:<subject id>')[:8], 16)) per subject",
            "deterministic_algorithms": True, "train_mode": "eval (no dropout)",
            "loss": ("mean cross-entropy of the right answer's tokens after the text read" if settings.update_on
                     == "feedback" else "mean cross-entropy of the sentence's tokens (language modelling)"),
            "frozen_weights_sha256": learner.base_sha256 if learner is not None else None,
            "row_hash": "extra.weights_sha256: SHA-256 of the trainable weights after the trial's update",
            "resume": "the weights are rebuilt by replaying the recorded steps; each row's hash is checked"}


def check_runnable(runner: Any) -> None:
    """The run's learning settings and a backend that has gradients (RunError naming what can)."""

    try:
        check_learning(runner.cfg, replay=bool(getattr(runner, "is_replay", False)))
    except OptionError as exc:
        raise RunError(str(exc)) from None

    try:
        check_learn_blocks(runner.cfg, runner.exp)
    except OptionError as exc:
        raise RunError(str(exc)) from None
    name = getattr(runner.backend, "backend_name", "") or DEFAULT_BACKEND
    if name not in GRADIENT_BACKENDS or not hasattr(runner.backend, "_units") or not hasattr(runner.backend, "model"):
        raise RunError(f"--learning {runner.learning.mode}: backend {name!r} gives no gradients; weights learn on: "
                       f"{', '.join(GRADIENT_BACKENDS)}")


def verify_resumes(runner: Any, states: list) -> None:
    """Make the run's learner; replay every unfinished session's recorded steps (last subject first, so the
    weights left are those of the first to run, kept); RunError on a mismatch, before any file is opened."""

    runner.learner = WeightLearner(runner.backend, runner.learning)
    runner._kept_subject = None
    for st in reversed([st for st in states if st.done < st.planned]):
        rows = done_rows(runner, st)
        if not rows:
            continue
        subject = subject_for(runner, st)
        try:
            subject.replay(rows)
        except ResumeMismatch as exc:
            csv_path = session_paths(runner.out, runner.exp.name, st.subject_id, runner.cfg.session)[0]
            raise RunError(f"{csv_path}: cannot resume: {exc} (other weights, torch version or threads than the "
                           "run that wrote it); nothing was written; use another --out or --session") from None
        runner._kept_subject = (subject, len(rows))


def run_learning(runner: Any, todo: list) -> None:
    """Every subject of `todo` in turn, each from the frozen weights (or its replayed ones), trial by trial."""
    kept = getattr(runner, "_kept_subject", None)
    runner._kept_subject = None
    for k, st in enumerate(todo):
        if kept is not None and k == 0 and kept[0].st is st and kept[1] == st.done:
            subject = kept[0]
        else:
            subject = subject_for(runner, st)
            if st.done:
                subject.replay(done_rows(runner, st)[: st.done])
        for i in range(st.done, st.planned):
            subject.run_trial(st.seq.trials[i])
