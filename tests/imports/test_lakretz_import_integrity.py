"""`twinlab import lakretz2021`: the whole release imports (logs without trials, header-only and cut logs are
counted, never fatal), sessions are published whole or not at all, `--skip-existing` trusts only verified
sessions, and one writer per session holds for imports too.

Fixtures: the generated logs of tests/fixtures/lakretz2021 plus tests/fixtures/lakretz2021_edge (a stub and
a header-only log in the release's exact bytes); the real sample where ../shared has it.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from experiments.cli import app
from experiments.session import read_rows, verified_session_problem

ROOT = Path(__file__).resolve().parents[2]
FIX = Path(__file__).parent.parent / "fixtures" / "lakretz2021"
EDGE = Path(__file__).parent.parent / "fixtures" / "lakretz2021_edge" / "logs"
TABLE = FIX / "dataframe_results_all_trials.csv"
SAMPLE = ROOT.parent / "shared" / "data" / "lakretz2021_sample"
if not SAMPLE.exists():  # a worktree one level deeper than the main checkout
    SAMPLE = ROOT.parents[1] / "shared" / "data" / "lakretz2021_sample"
STUB, HEADER_ONLY = sorted(p.name for p in EDGE.iterdir())[::-1]  # Subj_105 (stub), Subj_106 (header only)


def run(*args: str):
    return CliRunner().invoke(app, ["import", "lakretz2021", *args])


def flat(text: str) -> str:
    return "".join(text.split())


def summary_of(out: Path) -> dict:
    return json.loads((out / "import_lakretz2021.json").read_text())


def tables(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((out / "data").glob("*_data.csv"))}


@pytest.fixture()
def logs(tmp_path) -> Path:
    """The fixture logs with the release's stub and header-only logs beside them."""
    d = tmp_path / "logs"
    shutil.copytree(FIX / "logs", d)
    for p in EDGE.iterdir():
        shutil.copy(p, d / p.name)
    return d


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """A clean, uninterrupted import of the fixtures (what every recovery must end up equal to)."""
    out = tmp_path_factory.mktemp("ref") / "out"
    r = run("--results", str(TABLE), "--logs", str(FIX / "logs"), "--out", str(out))
    assert r.exit_code == 0, r.output
    return out


def test_stub_and_header_only_logs_are_counted_not_fatal(logs, tmp_path, reference):
    assert (EDGE / STUB).read_bytes().count(b"\r\n") == 2 and b"GrandStart" in (EDGE / STUB).read_bytes()
    out = tmp_path / "out"
    r = run("--results", str(TABLE), "--logs", str(logs), "--out", str(out))
    assert r.exit_code == 0, r.output
    s = summary_of(out)
    assert set(s["logs_without_trials"]) == {STUB, HEADER_ONLY}
    assert s["logs_without_trials"][STUB].startswith("no trials: 1 event line(s) (GrandStart)")
    assert s["logs_without_trials"][HEADER_ONLY].startswith("header only")
    assert s["files_read"]["session_logs"] == summary_of(reference)["files_read"]["session_logs"] + 2
    text = flat(r.output)
    assert flat("logs that gave no session") in text and flat(f"{STUB}: no trials") in text
    assert tables(out) == tables(reference)  # the other sessions are exactly what they were


@pytest.mark.parametrize("cut", ["after_inner_tab", "inside_time", "before_trailing_tab"])
def test_a_log_cut_mid_row_is_counted_and_its_trial_unfinished(logs, tmp_path, cut):
    log = next(p for p in logs.iterdir() if "Subj_101_sess_1" in p.name)
    data = log.read_bytes()
    lines = data.split(b"\r\n")
    k = max(i for i, line in enumerate(lines[:-40]) if line.startswith(b"WORD_ON\t"))
    line = lines[k]
    fields = line.split(b"\t")
    if cut == "after_inner_tab":  # "WORD_ON\t1\t12\t" : a tab, then nothing
        part = b"\t".join(fields[:3]) + b"\t"
    elif cut == "inside_time":
        part = b"\t".join(fields[:6]) + b"\t" + fields[6][:4]
    else:  # every field but the trailing tab
        part = line[:-1]
    log.write_bytes(b"\r\n".join(lines[:k]) + b"\r\n" + part)
    out = tmp_path / "out"
    r = run("--results", str(TABLE), "--logs", str(logs), "--out", str(out))
    assert r.exit_code == 0, r.output
    s = summary_of(out)
    assert s["rows_set_aside"]["truncated last lines (the file ends inside them)"] == 1
    assert s["unfinished_trials"] == 2  # the fixtures' own unfinished trial and this one
    rows = read_rows(out / "data" / "study-lakretz2021_subject-L101_session-1_data.csv")
    assert json.loads(rows[-1]["extra"]).get("unfinished") is True


