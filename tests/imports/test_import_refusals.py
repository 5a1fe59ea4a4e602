"""`twinlab import lakretz2021` refuses a FIFO or a device as its results table or a log at once
(reading one would wait for a writer forever, or never end)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _import(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "experiments.cli", "import", "lakretz2021", *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_results_that_are_not_regular_files_are_refused(tmp_path, kind):
    if kind == "fifo":
        results = tmp_path / "results.csv"
        os.mkfifo(results)
    else:
        results = Path("/dev/zero")
    r = _import("--results", str(results), "--out", str(tmp_path / "out"))
    assert r.returncode == 2, r.stderr
    assert str(results) in r.stderr and "not a regular" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()


def test_a_fifo_among_the_logs_is_refused(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    os.mkfifo(logs / "logLocalGlobalParadigm_2019Dec04_100619_Subj_21_sess_1.csv")
    r = _import("--logs", str(logs), "--out", str(tmp_path / "out"))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "not a regular" in r.stderr or "FIFO" in r.stderr, r.stderr
