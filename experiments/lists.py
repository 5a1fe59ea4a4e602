"""Which list of a design a subject reads: the id rotation, a list given by hand, or the least-filled list.

Three ways, one place (every runner and `plan` call this module):

- **rotation** (the default of `plan`, `run-human`, `run-model`): subject k (the trailing number of the
  id) reads list ((k - 1) mod L) + 1 (experiments/design.py `DesignFile.list_for`); ids without a
  number get a stable hash, so Prolific-style ids land on lists at random, not in turn;
- **by hand**: `--list N` (plan, run-human, run-model, web build; `?list=N` on a served or built page)
  overrides the rotation; N is checked against 1..L before any work;
- **least filled** (`web serve`): a new participant gets the list with the fewest sessions counted, a
  session counted when it is complete or was active (a row written, or started) within
  `--abandon-after` minutes; ties go to the lowest list number. Counting and creating the session
  happen under one lock (a thread lock and an OS `flock` on `<out>/.twinlab-lists.lock`, so two
  servers on one data folder are serialised too). How the list was chosen goes into the sidecar
  (`list_assignment`). The counts come from a counter kept beside the data (experiments/list_index.py),
  rebuilt from the sidecars only when the server starts: a start reads no old sidecar.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Iterator

from experiments.list_index import JOURNAL_NAME, LOCK_NAME, index_for, open_private_file, read_sidecar, recorded_list
from experiments.options import OptionError
from experiments.session import keyword_value
from experiments.sources import items_source

DEFAULT_ABANDON_MIN = 60.0
_THREAD_LOCK = threading.Lock()
_N_LISTS: dict[int, tuple[Any, int]] = {}  # id(spec) -> (weak reference to it, its number of lists)


def n_lists(exp: Any) -> int | None:
    """L, the number of lists of the spec's source of items; None for a source without lists (the Lakretz
    cells: their counterbalancing is the rotation of each item's versions, experiments/sources)."""
    held = _N_LISTS.get(id(exp))
    if held is None or held[0]() is not exp:  # the design file is read once per loaded spec, not at every start
        held = _N_LISTS[id(exp)] = (weakref.ref(exp), items_source(exp).n_lists())
    return held[1]


def check_list(exp: Any, value: int | None, name: str = "--list") -> int | None:
    """`--list N`: None stays None (the rotation); else N must be a list of the design (1..L)."""
    if value is None:
        return None
    n = n_lists(exp)
    if n is None:
        raise OptionError(f"{name} {value}: {exp.name} has no lists (its spec has no `design:` of items)")
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= n:
        raise OptionError(f"{name} must be from 1 to {n} ({exp.name} has {n} list(s)), got {value}")
    return value


def list_counts(out: Path, exp: Any, n: int, abandon_after_min: float, now: float | None = None
                ) -> tuple[dict[int, int], dict[int, int]]:
    """(counted, abandoned) participants per list 1..n among the sessions of `exp` under `out`.

    A participant counts on its list when one of its sessions is complete or was active (its table or
    sidecar written) within the last `abandon_after_min` minutes; otherwise it is abandoned (not counted)."""

    now = time.time() if now is None else now
    limit = abandon_after_min * 60.0
    state: dict[str, tuple[int, bool]] = {}  # participant -> (list, live)
    prefix = f"study-{keyword_value(exp.name)}_subject-"
    for p in (Path(out) / "data").glob(f"{prefix}*_data.json"):
        meta = read_sidecar(p)
        if meta is None:
            continue
        ln = recorded_list(meta)
        if ln is None or not 1 <= ln <= n:
            continue
        pid = p.name[len(prefix):].rsplit("_session-", 1)[0]
        csv = p.with_name(p.name[:-len(".json")] + ".csv")
        times = [q.stat().st_mtime for q in (p, csv) if q.exists()]
        live = meta.get("status") == "completed" or (bool(times) and now - max(times) <= limit)
        old = state.get(pid)
        state[pid] = (ln, live or (old[1] if old else False))
    counted = {k: 0 for k in range(1, n + 1)}
    abandoned = {k: 0 for k in range(1, n + 1)}
    for ln, live in state.values():
        (counted if live else abandoned)[ln] += 1
    return counted, abandoned


