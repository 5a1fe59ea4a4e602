"""The page-side findings of an outside tester.

A phone and a tablet held upright (390x844, 768x1024, touch): the answer boxes, their labels, the panel
question and a long RSVP unit stay on screen, whole; `task.panel.mouse: false` is honoured by the page;
a second browser opening the same participant's link cannot lock the first one out; a server that goes
away mid-session is retried until it is back, and the session goes on. Screenshots are saved (into
TWINLAB_WEB_SCREENSHOTS when set, e.g. docs/screenshots/web).
"""
from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from experiments.design_compiler import compile_sequence
from experiments.session import read_rows, session_paths
from experiments.spec import load_spec

try:  # the repository root, or tests/, is on sys.path
    from tests.web_support import CHROMIUM, CHROMIUM_ARGS, ROOT, italian_spec, start_server, stop
except ModuleNotFoundError:
    from web_support import CHROMIUM, CHROMIUM_ARGS, ROOT, italian_spec, start_server, stop

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.long]
if not Path(CHROMIUM).exists():
    pytest.skip(f"Debian's chromium is not installed ({CHROMIUM}); scripts/setup.sh installs it",
                allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")

LONG_UNIT = "della grandissima città metropolitana"
QUESTION = ("Secondo te, la frase che hai appena letto conteneva una violazione grammaticale, "
            "cioè un verbo che non concorda con il suo soggetto?")


@pytest.fixture()
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _publish(paths: list[Path]) -> None:
    target = os.environ.get("TWINLAB_WEB_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        for p in paths:
            shutil.copyfile(p, Path(target) / p.name)


def screen(page) -> str:
    return page.evaluate("() => document.body.dataset.screen || ''")


def reach(page, trial: int, what: str, timeout: float = 15_000) -> None:
    page.wait_for_function(f"() => {{ const s = document.querySelector('.tl-stage'); return !!s && "
                           f"+s.dataset.trial === {trial} && s.dataset.screen === {json.dumps(what)}; }}",
                           timeout=timeout)


def to_trial(page, tap: bool = False, timeout: float = 15_000) -> None:
    """Turn the text pages (a tap or SPACE each) until the first trial is on screen."""
    while True:
        page.wait_for_function("() => ['trial','error','end'].includes(document.body.dataset.screen) || "
                               "/^(instructions|block_intro|resume)/.test(document.body.dataset.screen || '')",
                               timeout=timeout)
        s = screen(page)
        if s in ("trial", "error", "end"):
            return
        page.wait_for_timeout(300)
        if tap:
            page.tap("body")
        else:
            page.keyboard.press(" ")
        page.wait_for_function(f"() => document.body.dataset.screen !== {json.dumps(s)}", timeout=timeout)


def _long_spec(tmp_path: Path) -> Path:
    """The Italian panel spec with long labels, a two-line question and a long last unit in every item."""
    src = ROOT / "stimuli" / "examples" / "lakretz2021_italian_example.tsv"
    rows = list(csv.DictReader(src.open(encoding="utf-8"), delimiter="\t"))
    for r in rows:
        units = r["sentence"].split("|")
        used = {int(r[k]) for k in ("inner_index", "outer_index", "filler_index") if r.get(k)}
        if len(units) - 1 not in used:
            units[-1] = units[-1] + " " + LONG_UNIT
        r["sentence"] = "|".join(units)
    tsv = tmp_path / "long.tsv"
    with tsv.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), delimiter="\t")
        w.writeheader()
        w.writerows(rows)
    spec = italian_spec(tmp_path, trials=2, word_ms=150)
    data = yaml.safe_load(spec.read_text(encoding="utf-8"))
    data["stimuli"]["file"] = str(tsv)
    data["task"]["panel"].update(labels={"violation": "UNGRAMMATICAL", "no_violation": "ACCEPTABLE"}, question=QUESTION)
    spec.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return spec


