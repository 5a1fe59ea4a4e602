"""The browser runner in Debian's Chromium (headless, Playwright): whole sessions as a participant does them.

Each test starts the real server (`twinlab web serve`) or a plain static file server in its own
process and drives real pages: key presses and mouse clicks through Chromium's input pipeline,
a reload in the middle of a session, a timeout, early presses. Screenshots of every screen are
saved (into TWINLAB_WEB_SCREENSHOTS when set, e.g. docs/screenshots/web).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from experiments.design_compiler import compile_sequence
from experiments.schema import COLUMN_NAMES
from experiments.session import read_rows, session_paths
from experiments.spec import load_spec

try:  # the repository root, or tests/, is on sys.path
    from tests.web_support import CHROMIUM, CHROMIUM_ARGS, ROOT, free_port, italian_spec, key_spec, start_server, stop
except ModuleNotFoundError:
    from web_support import CHROMIUM, CHROMIUM_ARGS, ROOT, free_port, italian_spec, key_spec, start_server, stop

pytestmark = [pytest.mark.browser, pytest.mark.slow]
if not Path(CHROMIUM).exists():
    pytest.skip(f"Debian's chromium is not installed ({CHROMIUM}); scripts/setup.sh installs it",
                allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")

PAGES = ("instructions", "block_intro", "break", "resume")


@pytest.fixture()
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


class Shots:
    def __init__(self, page, folder: Path, prefix: str = ""):
        self.page, self.folder, self.taken, self.prefix = page, folder, {}, prefix
        folder.mkdir(parents=True, exist_ok=True)

    def __call__(self, name: str) -> None:
        if name not in self.taken:
            path = self.folder / f"{self.prefix}{name}.png"
            self.page.screenshot(path=str(path))
            self.taken[name] = path

    def publish(self) -> None:
        target = os.environ.get("TWINLAB_WEB_SCREENSHOTS")
        if target:
            Path(target).mkdir(parents=True, exist_ok=True)
            for path in self.taken.values():
                shutil.copyfile(path, Path(target) / path.name)


def screen(page) -> str:
    return page.evaluate("() => document.body.dataset.screen || ''")


def advance_pages(page, shots: Shots | None = None, timeout: float = 15_000) -> str:
    """Press SPACE through text pages until a trial (or the end) is on screen; returns that screen."""
    while True:
        page.wait_for_function("() => ['trial','end','already_done','message','refused','error'].includes("
                               "document.body.dataset.screen) || /^(instructions|block_intro|break|resume)/.test("
                               "document.body.dataset.screen || '')", timeout=timeout)
        s = screen(page)
        if not s.startswith(PAGES):
            return s
        if shots is not None:
            shots(s.split("_")[0] if s.startswith("instructions") else s)
        page.wait_for_timeout(350)  # a participant reads; presses right at onset are not what we test
        page.keyboard.press(" ")
        page.wait_for_function(f"() => document.body.dataset.screen !== {json.dumps(s)}", timeout=timeout)


def reach(page, trial: int, step: int, timeout: float = 15_000) -> None:
    """Wait until trial `trial` is at or past `step` (the plugin's screen counter: 0 fixation, 1 + 2j unit j,
    2 + 2j the blank after it, then panel fixation, panel (or the go/no-go prompt), feedback, blank)."""
    page.wait_for_function(f"() => {{ const s = document.querySelector('.tl-stage'); return !!s && "
                           f"+s.dataset.trial === {trial} && +s.dataset.k >= {step}; }}", timeout=timeout)


def unit_step(j: int) -> int:
    return 1 + 2 * j


def after_units(n: int, k: int) -> int:
    """The k-th screen after the last of n units' blank (0: panel fixation or prompt, 1: panel, ...)."""
    return 1 + 2 * n + k


def colour_share(path: Path, rgb: tuple[int, int, int]) -> float:
    im = np.asarray(Image.open(path).convert("RGB")).astype(int)
    return float((np.abs(im - np.array(rgb)).sum(axis=2) < 60).mean())


