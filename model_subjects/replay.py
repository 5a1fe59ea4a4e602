"""Replay: a model reads each person's session, as Centaur scores Psych-101.

`twinlab run-model SPEC --replay PEOPLE_DIR` takes every person's session of SPEC and runs the model through
that person's trials in the person's order. The trials are the spec's, compiled for that person and checked
against every row before the model loads (model_subjects/people.py: a row that differs from the spec is refused,
naming file, line and column); nothing the model reads is taken from a row but the person's checked answer. Its
history follows the running-context rule (model_subjects/context.py, `History`) with the *person's* answer in the
task's words and the feedback the spec gives for it (what the *person* got), so on every trial the model has read
what the person had read and done. Each trial's row
records the model's scores of every option (`option_logprobs`), hence of the person's answer
(`extra.person_response`); the model's own best option is `response`, as in any model row.

A replay subject is named by model and person (`<model>replay<person>`), its rows carry
`context_mode = replay` and `extra.replay_of`, its sidecar a `replay` record (the person's file, session,
spec and sequence hashes, the SHA-256 of the person's table). The analysis never counts it as a person or as an
ordinary model subject (analysis/twins/answers.py). Resumable like any session (the history rebuilt from the person's
checked rows, the cache with the same forward passes: `Runner._replay`), unless the person's table changed since
the replay started: that resume is refused, naming the file.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import typer

from experiments.cli_common import fail
from experiments.session import SessionError, now_iso
from experiments.spec import Experiment, load_spec
from experiments.trials import Trial, TrialSequence
from model_subjects.backends.base import ModelLoadError
from model_subjects.backends.registry import DEFAULT_BACKEND, load_backend
from model_subjects.context import REPLAY, ContextError, ContextMode, History, history_entry, session_sizes
from model_subjects.decisions import RunError
from model_subjects.people import LeftOut, Person, find_people
from model_subjects.person_marks import mark_person
from model_subjects.replay_weights import ReplayLearningSubject
from model_subjects.runner import RunConfig, Runner, SubjectState, lock_sessions
from model_subjects.trial_step import on_stream, score_trial
from model_subjects.weights import replay_label
from stimuli.input_rules import raise_csv_field_limit


def model_slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "", name or "model")[:40] or "model"


def replay_id(model: str, person: str) -> str:
    return f"{model_slug(model)}{REPLAY}{re.sub(r'[^A-Za-z0-9]', '', person)}"



class ReplayRunner(Runner):
    """Runs one replay subject per person; everything else (protocol, rows, sessions) as `Runner`."""

    is_replay = True  # --learning weights|both: the context is the person's history or the prompt (weights.py)

    def __init__(self, cfg: RunConfig, backend: Any, people: list[Person], exp: Experiment | None = None, **kw: Any):
        if cfg.context not in ("none", REPLAY):
            raise RunError(f"--replay gives the model each person's own history; --context {cfg.context} cannot "
                           "be combined with it")
        super().__init__(cfg, backend, exp=exp, **kw)
        self.people = people

    def prepare_subjects(self) -> list[SubjectState]:
        states = []
        for k, p in enumerate(self.people):
            sid = replay_id(self.backend.name, p.subject_id)
            seq = TrialSequence(experiment=self.exp.name, subject_id=sid, seed=int(p.meta.get("seed") or 0),
                                spec_hash=self.exp.spec_hash, trials=p.trials, session=1)
            planned = len(seq) if self.cfg.trials is None else min(len(seq), max(0, int(self.cfg.trials)))
            for t in p.trials[:planned]:
                self.dispatch(t)
            st = SubjectState(sid, k, seq, ContextMode(REPLAY), planned)
            st.person = p  # type: ignore[attr-defined]
            states.append(st)
        return states

    def label(self, st: SubjectState) -> str:
        """`replay`, or with weights that learn `replay+weights:<update-on>` / `replay:none+weights:<update-on>`."""

        return replay_label(self.learning)

    def learning_subject(self, st: SubjectState) -> Any:
        """A replay subject whose weights learn the person's trials (model_subjects/replay_weights.py)."""

        return ReplayLearningSubject(self, st, self.learner, self.learning)

    def sizes(self, st: SubjectState) -> dict[str, int]:
        """A replay shows the block intros the person read: `{trials}` is the person's block sizes (all of the
        person's trials, whatever --trials replays)."""
        return session_sizes(st.seq.trials)

    def _metadata(self, st: SubjectState) -> dict[str, Any]:
        p: Person = st.person  # type: ignore[attr-defined]
        meta = super()._metadata(st)
        meta["replay"] = {"person": p.subject_id, "person_session": p.session, "person_file": str(p.csv),
                          "person_spec_hash": p.meta.get("spec_hash"),
                          "person_sequence_hash": p.meta.get("sequence_hash"), "person_trials": len(p.rows),
                          "person_sha256": p.sha256,
                          "rule": "the person's trials in the person's order, rebuilt from the spec and checked "
                                  "against the person's rows; the history holds the person's answers (in the "
                                  "task's words) and the feedback the spec gives for them"}
        return meta

    def settings_differences(self, st: SubjectState, old: dict[str, Any]) -> list[str]:
        """A resumed replay also needs the person's table unchanged (its SHA-256 as the replay started)."""
        p: Person = st.person  # type: ignore[attr-defined]
        was = (old.get("replay") or {}).get("person_sha256") if isinstance(old.get("replay"), dict) else None
        diffs = super().settings_differences(st, old)
        if was is not None and was != p.sha256:
            diffs.append(f"the person's file {p.csv} changed since this replay started (SHA-256 {str(was)[:16]}... "
                         f"then, {p.sha256[:16]}... now): a resumed replay would match neither version")
        return diffs

    def _run_batched(self, states: list[SubjectState]) -> None:
        """`Runner.run` hands every non-running subject here: a replay goes person by person."""
        for st in states:
            self._run_replay(st)

    def _run_replay(self, st: SubjectState) -> None:
        """One person's trials in order; finished rows (a resumed session) replay the cache only."""
        proto, p = self.protocol, st.person  # type: ignore[attr-defined]
        hist = self.history(st)  # the person's block sizes fill {trials}, as the person read them (`sizes`)
        stream = self.backend.stream(reuse_cache=self.cfg.kv_cache)
        for _, seg in hist.segments:
            stream.extend(seg)
        for i in range(st.planned):
            trial = st.seq.trials[i]
            started = now_iso()
            for seg in hist.begin_trial(trial):
                stream.extend(seg)
            qs = proto.queries(trial)
            if i < st.done:
                self._replay(stream, hist, trial)
            else:
                self._score_and_write(st, stream, hist, trial, qs, i, started)
            entry = history_entry(proto, trial, p.responses[i], p.feedback[i])
            stream.extend(hist.commit_entry(trial, entry))  # the model's own history rule, the person's answer

    def _score_and_write(self, st: SubjectState, stream: Any, hist: History, trial: Trial, qs: list,
                         i: int, started: str) -> None:
        tctx = [hist.trial_context(q.prompt) for q in qs]
        scored = on_stream(stream.loglikelihood, qs, tctx, self.chat)  # last query first, as `_run_running`
        p: Person = st.person  # type: ignore[attr-defined]

        def person(d: Any) -> str | None:
            """The person's answer scored beside the model's; the feedback the person got."""
            mark_person(self, p, i, trial, d, lambda word: stream.loglikelihood(tctx[0], [" " + word])[0].logprob)
            return p.feedback[i]

        score_trial(self, st, trial, qs, scored, context_text=hist.text + tctx[0], started=started, after=person)
        st.writer.save_sidecar()  # type: ignore[union-attr]
        self.progress(1, None)



