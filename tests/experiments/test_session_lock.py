"""One writer per session: an OS lock (flock) beside each session table, held by real processes.

Every case here uses two real processes: one that holds a session (a bare lock holder, or a real
`twinlab run-model` / `sweep`), and a second writer that must be refused at once, naming the holder.
kill -9 of the holder must leave no stale lock (the kernel drops it).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from experiments.session import SessionWriter, acquire_session_lock, read_rows, session_paths
from experiments.session_errors import SessionError
from experiments.session_lock import SessionLockedError, lock_path_for
from experiments.spec import load_spec

try:  # the GUI tests' private Xvfb display and short-timing spec
    from tests.participants.test_participants_gui import fast_spec, xdisplay  # noqa: F401
except ModuleNotFoundError:  # plain `pytest` puts tests/ itself on sys.path
    from test_participants_gui import fast_spec, xdisplay  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
SPEC = "lakretz2021_nested"
HOLD = ("import sys, time; from experiments.session_lock import acquire_session_lock; "
        "lock = acquire_session_lock(sys.argv[1], command='holder-under-test'); print('held', flush=True); "
        "time.sleep(600)")


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}


def hold(csv_path: Path) -> subprocess.Popen:
    """A real process holding the session's lock (prints 'held' once it has it)."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(csv_path)], cwd=ROOT, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert line.strip() == "held", proc.stderr.read()
    return proc


def kill9(proc: subprocess.Popen) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "experiments.cli", *args]


def test_second_writer_refused_naming_holder_and_kill_9_leaves_no_stale_lock(tmp_path):
    csv_path = session_paths(tmp_path, SPEC, "m01", 1)[0]
    proc = hold(csv_path)
    try:
        info = json.loads(lock_path_for(csv_path).read_text())
        assert info["pid"] == proc.pid and info["command"] == "holder-under-test"
        t0 = time.monotonic()
        with pytest.raises(SessionLockedError) as err:
            SessionWriter.create(tmp_path, experiment=SPEC, subject_id="m01", session=1, subject_kind="model",
                                 spec_hash="s", sequence_hash="q", n_trials=3)
        assert time.monotonic() - t0 < 1.0  # refused at once, never waits
        msg = str(err.value)
        assert f"pid {proc.pid}" in msg and "holder-under-test" in msg and "host" in msg
        assert not csv_path.exists()  # the refused writer wrote nothing
        # another session of the same folder is free
        with SessionWriter.create(tmp_path, experiment=SPEC, subject_id="m02", session=1, subject_kind="model",
                                  spec_hash="s", sequence_hash="q", n_trials=0):
            pass
    finally:
        kill9(proc)
    # the kernel released the killed holder's lock: the next writer gets it (the old file is taken over)
    assert lock_path_for(csv_path).exists()
    w = SessionWriter.create(tmp_path, experiment=SPEC, subject_id="m01", session=1, subject_kind="model",
                             spec_hash="s", sequence_hash="q", n_trials=0)
    assert json.loads(lock_path_for(csv_path).read_text())["pid"] == os.getpid()
    w.close()
    assert not lock_path_for(csv_path).exists()  # a clean release removes the lock file


def test_run_model_cli_refused_before_the_model_loads(tmp_path):
    """The lock is taken before the model is loaded: the refusal comes without a model load."""
    csv_path = session_paths(tmp_path, SPEC, "m01", 1)[0]
    proc = hold(csv_path)
    try:
        r = subprocess.run(_cli("run-model", SPEC, "--trials", "2",
                                "--out", str(tmp_path), "--quiet"), cwd=ROOT, env=_env(), capture_output=True,
                           text=True, timeout=300)
    finally:
        kill9(proc)
    assert r.returncode == 2 and f"pid {proc.pid}" in r.stderr and "holder-under-test" in r.stderr, r.stderr
    assert "loading" not in r.stderr.lower() and "Traceback" not in r.stderr
    assert not csv_path.exists()