# everything the participant must see whole: in the window, and no text wider than its own box
GEOMETRY = """() => {
  const W = innerWidth, H = innerHeight, r = (e) => e.getBoundingClientRect();
  const inside = (e) => {
    const b = r(e);
    return b.left >= -0.5 && b.top >= -0.5 && b.right <= W + 0.5 && b.bottom <= H + 0.5;
  };
  const out = {W, H};
  const boxes = [...document.querySelectorAll('.tl-box')];
  out.boxes_inside = boxes.map(inside);
  out.labels_fit = boxes.map((b) => {
    const l = b.querySelector('.tl-box-label');
    return l.scrollWidth <= b.clientWidth + 0.5 && inside(l);
  });
  out.keys_inside = [...document.querySelectorAll('.tl-box-key')].map(inside);
  out.keys_shown = [...document.querySelectorAll('.tl-box-key')].map((e) => getComputedStyle(e).display !== 'none');
  const q = document.querySelector('.tl-question');
  if (q) {
    const cs = getComputedStyle(q);
    out.question_inside = inside(q);
    out.question_line_height_ok = parseFloat(cs.lineHeight) >= parseFloat(cs.fontSize);
    out.question_above_boxes = r(q).bottom <= Math.min(...boxes.map((b) => r(b).top)) + 0.5;
    out.question_lines = Math.round(r(q).height / parseFloat(cs.lineHeight));
  }
  out.boxes_apart = boxes.length === 2 &&
    (r(boxes[0]).right <= r(boxes[1]).left || r(boxes[1]).right <= r(boxes[0]).left);
  return out;
}"""

UNIT = """() => { const w = document.querySelector('.tl-stage .tl-word'); if (!w) return null;
  const b = w.getBoundingClientRect();
  return {text: w.textContent, left: b.left, right: b.right, W: innerWidth, sw: w.scrollWidth, cw: w.clientWidth}; }"""


@pytest.mark.parametrize("width, height", [(390, 844), (768, 1024)])
def test_a_phone_or_tablet_held_upright_shows_the_panel_and_long_units_whole(browser, tmp_path, width, height):
    spec = _long_spec(tmp_path)
    exp = load_spec(spec)
    seq = compile_sequence(exp, "T01", None)
    long_at = [j for j, u in enumerate(seq[0].words) if LONG_UNIT in u]
    assert long_at, "the first trial has the long unit"
    proc, url = start_server(spec, tmp_path / "data")
    ctx = browser.new_context(has_touch=True, is_mobile=True, viewport={"width": width, "height": height})
    page = ctx.new_page()
    shots: list[Path] = []

    def shot(name: str) -> None:
        p = tmp_path / f"portrait_{width}x{height}_{name}.png"
        page.screenshot(path=str(p))
        shots.append(p)

    try:
        page.goto(f"{url}/?participant=T01")
        page.wait_for_function("() => /^instructions/.test(document.body.dataset.screen || '')", timeout=15_000)
        shot("instructions")
        assert page.evaluate("() => document.querySelector('.tl-page').getBoundingClientRect().right <= innerWidth")
        to_trial(page, tap=True)
        page.wait_for_function(f"() => {{ const s = document.querySelector('.tl-stage'); return !!s && "
                               f"s.dataset.screen === 'unit' && +s.dataset.unit === {long_at[0]}; }}", timeout=15_000)
        unit = page.evaluate(UNIT)
        shot("long_unit")
        reach(page, 0, "panel")
        geo = page.evaluate(GEOMETRY)
        shot("panel")
        page.tap(".tl-box[data-answer=violation]")
        reach(page, 0, "feedback", timeout=5000)
        shot("feedback")
        reach(page, 1, "fixation")  # trial 0 is saved before trial 1 starts
    finally:
        stop(proc)
        _publish(shots)
    assert (LONG_UNIT in unit["text"] and unit["left"] >= 0 and unit["right"] <= unit["W"]
            and unit["sw"] <= unit["cw"] + 1), unit
    assert geo["boxes_inside"] == [True, True] and geo["labels_fit"] == [True, True], geo
    assert geo["keys_inside"] == [True, True] and geo["boxes_apart"], geo
    assert geo["keys_shown"] == [False, False], geo  # a touch screen names no keys
    assert geo["question_inside"] and geo["question_line_height_ok"] and geo["question_above_boxes"], geo
    assert geo["question_lines"] >= 2, geo  # the long question wraps (on lines that do not overlap)
    rows = read_rows(session_paths(tmp_path / "data", exp.name, "T01", 1)[0])
    assert [json.loads(r["extra"])["answered_by"] for r in rows] == ["touch"]


def test_a_keys_only_panel_ignores_clicks_in_the_page(browser, tmp_path):
    spec = italian_spec(tmp_path, trials=1)
    data = yaml.safe_load(spec.read_text(encoding="utf-8"))
    data["task"]["panel"]["mouse"] = False
    spec.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    exp = load_spec(spec)
    proc, url = start_server(spec, tmp_path / "data")
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    try:
        page.goto(f"{url}/?participant=K01")
        to_trial(page)
        reach(page, 0, "panel")
        page.click(".tl-box[data-answer=no_violation]")
        page.wait_for_timeout(300)
        assert page.evaluate("() => document.querySelector('.tl-stage').dataset.screen") == "panel"  # not an answer
        page.keyboard.press("f")
        reach(page, 0, "feedback", timeout=5000)
        page.wait_for_function("() => document.body.dataset.screen === 'end'", timeout=15_000)
    finally:
        stop(proc)
    rows = read_rows(session_paths(tmp_path / "data", exp.name, "K01", 1)[0])
    extra = json.loads(rows[0]["extra"])
    assert rows[0]["response"] == "violation" and extra["answered_by"] == "key:f"
    assert [p["key"] for p in extra["presses"]] == ["f"]  # the click is not recorded as a press either