def test_a_complete_last_line_without_its_line_end_is_kept(logs, tmp_path, reference):
    log = next(p for p in logs.iterdir() if "Subj_101_sess_1" in p.name)
    log.write_bytes(log.read_bytes().rstrip(b"\r\n"))
    out = tmp_path / "out"
    assert run("--results", str(TABLE), "--logs", str(logs), "--out", str(out)).exit_code == 0
    assert summary_of(out)["rows_set_aside"]["truncated last lines (the file ends inside them)"] == 0
    assert tables(out) == tables(reference)


@pytest.mark.skipif(not SAMPLE.exists(), reason="the shared Lakretz et al. (2021) sample is not here")
def test_the_real_sample_with_its_stub_and_header_only_logs(tmp_path):
    logs = SAMPLE / "logs"
    stub = next(p.name for p in logs.iterdir() if "Subj_55_sess_2" in p.name)
    header_only = next(p.name for p in logs.iterdir() if "Subj_63_sess_2" in p.name)
    r = run("--results", str(SAMPLE / "dataframe_results_all_trials_sample.csv"), "--logs", str(logs),
            "--out", str(tmp_path / "out"))
    assert r.exit_code == 0, r.output
    s = summary_of(tmp_path / "out")
    assert s["logs_without_trials"][stub].startswith("no trials: 1 event line(s) (GrandStart)")
    assert s["logs_without_trials"][header_only].startswith("header only")
    assert s["sessions_written"] == len(list(logs.iterdir())) - 2
    assert s["matched"]["exact"] == s["table_rows"]  # every table row still matched