@pytest.mark.long
def test_a_whole_italian_session_with_keys_clicks_early_presses_a_timeout_and_a_reload(browser, tmp_path):
    spec = italian_spec(tmp_path, trials=6, instructions=2, fixation_ms=400, word_ms=300, gap_ms=150,
                        panel_delay_ms=400, response_ms=2000, feedback_ms=600, iti_ms=100)
    exp = load_spec(spec)
    out = tmp_path / "data"
    proc, url = start_server(spec, out)
    ctx = browser.new_context(viewport={"width": 1024, "height": 768})
    page = ctx.new_page()
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
    shots = Shots(page, tmp_path / "shots")
    link = f"{url}/?PROLIFIC_PID=P07&STUDY_ID=st1&SESSION_ID=se1"
    seq = compile_sequence(exp, "P07", None, session=1)
    # (panel answer, how, early press at unit)
    plan = {0: ("violation", "key", 2), 1: ("no_violation", "mouse", None), 2: (None, None, None),
            3: ("no_violation", "key", None), 4: ("violation", "mouse", None), 5: ("violation", "key", None)}
    try:
        page.goto(link)
        for i in range(6):
            if i == 4:  # a reload between trials: the session continues at trial 4 with the resume page
                reach(page, 4, 0)
                page.reload()
                assert advance_pages(page, shots) == "trial"
            else:
                assert advance_pages(page, shots) == "trial"
            answer, how, early = plan[i]
            ci, n = seq[i].study_record.critical_index, len(seq[i].words)
            reach(page, i, 0)
            shots("fixation")
            if early is not None:
                reach(page, i, unit_step(early))
                page.keyboard.press("f")
            reach(page, i, unit_step(ci))
            shots("word")
            reach(page, i, after_units(n, 0))
            shots("panel_fixation")
            reach(page, i, after_units(n, 1))
            shots("response_panel")
            page.wait_for_timeout(150)
            if how == "key":
                page.keyboard.press("f" if answer == "violation" else "j")
            elif how == "mouse":
                page.click(f".tl-box[data-answer={answer}]")
            reach(page, i, after_units(n, 2), timeout=5000)
            correct = None if answer is None else answer == seq[i].study_record.correct_response
            shots("feedback_" + ("no_response" if correct is None else "correct" if correct else "incorrect"))
        page.wait_for_function("() => document.body.dataset.screen === 'end'", timeout=15_000)
        shots("end")
        assert page.get_attribute("a.tl-return", "href") == "https://example.org/complete?cc=C0DE42"
        assert "C0DE42" in page.inner_text("body")
        page.reload()  # a finished session is not restarted
        page.wait_for_function("() => document.body.dataset.screen === 'already_done'", timeout=15_000)
        shots("already_done")
        assert "già stata completata" in page.inner_text("body")
    finally:
        stop(proc)
        shots.publish()
    assert not [c for c in console if "Content Security Policy" in c or "Uncaught" in c]
    rows = read_rows(session_paths(out, exp.name, "P07", 1)[0])
    assert list(rows[0]) == COLUMN_NAMES
    assert [int(r["trial_index"]) for r in rows] == list(range(6))  # once each, across the reload
    for i, row in enumerate(rows):
        assert {k: row[k] for k in seq[i].to_row()} == {
            k: "" if v is None else str(v) for k, v in seq[i].to_row().items()}
        answer, how, early = plan[i]
        extra = json.loads(row["extra"])
        assert row["response"] == (answer or "none")
        assert extra["answered_by"] == (None if how is None else "key:" + ("f" if answer == "violation" else "j")
                                        if how == "key" else "mouse")
        if answer is None:
            assert row["correct"] == "" and row["rt_ms"] == "" and row["feedback_text"] == "Troppo lento!"
        else:
            assert row["correct"] == str(answer == seq[i].study_record.correct_response)
            assert row["feedback_text"] == (
                "Corretto!" if answer == seq[i].study_record.correct_response else "Sbagliato!")
            assert 150 <= float(row["rt_ms"]) < 2000  # we waited 150 ms after the panel was seen
        if early is not None:
            assert row["early_response"] == "violation" and int(row["early_response_unit"]) in (early, early + 1)
            onsets = json.loads(row["word_onsets_ms"])
            assert onsets[early] - onsets[0] <= float(row["early_response_ms"]) <= onsets[-1] - onsets[0] + 300
        else:
            assert row["early_response"] == ""
        # frames: each unit 18 frames (300 ms), each onset on its intended frame in a quiet headless run
        assert extra["word_frames"] == 18 and abs(extra["frame_ms"] - 1000 / 60) < 0.5
        errors = extra["onset_frame_errors"]
        assert len(errors) == len(seq[i].words) and min(errors) >= 0
        durations = json.loads(row["word_durations_ms"])
        assert sum(abs(d - 300) < 9 for d in durations) >= 0.8 * len(durations)
    all_errors = [e for r in rows for e in json.loads(r["extra"])["onset_frame_errors"]]
    assert sum(e == 0 for e in all_errors) >= 0.9 * len(all_errors)
    meta = json.loads(session_paths(out, exp.name, "P07", 1)[1].read_text())
    assert meta["status"] == "completed" and meta["participant_info"]["STUDY_ID"] == "st1"
    assert any(r.get("reload") for r in meta["resumes"]) and abs(meta["runs"][0]["client"]["refresh"]["hz"] - 60) < 2
    # every duration here is a whole number of frames at 60 Hz: no rounding warning (a loaded machine
    # may add "frame intervals are irregular")
    assert not [w for w in meta["runs"][0]["client"]["warnings"] if " frames = " in w]
    # screenshots: what the participant saw
    assert colour_share(shots.taken["feedback_correct"], (0, 128, 0)) > 0.001
    assert colour_share(shots.taken["feedback_correct"], (255, 0, 0)) == 0
    assert colour_share(shots.taken["feedback_incorrect"], (255, 0, 0)) > 0.001
    assert colour_share(shots.taken["response_panel"], (242, 242, 242)) > 0.05  # the two answer boxes


