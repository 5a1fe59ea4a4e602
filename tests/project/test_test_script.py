"""`make test` (scripts/test.sh) runs all three passes even when one fails, prints each pass's pytest summary
line at the end, and exits non-zero if any pass failed (with `set -e` it stopped after the first failure, so
the long and server runs never ran). Checked with a stand-in for pytest (TWINLAB_TEST_RUNNER) that logs how
it was called and fails the passes a test asks for."""
from __future__ import annotations

import os
import shlex
import signal
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PASSES = ["not server and not long", "long and not server", "server"]


def _script(*args: str, runner: Path, ruff: str = "true") -> subprocess.CompletedProcess:
    """scripts/test.sh in its own process group, killed whole on a timeout (a script that ignored the
    stand-in would start the real suite)."""
    proc = subprocess.Popen(["bash", str(ROOT / "scripts" / "test.sh"), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "TWINLAB_TEST_RUNNER": str(runner), "TWINLAB_RUFF": ruff})
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _run(tmp_path: Path, fail: set[str], sleep_long: int = 0,
         ruff: str = "true") -> tuple[subprocess.CompletedProcess, list[str]]:
    calls = tmp_path / "calls.txt"
    fake = tmp_path / "fake_pytest.sh"
    # a pass's -m expression -> its made-up summary line, and exit 1 for the ones in `fail`
    fake.write_text(
        "#!/usr/bin/env bash\n"
        f"printf '%s\\n' \"$*\" >> {shlex.quote(str(calls))}\n"
        "while (($#)); do [[ $1 == -m ]] && { mark=$2; break; }; shift; done\n"
        "echo 'tests/test_x.py ..F  [100%]'\n"
        f"[[ $mark == {shlex.quote(PASSES[1])} ]] && sleep {sleep_long}\n"
        "case \"$mark\" in\n"
        + "".join(f"  {shlex.quote(m)}) echo '{k + 1} failed, {10 * (k + 1)} passed in 1.0s'; exit 1 ;;\n"
                  for k, m in enumerate(PASSES) if m in fail)
        + "  *) echo \"3 passed, 1 skipped in 0.5s ($mark)\" ;;\nesac\n",
        encoding="utf-8")
    fake.chmod(0o755)
    r = _script(runner=fake, ruff=ruff)
    return r, calls.read_text(encoding="utf-8").splitlines() if calls.exists() else []


@pytest.mark.parametrize("fail", [set(), {PASSES[0]}, {PASSES[2]}, {PASSES[0], PASSES[1]}],
                         ids=lambda s: " + ".join(sorted(s)) or "none")  # sorted: the same ids on every xdist worker
def test_every_pass_runs_and_a_failure_fails_at_the_end(tmp_path, fail):
    r, calls = _run(tmp_path, fail)
    # all three, in order
    assert len(calls) == 3 and all(f"-m {m}" in c for m, c in zip(PASSES, calls, strict=False)), calls
    assert (r.returncode != 0) == bool(fail), (r.returncode, r.stdout)
    tail = r.stdout[r.stdout.index("summary\n"):]
    lines = [ln.strip() for ln in tail.splitlines()[1:4]]
    for k, (m, ln) in enumerate(zip(PASSES, lines, strict=False)):  # each pass's own summary line, in pass order
        if m in fail:
            assert f"{k + 1} failed, {10 * (k + 1)} passed in 1.0s (exit 1; wall 0 min 0" in ln, ln
        else:
            assert f"3 passed, 1 skipped in 0.5s ({m}) (exit 0; wall 0 min 0" in ln, ln
    assert ("FAILED" in tail) == bool(fail) and ("all three runs passed" in tail) == (not fail)


def test_arguments_make_one_run_with_them(tmp_path):
    calls = tmp_path / "calls.txt"
    fake = tmp_path / "fake.sh"
    fake.write_text(f"#!/usr/bin/env bash\nprintf '%s\\n' \"$*\" >> {shlex.quote(str(calls))}\nexit 3\n")
    fake.chmod(0o755)
    r = _script("-k", "x", "tests/test_a.py", runner=fake)
    assert r.returncode == 3  # its exit status is pytest's
    assert calls.read_text().splitlines() == ["-q -rs --durations=15 -k x tests/test_a.py"]


