"""One way to prepare a run: load the spec, check it, pick the list, compile, open the session.

`run-human`, `run-model`, `web` and `sweep` (and their APIs) all start here, so a spec or a --list
that one runner refuses every runner refuses with the same message, before any model loads or
window opens, and a subject's sequence is compiled once per run (`RunPlan.sequence`), not once per
check. What differs between runners (a person's window, a model's batches, a page's token) stays
in the runner; the steps they share are these:

1. `checked_spec` / `prepare_run`: the spec loaded (a path, a bundled name or a loaded one), its
   block sizes checked against the design and the pool, the chosen `--list` checked against 1..L;
2. `RunPlan.list_for`: the list a session reads (given by hand, else the one a resumed session
   recorded in its sidecar, else None: the id rotation; the server's least-filled choice is
   `experiments.lists.choose_list`);
3. `RunPlan.sequence`: the compiled sequence (experiments.design_compiler), kept for the run;
4. `RunPlan.open_writer`: the session's writer, created or reopened with the sequence's identity
   (experiment, subject, session, spec and sequence hash) and its trial count.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from experiments.design_compiler import check_sizes, compile_sequence
from experiments.lists import check_list, read_sidecar, recorded_list
from experiments.session import SessionError, SessionWriter, session_paths
from experiments.spec import Experiment, load_spec
from experiments.trials import TrialSequence

MAX_KEPT = 512  # compiled sequences a plan keeps by default (a sweep reuses its subjects in every cell)
_PLAN_LIST = object()  # `sequence(list_number=...)` not given: the plan's own --list


def checked_spec(spec: str | Experiment, list_number: int | None = None, list_name: str = "--list") -> Experiment:
    """The experiment of `spec` (a path, a bundled name or a loaded one) whose block sizes the design and
    the pool can supply and whose `list_number` (None: the id rotation) is one of its lists.

    Raises SpecError (the spec) or OptionError (the list), each naming what is wrong."""

    exp = spec if isinstance(spec, Experiment) else load_spec(spec)
    check_sizes(exp)
    check_list(exp, list_number, list_name)
    return exp


def session_problem(exp: Experiment, session: int, who: str = "subject") -> str | None:
    """Why `session` is not one of the spec's sessions (None: it is); `who` is 'participant' or 'subject'."""
    if 1 <= session <= exp.sessions:
        return None
    return f"--session {session}: {exp.name} has {exp.sessions} session(s) per {who} (spec field `sessions`)"


def n_planned(seq: TrialSequence, trials: int | None) -> int:
    """The trials a session runs: all of the sequence, or its first `trials` (--trials)."""
    return len(seq) if trials is None else min(len(seq), max(0, int(trials)))


def hash_differences(meta: dict[str, Any], seq: TrialSequence, sep: str = " ") -> list[str]:
    """The seed, spec hash and sequence hash an existing session's sidecar records that differ from `seq`'s
    ('KEY<sep>THERE there, NOW now'); a key the sidecar lacks is no difference."""
    return [f"{key}{sep}{meta.get(key)!r} there, {now!r} now"
            for key, now in (("seed", seq.seed), ("spec_hash", seq.spec_hash), ("sequence_hash", seq.sequence_hash))
            if key in meta and meta.get(key) != now]


@dataclass
class RunPlan:
    """One run's checked spec and settings; each subject's sequence compiled once and kept.

    `session`, `seed`, `trials` and `list_number` are the run's (a server passes each session's
    own session and list to `sequence`)."""

    exp: Experiment
    session: int = 1
    seed: int | None = None
    trials: int | None = None
    list_number: int | None = None
    keep: int = MAX_KEPT  # sequences kept (0: none; a server keeps its open sessions' sequences itself)
    _kept: OrderedDict = field(default_factory=OrderedDict, repr=False)
    _guard: Any = field(default_factory=threading.Lock, repr=False)

    def sequence(self, subject_id: str, session: int | None = None, list_number: Any = _PLAN_LIST) -> TrialSequence:
        """The compiled sequence of `subject_id` (SpecError naming what is wrong); compiled once per plan."""

        ln = self.list_number if list_number is _PLAN_LIST else list_number
        key = (subject_id, self.session if session is None else session, ln)
        with self._guard:  # a server compiles in several threads
            seq = self._kept.get(key)
        if seq is None:
            seq = compile_sequence(self.exp, subject_id, self.seed, session=key[1], list_number=ln)
            with self._guard:
                self._kept[key] = seq
                while len(self._kept) > self.keep:
                    self._kept.popitem(last=False)
        return seq

    def n_planned(self, seq: TrialSequence) -> int:
        return n_planned(seq, self.trials)

    def paths(self, out: str | Path, subject_id: str, session: int | None = None) -> tuple[Path, Path]:
        """The session's table and sidecar (SessionError for an id or session that cannot name a file)."""

        return session_paths(out, self.exp.name, subject_id, self.session if session is None else session)

    def list_for(self, out: str | Path, subject_id: str, resume: bool = False) -> int | None:
        """The list this subject's session reads: the plan's --list, else on a resume the list the session's
        sidecar records (a session keeps its list), else None (the id rotation)."""


        if self.list_number is not None or not resume or self.exp.design is None:
            return self.list_number
        try:
            meta = read_sidecar(self.paths(out, subject_id)[1])
        except SessionError:
            meta = None
        return recorded_list(meta) if meta else None

    def open_writer(self, out: str | Path, subject_id: str, seq: TrialSequence, kind: str, n_trials: int,
                    session: int | None = None, **kw: Any):
        """The session's SessionWriter, created (or reopened: resume=True) with `seq`'s identity (spec and
        sequence hash, its header and design record); `kw` go to SessionWriter.create (metadata, resume,
        lock, columns). SessionError as the writer raises it."""

        return SessionWriter.create(
            out, experiment=self.exp.name, subject_id=subject_id, session=self.session if session is None
            else session, subject_kind=kind, spec_hash=seq.spec_hash, sequence_hash=seq.sequence_hash,
            n_trials=n_trials, sequence=seq, **kw)


def prepare_run(spec: str | Experiment, *, session: int = 1, seed: int | None = None, trials: int | None = None,
                list_number: int | None = None, list_name: str = "--list") -> RunPlan:
    """`checked_spec`, then the plan the runner compiles and opens its sessions through."""
    exp = checked_spec(spec, list_number, list_name)
    return RunPlan(exp, session=session, seed=seed, trials=trials, list_number=list_number)
