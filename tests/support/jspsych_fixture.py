"""Regenerate tests/data/imports/jspsych/: the real jsPsych 8 (npm packages) runs a small acceptability study in
Debian's headless Chromium, answered by simulated key presses and clicks; what jsPsych's own
`jsPsych.data.get().csv()` and `.json()` return is saved byte for byte.

usage: python tests/support/jspsych_fixture.py OUT_DIR [--node-modules DIR]
(DIR defaults to participants/web/js/node_modules; the plugins are pinned in participants/web/js/package.json)

Writes s01/s02/s03 .csv and .json (one file per person, `subject` data field, lists A/B/A) and
jatos_results.txt: two people (PROLIFIC_PID from the URL) on a study split into two components, each
component's `.json()` on its own line, concatenated as JATOS's "export results data" writes them.
"""
from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "tests" / "data" / "imports" / "jspsych" / "study" / "acceptability.js"
CHROMIUM = "/usr/bin/chromium"
SCRIPTS = ("jspsych/dist/index.browser.js", "@jspsych/plugin-html-keyboard-response/dist/index.browser.js",
           "@jspsych/plugin-html-button-response/dist/index.browser.js",
           "@jspsych/plugin-instructions/dist/index.browser.js",
           "@jspsych/plugin-survey-likert/dist/index.browser.js", "@jspsych/plugin-survey-text/dist/index.browser.js")
# person -> (URL variables, answer accuracy, RNG seed, test judgments left unanswered (0-based))
PEOPLE = {
    "s01": ({"subject": "s01", "list": "A", "seed": "11"}, 0.85, 101, ()),
    "s02": ({"subject": "s02", "list": "B", "seed": "12"}, 0.75, 102, (4,)),
    "s03": ({"subject": "s03", "list": "A", "seed": "13"}, 0.9, 103, ()),
}
JATOS = {
    "5f1a2b3c4d5e6f7a8b9c0d1e": ({"list": "B", "seed": "21"}, 0.8, 201, ()),
    "60b7c8d9e0f1a2b3c4d5e6f7": ({"list": "A", "seed": "22"}, 0.7, 202, ()),
}


def page_html(node_modules: Path, study: Path = STUDY) -> str:
    tags = "\n".join(f'<script src="{(node_modules / s).as_uri()}"></script>' for s in SCRIPTS)
    css = (node_modules / "jspsych" / "css" / "jspsych.css").as_uri()
    return (f'<!DOCTYPE html><html><head><meta charset="utf-8"><link rel="stylesheet" href="{css}">\n{tags}\n'
            f'</head><body><script src="{study.as_uri()}"></script></body></html>')


def answer(page, screen: dict, rng: random.Random, accuracy: float, skip: tuple, state: dict) -> None:
    """Do what a participant does on this screen (nothing on fixation and feedback screens)."""
    kind = screen["kind"]
    if kind == "instructions":
        for _ in range(2):
            time.sleep(0.3)
            page.click("#jspsych-instructions-next")
    elif kind == "judgment":
        if screen["item"].startswith("i"):  # a test item (practice items are p1, p2)
            state["test"] = state.get("test", 0) + 1
            if state["test"] - 1 in skip:
                return  # no key: the trial times out (response and rt null)
        right = screen["correct_response"]
        key = right if rng.random() < accuracy else {"f": "j", "j": "f"}[right]
        time.sleep(rng.uniform(0.45, 1.4))
        page.keyboard.press(key)
    elif kind == "button":
        time.sleep(rng.uniform(0.5, 1.0))
        page.click("button.jspsych-btn >> text=Yes")
    elif kind == "likert":
        page.click(f"#jspsych-survey-likert-form input[type=radio] >> nth={rng.randrange(2, 5)}")
        page.click("#jspsych-survey-likert-next")
    elif kind == "text":
        page.fill("#input-0", rng.choice(["none", "Some sentences were long, but fine.", ""]))
        page.click("#jspsych-survey-text-next")


def run_once(browser, html: Path, params: dict, accuracy: float, rng: random.Random, skip: tuple,
             state: dict) -> tuple[str, str]:
    """One jsPsych run (a whole study or one JATOS component): returns (csv, json) as jsPsych returns them."""
    page = browser.new_page()
    query = "&".join(f"{k}={v}" for k, v in params.items())
    page.goto(f"{html.as_uri()}?{query}")
    seen = 0
    while True:
        page.wait_for_function(f"() => window.__done || (window.__screen && window.__screen.n > {seen})",
                               timeout=20_000)
        if page.evaluate("() => !!window.__done"):
            break
        screen = page.evaluate("() => window.__screen")
        seen = screen["n"]
        answer(page, screen, rng, accuracy, skip, state)
    out = page.evaluate("() => [jsPsych.data.get().csv(), jsPsych.data.get().json()]")
    page.close()
    return out[0], out[1]


def write(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--node-modules", type=Path, default=ROOT / "participants" / "web" / "js" / "node_modules")
    ap.add_argument("--study", type=Path, default=STUDY, help="the timeline (jsPsych 7: jspsych_corpus/v7/study)")
    args = ap.parse_args()
    missing = [s for s in SCRIPTS if not (args.node_modules / s).exists()]
    if missing:
        print(f"missing npm packages in {args.node_modules}: {', '.join(missing)} (run `npm ci` in "
              "participants/web/js)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright  # a test-only dependency: imported where it is used
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        html = Path(tmp) / "study.html"
        html.write_text(page_html(args.node_modules.resolve(), args.study.resolve()), encoding="utf-8")
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--headless",
                                                                     "--disable-gpu", "--allow-file-access-from-files"])
        for name, (params, acc, seed, skip) in PEOPLE.items():
            csv_text, json_text = run_once(browser, html, params, acc, random.Random(seed), skip, {})
            write(args.out / f"{name}.csv", csv_text)
            write(args.out / f"{name}.json", json_text)
        lines = []
        for pid, (params, acc, seed, skip) in JATOS.items():
            rng, state = random.Random(seed), {}
            for component in ("1", "2"):
                _, json_text = run_once(browser, html, dict(params, PROLIFIC_PID=pid, component=component), acc,
                                        rng, skip, state)
                lines.append(json_text)
        write(args.out / "jatos_results.txt", "\n".join(lines) + "\n")
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
