"""Run model subjects through compiled trial sequences and write their sessions.

Every subject gets its own compiled TrialSequence (as a human would), runs the training block
first, and writes one Psych-DS session through `experiments.session.SessionWriter`, row by row.
`none`/`fewshot` subjects are scored together in batches (across items and subjects, sharing the
prompt's KV cache); `running` subjects go one at a time, each on one growing KV cache.
A re-run with the same settings continues unfinished sessions from their next trial (finished
trials are never recomputed: a running history is rebuilt from the rows already written) and
skips completed ones; different settings on an existing session are refused.
"""
from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from experiments.run_prep import RunPlan, hash_differences, prepare_run
from experiments.session import (
    SessionError,
    SessionLock,
    SessionWriter,
    acquire_session_lock,
    check_rows_follow,
    columns_into_extra,
    now_iso,
    read_rows,
    scan_table,
    session_paths,
)
from experiments.spec import Experiment, load_spec
from experiments.tasks import TaskError, check_runner
from experiments.tasks.detection import detection_for
from experiments.trials import Trial, TrialSequence
from model_subjects.backends.base import Backend
from model_subjects.backends.registry import DEFAULT_BACKEND
from model_subjects.context import (
    RULE,
    RULES_READ,
    ContextMode,
    History,
    feedback_for,
    history_entry,
    parse_context,
    record_block_sizes,
    row_entry,
    session_sizes,
    sha256,
    static_context,
)
from model_subjects.decisions import RunError, Scored
from model_subjects.invariance import decision_gap, margin_for_tokens, tie_margin_for
from model_subjects.protocol_base import Decision
from model_subjects.protocols import Protocol, ProtocolError, default_protocol, get_protocol
from model_subjects.requests import GenerationRequest, LoglikelihoodRequest
from model_subjects.trial_step import on_stream, option_texts, per_query, requests, score_trial
from stimuli.input_rules import raise_csv_field_limit

RUNNER_VERSION = 1





@dataclass
class RunConfig:
    spec: str
    model: str | None = None
    backend: str | None = None  # registered backend name (model_subjects.backends.registry); None: transformers
    subjects: int = 1
    first_subject: int = 1
    subject_prefix: str = "m"
    context: str = "none"
    protocol: str | None = None
    out: str | Path = "sessions"
    trials: int | None = None
    session: int = 1
    seed: int | None = None
    add_bos: bool = False
    dtype: str = "float32"
    device: str = "cpu"
    batch_size: int | str = "auto"
    threads: int | None = 1
    chat: bool = False
    kv_cache: bool = True
    list_number: int | None = None  # --list: every subject reads this list of the design (None: id rotation)
    question: str | None = None
    max_new_tokens: int = 8
    parallel_running: bool = True  # running subjects advance together (one forward pass per step)
    tie_margin: float | None = None  # re-score choices this close alone (None: by dtype; 0: never)
    backend_options: dict[str, Any] = field(default_factory=dict)  # backend-specific settings, by name
    # learning in the weights (model_subjects/weights.py); `context`: the weights never change
    learning: str = "context"  # context | weights | both
    lr: float = 1e-4
    steps: int = 1
    adapter: str = "full"  # full | lora
    update_on: str = "feedback"  # feedback | read
    optimizer: str = "sgd"  # sgd | adamw
    rank: int = 8  # LoRA rank
    learn_blocks: tuple[str, ...] = ()  # the blocks whose trials change the weights (empty: every block)


@dataclass
class SubjectState:
    subject_id: str
    index: int
    seq: TrialSequence
    mode: ContextMode
    planned: int
    writer: SessionWriter | None = None
    done: int = 0
    n_correct: int = 0
    n_scored: int = 0  # rows with a right answer (a rating or a surprisal row has none)
    n_run: int = 0
    n_unscorable: int = 0
    unclosed: bool = False  # its last run ended without closing the session (killed or crashed)
    rule: str = RULE  # the context rule: a resumed session keeps the (readable) rule it was started with


@dataclass
class RunSummary:
    subjects: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    trials_run: int = 0


