"""The tutorial "Your first study" (docs/tutorial/first-study.md), run as written.

Its blocks become one bash script, in order: a block titled with a file name (```yaml title="study.yaml"```) is
written to that file, a ```bash block is run; ```sh (the one-time set-up, which this test's environment
stands in for) and ```text (output shown to the reader) are not run. `twinlab` is this checkout's CLI and
`python` this interpreter; the only change to the text is the server's port (8000 -> a free one).
The quick test runs the blocks before the browser part (new, the files, validate, plan) in the default pass;
the long one runs the whole page (people in Chromium, model subjects, replay, analyze, power: about 3-4
minutes on 2 cores) and checks its outputs against counts made here from the session files.
"""
from __future__ import annotations

import csv
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "tutorial" / "first-study.md"
CHROMIUM = "/usr/bin/chromium"
FENCE = re.compile(r"^```(\w+)?(?:\s+title=\"([^\"]+)\")?\s*\n(.*?)^```\s*$", re.M | re.S)


def blocks() -> list[tuple[str, str | None, str]]:
    """(language, file title or None, body) of every fenced block of the page, in order."""
    return [(m.group(1) or "", m.group(2), m.group(3)) for m in FENCE.finditer(PAGE.read_text(encoding="utf-8"))]


def script(until: str | None = None, port: int = 8000) -> str:
    """The page's blocks as one bash script; `until`: stop before the first bash block containing it."""
    parts = ["set -euo pipefail"]
    for lang, title, body in blocks():
        if title:
            marker = "TWINLAB_TUTORIAL_EOF"
            assert marker not in body
            parts.append(f"cat > {title} <<'{marker}'\n{body}{marker}")
        elif lang == "bash":
            if until and until in body:
                break
            parts.append(body.replace("8000", str(port)))
        else:
            assert lang in ("sh", "text"), f"a block the test does not know how to run: ```{lang}"
    return "\n".join(parts) + "\n"


def shims(tmp: Path) -> dict[str, str]:
    """An environment in which `twinlab` and `python` are this checkout's CLI and this interpreter."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    (bin_dir / "twinlab").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m experiments.cli "$@"\n')
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    return dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1",
                TRANSFORMERS_OFFLINE="1", COLUMNS="200")


def run_script(text: str, tmp: Path, timeout: float) -> subprocess.CompletedProcess:
    work = tmp / "work"
    work.mkdir()
    (tmp / "tutorial.sh").write_text(text, encoding="utf-8")
    proc = subprocess.Popen(["bash", str(tmp / "tutorial.sh")], cwd=work, env=shims(tmp), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:  # the background server of a block that failed halfway
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_page_has_the_steps_the_tutorial_promises():
    text = PAGE.read_text(encoding="utf-8")
    runnable = "\n".join(body for lang, title, body in blocks() if lang == "bash")
    for step in ("twinlab new plausibility", "twinlab validate", "twinlab web serve", "python pilot.py",
                 "--context none", "--context running", "--replay people", "twinlab analyze", "twinlab power"):
        assert step in runnable, step
    assert "sync_playwright" in text and [t for _, t, _ in blocks() if t] == ["items.csv", "study.yaml", "pilot.py"]


def test_the_tutorial_study_is_written_and_validates(tmp_path):
    """The first part as written: `twinlab new`, the items and the spec, validate, plan (seconds)."""
    res = run_script(script(until="twinlab web serve"), tmp_path, timeout=300)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    said = res.stdout + res.stderr
    assert "block practice: 4 trials" in said and "block test: 10 trials" in said and "10 items x 2 conditions" in said
    assert "trials=14 list=2/2" in said  # plan --subject S02: the second list
    folder = tmp_path / "work" / "plausibility"
    assert {p.name for p in folder.iterdir()} >= {"study.yaml", "items.csv", "README.md"}


@pytest.mark.long
@pytest.mark.slow
@pytest.mark.model
@pytest.mark.browser
@pytest.mark.untimed  # no response deadline: the pilot waits for each screen before it presses a key
def test_the_whole_tutorial_runs_as_written(tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Debian's chromium is not installed ({CHROMIUM})")
    pytest.importorskip("playwright.sync_api")
    res = run_script(script(port=free_port()), tmp_path, timeout=1200)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-4000:]
    folder = tmp_path / "work" / "plausibility"
    assert "P01 finished" in res.stdout and "P02 finished" in res.stdout

    def rows(sub: str) -> list[dict[str, str]]:
        return [r for p in sorted((folder / sub / "data").glob("*_data.csv")) for r in csv.DictReader(open(p))]

    people = rows("people")
    assert len(people) == 28 and {r["subject_kind"] for r in people} == {"human"}
    assert [r["block"] for r in people[:14]] == ["practice"] * 4 + ["test"] * 10
    slips = {"P01": {"3", "7", "10"}, "P02": {"2", "5", "6", "9"}}  # the pilot's, as on the page
    for r in people:  # what the page recorded is what the pilot pressed
        item = r["item"] if r["block"] == "test" else ""
        assert (r["correct"] == "True") == (item not in slips[r["subject_id"]]), r
    lists = {r["subject_id"]: r["list"] for r in people}
    assert lists == {"P01": "1", "P02": "2"}
    for sub in ("models-none", "models-running", "replay"):
        assert len(rows(sub)) == 28, sub
    # the hand count of the page, done again here: accuracy per condition equals the report's
    report = {r["plausibility"]: float(r["rate"])
              for r in csv.DictReader(open(folder / "report" / "tables" / "rates_by_factor_long.csv"))
              if r["group"] == "human"}
    for level in ("plausible", "implausible"):
        mine = [r["correct"] == "True" for r in people if r["block"] == "test" and r["plausibility"] == level]
        assert len(mine) == 10 and report[level] == pytest.approx(sum(mine) / 10)
    assert (folder / "report" / "report.html").is_file()
    power = list(csv.DictReader(open(folder / "power" / "tables" / "power.csv")))
    assert [int(r["subjects"]) for r in power] == [8, 24] and all(0 <= float(r["power"]) <= 1 for r in power)