def run_replay(cfg: RunConfig, people_dir: str | Path, backend: Any = None, progress: Any = None,
               left_out: list[LeftOut] | None = None) -> Any:
    """Load the model (unless given) and replay every person of `people_dir` (a folder, or one session's table;
    the API of `--replay`); the sessions not replayed are appended to `left_out`, each with the reason."""
    raise_csv_field_limit()  # an API entry: resumed sessions with long kept columns

    exp = load_spec(cfg.spec)
    people = find_people(people_dir, exp, left_out)
    if backend is None:
        backend = load_backend(cfg.model, backend=cfg.backend, dtype=cfg.dtype, device=cfg.device,
                               add_bos=cfg.add_bos, batch_size=cfg.batch_size, threads=cfg.threads,
                               **cfg.backend_options)
    runner = ReplayRunner(cfg, backend, people, exp=exp, progress=progress)
    ids = [replay_id(backend.name, p.subject_id) for p in people]
    locks = lock_sessions(cfg.out, exp.name, ids, cfg.session)
    try:
        return runner.run(locks)
    finally:
        for lock in locks.values():
            lock.release()


def replay_command(cfg: RunConfig, exp: Experiment, people_dir: Path, quiet: bool = False) -> None:
    """`run-model SPEC --replay PEOPLE` (a folder or one session's table): every input checked (people, spec hash,
    locks) before the model loads."""


    if cfg.subjects != 1 or cfg.first_subject != 1 or cfg.list_number is not None:
        fail("--replay runs one subject per person, on that person's own trials: --subjects, --first-subject "
             "and --list do not apply")
    left: list[LeftOut] = []
    try:
        people = find_people(people_dir, exp, left)
        for x in left:  # before the model loads: every session not replayed is named, with the reason
            typer.echo(f"left out {x.line()}", err=True)
        lm = load_backend(cfg.model, backend=cfg.backend or DEFAULT_BACKEND, dtype=cfg.dtype, device=cfg.device,
                          add_bos=cfg.add_bos, batch_size=cfg.batch_size, threads=cfg.threads, **cfg.backend_options)
        runner = ReplayRunner(cfg, lm, people, exp=exp)
        locks = lock_sessions(cfg.out, exp.name, [replay_id(lm.name, p.subject_id) for p in people], cfg.session)
        summary = runner.run(locks)
    except (RunError, ContextError, SessionError, ModelLoadError) as exc:
        fail(str(exc))
    for s in summary.subjects:
        if not quiet:
            typer.echo(f"  {s['subject_id']} [replay] {s['trials']}/{s['planned']} trials -> {s['csv']}", err=True)
    typer.echo(f"replayed {len(summary.subjects)} person(s), {summary.trials_run} trial(s) in {summary.seconds:.1f}s "
               f"({runner.protocol.name}, model {lm.name})" + (f"; {len(left)} session(s) left out (named above)"
                                                             if left else ""))