def subject_ids(cfg: RunConfig) -> list[str]:
    if not cfg.subject_prefix.isalnum():
        raise RunError(f"subject prefix {cfg.subject_prefix!r} must be letters and digits")
    if cfg.subjects < 1:
        raise RunError("--subjects must be at least 1")
    return [f"{cfg.subject_prefix}{k:02d}" for k in range(cfg.first_subject, cfg.first_subject + cfg.subjects)]


def bos_prepended(protocol: Any, backend: Any, cfg: Any) -> bool:
    """Whether the run's measures read the BOS token first: a surprisal protocol's own setting (BOS unless
    `surprisal:nobos`, whatever --add-bos says), else --add-bos (the backend's)."""
    own = getattr(protocol, "surprisal", None)
    if getattr(protocol, "measures", False) and own is not None and hasattr(own, "bos"):
        return bool(own.bos)
    return bool(getattr(backend, "add_bos", cfg.add_bos))


def identity(cfg: RunConfig, backend: Backend, protocol: Protocol, mode: ContextMode,
             rule: str = RULE) -> dict[str, Any]:
    """Settings that must not change within one session (checked when resuming)."""
    # model_subjects.weights loads this module back (an import circle)
    from model_subjects.weights import context_label, learning_identity, settings_of

    d = backend.describe()
    learning = settings_of(cfg)
    ident = {
        "model": d.get("name"), "weights": d.get("revision"), "dtype": d.get("dtype"),
        "protocol": protocol.describe(), "context_mode": context_label(mode.label, learning),
        "add_bos": bool(d.get("add_bos", cfg.add_bos)),
        "chat": bool(cfg.chat), "context_rule": rule,
    }
    name = getattr(backend, "backend_name", "") or DEFAULT_BACKEND
    if name != DEFAULT_BACKEND:  # sessions written before the registry carry no backend: they stay resumable
        ident["backend"] = name
    if learning.in_weights:  # sessions that learn in context keep today's identity
        ident["learning"] = learning_identity(learning, d.get("threads"))
    return ident


def lock_sessions(out: str | Path, experiment: str, ids: list[str], session: int) -> dict[str, SessionLock]:
    """Every subject's session lock, all or none: a second writer is refused before any file changes.

    Taken before the model loads (`run-model`) so that a refused run stops at once.
    """
    locks: dict[str, SessionLock] = {}
    try:
        for sid in ids:
            locks[sid] = acquire_session_lock(session_paths(out, experiment, sid, session)[0])
    except SessionError:
        for lock in locks.values():
            lock.release()
        raise
    return locks