def test_go_no_go_keys_in_chromium(browser, tmp_path):
    spec = key_spec(tmp_path, word_ms=200, gap_ms=100, response_ms=900, feedback_ms=300)
    exp = load_spec(spec)
    out = tmp_path / "data"
    proc, url = start_server(spec, out, "--trials", "3")
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    shots = Shots(page, tmp_path / "shots_key", prefix="key_")
    seq = compile_sequence(exp, "K01", None, session=1)
    try:
        page.goto(f"{url}/?participant=K01")
        for i in range(3):
            assert advance_pages(page, shots) == "trial"
            ci, n = seq[i].study_record.critical_index, len(seq[i].words)
            if i == 0:  # a press on the critical word, during the sentence
                reach(page, i, unit_step(ci))
                page.keyboard.press(" ")
            elif i == 2:  # a press at the prompt
                reach(page, i, after_units(n, 0))
                shots("prompt")
                page.keyboard.press(" ")
            reach(page, i, after_units(n, 1), timeout=6000)
        page.wait_for_function("() => document.body.dataset.screen === 'end'", timeout=15_000)
    finally:
        stop(proc)
        shots.publish()
    rows = read_rows(session_paths(out, exp.name, "K01", 1)[0])
    assert [r["response"] for r in rows] == ["violation", "no_violation", "violation"]
    assert [r["response_mode"] for r in rows] == ["key"] * 3
    phases = [json.loads(r["extra"])["response_phase"] for r in rows]
    assert phases == ["sentence", None, "response"]
    assert 0 <= float(rows[0]["rt_ms"]) < 300 and float(rows[0]["rt_sentence_end_ms"]) < 0
    assert float(rows[2]["rt_sentence_end_ms"]) > 100
    for r, t in zip(rows, seq, strict=False):
        assert r["correct"] == str(r["response"] == t.study_record.correct_response)