def test_each_pass_prints_its_wall_time_beside_its_summary_and_the_total_at_the_end(tmp_path):
    """The long pass's stand-in sleeps 2 s: its wall time says 2-3 s, the others 0-1 s, the total at least 2 s;
    each pass's line comes right after that pass's output, before the next pass starts."""
    import re

    r, calls = _run(tmp_path, set(), sleep_long=2)
    assert r.returncode == 0 and len(calls) == 3
    walls = [int(m) * 60 + int(s) for m, s in re.findall(r"\(exit 0; wall (\d+) min (\d\d) s\)", r.stdout)]
    assert len(walls) == 6, r.stdout  # after each pass, and again in the summary
    assert walls[:3] == walls[3:] and 2 <= walls[1] <= 3 and walls[0] <= 1 and walls[2] <= 1, walls
    total = re.search(r"the three passes: wall (\d+) min (\d\d) s", r.stdout)
    assert total and 2 <= int(total[1]) * 60 + int(total[2]) <= 5
    out = r.stdout
    for m in PASSES:  # a pass's line with its wall time comes before the next pass's output
        after = out.index(f"({m}) (exit 0; wall")
        assert out.index(f"({m})") < after < out.index("summary\n")
        out = out[after + 1:]


def _calls_with_workers(tmp_path: Path, workers: str | None) -> tuple[subprocess.CompletedProcess, list[str]]:
    calls = tmp_path / "calls.txt"
    fake = tmp_path / "fake.sh"
    fake.write_text(f"#!/usr/bin/env bash\nprintf '%s\\n' \"$*\" >> {shlex.quote(str(calls))}\necho '1 passed in "
                    "0.1s'\n")
    fake.chmod(0o755)
    env = {**os.environ, "TWINLAB_TEST_RUNNER": str(fake), "TWINLAB_RUFF": "true"}
    env.pop("TWINLAB_TEST_WORKERS", None)
    if workers is not None:
        env["TWINLAB_TEST_WORKERS"] = workers
    r = subprocess.run(["bash", str(ROOT / "scripts" / "test.sh")], capture_output=True, text=True, env=env, timeout=60)
    return r, calls.read_text().splitlines() if calls.exists() else []


def test_default_and_long_passes_run_on_two_workers_and_the_server_pass_file_by_file(tmp_path):
    r, calls = _calls_with_workers(tmp_path, None)
    assert r.returncode == 0 and len(calls) == 3, (r.stdout, r.stderr)
    assert all("-n 2 --dist load " in c for c in calls[:2]), calls
    assert "-n 2 --dist loadfile " in calls[2], calls[2]  # a file's tests on one worker: its server started once


def test_one_worker_runs_each_pass_in_one_process_and_a_bad_count_is_refused(tmp_path):
    r, calls = _calls_with_workers(tmp_path, "1")
    assert r.returncode == 0 and len(calls) == 3 and not any("-n " in c for c in calls), calls
    r, calls = _calls_with_workers(tmp_path / "x" if (tmp_path / "x").mkdir() is None else tmp_path, "two")
    assert r.returncode == 2 and not calls and "TWINLAB_TEST_WORKERS" in r.stderr, (r.returncode, r.stderr)


def test_ruff_runs_first_and_its_findings_fail_the_command_after_every_pass(tmp_path):
    """`ruff check .` runs before the passes; a finding fails the command, and the three passes still run."""
    lint_log = tmp_path / "ruff_calls.txt"
    ruff = tmp_path / "fake_ruff.sh"
    ruff.write_text(f"#!/usr/bin/env bash\nprintf '%s\\n' \"$*\" >> {shlex.quote(str(lint_log))}\n"
                    "echo 'x.py:1:1: F401 unused'; exit 1\n", encoding="utf-8")
    ruff.chmod(0o755)
    r, calls = _run(tmp_path, set(), ruff=str(ruff))
    assert lint_log.read_text(encoding="utf-8").splitlines() == ["check ."]
    assert r.stdout.index("F401 unused") < r.stdout.index("tests/test_x.py"), r.stdout  # before the first pass
    assert len(calls) == 3 and r.returncode == 1, (r.returncode, r.stdout)
    assert "FAILED:\x1b[0m lint" in r.stdout and "all three runs passed" not in r.stdout, r.stdout