class Runner:
    """Runs the subjects of one RunConfig with a loaded backend."""

    def __init__(self, cfg: RunConfig, backend: Backend, exp: Experiment | None = None,
                 progress: Callable[[int, int | None], None] | None = None, plan: RunPlan | None = None):
        self.cfg = cfg
        self.backend = backend
        self.exp = exp or (plan.exp if plan is not None else load_spec(cfg.spec))
        # experiments/run_prep.py: each subject's sequence compiled once for the run (a sweep shares one
        # plan across its cells); a plan given must be this config's spec, session, seed, trials and list
        self.plan = plan or RunPlan(self.exp, session=cfg.session, seed=cfg.seed, trials=cfg.trials,
                                    list_number=cfg.list_number)

        try:
            check_runner(self.exp.task.kind, "model")
            self.protocol = get_protocol(cfg.protocol or default_protocol(self.exp.task.kind, self.exp.task.response),
                                         question=cfg.question, max_new_tokens=cfg.max_new_tokens,
                                         panel=self.exp.task.panel, task=self.exp.task)
        except (ProtocolError, TaskError) as exc:
            raise RunError(str(exc)) from None
        self.progress = progress or (lambda n, total: None)  # (trials done now, new total or None)
        self.notify: Callable[[str], None] = _to_stderr  # what a user must read (the CLI prints it its own way)
        self.chat = None
        if cfg.chat:
            if not self.protocol.chat_ok:
                raise RunError(f"--chat puts each prompt in a user turn; protocol {self.protocol.name!r} scores "
                               "a sentence continuation and cannot be asked that way (use a question protocol)")
            self.chat = backend.chat_template
        self.out = Path(cfg.out)
        self.tie_margin = tie_margin_for(backend, cfg.tie_margin)
        # model_subjects.weights loads this module back (an import circle)
        from model_subjects.weights import settings_of

        self.learning = settings_of(cfg)  # weights that learn (model_subjects/weight_runs.py)
        self.learner: Any = None
        if self.learning.in_weights:
            # model_subjects.weight_runs loads this module back (an import circle)
            from model_subjects.weight_runs import check_runnable

            check_runnable(self)

    # ------------------------------------------------------------------ sessions
    def prepare_subjects(self) -> list[SubjectState]:
        states = []
        for k, sid in enumerate(subject_ids(self.cfg)):
            mode = parse_context(self.cfg.context, k + self.cfg.first_subject - 1)
            if mode.kind == "running" and mode.window and self.chat:
                raise RunError("a running window with --chat is not supported")
            seq = self.plan.sequence(sid)
            planned = self.plan.n_planned(seq)
            for trial in seq.trials[:planned]:  # every trial askable before any session opens
                self.dispatch(trial)
            states.append(SubjectState(sid, k, seq, mode, planned))
        return states

    def label(self, st: SubjectState) -> str:
        """The `context_mode` the subject's rows record (its context, and `+weights:...` when weights learn)."""
        # model_subjects.weights loads this module back (an import circle)
        from model_subjects.weights import context_label

        return context_label(st.mode.label, self.learning)

    def _metadata(self, st: SubjectState) -> dict[str, Any]:
        meta = self._context_metadata(st)
        if self.learning.in_weights:
            # model_subjects.weight_runs loads this module back (an import circle)
            from model_subjects.weight_runs import learning_metadata

            meta["learning"] = learning_metadata(self.learning, self.learner, getattr(self.backend, "dtype_name", None),
                                                 self.backend.torch.get_num_threads())
        return meta

    def _context_metadata(self, st: SubjectState) -> dict[str, Any]:
        cfg = self.cfg
        return {
            "runner": {"name": "model_subjects", "version": RUNNER_VERSION},
            "model": self.backend.describe(),
            "protocol": self.protocol.name,
            "protocol_settings": self.protocol.describe(),
            "context_mode": self.label(st),
            "context": {"given": cfg.context, "kind": st.mode.kind, "prompt_set": st.mode.prompt_set,
                        "group": st.mode.group, "window": st.mode.window, "chat": bool(cfg.chat), "rule": st.rule},
            "add_bos": bool(getattr(self.backend, "add_bos", cfg.add_bos)),
            "bos_prepended": bos_prepended(self.protocol, self.backend, cfg),
            "kv_cache": bool(cfg.kv_cache),
            "batch_invariance": {"tie_margin": self.tie_margin,
                                 "rule": "trials with a best-vs-second option gap <= tie_margin are re-scored "
                                         "with each request alone (extra.rescored_alone)"},
            "seed": st.seq.seed,
            "trials_limit": cfg.trials,
            "identity": identity(cfg, self.backend, self.protocol, st.mode, st.rule),
            # `twinlab context` reads the spec from here when it still holds the session's spec hash
            "spec_file": spec_file(self.exp),
        }

    def sizes(self, st: SubjectState) -> dict[str, int]:
        """The block sizes its block intros' `{trials}` say: those of the trials the subject's session plans
        (`session_sizes`; recorded in the sidecar by `open_session` for `twinlab context`)."""
        return session_sizes(st.seq.trials[:st.planned])

    def history(self, st: SubjectState) -> History:
        """A running (or replay) subject's history: the spec's texts, `{trials}` filled by `sizes`."""
        return History(self.exp, chat=self.chat, window=st.mode.window, sizes=self.sizes(st))

    def settings_differences(self, st: SubjectState, old: dict[str, Any]) -> list[str]:
        """What differs between an existing session's sidecar and this run (empty: the same settings)."""
        prev = old.get("identity")
        if prev and prev.get("context_rule") in RULES_READ:  # an older readable rule: the session keeps it
            st.rule = prev["context_rule"]
        ident = identity(self.cfg, self.backend, self.protocol, st.mode, st.rule)
        ident = json.loads(json.dumps(ident))
        diffs = [] if prev is None else [f"{k}: {prev.get(k)!r} there, {ident.get(k)!r} now"
                                         for k in sorted(set(prev) | set(ident)) if prev.get(k) != ident.get(k)]
        return diffs + hash_differences(old, st.seq, ": ")

    def check_existing(self, st: SubjectState) -> bool:
        """Read an existing session (under its lock) without changing it; True when it is finished.

        Refuses, naming each difference, a session written with other settings (model, protocol,
        context, seed, spec and sequence hash) or whose rows are not this sequence's first trials.
        Every subject is checked before any session is opened, so a refusal changes no file.
        """
        csv_path, json_path = session_paths(self.out, self.exp.name, st.subject_id, self.cfg.session)
        if not (json_path.exists() or csv_path.exists()):
            return False
        try:
            old = json.loads(json_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            old = {}
        if old.get("subject_kind") not in (None, "model"):
            raise RunError(f"{json_path} is a {old.get('subject_kind')} session; choose another --out, "
                           "--session or --subject-prefix")
        diffs = self.settings_differences(st, old)
        if diffs:
            raise RunError(f"{json_path} was written with other settings ({'; '.join(diffs)}); "
                           "use another --out or --session to keep both")
        if old.get("status") == "completed" and int(old.get("n_trials_written", 0)) >= st.planned:
            st.done = int(old.get("n_trials_written", 0))
            return True
        # a run closes its session (completed, incomplete or aborted) however it stops, unless the
        # process died: kill -9, the OOM killer, a native crash such as llama.cpp's segfault
        st.unclosed = old.get("status") == "running"
        if csv_path.exists():
            check_rows_follow(scan_table(csv_path), st.seq)
        return False

    def open_session(self, st: SubjectState, lock: SessionLock | None = None) -> SessionWriter | None:
        """Create, or continue an unfinished session of the same settings; None when nothing is left.

        Runs under the session's lock (taken here unless given); see `check_existing`.
        """
        csv_path = session_paths(self.out, self.exp.name, st.subject_id, self.cfg.session)[0]
        lock = lock or acquire_session_lock(csv_path)
        try:
            if self.check_existing(st):
                lock.release()
                return None
        except BaseException:
            lock.release()
            raise
        writer = self.plan.open_writer(self.out, st.subject_id, st.seq, "model", st.planned,
                                       session=self.cfg.session, metadata=self._metadata(st), resume=True, lock=lock)
        if st.unclosed:
            resumes = writer.meta.get("resumes") or [{}]
            last = resumes[-1]  # this run's entry (SessionWriter._reopen); the one before: the crashed run's
            last["previous_run_unclosed"] = True
            writer.save_sidecar()
            started = resumes[-2].get("at") if len(resumes) > 1 else writer.meta.get("started_at")
            dropped = " (a partly written last row was dropped)" if last.get("dropped_partial_line") else ""
            self.notify(f"{st.subject_id}: the last run on {csv_path.name} (started {started}) ended without "
                        f"closing the session: the process was killed or crashed (kill -9, out of memory, a "
                        f"native crash such as a segmentation fault); {writer.n_rows} trial(s) were saved"
                        f"{dropped}; resuming from trial {writer.n_rows + 1}")
        if writer.n_rows >= st.planned:
            st.done = writer.n_rows
            writer.close("completed")
            return None
        if writer.meta.get("n_trials_planned") != st.planned:
            writer.update(n_trials_planned=st.planned)
        if record_block_sizes(writer.meta, writer.n_rows, self.sizes(st)):
            writer.save_sidecar()
        st.done = writer.n_rows
        return writer

    def dispatch(self, trial: Trial) -> Protocol:
        """The protocol for `trial`, by its task kind (`trial.task`; "" is a Lakretz trial of the spec's
        task). A spec has one task kind, so every trial gets the run's protocol; a trial of another kind
        or one the protocol cannot ask (missing materials) is refused, naming the item."""
        if trial.task not in ("", self.exp.task.kind):
            raise RunError(f"trial {trial.item_id!r} is a {trial.task!r} trial in a {self.exp.task.kind!r} spec")
        check = getattr(self.protocol, "check", None)
        if check is not None:
            try:
                check(trial)
            except ProtocolError as exc:
                raise RunError(str(exc)) from None
        return self.protocol

    # ------------------------------------------------------------------ rows
    def make_row(self, st: SubjectState, trial: Trial, d: Decision, context_text: str, feedback_text: str | None,
                 started: str, prompt: str) -> dict[str, Any]:

        row = trial.to_row(detection_for(trial.task, self.exp.task) if trial.task else None)
        extra = {"context_sha256": sha256(context_text), "context_chars": len(context_text), "context_rule": st.rule,
                 "prompt": prompt, "answer_text": d.answer_text, **d.extra}
        if st.mode.prompt_set:
            extra["prompt_set"] = st.mode.prompt_set
        row.update({
            "subject_id": st.subject_id, "subject_kind": "model", "session": self.cfg.session,
            "spec_hash": st.seq.spec_hash, "sequence_hash": st.seq.sequence_hash,
            "response": d.response, "correct": None if d.correct is None else bool(d.correct),
            "protocol": self.protocol.name,
            "response_mode": self.protocol.response_mode,
            "context_mode": self.label(st), "option_labels": json.dumps(d.option_labels),
            "option_logprobs": json.dumps([None if math.isnan(float(x)) else round(float(x), 6)
                                           for x in d.option_logprobs]),
            "margin": None if d.margin is None else round(float(d.margin), 6),
            "feedback_shown": feedback_text is not None, "feedback_text": feedback_text,
            "started_at": started, "ended_at": now_iso(), "extra": json.dumps(extra, sort_keys=True),
        })
        row.update(generic_cells(d.columns))
        return row

    def _write(self, st: SubjectState, row: dict[str, Any]) -> None:
        assert st.writer is not None
        st.writer.append(columns_into_extra(row, [c for c in row if c not in set(st.writer.header)]))
        st.done += 1
        st.n_run += 1
        st.n_correct += int(bool(row["correct"]))
        st.n_scored += int(row["correct"] is not None)
        if '"unscorable"' in (row.get("extra") or ""):
            st.n_unscorable += 1
            st.writer.meta["n_unscorable"] = int(st.writer.meta.get("n_unscorable", 0)) + 1

    # ------------------------------------------------------------------ running
    def run(self, locks: dict[str, SessionLock] | None = None,
            states: list[SubjectState] | None = None) -> RunSummary:
        """Run every subject; `locks` (from `lock_sessions`, taken earlier) or the sessions are locked here;
        `states`: the fresh ones `prepare_subjects` just gave (a CLI prepares them before the progress bar)."""
        t0 = time.perf_counter()
        states = states if states is not None else self.prepare_subjects()
        summary = RunSummary()
        locks = dict(locks) if locks is not None else lock_sessions(self.out, self.exp.name,
                                                                   [st.subject_id for st in states], self.cfg.session)
        try:
            for st in states:  # every subject checked before any session is opened
                self.check_existing(st)
            if self.learning.in_weights:  # replays every unfinished session's steps: a mismatch refuses here
                # model_subjects.weight_runs loads this module back (an import circle)
                from model_subjects.weight_runs import verify_resumes

                verify_resumes(self, states)
            for st in states:
                st.writer = self.open_session(st, locks.pop(st.subject_id))
            todo = [st for st in states if st.writer is not None]
            total = sum(st.planned - st.done for st in todo)
            self.progress(0, total)
            if self.learning.in_weights:
                # model_subjects.weight_runs loads this module back (an import circle)
                from model_subjects.weight_runs import run_learning

                run_learning(self, todo)
                todo = []
            running = [st for st in todo if st.mode.kind == "running"]
            batched = [st for st in todo if st.mode.kind != "running"]
            if batched:
                self._run_batched(batched)
            together = [st for st in running if self._can_run_together(st)]
            if len(together) > 1:
                self._run_running_together(together)
            for st in running:
                if not (len(together) > 1 and st in together):
                    self._run_running(st)
        finally:
            if self.learner is not None:  # the backend scores with the frozen weights again
                self.learner.close()
                self.learner = None
            for lock in locks.values():  # sessions never opened (a refusal stopped the loop)
                lock.release()
            for st in states:
                if st.writer is not None and st.writer._fh is not None:
                    st.writer.close("completed" if st.done >= st.planned else "aborted")
        for st in states:
            summary.subjects.append({"subject_id": st.subject_id, "context_mode": self.label(st),
                                     "trials": st.done, "planned": st.planned, "run_now": st.n_run,
                                     "correct_now": st.n_correct, "scored_now": st.n_scored,
                                     "unscorable_now": st.n_unscorable,
                                     "csv": str(session_paths(self.out, self.exp.name, st.subject_id,
                                                              self.cfg.session)[0])})
            summary.trials_run += st.n_run
        summary.seconds = time.perf_counter() - t0
        return summary

    def _run_batched(self, states: list[SubjectState]) -> None:
        """Score all pending trials of `none`/`fewshot` subjects together, in chunks (rows in order)."""
        pending = [(st, st.seq.trials[i]) for st in states for i in range(st.done, st.planned)]
        bs = self.cfg.batch_size
        chunk = 2048 if str(bs).lower() == "auto" else max(64, 4 * int(bs))
        proto = self.protocol
        for start in range(0, len(pending), chunk):
            part = pending[start:start + chunk]
            started = now_iso()
            reqs: list[LoglikelihoodRequest] = []
            plan = []  # per trial: (query prompts, contexts, [(start, n_options)])
            gens: list[GenerationRequest] = []
            for st, trial in part:
                qs = proto.queries(trial)
                ctxs = [static_context(st.mode, q.prompt, self.chat) for q in qs]
                own, spans = requests(qs, ctxs, self.chat)
                plan.append((qs, ctxs, [(a + len(reqs), n) for a, n in spans]))
                reqs += own
                if proto.generates:
                    gens.append(GenerationRequest(ctxs[0], proto.until, proto.max_new_tokens,
                                                  skip_leading_whitespace=True))
            results = self.backend.loglikelihood(reqs)
            texts = self.backend.generate_until(gens) if gens else [""] * len(part)
            measured = (proto.measure(self.backend, [t for _, t in part], [p[1][0] for p in plan])
                        if proto.measures else [None] * len(part))
            all_scores = [[[results[a + i].logprob for i in range(n)] for a, n in spans] for _, _, spans in plan]
            alone = self._rescore_near_ties(reqs, plan, all_scores, [r.n_tokens for r in results],
                                            [trial for _, trial in part])
            for j, ((st, trial), (qs, ctxs, spans)) in enumerate(zip(part, plan, strict=False)):
                scored = Scored(all_scores[j], per_query(results, spans), texts[j], measured[j], j in alone)
                score_trial(self, st, trial, qs, scored, context_text=ctxs[0], started=started)
            for sid in dict.fromkeys(id(st) for st, _ in part):  # the sidecar's n_trials_written follows the rows
                next(st for st, _ in part if id(st) == sid).writer.save_sidecar()  # type: ignore[union-attr]
            self.progress(len(part), None)

    def _rescore_near_ties(self, reqs: list[LoglikelihoodRequest], plan: list, all_scores: list,
                           n_tok: list[int], trials: list[Trial]) -> set[int]:
        """Trials whose margin is within the batch noise are scored again, each request alone (in place)."""
        eps = self.tie_margin
        near = [j for j, sc in enumerate(all_scores)
                if eps > 0 and decision_gap(self.protocol, trials[j], sc)
                <= margin_for_tokens(eps, max(n_tok[a + i] for a, n in plan[j][2] for i in range(n)))]
        if not near:
            return set()
        idx = [a + i for j in near for a, n in plan[j][2] for i in range(n)]
        res = self.backend.loglikelihood_alone([reqs[k] for k in idx])
        by = dict(zip(idx, res, strict=False))
        for j in near:
            all_scores[j] = [[by[a + i].logprob for i in range(n)] for a, n in plan[j][2]]
        return set(near)

    def _replay(self, stream: Any, hist: History, trial: Trial) -> None:
        """The stream calls `_run_running` made for a finished trial, in the same order, scores unused."""
        qs = self.protocol.queries(trial)
        tctx = [hist.trial_context(q.prompt) for q in qs]
        for qi in reversed(range(len(qs))):
            stream.replay(tctx[qi], option_texts(qs[qi], self.chat))
        if self.protocol.generates:
            stream.replay_generate(tctx[0], self.protocol.until, self.protocol.max_new_tokens,
                                   skip_leading_whitespace=True)

    def _rescore_running(self, committed: str, tctx: list[str], qs: list, scores: list[list[float]],
                         trial: Trial) -> bool:
        """A running trial's near tie: score it again with the whole context, each request alone (in place)."""
        if self.tie_margin <= 0 or decision_gap(self.protocol, trial, scores) > self.tie_margin:
            return False
        for qi, q in enumerate(qs):
            reqs = [LoglikelihoodRequest(committed + tctx[qi], text) for text in option_texts(q, self.chat)]
            scores[qi] = [r.logprob for r in self.backend.loglikelihood_alone(reqs)]
        return True

    def _can_run_together(self, st: SubjectState) -> bool:
        """Fresh, unwindowed running subjects of a scoring protocol share one batched cache."""
        return (self.cfg.parallel_running and self.cfg.kv_cache and st.done == 0 and not st.mode.window
                and not self.protocol.generates and not self.protocol.measures
                and hasattr(self.backend, "stream_group"))

    def _run_running_together(self, states: list[SubjectState]) -> None:
        """Running subjects advance trial by trial together: one forward pass per step for all.

        Each subject still sees only its own history: its answers and the feedback they earned
        (one row of the batched cache per subject). Scores equal one-at-a-time runs (float32: 1e-4).
        """
        proto = self.protocol
        exp = self.exp
        group = self.backend.stream_group(len(states))  # type: ignore[attr-defined]
        hists = [self.history(st) for st in states]  # unwindowed (`_can_run_together`)
        for k, hist in enumerate(hists):
            for _, seg in hist.segments:
                group.extend(k, seg)
        for _ in range(max(st.planned - st.done for st in states)):
            live = [k for k, st in enumerate(states) if st.done < st.planned]
            started = now_iso()
            trials = {k: states[k].seq.trials[states[k].done] for k in live}
            qs = {k: proto.queries(trials[k]) for k in live}
            for k in live:
                for seg in hists[k].begin_trial(trials[k]):
                    group.extend(k, seg)
            tctx = {k: [hists[k].trial_context(q.prompt) for q in qs[k]] for k in live}
            results: dict[int, list[list]] = {k: [[] for _ in qs[k]] for k in live}
            # last query first (as in one-at-a-time runs): the first query's prompt stays cached
            for qi in reversed(range(max(len(qs[k]) for k in live))):
                ask = {k: (tctx[k][qi], option_texts(qs[k][qi], self.chat)) for k in live if qi < len(qs[k])}
                for k, res in group.loglikelihood(ask).items():
                    results[k][qi] = list(res)
            for k in live:
                st, trial, hist = states[k], trials[k], hists[k]
                scored = Scored([[r.logprob for r in res] for res in results[k]], results[k])
                scored.rescored_alone = self._rescore_running(group.text(k), tctx[k], qs[k], scored.scores, trial)
                d, fb = score_trial(self, st, trial, qs[k], scored, started=started,
                                    context_text=hist.windowed_text(trial.trial_index) + tctx[k][0],
                                    after=lambda d, trial=trial: feedback_for(exp, trial, d.correct))
                st.writer.save_sidecar()  # type: ignore[union-attr]
                group.extend(k, hist.commit_entry(trial, history_entry(proto, trial, d.response, fb, d.answer_text,
                                                                       st.rule)))
            self.progress(len(live), None)

    def _run_running(self, st: SubjectState) -> None:
        """One subject, trial by trial, on one growing context (its own answers and feedback)."""
        proto = self.protocol
        exp = self.exp
        hist = self.history(st)
        windowed = bool(st.mode.window)
        stream = self.backend.stream(reuse_cache=self.cfg.kv_cache)
        for _, seg in hist.segments:
            stream.extend(seg)
        # rebuild the history of trials already written (their answers are in the table); the
        # cache is rebuilt with the same forward passes the uninterrupted run made (`replay`), so
        # the scores of the trials still to run are bit-identical to an uninterrupted session's
        if st.done:
            csv_path = session_paths(self.out, exp.name, st.subject_id, self.cfg.session)[0]
            rows = read_rows(csv_path)[: st.done]
            for row in rows:
                trial = st.seq.trials[int(row["trial_index"])]
                for seg in hist.begin_trial(trial):
                    stream.extend(seg)
                if not windowed:
                    self._replay(stream, hist, trial)
                seg = hist.commit_entry(trial, row_entry(proto, trial, row, st.rule))
                stream.extend(seg)
        for i in range(st.done, st.planned):
            trial = st.seq.trials[i]
            started = now_iso()
            for seg in hist.begin_trial(trial):
                stream.extend(seg)
            if windowed:
                stream = self.backend.stream(reuse_cache=self.cfg.kv_cache)
                stream.extend(hist.windowed_text(trial.trial_index))
            qs = proto.queries(trial)
            tctx = [hist.trial_context(q.prompt) for q in qs]
            scored = on_stream(stream.loglikelihood, qs, tctx, self.chat)
            scored.rescored_alone = self._rescore_running(stream.text, tctx, qs, scored.scores, trial)
            if proto.measures:
                scored.measured = proto.measure(self.backend, [trial], [stream.text + tctx[0]])[0]
            if proto.generates:
                scored.generation = stream.generate(tctx[0], proto.until, proto.max_new_tokens,
                                                    skip_leading_whitespace=True)
            d, fb = score_trial(self, st, trial, qs, scored, started=started,
                                context_text=hist.windowed_text(trial.trial_index) + tctx[0],
                                after=lambda d, trial=trial: feedback_for(exp, trial, d.correct))
            st.writer.save_sidecar()  # type: ignore[union-attr]
            stream.extend(hist.commit_entry(trial, history_entry(proto, trial, d.response, fb, d.answer_text, st.rule)))
            self.progress(1, None)


def spec_file(exp: Experiment) -> str | None:
    """The absolute path of the spec file a run read (None: a spec not read from a file)."""
    path = Path(exp.source_path) if exp.source_path else None
    return str(path.resolve()) if path is not None and path.is_file() else None


def _to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)



