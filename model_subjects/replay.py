"""Replay: a model reads each person's session (issue 40), as Centaur scores Psych-101.

`twinlab run-model SPEC --replay PEOPLE_DIR` takes every person's session of SPEC and runs the model through
that person's trials in the person's order. Its history follows the running-context rule
(model_subjects/context.py, `History`) with the *person's* answer in the task's words and the feedback the
*person* got, so on every trial the model has read what the person had read and done. Each trial's row
records the model's scores of every option (`option_logprobs`), hence of the person's answer
(`extra.person_response`); the model's own best option is `response`, as in any model row.

A replay subject is named by model and person (`<model>replay<person>`), its rows carry
`context_mode = replay` and `extra.replay_of`, its sidecar a `replay` record (the person's file, session,
spec and sequence hashes). The analysis never counts it as a person or as an ordinary model subject
(analysis/twins.py). Resumable like any session: the history is rebuilt from the person's rows, the
cache with the same forward passes (`Runner._replay`).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from experiments.session import now_iso, read_rows
from experiments.spec import Experiment
from experiments.trials import Trial, TrialSequence
from model_subjects.context import (REPLAY, ContextMode, History, history_entry, option_text, row_trial,
                                    session_sizes)
from model_subjects.runner import RunConfig, Runner, RunError, SubjectState, decide, unscorable

@dataclass
class Person:
    """One person's session as read from PEOPLE_DIR."""

    subject_id: str
    session: int
    csv: Path
    rows: list[dict[str, str]]  # in trial order
    meta: dict[str, Any] = field(default_factory=dict)


def model_slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "", name or "model")[:40] or "model"


def replay_id(model: str, person: str) -> str:
    return f"{model_slug(model)}{REPLAY}{re.sub(r'[^A-Za-z0-9]', '', person)}"


def find_people(people_dir: str | Path, exp: Experiment) -> list[Person]:
    """Every human session of `exp` under `people_dir`; refuses another spec or spec hash, naming both."""
    root = Path(people_dir)
    if not root.is_dir():
        raise RunError(f"--replay {root}: no such folder")
    files = sorted(root.rglob("*_data.csv"))
    people: list[Person] = []
    for f in files:
        side = f.with_suffix(".json")
        try:
            meta = json.loads(side.read_text(encoding="utf-8")) if side.exists() else {}
        except (OSError, json.JSONDecodeError) as exc:
            raise RunError(f"{side}: unreadable sidecar ({exc})") from None
        rows = [r for r in read_rows(f) if r.get("subject_kind") == "human"]
        if not rows or meta.get("autopilot"):
            continue
        exp_name, spec_hash = rows[0].get("experiment"), rows[0].get("spec_hash")
        if exp_name != exp.name or spec_hash != exp.spec_hash:
            raise RunError(f"--replay: {f} was run on spec {exp_name!r} (spec hash {spec_hash}); this run's spec is "
                           f"{exp.name!r} (spec hash {exp.spec_hash}); replay people with the spec they were run on")
        rows.sort(key=lambda r: int(r["trial_index"]))
        people.append(Person(rows[0]["subject_id"], int(rows[0].get("session") or 1), f, rows, meta))
    if not people:
        raise RunError(f"--replay {root}: no people's sessions (human rows in *_data.csv) of {exp.name!r} found")
    return people


def person_trial(exp: Experiment, row: dict[str, str]) -> Trial:
    """The trial the person saw, from the person's row (`context.row_trial`, as `rebuild_contexts` reads rows)."""
    return row_trial(exp, row)


def person_answer_text(runner: Runner, trial: Trial, response: str) -> str:
    """The person's answer in the task's words, as the history shows a model's own (see `answer_words`)."""
    return answer_words(runner.protocol, trial, response, bool(runner.chat))


def answer_words(protocol: Any, trial: Trial, response: str, chat: bool = False) -> str:
    """The person's answer in the words the running history shows (context.history_entry: the same rule as a
    model's own answer, e.g. judgment `direct`: the task's question, then the label)."""
    return option_text(history_entry(protocol, trial, response, None).answer, chat)


def typed_word(trial: Trial, response: str) -> str:
    """A typed answer as its kind scores it (completion: the first word, punctuation trimmed); '' otherwise."""
    from model_subjects.tasks import typed_answer

    return typed_answer(trial, response)


def person_feedback(exp: Experiment, trial: Trial, row: dict[str, str]) -> str | None:
    """The feedback text the person got on this trial (None: no feedback shown)."""
    if str(row.get("feedback_shown", "")).strip().lower() not in ("true", "1"):
        return None
    return row.get("feedback_text") or None


