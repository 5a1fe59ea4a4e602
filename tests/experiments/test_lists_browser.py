"""`?list=N` in Chromium: the served page sends it and the server takes it (or refuses it: 1..L), the built
site (JATOS, a static host) refuses a list it does not have before anything starts."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.session import session_paths
from tests.web_support import CHROMIUM, CHROMIUM_ARGS, ROOT, free_port, start_server, stop

pytestmark = [pytest.mark.browser, pytest.mark.slow]
if not Path(CHROMIUM).exists():
    pytest.skip(f"Debian's chromium is not installed ({CHROMIUM})", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")
SPEC = ROOT / "experiments" / "specs" / "agreement_attraction.yaml"
NAME = "agreement_attraction"


@pytest.fixture()
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _screen(page, names: tuple[str, ...], timeout: float = 20_000) -> str:
    page.wait_for_function(f"() => {json.dumps(list(names))}.some((n) => (document.body.dataset.screen || '')"
                           ".startsWith(n))", timeout=timeout)
    return page.evaluate("() => document.body.dataset.screen")


def test_served_page_sends_the_list_and_the_server_checks_it(browser, tmp_path):
    out = tmp_path / "data_root"
    proc, url = start_server(SPEC, out)
    page = browser.new_page()
    try:
        page.goto(f"{url}/?participant=abcdef&session=1&list=3")
        assert _screen(page, ("instructions", "block_intro", "trial")) != "error"
        meta = json.loads(session_paths(out, NAME, "abcdef", 1)[1].read_text())
        assert meta["design"]["list"] == 3 and meta["list_assignment"] == {
            "method": "given", "list": 3, "by": "the page's list URL parameter (?list=N)"}
        page.goto(f"{url}/?participant=ghijkl&session=1")  # no list: the least-filled one (list 1: 0 there)
        _screen(page, ("instructions", "block_intro", "trial"))
        meta = json.loads(session_paths(out, NAME, "ghijkl", 1)[1].read_text())
        assert meta["design"]["list"] == 1 and meta["list_assignment"]["method"] == "least_filled"
        assert meta["list_assignment"]["counts_before"]["3"] == 1
        for bad in ("9", "two"):
            page.goto(f"{url}/?participant=mnop{bad}&session=1&list={bad}")
            assert _screen(page, ("error", "message", "refused")) in ("error", "message", "refused")
            assert "from 1 to 8" in page.inner_text("body")
            assert not session_paths(out, NAME, f"mnop{bad}", 1)[1].exists()
    finally:
        stop(proc)


def test_built_site_refuses_a_list_it_does_not_have(browser, tmp_path):
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "experiments.cli", "web", "build", str(SPEC), "--out", str(site),
                    "--slots", "4"],
                   check=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True)
    port = free_port()
    http = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"], cwd=site,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    page = browser.new_page()
    try:
        import httpx

        for _ in range(50):
            try:
                httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
                break
            except httpx.HTTPError:
                page.wait_for_timeout(100)
        texts = {}
        for q in ("list=9", "list=6", "list=2"):  # 9: no such list; 6: a list no slot of 4 reads; 2: slot web002
            page.goto(f"http://127.0.0.1:{port}/index.html?PROLIFIC_PID=P77&{q}")
            texts[q] = (_screen(page, ("error", "message", "instructions", "block_intro")), page.inner_text("body"))
    finally:
        http.terminate()
        http.wait()
    assert "lists 1 to 8" in texts["list=9"][1] and texts["list=9"][0] != "instructions"
    assert "no slot of this build reads it" in texts["list=6"][1]
    assert texts["list=2"][0].startswith(("instructions", "block_intro"))
