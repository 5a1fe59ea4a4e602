"""The bundled task examples as the compiler serves them (no test-built trials): a 4-trial session of
each in PsychoPy under Xvfb and in Chromium through the real server (`create_app`, as `web serve`),
the same participant in both; every non-timing column of the rows must be equal."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from experiments.design_compiler import compile_sequence
from experiments.session import read_rows, session_paths
from experiments.spec import load_spec

sys.path.insert(0, str(Path(__file__).parent.parent / "support"))
sys.path.insert(0, str(Path(__file__).parent.parent))

pytestmark = [pytest.mark.browser, pytest.mark.gui, pytest.mark.slow, pytest.mark.long]
ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "experiments" / "specs"
KINDS = {"judgment": "acceptability_yesno", "choice": "minimal_pairs_2afc", "rating": "acceptability_rating",
         "lexical_decision": "lexical_decision", "self_paced_reading": "self_paced_reading", "completion": "cloze"}
FAST = dict(fixation_ms=150, word_ms=100, gap_ms=50, response_ms=1000, feedback_ms=150, iti_ms=80)
if not Path("/usr/bin/chromium").exists() or shutil.which("xvfb-run") is None:
    pytest.skip("needs Debian's chromium and xvfb-run", allow_module_level=True)


def copy_example(name: str, folder: Path) -> Path:
    """The bundled spec with its items file, short timings and one instruction page (what a lab copies)."""
    data = yaml.safe_load((SPECS / f"{name}.yaml").read_text(encoding="utf-8"))
    data["timing"] = {**data.get("timing", {}), **FAST}
    data["texts"]["instructions"] = data["texts"]["instructions"][:1]
    for b in data["blocks"]:  # block intros and breaks are pages `play` does not answer (tested elsewhere)
        b.pop("intro_text", None)
        b["break_after"] = False
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SPECS / data["design"]["file"], folder / data["design"]["file"])
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


@pytest.mark.parametrize("kind", list(KINDS))
def test_compiled_example_gives_equal_rows_in_psychopy_and_chromium(browser, kind, tmp_path):
    import uvicorn
    from task_server import free_port
    from test_web_tasks_browser import TIMING, play

    from participants.web.server import create_app

    spec = copy_example(KINDS[kind], tmp_path / "spec")
    exp = load_spec(spec)
    pid, n = "autopilot1", 4
    seq = compile_sequence(exp, pid)
    four = type(seq)(experiment=seq.experiment, subject_id=pid, seed=seq.seed, spec_hash=seq.spec_hash,
                     trials=seq.trials[:n])
    res = subprocess.run([sys.executable, str(ROOT / "tests" / "support" / "run_example_session.py"), str(spec),
                          str(tmp_path / "psychopy"), pid, str(n)], cwd=ROOT, capture_output=True, text=True,
                         timeout=240, env={**os.environ, "PYTHONPATH": str(ROOT)},
                         ) if os.environ.get("DISPLAY") else subprocess.run(
        ["xvfb-run", "-a", "-s", "-screen 0 1280x1024x24", sys.executable,
         str(ROOT / "tests" / "support" / "run_example_session.py"), str(spec), str(tmp_path / "psychopy"), pid,
         str(n)],
        cwd=ROOT, capture_output=True, text=True, timeout=240, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert res.returncode == 0, res.stderr[-3000:]
    psy = read_rows(session_paths(tmp_path / "psychopy", exp.name, pid, 1)[0])

    app = create_app(exp, tmp_path / "web", trials=n)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            time.sleep(0.05)
        ctx = browser.new_context(viewport={"width": 1024, "height": 768})
        page = ctx.new_page()
        play(page, f"http://127.0.0.1:{port}", kind, exp, four, pid=pid, click_trial=None, tap=False,
             shots=tmp_path / "shots", prefix="")
        ctx.close()
    finally:
        server.should_exit = True
        thread.join(10)
    web = read_rows(session_paths(tmp_path / "web", exp.name, pid, 1)[0])
    assert len(psy) == len(web) == n
    assert [r["item_id"] for r in psy] == [t.item_id for t in four]
    assert {r["task"] for r in psy} == {kind} and all(r["item"] and r["list"] for r in psy)
    for a, b in zip(psy, web, strict=False):
        differ = {c: (a[c], b[c]) for c in a if c not in TIMING and a[c] != b.get(c)}
        assert not differ, differ