class ReplayRunner(Runner):
    """Runs one replay subject per person; everything else (protocol, rows, sessions) as `Runner`."""

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
            trials = tuple(person_trial(self.exp, r) for r in p.rows)
            seq = TrialSequence(experiment=self.exp.name, subject_id=sid, seed=int(p.meta.get("seed") or 0),
                                spec_hash=self.exp.spec_hash, trials=trials, session=1)
            planned = len(seq) if self.cfg.trials is None else min(len(seq), max(0, int(self.cfg.trials)))
            for t in trials[:planned]:
                self.dispatch(t)
            st = SubjectState(sid, k, seq, ContextMode(REPLAY), planned)
            st.person = p  # type: ignore[attr-defined]
            states.append(st)
        return states

    def sizes(self, st: SubjectState) -> dict[str, int]:
        """A replay shows the block intros the person read: `{trials}` is the person's block sizes (all of the
        person's trials, whatever --trials replays)."""
        return session_sizes(st.seq.trials)

    def _metadata(self, st: SubjectState) -> dict[str, Any]:
        p: Person = st.person  # type: ignore[attr-defined]
        meta = super()._metadata(st)
        meta["replay"] = {"person": p.subject_id, "person_session": p.session, "person_file": str(p.csv),
                          "person_spec_hash": p.rows[0].get("spec_hash"),
                          "person_sequence_hash": p.rows[0].get("sequence_hash"), "person_trials": len(p.rows),
                          "rule": "the person's trials in the person's order; the history holds the person's "
                                  "answers (in the task's words) and the feedback the person got"}
        return meta

    def _run_batched(self, states: list[SubjectState]) -> None:
        """`Runner.run` hands every non-running subject here: a replay goes person by person."""
        for st in states:
            self._run_replay(st)

    def _run_replay(self, st: SubjectState) -> None:
        """One person's trials in order; finished rows (a resumed session) replay the cache only."""
        proto, exp, p = self.protocol, self.exp, st.person  # type: ignore[attr-defined]
        hist = self.history(st)  # the person's block sizes fill {trials}, as the person read them (`sizes`)
        stream = self.backend.stream(reuse_cache=self.cfg.kv_cache)
        for _, seg in hist.segments:
            stream.extend(seg)
        for i in range(st.planned):
            trial, row = st.seq.trials[i], p.rows[i]
            started = now_iso()
            for seg in hist.begin_trial(trial):
                stream.extend(seg)
            qs = proto.queries(trial)
            if i < st.done:
                self._replay(stream, hist, trial)
            else:
                self._score_and_write(st, stream, hist, trial, qs, row, started)
            entry = history_entry(proto, trial, str(row.get("response") or ""), person_feedback(exp, trial, row))
            stream.extend(hist.commit_entry(trial, entry))  # the model's own history rule, the person's answer

    def _score_and_write(self, st: SubjectState, stream: Any, hist: History, trial: Trial, qs: list,
                         row: dict[str, str], started: str) -> None:
        tctx = [hist.trial_context(q.prompt) for q in qs]
        scores: list[list[float]] = [[] for _ in qs]
        per_query: list[list] = [[] for _ in qs]
        got: list = []
        for qi in reversed(range(len(qs))):  # last query first, as `_run_running`
            res = stream.loglikelihood(tctx[qi], [option_text(o.continuation, self.chat) for o in qs[qi].options])
            scores[qi], per_query[qi] = [r.logprob for r in res], list(res)
            got += res
        d = unscorable(decide(self.protocol, trial, scores, per_query), self.protocol, got)
        typed = typed_word(trial, str(row.get("response") or ""))
        if typed:  # a typed answer (completion): log P(the person's word), as the person typed it
            d.extra["person_word"] = typed
            d.extra["person_word_logprob"] = round(float(stream.loglikelihood(tctx[0], [" " + typed])[0].logprob), 6)
        # the history shows the person's answer (extra.answer_text, as context.rebuild_contexts reads it);
        # the model's own best option stays in `response` and extra.model_answer_text
        d.extra["model_answer_text"] = d.answer_text
        d.answer_text = person_answer_text(self, trial, str(row.get("response") or ""))
        d.extra.update({"replay_of": st.person.subject_id,  # type: ignore[attr-defined]
                        "person_response": row.get("response"), "person_correct": row.get("correct"),
                        "person_rt_ms": row.get("rt_ms") or None})
        fb = person_feedback(self.exp, trial, row)
        self._write(st, self.make_row(st, trial, d, hist.text + tctx[0], fb, started, qs[0].prompt))
        st.writer.save_sidecar()  # type: ignore[union-attr]
        self.progress(1, None)


def run_replay(cfg: RunConfig, people_dir: str | Path, backend: Any = None, progress: Any = None) -> Any:
    """Load the model (unless given) and replay every person of `people_dir` (the API of `--replay`)."""
    from experiments.spec import load_spec
    from model_subjects.runner import lock_sessions

    exp = load_spec(cfg.spec)
    people = find_people(people_dir, exp)
    if backend is None:
        from model_subjects.registry import load_backend

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
    """`run-model SPEC --replay PEOPLE_DIR`: every input checked (people, spec hash, locks) before the model loads."""
    import typer

    from experiments.cli_common import fail
    from experiments.session import SessionError
    from model_subjects.backend import ModelLoadError
    from model_subjects.context import ContextError
    from model_subjects.registry import load_backend
    from model_subjects.runner import lock_sessions

    if cfg.subjects != 1 or cfg.first_subject != 1 or cfg.list_number is not None:
        fail("--replay runs one subject per person, on that person's own trials: --subjects, --first-subject "
             "and --list do not apply")
    try:
        people = find_people(people_dir, exp)
        lm = load_backend(cfg.model, backend=cfg.backend or "transformers", dtype=cfg.dtype, device=cfg.device,
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
               f"({runner.protocol.name}, model {lm.name})")
