"""Write tests/data/imports/jspsych_corpus/v6/: the real jsPsych 6.0.4 (npm `jspsych@6.0.4`, installed in a
scratch folder: `npm install jspsych@6.0.4`) runs study/acceptability_v6.js in Debian's headless Chromium,
answered by simulated key presses and clicks; what jsPsych's own `jsPsych.data.get().csv()` and `.json()` return
is saved byte for byte, and the ways labs store it:

- `v6_s01.csv`, `v6_s01.json`: one run, as `.csv()` and `.json()` return them;
- `v6_s02_double.json`: a run saved double-encoded, `JSON.stringify(jsPsych.data.get().json())` (what a
  server script that stringifies the already-JSON text writes): a JSON string holding the array;
- `v6_jatos_lines.txt`: two people, the study split into two JATOS components, each component's `.json()` on a
  line of its own; `v6_jatos_concatenated.txt`: the same runs' arrays one after another with nothing between.

usage: python tests/support/jspsych6_fixture.py OUT_DIR --node-modules DIR
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "tests" / "data" / "imports" / "jspsych_corpus" / "v6" / "study" / "acceptability_v6.js"
CHROMIUM = "/usr/bin/chromium"
SCRIPTS = ("jspsych/jspsych.js", "jspsych/plugins/jspsych-html-keyboard-response.js",
           "jspsych/plugins/jspsych-html-button-response.js", "jspsych/plugins/jspsych-instructions.js",
           "jspsych/plugins/jspsych-survey-likert.js", "jspsych/plugins/jspsych-survey-text.js")
# person -> (URL variables, accuracy, seed, test judgments left unanswered (0-based))
PEOPLE = {"s01": ({"subject": "s01", "list": "A", "rotate": "0"}, 0.85, 61, ()),
          "s02": ({"subject": "s02", "list": "B", "rotate": "3"}, 0.75, 62, (2,))}
JATOS = {"j01": ({"subject": "j01", "list": "B", "rotate": "5"}, 0.8, 63, ()),
         "j02": ({"subject": "j02", "list": "A", "rotate": "1"}, 0.7, 64, (0,))}


def page_html(node_modules: Path) -> str:
    tags = "\n".join(f'<script src="{(node_modules / s).as_uri()}"></script>' for s in SCRIPTS)
    css = (node_modules / "jspsych" / "css" / "jspsych.css").as_uri()
    return (f'<!DOCTYPE html><html><head><meta charset="utf-8"><link rel="stylesheet" href="{css}">\n{tags}\n'
            f'</head><body><script src="{STUDY.as_uri()}"></script></body></html>')


def answer(page, screen: dict, rng: random.Random, accuracy: float, skip: tuple, state: dict) -> None:
    kind = screen["kind"]
    if kind == "instructions":
        for _ in range(2):
            time.sleep(0.3)
            page.click("#jspsych-instructions-next")
    elif kind == "judgment":
        if screen["item"].startswith("i"):
            state["test"] = state.get("test", 0) + 1
            if state["test"] - 1 in skip:
                return
        right = screen["correct_response"]
        key = right if rng.random() < accuracy else {"f": "j", "j": "f"}[right]
        time.sleep(rng.uniform(0.45, 1.4))
        page.keyboard.press(key)
    elif kind == "button":
        time.sleep(rng.uniform(0.5, 1.0))
        page.click("button.jspsych-btn >> text=Yes")
    elif kind == "likert":
        page.click(f"input[name=Q0] >> nth={rng.randrange(1, 5)}")
        page.click("#jspsych-survey-likert-next")
    elif kind == "text":
        page.fill("input[type=text] >> nth=0", rng.choice(["none", "Some were long, but fine.", ""]))
        page.click("#jspsych-survey-text-next")


def run_once(browser, html: Path, params: dict, accuracy: float, rng: random.Random, skip: tuple,
             state: dict) -> tuple[str, str, str]:
    """One jsPsych run: (csv, json, double-encoded json) as the page's own jsPsych returns them."""
    page = browser.new_page()
    page.goto(f"{html.as_uri()}?" + "&".join(f"{k}={v}" for k, v in params.items()))
    seen = 0
    while True:
        page.wait_for_function(f"() => window.__done || (window.__screen && window.__screen.n > {seen})",
                               timeout=20_000)
        if page.evaluate("() => !!window.__done"):
            break
        screen = page.evaluate("() => window.__screen")
        seen = screen["n"]
        answer(page, screen, rng, accuracy, skip, state)
    out = page.evaluate("() => [jsPsych.data.get().csv(), jsPsych.data.get().json(), "
                        "JSON.stringify(jsPsych.data.get().json())]")
    page.close()
    return out[0], out[1], out[2]


def write(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--node-modules", type=Path, required=True)
    args = ap.parse_args()
    missing = [s for s in SCRIPTS if not (args.node_modules / s).exists()]
    if missing:
        print(f"missing in {args.node_modules}: {', '.join(missing)} (npm install jspsych@6.0.4)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright  # a test-only dependency: imported where it is used
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        html = Path(tmp) / "study.html"
        html.write_text(page_html(args.node_modules.resolve()), encoding="utf-8")
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--headless", "--disable-gpu",
                                                                     "--allow-file-access-from-files"])
        s01 = run_once(browser, html, *PEOPLE["s01"][:2], random.Random(PEOPLE["s01"][2]), PEOPLE["s01"][3], {})
        write(args.out / "v6_s01.csv", s01[0])
        write(args.out / "v6_s01.json", s01[1])
        s02 = run_once(browser, html, *PEOPLE["s02"][:2], random.Random(PEOPLE["s02"][2]), PEOPLE["s02"][3], {})
        write(args.out / "v6_s02_double.json", s02[2])
        assert json.loads(json.loads(s02[2])) == json.loads(s02[1])
        arrays = []
        for params, acc, seed, skip in JATOS.values():
            rng, state = random.Random(seed), {}
            for component in ("1", "2"):
                arrays.append(run_once(browser, html, dict(params, component=component), acc, rng, skip, state)[1])
        write(args.out / "v6_jatos_lines.txt", "\n".join(arrays) + "\n")
        write(args.out / "v6_jatos_concatenated.txt", "".join(arrays))
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