def test_the_built_site_runs_from_a_plain_static_server_with_no_network(browser, tmp_path):
    spec = italian_spec(tmp_path, trials=2)
    exp = load_spec(spec)
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "experiments.cli", "web", "build", str(spec), "--out", str(site),
                    "--slots", "4"], check=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                   capture_output=True)
    port = free_port()
    http = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"], cwd=site,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    page = browser.new_page()
    outside: list[str] = []

    def only_local(route):
        if route.request.url.startswith(f"http://127.0.0.1:{port}/"):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only_local)
    try:
        import httpx

        for _ in range(50):
            try:
                httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
                break
            except httpx.HTTPError:
                page.wait_for_timeout(100)
        page.goto(f"http://127.0.0.1:{port}/index.html?PROLIFIC_PID=P05&slot=2")
        for i in range(2):
            assert advance_pages(page) == "trial"
            n = len(compile_sequence(exp, "web002", None, session=1)[i].words)
            reach(page, i, after_units(n, 1))
            page.keyboard.press("j")
            reach(page, i, after_units(n, 2))
        page.wait_for_function("() => document.body.dataset.screen === 'end'", timeout=15_000)
        records = page.evaluate("() => JSON.parse(localStorage.getItem('twinlab:' + "
                                f"{json.dumps(exp.name)} + ':P05:1:results'))")
        assert page.get_attribute("a.tl-download", "download").endswith("_P05_session-1.jsonl")
        exports = {"csv": page.evaluate("() => twinlabJsPsych.data.get().csv()"),
                   "json": page.evaluate("() => twinlabJsPsych.data.get().json()")}
    finally:
        http.terminate()
        http.wait()
    assert outside == []
    ref = compile_sequence(exp, "web002", None, session=1)
    assert [r["sequence_hash"] for r in records] == [ref.sequence_hash] * 2
    assert [r["slot_subject_id"] for r in records] == ["web002"] * 2
    assert [r["result"]["item_id"] for r in records] == [t.item_id for t in ref.trials[:2]]
    assert [r["result"]["response"] for r in records] == ["no_violation"] * 2
    # what the hosts save, imported: the page's JSON lines (JATOS result data / the download) and
    # jsPsych's own CSV and JSON exports (Pavlovia, JATOS) give the same verified session
    (tmp_path / "jatos.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (tmp_path / "pavlovia.csv").write_text(exports["csv"])
    (tmp_path / "jspsych.json").write_text(exports["json"])
    tables = {}
    for name in ("jatos.jsonl", "pavlovia.csv", "jspsych.json"):
        dest = tmp_path / f"imported_{name.split('.')[0]}"
        r = subprocess.run([sys.executable, "-m", "experiments.cli", "import", "web", str(tmp_path / name), "--spec",
                            str(spec), "--out", str(dest)], cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        rows = read_rows(session_paths(dest, exp.name, "P05", 1)[0])
        tables[name] = [{k: v for k, v in row.items() if k != "extra"} for row in rows]
    assert tables["jatos.jsonl"] == tables["pavlovia.csv"] == tables["jspsych.json"]
    rows = tables["jatos.jsonl"]
    assert [r["item_id"] for r in rows] == [t.item_id for t in ref.trials[:2]]
    assert [r["response"] for r in rows] == ["no_violation"] * 2 and rows[0]["subject_id"] == "P05"
    meta = json.loads(session_paths(tmp_path / "imported_jatos", exp.name, "P05", 1)[1].read_text())
    assert meta["status"] == "completed" and meta["slot_subject_id"] == "web002"


def test_three_real_pages_and_seventeen_http_participants_at_once(browser, tmp_path):
    """20 participants on one server for a bounded time: 3 in Chromium (own contexts), 17 as HTTP clients."""
    import threading

    try:
        from tests.web_support import http_participant
    except ModuleNotFoundError:
        from web_support import http_participant

    spec = italian_spec(tmp_path, trials=5, response_ms=20_000)  # each panel waits for its answer
    exp = load_spec(spec)
    out = tmp_path / "data"
    proc, url = start_server(spec, out)
    state = {"url": url}
    pids = [f"H{k:02d}" for k in range(17)]
    seqs = {p: compile_sequence(exp, p, None) for p in pids + ["B0", "B1", "B2"]}
    acked: dict[str, set] = {p: set() for p in pids}
    errors: list[str] = []
    threads = [threading.Thread(target=http_participant, args=(state, p, seqs[p], exp, acked[p], errors, 90))
               for p in pids]
    pages = []
    try:
        for k in range(3):
            page = browser.new_context().new_page()
            page.goto(f"{url}/?participant=B{k}")
            pages.append(page)
        for t in threads:
            t.start()
        # the pages answer in turn; each trial waits for its panel, so they run side by side
        done = [0, 0, 0]
        for _ in range(5):
            for k, page in enumerate(pages):
                assert advance_pages(page) == "trial"
                n = len(seqs[f"B{k}"][done[k]].words)
                reach(page, done[k], after_units(n, 1), timeout=30_000)
                page.keyboard.press("f" if k % 2 else "j")
                reach(page, done[k], after_units(n, 2), timeout=10_000)
                done[k] += 1
        for page in pages:
            page.wait_for_function("() => document.body.dataset.screen === 'end'", timeout=30_000)
        for t in threads:
            t.join(90)
    finally:
        stop(proc)
    assert not errors
    for p in pids + ["B0", "B1", "B2"]:
        rows = read_rows(session_paths(out, exp.name, p, 1)[0])
        assert [int(r["trial_index"]) for r in rows] == list(range(5)), p
        assert [r["item_id"] for r in rows] == [t.item_id for t in seqs[p].trials[:5]], p
    assert [r["response"] for r in read_rows(session_paths(out, exp.name, "B1", 1)[0])] == ["violation"] * 5


@pytest.mark.gui
def test_rows_match_a_psychopy_session_of_the_same_participant_and_seed(browser, tmp_path):
    """The same participant id and seed in PsychoPy (autopilot, Xvfb) and in Chromium: same sequence, same
    columns filled, the same `extra` fields (besides each runner's own)."""
    try:
        from tests.participants.test_participants_gui import run_session
    except ModuleNotFoundError:
        from test_participants_gui import run_session

    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed")
    spec = italian_spec(tmp_path, trials=3)
    exp = load_spec(spec)
    pid = "autopilot1"
    # PsychoPy, on a private Xvfb display
    import select
    import time as _time

    r_fd, w_fd = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(w_fd), "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
                            pass_fds=(w_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(w_fd)
    buf, t0 = b"", _time.monotonic()
    while b"\n" not in buf and _time.monotonic() - t0 < 20:
        if select.select([r_fd], [], [], 0.2)[0]:
            buf += os.read(r_fd, 64)
    os.close(r_fd)
    try:
        done = run_session(":" + buf.decode().strip(), str(spec), "--autopilot", "-p", pid, "--trials", "3",
                           "--out", str(tmp_path / "psychopy"))
        assert done.returncode == 0, done.stderr[-2000:]
    finally:
        xvfb.terminate()
        xvfb.wait(10)
    # the browser
    proc, url = start_server(spec, tmp_path / "web")
    page = browser.new_page()
    seq = compile_sequence(exp, pid, None)
    try:
        page.goto(f"{url}/?participant={pid}")
        for i in range(3):
            assert advance_pages(page) == "trial"
            reach(page, i, after_units(len(seq[i].words), 1))
            page.keyboard.press("f" if seq[i].study_record.correct_response == "violation" else "j")
            reach(page, i, after_units(len(seq[i].words), 2))
        page.wait_for_function("() => document.body.dataset.screen === 'end'", timeout=15_000)
    finally:
        stop(proc)
    psy = read_rows(session_paths(tmp_path / "psychopy", exp.name, pid, 1)[0])
    web = read_rows(session_paths(tmp_path / "web", exp.name, pid, 1)[0])
    assert list(psy[0]) == list(web[0]) == COLUMN_NAMES
    same = list(seq[0].to_row()) + ["subject_id", "subject_kind", "session", "experiment", "spec_hash",
                                    "sequence_hash", "context_mode", "response_mode", "feedback_shown"]
    assert [{k: r[k] for k in same} for r in psy] == [{k: r[k] for k in same} for r in web]
    filled = lambda rows: {c for c in COLUMN_NAMES if all(r[c] != "" for r in rows)}  # noqa: E731
    assert filled(psy) - {"early_response", "early_response_unit", "early_response_ms"} == \
        filled(web) - {"early_response", "early_response_unit", "early_response_ms"}
    psy_extra = set().union(*(json.loads(r["extra"]) for r in psy))
    web_extra = set().union(*(json.loads(r["extra"]) for r in web))
    assert psy_extra - {"flip_latency_ms", "autopilot", "data_kind"} <= web_extra


def test_a_display_off_the_expected_refresh_rate_is_refused_before_anything_is_written(browser, tmp_path):
    spec = italian_spec(tmp_path, trials=2)
    import yaml

    data = yaml.safe_load(spec.read_text())
    data["timing"]["expected_refresh_hz"] = 144.0  # headless Chromium paints at 60 Hz
    spec.write_text(yaml.safe_dump(data, allow_unicode=True))
    exp = load_spec(spec)
    proc, url = start_server(spec, tmp_path / "data")
    page = browser.new_page()
    try:
        page.goto(f"{url}/?participant=P09")
        page.wait_for_function("() => document.body.dataset.screen === 'refused'", timeout=15_000)
        text = page.inner_text("body")
    finally:
        stop(proc)
    assert "144" in text and "60." in text and "Il tuo schermo" in text
    assert not session_paths(tmp_path / "data", exp.name, "P09", 1)[0].exists()


def test_touch_taps_answer_the_panel_and_turn_the_pages(browser, tmp_path):
    spec = italian_spec(tmp_path, trials=2, word_ms=246)  # the release's 246 ms: 15 frames = 250 ms at 60 Hz
    exp = load_spec(spec)
    proc, url = start_server(spec, tmp_path / "data")
    ctx = browser.new_context(has_touch=True, is_mobile=True, viewport={"width": 900, "height": 600})
    page = ctx.new_page()
    seq = compile_sequence(exp, "T01", None)
    try:
        page.goto(f"{url}/?participant=T01")
        for i in range(2):
            page.wait_for_function("() => /^instructions/.test(document.body.dataset.screen || '') || "
                                   "document.body.dataset.screen === 'trial'", timeout=15_000)
            if screen(page) != "trial":
                assert "Tocca lo schermo per continuare" in page.inner_text("body")
                page.tap("body")
            reach(page, i, after_units(len(seq[i].words), 1))
            page.tap(".tl-box[data-answer=violation]")
            reach(page, i, after_units(len(seq[i].words), 2))
        page.wait_for_function("() => document.body.dataset.screen === 'end'", timeout=15_000)
    finally:
        stop(proc)
    rows = read_rows(session_paths(tmp_path / "data", exp.name, "T01", 1)[0])
    assert [json.loads(r["extra"])["answered_by"] for r in rows] == ["touch", "touch"]
    assert [r["response"] for r in rows] == ["violation", "violation"]
    assert [p["key"] for r in rows for p in json.loads(r["extra"])["presses"]] == ["touch", "touch"]
    sidecar = json.loads(session_paths(tmp_path / "data", exp.name, "T01", 1)[1].read_text())
    warnings = sidecar["runs"][0]["client"]["warnings"]
    assert [w.split(" ms is ")[0] for w in warnings] == ["word_ms=246"] and "15 frames" in warnings[0]


def test_a_bad_link_shows_the_spec_language_text_and_writes_nothing(browser, tmp_path):
    spec = italian_spec(tmp_path, trials=2)
    proc, url = start_server(spec, tmp_path / "data")
    page = browser.new_page()
    texts = []
    try:
        for query in ("participant=a-b", "participant=P01&session=3", ""):
            page.goto(f"{url}/?{query}")
            page.wait_for_function("() => document.body.dataset.screen === 'error'", timeout=15_000)
            texts.append(page.inner_text("body"))
    finally:
        stop(proc)
    assert all(t.startswith("Questo link non può avviare lo studio.") for t in texts)
    assert "letters and digits" in texts[0] and "sessions 1 to 1" in texts[1]
    assert not (tmp_path / "data" / "data").exists() or not list((tmp_path / "data" / "data").iterdir())
