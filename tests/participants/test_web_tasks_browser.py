"""Each task kind in Debian's Chromium (headless, Playwright) against the real server, and the same
participant and seed in PsychoPy: the rows must be equal but for the timing columns.

The page is driven with real key presses (the autopilot's plan for the PsychoPy session: same
participant, same answers) and, on one trial per kind, a mouse click on the answer box; a phone in
portrait is driven by taps. Screenshots of every kind at page width and on the phone are saved
(into TWINLAB_TASK_SCREENSHOTS when set) and checked for ink and for fitting the viewport.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from experiments.session import read_rows, session_paths

sys.path.insert(0, str(Path(__file__).parent.parent / "support"))
sys.path.insert(0, str(Path(__file__).parent.parent))
from task_examples import EXAMPLES, base_spec, example_sequence, load, task_section  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.long]
CHROMIUM = "/usr/bin/chromium"
if not Path(CHROMIUM).exists():
    pytest.skip(f"Debian's chromium is not installed ({CHROMIUM})", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")
from task_server import TaskServer  # noqa: E402

from experiments.tasks.record import plan  # noqa: E402
from participants.tasks import settings_for  # noqa: E402
from participants.tasks.logic import screen_order  # noqa: E402

# columns that hold times (or when, or how the runner measured): everything else must be equal
TIMING = {"rt_ms", "rt_sentence_end_ms", "word_onsets_ms", "word_durations_ms", "keystrokes", "word_rts_ms",
          "region_rts_ms", "started_at", "ended_at", "extra"}
BROWSER_KEYS = {"space": " ", "return": "Enter", "backspace": "Backspace", "apostrophe": "'", "minus": "-"}
ANSWER_SCREENS = {"judgment", "choice", "rating", "lexical_decision"}


@pytest.fixture()
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


def stage_state(page) -> tuple[int | None, str]:
    return page.evaluate("() => { const s = document.querySelector('.tl-stage'); "
                         "return s ? [+s.dataset.trial, s.dataset.screen || ''] : [null, '']; }")


def wait_screen(page, trial: int, screens: list[str], timeout: float = 20_000) -> None:
    try:
        page.wait_for_function(f"() => {{ const s = document.querySelector('.tl-stage'); return !!s && "
                               f"+s.dataset.trial === {trial} && {json.dumps(screens)}.includes(s.dataset.screen); }}",
                               timeout=timeout)
    except sync_api.TimeoutError:
        raise AssertionError(f"waiting for trial {trial} on {screens}: the page shows {stage_state(page)}, "
                             f"{page.evaluate('() => document.body.innerText.slice(0, 300)')!r}") from None


def shoot(page, folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def fits(page) -> bool:
    """Nothing of the trial's screen lies outside the viewport (no horizontal scrolling, no cut-off box)."""
    return page.evaluate("() => { const w = innerWidth, h = innerHeight; return [...document.querySelectorAll("
                         "'.tl-stage *')].every(e => { const r = e.getBoundingClientRect(); return r.left >= -1 && "
                         "r.right <= w + 1 && r.top >= -1 && r.bottom <= h + 1; }); }")


NAMED_KEYS = ("() => [...document.querySelectorAll('.tl-stage .tl-box-key, .tl-stage .tl-hint')]"
              ".filter((e) => getComputedStyle(e).display !== 'none').map((e) => e.textContent)")


def play(page, url: str, kind: str, exp, seq, *, pid: str, click_trial: int | None, tap: bool, shots: Path,
         prefix: str, named: dict[str, list[str]] | None = None) -> dict[str, bool]:
    """A whole session: the instructions, then each trial with the autopilot's planned keys (or a click/tap)."""
    page.goto(f"{url}/?participant={pid}")
    page.wait_for_function("() => (document.body.dataset.screen || '').startsWith('instructions')", timeout=30_000)
    page.wait_for_timeout(350)
    if tap:
        page.tap("body")
    else:
        page.keyboard.press(" ")
    fit: dict[str, bool] = {}
    for t in seq:
        s = settings_for(exp, t, task_section(kind))
        order = screen_order(t, seq, None) if kind == "choice" else None
        p = plan(t, s, order, seed=pid, accuracy=0.75)
        first = {"self_paced_reading": ["spr"], "completion": ["completion"]}.get(kind, [kind])
        wait_screen(page, t.trial_index, first)
        for phase in ("answer", "read", "question", "type"):
            if phase not in p.phases:
                continue
            if phase == "question":
                wait_screen(page, t.trial_index, ["spr_question"])
            for j, (_, key) in enumerate(p.phases[phase]):
                page.wait_for_timeout(150)
                if t.trial_index == 1 and j == (2 if phase in ("read", "type") else 0):
                    name = f"{prefix}{kind}_{phase}"
                    shoot(page, shots, name)
                    fit[name] = fits(page)
                    if named is not None:  # key letters and hints on the screen
                        named[name] = page.evaluate(NAMED_KEYS)
                clickable = phase in ("answer", "question")
                if tap and phase == "type" and j == 0:  # a phone types into the field it was tapped on
                    page.tap(".tl-stage .tl-typed")
                if tap and phase == "read":  # a tap reads on, as SPACE does
                    page.tap(".tl-stage")
                elif clickable and (tap or t.trial_index == click_trial):
                    pos = [a.key for a in _answers(t, s, order, phase)].index(key)
                    box = page.locator(f".tl-stage .tl-box[data-pos='{pos}']")
                    box.tap() if tap else box.click()
                else:
                    page.keyboard.press(BROWSER_KEYS.get(key, key))
    page.wait_for_function("() => document.body.dataset.screen === 'end'", timeout=30_000)
    return fit