def generic_cells(columns: dict[str, Any]) -> dict[str, Any]:
    """A decision's general-model columns as table cells: lists as JSON (floats rounded to 1e-6)."""
    def cell(v: Any) -> Any:
        if isinstance(v, (list, tuple)):
            return json.dumps([round(float(x), 6) if isinstance(x, float) else x for x in v])
        if isinstance(v, float):
            return None if math.isnan(v) else round(v, 6)
        return v
    return {k: cell(v) for k, v in columns.items() if v is not None}


def run_models(cfg: RunConfig, backend: Backend | None = None,
               progress: Callable[[int, int | None], None] | None = None) -> RunSummary:
    """Load the model (unless given) and run every subject of `cfg` (the spec and --list checked first:
    experiments/run_prep.py, SpecError or OptionError)."""
    raise_csv_field_limit()  # an API entry: resumed sessions with long kept columns
    plan = prepare_run(cfg.spec, session=cfg.session, seed=cfg.seed, trials=cfg.trials, list_number=cfg.list_number)
    exp = plan.exp
    locks = lock_sessions(cfg.out, exp.name, subject_ids(cfg), cfg.session)  # refused before the model loads
    try:
        if backend is None:
            # model_subjects.backends.registry loads this module back (an import circle)
            from model_subjects.backends.registry import load_backend

            backend = load_backend(cfg.model, backend=cfg.backend, dtype=cfg.dtype, device=cfg.device,
                                   add_bos=cfg.add_bos, batch_size=cfg.batch_size, threads=cfg.threads,
                                   **cfg.backend_options)
        return Runner(cfg, backend, progress=progress, plan=plan).run(locks)
    finally:
        for lock in locks.values():  # released by the writers already, unless the run stopped early
            lock.release()