def test_a_second_browser_cannot_lock_the_first_out_and_a_lost_server_is_retried(browser, tmp_path):
    spec = italian_spec(tmp_path, trials=3)
    exp = load_spec(spec)
    out = tmp_path / "data"
    proc, url = start_server(spec, out)
    port = url.rsplit(":", 1)[1]
    a = browser.new_context(viewport={"width": 1024, "height": 768}).new_page()
    b = browser.new_context(viewport={"width": 1024, "height": 768}).new_page()
    try:
        a.goto(f"{url}/?participant=P07")
        a.wait_for_function("() => /^instructions/.test(document.body.dataset.screen || '')", timeout=15_000)
        # while A reads the instructions (no trial saved yet), the same link opens in another browser
        b.goto(f"{url}/?participant=P07")
        b.wait_for_function("() => document.body.dataset.screen === 'error'", timeout=15_000)
        assert "started in another browser" in b.inner_text("body")
        to_trial(a)
        reach(a, 0, "panel")
        a.keyboard.press("f")
        reach(a, 1, "fixation")  # trial 0 saved (the page waits for the server before trial 1)
        stop(proc)  # the server goes away; trial 1 cannot be saved
        reach(a, 1, "panel")
        a.keyboard.press("j")
        a.wait_for_function("() => document.body.dataset.saving === 'retrying' && "
                            "+document.body.dataset.saveAttempts >= 3", timeout=20_000)
        a.wait_for_selector(".tl-overlay", timeout=5000)
        assert "riproverà" in a.inner_text(".tl-overlay")
        proc, _ = start_server(spec, out, port=int(port))  # back: the page's next try saves trial 1
        reach(a, 2, "panel", timeout=30_000)
        assert a.query_selector(".tl-overlay") is None
        a.keyboard.press("f")
        a.wait_for_function("() => document.body.dataset.screen === 'end'", timeout=15_000)
    finally:
        stop(proc)
    rows = read_rows(session_paths(out, exp.name, "P07", 1)[0])
    assert [r["response"] for r in rows] == ["violation", "no_violation", "violation"]
    meta = json.loads(session_paths(out, exp.name, "P07", 1)[1].read_text())
    assert meta["status"] == "completed"


@pytest.mark.untimed  # the instruction pages, paged with SPACE: no trial runs
def test_the_last_page_has_one_instruction_and_the_intro_the_real_number_of_trials(browser, tmp_path):
    data = yaml.safe_load((ROOT / "experiments" / "specs" / "lakretz2021_replication.yaml").read_text(encoding="utf-8"))
    data["timing"] = dict(fixation_ms=100, word_ms=100, gap_ms=50, panel_delay_ms=100, response_ms=1500,
                          feedback_ms=100, iti_ms=50)
    data["blocks"][0]["intro_text"] = "First, a practice block of {trials} sentences."
    spec = tmp_path / "replication.yaml"
    spec.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    proc, url = start_server(spec, tmp_path / "data", "--trials", "3")
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    seen = []
    try:
        page.goto(f"{url}/?participant=H01")
        while True:
            page.wait_for_function("() => /^(instructions|block_intro)/.test(document.body.dataset.screen || '') || "
                                   "document.body.dataset.screen === 'trial'", timeout=15_000)
            s = screen(page)
            if s == "trial":
                break
            seen.append((s, page.inner_text(".tl-page"), [h.inner_text() for h in page.query_selector_all(".tl-hint")]))
            page.wait_for_timeout(300)
            page.keyboard.press(" ")
            page.wait_for_function(f"() => document.body.dataset.screen !== {json.dumps(s)}", timeout=15_000)
    finally:
        stop(proc)
    pages = {name: (text, hints) for name, text, hints in seen}
    assert pages["instructions_1"][1] == ["Press SPACE to continue"]
    assert pages["instructions_3"][0].startswith("Press SPACE to begin.") and pages["instructions_3"][1] == []
    assert pages["block_intro"][0].startswith("First, a practice block of 3 sentences.")
    assert pages["block_intro"][1] == ["Press SPACE to start"]