# ---- atomic sessions --------------------------------------------------------------------------
def test_partial_sessions_are_moved_aside_and_imported_again(tmp_path, reference):
    out = tmp_path / "out"
    shutil.copytree(reference, out)
    data = out / "data"
    torn = data / "study-lakretz2021_subject-L101_session-1_data.csv"
    torn.write_bytes(torn.read_bytes()[: torn.stat().st_size // 2])  # a full disk mid-write
    no_side = data / "study-lakretz2021_subject-L102_session-2_data.json"
    no_side.unlink()  # killed between the table's rename and the sidecar's
    r = run("--results", str(TABLE), "--logs", str(FIX / "logs"), "--out", str(out), "--skip-existing")
    assert r.exit_code == 0, r.output
    s = json.loads(sorted(out.glob("import_lakretz2021_*.json"))[-1].read_text())
    assert s["sessions_reimported"] == 2 and s["sessions_written"] == 2
    assert s["sessions_skipped"] == summary_of(reference)["sessions_written"] - 2
    assert tables(out) == tables(reference)
    assert (data / (torn.name + ".unverified-1")).exists()  # moved aside, never deleted
    assert all(verified_session_problem(p, p.with_suffix(".json")) is None for p in data.glob("*_data.csv"))
    assert any(torn.name in n and "SHA-256 differs" in n for n in s["notes"])
    assert any(no_side.name.replace(".json", ".csv") in n and "sidecar is missing" in n for n in s["notes"])


def test_a_foreign_unverified_session_is_refused(tmp_path, reference):
    out = tmp_path / "out"
    shutil.copytree(reference, out)
    side = out / "data" / "study-lakretz2021_subject-L101_session-1_data.json"
    meta = json.loads(side.read_text())
    meta.pop("verified")
    meta["runner"] = "someone else"
    side.write_text(json.dumps(meta))
    before = tables(out)
    r = run("--results", str(TABLE), "--logs", str(FIX / "logs"), "--out", str(out), "--skip-existing")
    assert r.exit_code == 2 and "notwrittenbythisimport" in flat(r.output)
    assert tables(out) == before


def test_a_session_being_written_refuses_the_import_naming_the_holder(tmp_path):
    from experiments.session import session_paths

    out = tmp_path / "out"
    csv_path = session_paths(out, "lakretz2021", "L102", 1)[0]
    code = ("import sys, time; from experiments.session_lock import acquire_session_lock; "
            "l = acquire_session_lock(sys.argv[1], command='other-writer'); print('held', flush=True); time.sleep(600)")
    holder = subprocess.Popen([sys.executable, "-c", code, str(csv_path)], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert holder.stdout.readline().strip() == "held"
        r = run("--results", str(TABLE), "--logs", str(FIX / "logs"), "--out", str(out))
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(10)
    assert r.exit_code == 2 and f"pid{holder.pid}" in flat(r.output) and "other-writer" in r.output
    assert not list((out / "data").glob("*_data.csv"))  # all sessions locked before the first is written
    r = run("--results", str(TABLE), "--logs", str(FIX / "logs"), "--out", str(out))  # the holder is gone
    assert r.exit_code == 0, r.output


def test_kill_9_mid_import_leaves_only_whole_sessions(tmp_path, reference):
    """A real import process killed at several points: every session left is whole (verified), and
    `--skip-existing` then completes the import to exactly the uninterrupted result."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "experiments.cli", "import", "lakretz2021", "--results", str(TABLE),
           "--logs", str(FIX / "logs")]
    n_sessions = len(tables(reference))
    seen_partial = 0
    # kill as soon as a staging file appears (mid-write), or after the 1st / 3rd session is published
    for attempt, (suffix, wait_for) in enumerate(((".tmp", 1), ("_data.csv", 1), ("_data.csv", 3))):
        out = tmp_path / f"out{attempt}"
        proc = subprocess.Popen(cmd + ["--out", str(out)], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None:
            names = os.listdir(out / "data") if (out / "data").is_dir() else []
            if sum(n.endswith(suffix) for n in names) >= wait_for:
                break
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        published = list((out / "data").glob("*_data.csv")) if (out / "data").is_dir() else []
        seen_partial += 0 < len(published) < n_sessions
        for p in published:  # whole or absent: never a partial table under the final name
            side = p.with_name(p.name.replace("_data.csv", "_data.json"))
            if side.exists():
                assert verified_session_problem(p, side) is None, p
            else:  # killed between the two renames: the table is whole, but not trusted without its sidecar
                assert p.read_bytes() == tables(reference)[p.name]
        r = run("--results", str(TABLE), "--logs", str(FIX / "logs"), "--out", str(out), "--skip-existing")
        assert r.exit_code == 0, r.output
        assert tables(out) == tables(reference)
    assert seen_partial >= 1  # at least one kill landed mid-import


def test_a_full_disk_mid_import_publishes_no_partial_session(tmp_path, reference):
    """A real import process whose files may not grow past 20 kB (RLIMIT_FSIZE, as a full disk): the
    first session larger than that fails to write; it leaves neither a table nor a staging file, the
    sessions before it are whole, and `--skip-existing` then completes the import exactly."""
    out = tmp_path / "out"
    code = ("import resource, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
            "resource.setrlimit(resource.RLIMIT_FSIZE, (20000, 20000)); from experiments.cli import app; "
            "sys.argv = ['twinlab'] + sys.argv[1:]; app()")
    r = subprocess.run([sys.executable, "-c", code, "import", "lakretz2021", "--results", str(TABLE),
                        "--logs", str(FIX / "logs"), "--out", str(out)], cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}, timeout=300)
    assert r.returncode == 2 and "Filetoolarge" in flat(r.stderr + r.stdout)  # one line naming the file
    assert "Traceback" not in r.stderr
    names = os.listdir(out / "data")
    published = [n for n in names if n.endswith("_data.csv")]
    assert published == ["study-lakretz2021_subject-L7_session-1_data.csv"]  # the only one under 20 kB before
    assert not [n for n in names if n.endswith(".tmp")]  # the failed session's staging files are gone
    p = out / "data" / published[0]
    assert verified_session_problem(p, p.with_name(p.name.replace(".csv", ".json"))) is None
    r = run("--results", str(TABLE), "--logs", str(FIX / "logs"), "--out", str(out), "--skip-existing")
    assert r.exit_code == 0, r.output
    assert tables(out) == tables(reference)