def test_same_process_second_writer_refused(tmp_path):
    w = SessionWriter.create(tmp_path, experiment=SPEC, subject_id="m01", session=1, subject_kind="model",
                             spec_hash="s", sequence_hash="q", n_trials=1)
    with pytest.raises(SessionLockedError, match=f"pid {os.getpid()}"):
        SessionWriter.create(tmp_path, experiment=SPEC, subject_id="m01", session=1, subject_kind="model",
                             spec_hash="s", sequence_hash="q", n_trials=1, resume=True)
    w.close()
    again = SessionWriter.create(tmp_path, experiment=SPEC, subject_id="m01", session=1, subject_kind="model",
                                 spec_hash="s", sequence_hash="q", n_trials=1, resume=True)
    again.close()


def test_lock_taken_over_after_release_race(tmp_path):
    """Three processes racing for one session (each takes it 15 times): never two holders at once."""
    csv_path = session_paths(tmp_path, SPEC, "m01", 1)[0]
    code = ("import sys, time; from experiments.session_lock import acquire_session_lock\n"
            "from experiments.session_lock import SessionLockedError\n"
            "got = 0\n"
            "t_end = time.time() + 120\n"
            "while got < 15 and time.time() < t_end:\n"
            "    try:\n"
            "        lock = acquire_session_lock(sys.argv[1])\n"
            "    except SessionLockedError:\n"
            "        time.sleep(0.001)\n"
            "        continue\n"
            "    with open(sys.argv[2], 'a') as f: f.write('in\\n'); f.flush()\n"
            "    time.sleep(0.002)\n"
            "    with open(sys.argv[2], 'a') as f: f.write('out\\n'); f.flush()\n"
            "    lock.release(); got += 1\n"
            "print(got)\n")
    log = tmp_path / "log.txt"
    procs = [subprocess.Popen([sys.executable, "-c", code, str(csv_path), str(log)], cwd=ROOT, env=_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    outs = [p.communicate(timeout=180) for p in procs]
    assert [o.strip() for o, _ in outs] == ["15"] * 3, [e[-2000:] for _, e in outs]
    lines = log.read_text().split()
    assert lines == ["in", "out"] * 45  # never two holders at once
    assert not lock_path_for(csv_path).exists()  # every clean release removes the lock file


@pytest.mark.slow
@pytest.mark.model
def test_two_run_model_on_one_session(tmp_path):
    """A second `run-model` on a session being written exits 2 at once, naming the first, while a run on
    another subject of the same folder goes ahead; after a kill -9 of the first its lock is gone."""
    exp = load_spec(SPEC)
    csv_path = session_paths(tmp_path, exp.name, "m01", 1)[0]
    args = ["run-model", SPEC, "--context", "running", "--trials", "400", "--out", str(tmp_path), "--quiet"]
    first = subprocess.Popen(_cli(*args), cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        deadline = time.time() + 300
        while (time.time() < deadline and first.poll() is None
               and len(read_rows(csv_path) if csv_path.exists() else []) < 2):
            time.sleep(0.1)
        assert first.poll() is None, first.communicate()[1][-2000:]
        os.kill(first.pid, signal.SIGSTOP)  # still holding its lock, but leaving the CPU to the others
        t0 = time.monotonic()
        second = subprocess.run(_cli(*args), cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300)
        refused_in = time.monotonic() - t0
        assert second.returncode == 2, second.stderr[-2000:]
        assert f"pid {first.pid}" in second.stderr and "run-model" in second.stderr
        assert "Traceback" not in second.stderr
        # another subject's session in the same folder runs meanwhile
        other = subprocess.run(_cli("run-model", SPEC, "--first-subject", "2", "--trials", "2", "--out",
                                    str(tmp_path), "--quiet"), cwd=ROOT, env=_env(), capture_output=True, text=True,
                               timeout=300)
        assert other.returncode == 0, other.stderr[-2000:]
        assert first.poll() is None  # both at once (the first one stopped, its session held)
        assert len(read_rows(session_paths(tmp_path, exp.name, "m02", 1)[0])) == 2
    finally:
        kill9(first)
    kept = read_rows(csv_path)
    assert [int(r["trial_index"]) for r in kept] == list(range(len(kept)))  # one writer: no duplicate rows
    acquire_session_lock(csv_path).release()  # the killed run's lock went with it (its resume: test_model_runner)
    print(f"second run-model refused in {refused_in:.1f} s (python start-up included)")


@pytest.mark.slow
@pytest.mark.model
def test_two_sweeps_over_one_folder(tmp_path):
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text("spec: lakretz2021_nested\nout: out\nmodels: [smollm2]\ncontexts: [running]\n"
                     "protocols: [forced_choice]\nsubjects: {count: 1, prefix: s}\ntrials: 400\n")
    exp = load_spec(SPEC)
    csv_path = session_paths(tmp_path / "out" / "smollm2" / "running" / "forced_choice", exp.name, "s01", 1)[0]
    first = subprocess.Popen(_cli("sweep", str(sweep)), cwd=ROOT, env=_env(), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 300
        while (time.time() < deadline and first.poll() is None
               and len(read_rows(csv_path) if csv_path.exists() else []) < 2):
            time.sleep(0.1)
        assert first.poll() is None, first.communicate()[1][-2000:]
        os.kill(first.pid, signal.SIGSTOP)  # still holding its lock, but leaving the CPU to the second
        second = subprocess.run(_cli("sweep", str(sweep)), cwd=ROOT, env=_env(), capture_output=True, text=True,
                                timeout=300)
        assert second.returncode == 2, second.stderr[-2000:]
        assert f"pid {first.pid}" in second.stderr and "sweep" in second.stderr
        assert "Traceback" not in second.stderr
        n_before = len(read_rows(csv_path))
    finally:
        kill9(first)
    rows = read_rows(csv_path)
    assert [int(r["trial_index"]) for r in rows] == list(range(len(rows))) and len(rows) >= n_before
    meta = json.loads(csv_path.with_name(csv_path.name.replace("_data.csv", "_data.json")).read_text())
    assert meta["status"] == "running"  # killed mid-run: never "completed"


@pytest.mark.slow
@pytest.mark.gui
def test_two_run_human_resume_on_one_session(xdisplay, fast_spec, tmp_path):
    """Two `run-human --resume` on the same participant and session: the second exits 2 naming the first
    (before its window opens); after kill -9 of the first, a third --resume completes the session."""
    pytest.importorskip("psychopy")
    out, pid, n = tmp_path / "data", "autopilot5", 10
    csv_path = session_paths(out, load_spec(fast_spec).name, pid, 1)[0]
    env = {**_env(), "DISPLAY": xdisplay}
    base = ["run-human", str(fast_spec), "--autopilot", "--participant", pid, "--out", str(out)]
    r = subprocess.run(_cli(*base, "--trials", "1"), cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    first = subprocess.Popen(_cli(*base, "--trials", str(n), "--resume"), cwd=ROOT, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 120
        while time.time() < deadline and first.poll() is None and len(read_rows(csv_path)) < 3:
            time.sleep(0.05)
        assert first.poll() is None, first.stderr.read()[-2000:]
        second = subprocess.run(_cli(*base, "--trials", str(n), "--resume"), cwd=ROOT, env=env,
                                capture_output=True, text=True, timeout=180)
        still_running = first.poll() is None
        assert second.returncode == 2, second.stderr[-2000:]
        squashed = "".join(second.stderr.split())
        assert f"pid{first.pid}" in squashed and "run-human" in squashed and "Traceback" not in second.stderr
        assert still_running
    finally:
        kill9(first)
    kept = read_rows(csv_path)
    assert 3 <= len(kept) < n
    third = subprocess.run(_cli(*base, "--trials", str(len(kept) + 2), "--resume"), cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=180)
    assert third.returncode == 0, third.stderr[-2000:]
    rows = read_rows(csv_path)
    assert [int(r["trial_index"]) for r in rows] == list(range(len(kept) + 2))  # none twice, none lost
    assert rows[: len(kept)] == kept


def test_a_refused_writer_leaves_no_folder_behind(tmp_path):
    """The lock's folder is made when needed and removed again when nothing was written in it."""
    out = tmp_path / "new" / "sessions"
    with pytest.raises(SessionError):
        SessionWriter.create(out, experiment=SPEC, subject_id="m-1", session=1, subject_kind="model",
                             spec_hash="s", sequence_hash="q", n_trials=1)  # a bad id: refused before the lock
    lock = acquire_session_lock(session_paths(out, SPEC, "m01", 1)[0])
    assert (out / "data").is_dir()
    lock.release()
    assert not (tmp_path / "new").exists()  # every folder the lock made is gone