def least_filled(counts: dict[int, int]) -> int:
    """The list with the fewest counted participants; ties: the lowest number."""
    return min(counts, key=lambda k: (counts[k], k))


@contextlib.contextmanager
def assignment_lock(out: Path) -> Iterator[None]:
    """One assignment at a time: a thread lock (one server) and an OS flock (servers sharing `out`) on a
    plain file opened without following a symbolic link (ListLockError otherwise)."""
    Path(out).mkdir(parents=True, exist_ok=True)
    with _THREAD_LOCK:
        fd = open_private_file(Path(out) / LOCK_NAME, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


def check_list_files(out: Path) -> None:
    """At a server's start: the lock and journal can be used (ListLockError naming the path otherwise)."""

    for name in (LOCK_NAME, JOURNAL_NAME):
        p = Path(out) / name
        if p.is_symlink() or (p.exists() and not p.is_file()):
            os.close(open_private_file(p, os.O_RDONLY))  # raises, naming what is there


def rebuild_index(out: Path, exp: Any) -> None:
    """A server's start-up: the list counter rebuilt from the sidecars (nothing for a spec without lists)."""
    n = n_lists(exp)
    if n is not None:
        with assignment_lock(out):
            index_for(out, exp.name, n, rebuild=True)


def assign_least_filled(out: Path, exp: Any, abandon_after_min: float = DEFAULT_ABANDON_MIN,
                        now: float | None = None) -> tuple[int, dict[str, Any]]:
    """(list, record) for a new participant; call it inside `assignment_lock(out)` together with the
    creation of the session, then `index_for(...).record(...)` so that the next count sees it."""
    n = n_lists(exp)
    if n is None:
        raise OptionError(f"{exp.name} has no lists to balance")
    idx = index_for(out, exp.name, n)
    idx.sync_journal()
    counted, abandoned = idx.counts(abandon_after_min, time.time() if now is None else now)
    ln = least_filled(counted)
    return ln, {"method": "least_filled", "list": ln, "counts_before": {str(k): v for k, v in counted.items()},
                "abandoned_not_counted": {str(k): v for k, v in abandoned.items() if v},
                "abandon_after_min": abandon_after_min}


def given_record(ln: int, how: str) -> dict[str, Any]:
    """The sidecar's record of a list given by hand (`--list`, `?list=`)."""
    return {"method": "given", "list": ln, "by": how}


@contextlib.contextmanager
def choose_list(out: Path, exp: Any, subject_id: str, asked: Any = None,
                abandon_after_min: float = DEFAULT_ABANDON_MIN,
                session: int = 1) -> Iterator[tuple[int | None, dict[str, Any] | None]]:
    """The list of a participant starting a session on a server, as (list, sidecar record); (None, None)
    for a spec without lists. A list asked for (`?list=N`) is checked (OptionError naming 1..L); a
    participant with an earlier session keeps its list; anyone else gets the least-filled list, and the
    caller creates the session inside this block (the lock is held until it ends)."""
    n = n_lists(exp)
    if n is None:
        if asked is not None:
            check_list(exp, asked, "list")
        yield None, None
        return
    if asked is not None:
        ln = check_list(exp, asked, "list")
        with assignment_lock(out):  # counted by the next least-filled assignment too
            yield ln, given_record(asked, "the page's list URL parameter (?list=N)")
            index_for(out, exp.name, n).record(subject_id, session, ln)
        return
    with assignment_lock(out):
        idx = index_for(out, exp.name, n)
        idx.sync_journal()
        earlier = idx.earlier_list(subject_id)
        if earlier is not None:
            yield earlier, {"method": "participant's earlier session", "list": earlier}
        else:
            ln, record = assign_least_filled(out, exp, abandon_after_min)
            yield ln, record
            earlier = ln
        idx.record(subject_id, session, earlier)  # only when the session was created (no exception)