def _answers(t, s, order, phase):
    from experiments.tasks.record import answers
    return answers(t, s, order)


def run_psychopy_rows(kind: str, spec: Path, out: Path, pid: str) -> list[dict[str, str]] | None:
    """The same participant in PsychoPy (tests/support/run_task_session.py under xvfb-run), or None without Xvfb."""
    import subprocess

    if shutil.which("xvfb-run") is None:
        return None
    root = Path(__file__).resolve().parents[2]
    res = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1280x1024x24", sys.executable,
                          str(root / "tests" / "support" / "run_task_session.py"), kind, str(spec), str(out), pid,
                          "25", "4"], env={**os.environ, "PYTHONPATH": str(root)}, cwd=root, capture_output=True,
                         text=True, timeout=180)
    assert res.returncode == 0, res.stderr[-3000:]
    return read_rows(session_paths(out, load(spec).name, pid, 1)[0])


def publish(folder: Path) -> None:
    target = os.environ.get("TWINLAB_TASK_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        for p in folder.glob("*.png"):
            shutil.copyfile(p, Path(target) / f"web_{p.name}")


@pytest.mark.parametrize("kind", list(EXAMPLES))
def test_each_kind_in_chromium_gives_the_rows_psychopy_gives(browser, kind, tmp_path):
    spec = base_spec(tmp_path, kind)
    exp = load(spec)
    pid = "autopilot1"
    seq = example_sequence(kind, exp, pid, 25, 4, feedback_first=1)
    shots = tmp_path / "shots"
    with TaskServer(kind, spec, tmp_path / "web") as srv:
        ctx = browser.new_context(viewport={"width": 1024, "height": 768})
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        named: dict[str, list[str]] = {}
        fit = play(page, srv.url, kind, exp, seq, pid=pid, click_trial=2 if kind in ANSWER_SCREENS else None,
                   tap=False, shots=shots, prefix="", named=named)
        ctx.close()
    assert not errors, errors
    assert all(fit.values()), fit
    if kind in ("judgment", "lexical_decision", "self_paced_reading", "completion"):  # they name their keys here
        assert all(named.values()), named
    publish(shots)
    web = read_rows(session_paths(tmp_path / "web", exp.name, pid, 1)[0])
    assert [r["item_id"] for r in web] == [t.item_id for t in seq]
    if kind in ANSWER_SCREENS:  # trial 2 was answered with the mouse, the others with keys
        by = [json.loads(r["extra"]).get("answered_by") for r in web]
        assert by[2] == "mouse" and all(b.startswith("key:") for k, b in enumerate(by) if k != 2), by
        rts = [float(r["rt_ms"]) for r in web]
        assert all(100.0 <= x <= 5000.0 for x in rts), rts
    psy = run_psychopy_rows(kind, spec, tmp_path / "psychopy", pid)
    if psy is None:
        pytest.skip("xvfb-run is not installed: the PsychoPy half of the comparison cannot run")
    assert len(psy) == len(web) == 4
    for a, b in zip(psy, web, strict=False):
        differ = {c: (a[c], b[c]) for c in a if c not in TIMING and a[c] != b.get(c)}
        assert not differ, differ
    if kind == "self_paced_reading":  # both runners: one reading time per word, one per region
        for a, b in zip(psy, web, strict=False):
            assert len(json.loads(a["word_rts_ms"])) == len(json.loads(b["word_rts_ms"])) == len(a["words"].split())
    if kind == "completion":
        assert [[k for k, _ in json.loads(r["keystrokes"])] for r in psy] == \
               [[k for k, _ in json.loads(r["keystrokes"])] for r in web]


def test_every_kind_on_a_phone_in_portrait_with_taps(browser, tmp_path):
    """Phone portrait (390 x 844, touch): answers by tapping the boxes; every screen fits the width."""
    shots = tmp_path / "shots"
    bad: dict[str, bool] = {}
    named: dict[str, list[str]] = {}
    for kind in EXAMPLES:
        spec = base_spec(tmp_path, kind)
        exp = load(spec)
        seq = example_sequence(kind, exp, "phone1", 25, 2, feedback_first=0)
        with TaskServer(kind, spec, tmp_path / f"web_{kind}", n=2, feedback_first=0) as srv:
            ctx = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True,
                                      has_touch=True)
            page = ctx.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
            page.on("console", lambda m, errors=errors: errors.append(m.text) if m.type == "error" else None)
            try:
                fit = play(page, srv.url, kind, exp, seq, pid="phone1", click_trial=None, tap=True, shots=shots,
                           prefix="phone_", named=named)
            finally:
                assert not errors, errors
            ctx.close()
        bad.update({k: v for k, v in fit.items() if not v})
        rows = read_rows(session_paths(tmp_path / f"web_{kind}", exp.name, "phone1", 1)[0])
        assert len(rows) == 2
        if kind in ANSWER_SCREENS:
            assert {json.loads(r["extra"])["answered_by"] for r in rows} == {"touch"}
        if kind == "self_paced_reading":  # every word was read by a tap
            for r in rows:
                raw = json.loads(r["extra"])["raw"]
                assert len(raw["taps"]) == len(r["words"].split()) + 1 == len(json.loads(r["word_rts_ms"])) + 1
    publish(shots)
    assert not bad, f"screens wider or taller than the phone: {sorted(bad)}"
    assert len(named) >= 6 and not any(named.values()), named  # a touch screen names no key, on any kind
