"""The bundled `cloze` in Debian's Chromium against the real server, answered as people type: the target
capitalised and followed by a period ("Bread."), or an accepted variant with spaces around it. Every
trial must be scored correct, and the page's feedback (from the rule the compiled trial carries) must
agree with the server's scoring, which refuses a trial whose feedback text differs (a mismatch would
stop the session)."""
from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path

import pytest
import yaml

from experiments.design_compiler import compile_sequence
from experiments.session import read_rows, session_paths
from experiments.spec import bundled_spec_path, load_spec

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.long]
CHROMIUM = "/usr/bin/chromium"
if not Path(CHROMIUM).exists():
    pytest.skip(f"Debian's chromium is not installed ({CHROMIUM})", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")


def cloze_with_feedback(tmp: Path) -> Path:
    src = bundled_spec_path("cloze")
    data = yaml.safe_load(src.read_text(encoding="utf-8"))
    for b in data["blocks"]:
        b["feedback"] = True  # the page then scores every answer itself, and the server checks its verdict
    data["timing"] = {**data.get("timing", {}), "feedback_ms": 200, "iti_ms": 100, "fixation_ms": 200}
    shutil.copyfile(src.parent / data["design"]["file"], tmp / data["design"]["file"])
    p = tmp / "cloze.yaml"
    p.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return p


def test_cloze_in_chromium_people_typing_bread_with_a_period_are_correct(tmp_path):
    import uvicorn

    from participants.web.server import create_app
    from tests.support.task_server import free_port

    spec = cloze_with_feedback(tmp_path)
    exp = load_spec(spec)
    pid = "p01"
    seq = compile_sequence(exp, pid, exp.seed)
    out = tmp_path / "web"
    app = create_app(exp, out)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    time.sleep(1.5)
    typed: list[str] = []
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1024, "height": 768})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"http://127.0.0.1:{port}/?participant={pid}")
            page.wait_for_function("() => (document.body.dataset.screen || '').startsWith('instructions')",
                                   timeout=30_000)
            for _ in range(6):  # the instruction pages
                if not (page.evaluate("() => document.body.dataset.screen || ''")).startswith("instructions"):
                    break
                page.wait_for_timeout(400)
                page.keyboard.press(" ")
            for k, t in enumerate(seq):
                page.wait_for_function(f"() => {{ const s = document.querySelector('.tl-stage'); return !!s && "
                                       f"+s.dataset.trial === {t.trial_index} && s.dataset.screen === 'completion'; }}",
                                       timeout=20_000)
                acc = list(t.mat.get("accepted") or ())
                word = acc[0] if (k % 2 and acc) else t.mat["target"]
                # as people type: Shift for the capital (the key name is the letter), a final period,
                # or spaces around an accepted variant
                text = (word[0].upper() + word[1:] + ".") if k % 2 == 0 else f" {word} "
                typed.append(text)
                page.wait_for_timeout(100)
                page.keyboard.type(text, delay=30)
                page.keyboard.press("Enter")
            page.wait_for_function("() => document.body.dataset.screen === 'end'", timeout=30_000)
            browser.close()
        assert not errors, errors
    finally:
        server.should_exit = True
        thread.join(10)
    rows = read_rows(session_paths(out, exp.name, pid, 1)[0])
    assert len(rows) == len(seq) >= 8
    assert [r["correct"] for r in rows] == ["True"] * len(rows), [(r["response_text"], r["correct"]) for r in rows]
    assert any(r["response_text"].endswith(".") for r in rows)  # the period really reached the server
    fb = [json.loads(r["extra"]).get("feedback_onset_ms") for r in rows]
    assert all(x is not None for x in fb)  # feedback shown on every trial, and the server agreed with it
    texts = {r["feedback_text"] for r in rows}
    assert len(texts) == 1 and next(iter(texts)), texts  # one text, the correct one, on every trial
