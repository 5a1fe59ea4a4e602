"""A held-out Maze design end to end: two people in Chromium against the real server (one at a desktop with the
E and I keys, one on a phone tapping the two boxes; the autopilot's plan, so some sentences end at an error),
model subjects through `run-model`, then `analyze`: the report's mean word RT per region and condition and its
errors by word position equal a hand count from the session CSVs (read here with nothing of the kind's code)."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from experiments.session import read_rows, session_paths

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.long]
ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "tests" / "support" / "maze" / "maze.yaml"
CHROMIUM = "/usr/bin/chromium"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}


def held_out(tmp: Path) -> Path:
    """The example design with other items (held out: never in the example file)."""
    data = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    data["name"] = "maze_heldout"
    spec = tmp / "maze_heldout.yaml"
    spec.write_text(yaml.safe_dump(data), encoding="utf-8")
    rows = [["item", "extraction", "sentence", "distractors", "regions"],
            ["1", "subject", "The pilot who saw the actor left.", "ears pays sky arts maker tune.",
             "The pilot | who saw the actor | left."],
            ["1", "object", "The pilot who the actor saw left.", "ears pays arts maker sky tune.",
             "The pilot | who the actor saw | left."],
            ["2", "subject", "The cook that hired the maid quit.", "sofa warm dined sky bolt moon.",
             "The cook | that hired the maid | quit."],
            ["2", "object", "The cook that the maid hired quit.", "sofa warm sky bolt dined moon.",
             "The cook | that the maid hired | quit."],
            ["3", "subject", "The judge who met the clerk smiled.", "calm oh fed yes trunk planet.",
             "The judge | who met the clerk | smiled."],
            ["3", "object", "The judge who the clerk met smiled.", "calm oh yes trunk fed planet.",
             "The judge | who the clerk met | smiled."],
            ["4", "subject", "The coach that paid the agent cried.", "fever mild ties arms essay lower.",
             "The coach | that paid the agent | cried."],
            ["4", "object", "The coach that the agent paid cried.", "fever mild arms essay ties lower.",
             "The coach | that the agent paid | cried."]]
    with open(tmp / "maze_items.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    return spec


def play(browser, sync_api, url: str, exp, pid: str, phone: bool) -> None:
    """One participant: each trial's planned answers, a press (or a tap on the box) at a time, each after the
    screen the previous one brought."""
    from experiments.design_compiler import compile_sequence
    from experiments.tasks.record import plan
    from participants.tasks import settings_for
    from participants.tasks.logic import screen_order

    ctx = browser.new_context(viewport={"width": 390, "height": 760}, has_touch=True, is_mobile=True) if phone \
        else browser.new_context(viewport={"width": 1024, "height": 768})
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{url}/?participant={pid}")
    page.wait_for_function("() => (document.body.dataset.screen || '').startsWith('instructions')", timeout=30_000)
    for _ in range(2):  # the two instruction pages
        page.wait_for_timeout(350)
        page.tap("body") if phone else page.keyboard.press(" ")
    seq = compile_sequence(exp, pid, exp.seed)
    for t in seq:
        s = settings_for(exp, t)
        p = plan(t, s, screen_order(t, seq, s), seed=pid, accuracy=0.5)
        try:
            page.wait_for_function(f"() => {{ const s = document.querySelector('.tl-stage'); return !!s && "
                                   f"+s.dataset.trial === {t.trial_index} && s.dataset.screen === 'maze'; }}",
                                   timeout=20_000)
        except sync_api.TimeoutError:
            state = page.evaluate("() => { const s = document.querySelector('.tl-stage'); return [s && "
                                  "s.dataset.trial, "
                                  "s && s.dataset.screen, document.body.innerText.slice(0, 300)]; }")
            raise AssertionError(f"trial {t.trial_index}: the page shows {state}; errors {errors}") from None
        for _, key in p.phases["read"]:
            k0 = page.evaluate("() => document.querySelector('.tl-stage').dataset.k")
            page.wait_for_timeout(60)
            if phone:
                page.tap(f".tl-stage .tl-box[data-pos='{list(s.keys).index(key)}']")
            else:
                page.keyboard.press(key)
            page.wait_for_function(f"() => {{ const s = document.querySelector('.tl-stage'); return !s || "
                                   f"+s.dataset.trial !== {t.trial_index} || s.dataset.k !== {json.dumps(k0)}; }}",
                                   timeout=10_000)
    page.wait_for_function("() => document.body.dataset.screen === 'end'", timeout=30_000)
    ctx.close()
    assert not errors, errors


def hand_count(rows: list[dict]) -> tuple[dict, dict]:
    """Mean RT per (condition, region) of the words after the first whose first pick was right; per word
    position (1-based) the sentences that reached it and the wrong first picks."""
    rts, reach = defaultdict(list), defaultdict(lambda: [0, 0])
    for r in rows:
        mat = json.loads(r["materials"])
        region_of = [k + 1 for k, part in enumerate(mat["regions"].split("|")) for _ in part.split()]
        right = json.loads(r["word_correct"])  # the kind's column
        word_rts = json.loads(r["word_rts_ms"]) if r["word_rts_ms"] else [None] * len(right)
        for i, ok in enumerate(right):
            if ok is None:
                continue
            reach[i + 1][0] += 1
            reach[i + 1][1] += ok is False
            if i > 0 and ok is True and word_rts[i] is not None:
                rts[(r["extraction"], region_of[i])].append(word_rts[i])
    return {k: sum(v) / len(v) for k, v in rts.items()}, dict(reach)


def test_people_in_chromium_and_models_then_analyze_equal_a_hand_count(tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Debian's chromium is not installed ({CHROMIUM})")
    sync_api = pytest.importorskip("playwright.sync_api")
    sys.path.insert(0, str(ROOT / "tests" / "support"))
    from task_server import ThreadedServer

    from experiments.spec import load_spec
    from participants.web.server import create_app

    spec = held_out(tmp_path)
    exp = load_spec(spec)
    with ThreadedServer(create_app(exp, tmp_path / "web"), start_timeout_s=20.0, stop_timeout_s=10.0) as srv, \
            sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        play(b, sync_api, srv.url, exp, "p01", phone=False)
        play(b, sync_api, srv.url, exp, "p02", phone=True)
        b.close()
    people = [r for pid in ("p01", "p02") for r in read_rows(session_paths(tmp_path / "web", exp.name, pid, 1)[0])]
    assert len(people) == 8 and {r["task"] for r in people} == {"maze"}
    by = [b for r in people for b in json.loads(r["extra"])["word_answered_by"] if b]
    assert any(b.startswith("key:") for b in by) and "touch" in by
    assert any(r["correct"] == "False" for r in people) and any(r["correct"] == "True" for r in people)
    r = subprocess.run([sys.executable, "-m", "experiments.cli", "run-model", str(spec), "-n", "2", "--out",
                        str(tmp_path / "models")], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    models = [row for f in sorted((tmp_path / "models").rglob("*_data.csv")) for row in read_rows(f)]
    r = subprocess.run([sys.executable, "-m", "experiments.cli", "analyze", str(tmp_path / "web" / "data"),
                        str(tmp_path / "models" / "data"), "--out", str(tmp_path / "res"), "--no-mixed",
                        "--n-boot", "20"],
                       cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    tables = tmp_path / "res" / "tables"
    region = list(csv.DictReader(open(tables / "maze_region_rts.csv", encoding="utf-8")))
    errors = list(csv.DictReader(open(tables / "maze_errors_by_position.csv", encoding="utf-8")))
    human = {row["group"] for row in region}
    assert len(human) == 1  # people only: the models have no RTs
    means, reach = hand_count(people)
    assert {(row["condition"], int(row["region"])): float(row["mean_rt_ms"]) for row in region} == \
        pytest.approx(means)
    (hg,) = human
    got = {int(row["position"]): (int(row["n_reached"]), int(row["n_errors"])) for row in errors if row["group"] == hg}
    assert got == {k: tuple(v) for k, v in reach.items()}
    _, model_reach = hand_count(models)
    mg = {row["group"] for row in errors} - human
    assert len(mg) == 1  # two copies of one deterministic model: one group (each on its own list)
    got_m = {int(row["position"]): (int(row["n_reached"]), int(row["n_errors"]))
             for row in errors if row["group"] in mg}
    assert got_m == {k: tuple(v) for k, v in model_reach.items()}
    # RT against surprisal: the people's kept words beside the models' mean surprisal of the same word
    bits = defaultdict(list)
    for row in models:
        for i, b in enumerate(json.loads(row["word_surprisal_bits"])):
            bits[(json.loads(row["materials"])["sentence"], i)].append(b)
    pairs = []
    for row in people:
        sentence = json.loads(row["materials"])["sentence"]
        right, word_rts = json.loads(row["word_correct"]), json.loads(row["word_rts_ms"])
        pairs += [(sum(bits[(sentence, i)]) / len(bits[(sentence, i)]), word_rts[i]) for i, ok in enumerate(right)
                  if i > 0 and ok is True and (sentence, i) in bits]
    import numpy as np

    slope, intercept = np.polyfit([x for x, _ in pairs], [y for _, y in pairs], 1)
    fit = next(csv.DictReader(open(tables / "maze_rt_by_surprisal.csv", encoding="utf-8")))
    assert int(fit["n_words"]) == len(pairs) > 10
    assert (float(fit["slope_ms_per_bit"]) == pytest.approx(slope)
            and float(fit["intercept_ms"]) == pytest.approx(intercept))
    html = (tmp_path / "res" / "report.html").read_text(encoding="utf-8")
    assert "Maze: word RTs, errors, surprisal" in html
