""""Done when": a 2 x 2 judgment study of our own naming (agreement x distance; no factor is called
`grammatical`), run by 8 model subjects (the bundled SmolLM2 through `twinlab run-model`) and by 2 people in
Debian's Chromium against `twinlab web serve`, analysed by `twinlab analyze`; acceptance and d' by the
design's factors are checked against counts made here by hand from the session files (plain csv reading,
model copies, sessions given the same list, counted once by their item x condition)."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from scipy.stats import norm

pytestmark = [pytest.mark.long, pytest.mark.slow, pytest.mark.model, pytest.mark.browser]
ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"

NOUNS = [("key", "is rusty", "are rusty", "cabinets"), ("dog", "is barking", "are barking", "neighbours"),
         ("author", "writes well", "write well", "critics"), ("teacher", "is kind", "are kind", "pupils"),
         ("box", "is heavy", "are heavy", "books"), ("car", "is fast", "are fast", "drivers"),
         ("girl", "sings loudly", "sing loudly", "concerts"), ("letter", "was long", "were long", "friends")]
SPEC = """name: agreement_distance
description: A 2 x 2 judgment study (agreement x distance), checked by hand.
seed: 7
design:
  file: items.csv
  factors:
    agreement: [match, mismatch]
    distance: [near, far]
  lists: latin_square
blocks:
  - {name: test, role: test, feedback: false}
timing:
  fixation_ms: 300
  iti_ms: 200
task:
  kind: judgment
  presentation: whole
  question: "Is this sentence acceptable English?"
  labels:
    - {value: "yes", text: "Acceptable", key: f}
    - {value: "no", text: "Not acceptable", key: j}
texts:
  instructions:
    - "Decide whether each sentence is acceptable English. Press F for acceptable and J for not acceptable.
      Press SPACE to begin."
"""


def write_study(folder: Path) -> tuple[Path, dict[str, tuple[str, str, int]]]:
    folder.mkdir(parents=True, exist_ok=True)
    sentences = {}
    with open(folder / "items.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["item", "agreement", "distance", "sentence", "answer"])
        for i, (noun, good, bad, attractor) in enumerate(NOUNS, 1):
            for agr in ("match", "mismatch"):
                for dist in ("near", "far"):
                    s = (f"The {noun}{'' if dist == 'near' else ' next to the ' + attractor} "
                         f"{good if agr == 'match' else bad}.")
                    w.writerow([i, agr, dist, s, "yes" if agr == "match" else "no"])
                    sentences[s] = (agr, dist, i)
    (folder / "study.yaml").write_text(SPEC, encoding="utf-8")
    return folder / "study.yaml", sentences


def person_answer(pid: str, agr: str, dist: str, item: int) -> str:
    """The two people's answers: P1 accepts agreement errors far from the subject (attraction); P2 accepts
    every match, rejects near mismatches, and accepts far mismatches of odd items."""
    if agr == "match":
        return "yes"
    if dist == "near":
        return "no"
    return "yes" if pid == "P1" or item % 2 else "no"


def run_cli(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    res = subprocess.run([sys.executable, "-m", "experiments.cli", *args], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=timeout)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-3000:]
    return res


def play_person(page, url: str, pid: str, sentences: dict) -> int:
    page.goto(f"{url}/?participant={pid}")
    page.wait_for_function("() => (document.body.dataset.screen || '').startsWith('instructions')", timeout=30_000)
    page.wait_for_timeout(300)
    page.keyboard.press(" ")
    answered = 0
    for t in range(8):
        page.wait_for_function(f"() => {{ const s = document.querySelector('.tl-stage'); return !!s && "
                               f"+s.dataset.trial === {t} && s.dataset.screen === 'judgment'; }}", timeout=30_000)
        text = page.evaluate("() => document.querySelector('.tl-stage').innerText")
        shown = [s for s in sentences if s in text]
        assert len(shown) == 1, text
        agr, dist, item = sentences[shown[0]]
        page.wait_for_timeout(120)
        page.keyboard.press("f" if person_answer(pid, agr, dist, item) == "yes" else "j")
        answered += 1
    page.wait_for_function("() => document.body.dataset.screen === 'end'", timeout=30_000)
    return answered


def read_rows(folder: Path) -> list[dict]:
    rows = []
    for p in sorted((folder / "data").glob("*_data.csv")):
        with open(p, newline="", encoding="utf-8") as fh:
            rows += list(csv.DictReader(fh))
    return rows


def hand_counts(rows: list[dict]) -> tuple[dict, dict]:
    """Acceptance per (agreement, distance) and d' per distance from rows (answer 'no' = signal)."""
    acc = defaultdict(lambda: [0, 0])
    sd = defaultdict(lambda: [0, 0, 0, 0])  # hits, signal, false alarms, noise
    for r in rows:
        cell = (r["agreement"], r["distance"])
        acc[cell][0] += r["response"] == "yes"
        acc[cell][1] += 1
        k = sd[r["distance"]]
        if r["correct_response"] == "no":
            k[0] += r["response"] == "no"
            k[1] += 1
        else:
            k[2] += r["response"] == "no"
            k[3] += 1
    dprime = {}
    for dist, (h, s, f, n) in sd.items():
        H, F = (h + .5) / (s + 1), (f + .5) / (n + 1)
        dprime[dist] = {"hits": h, "signal": s, "fas": f, "noise": n, "dprime": norm.ppf(H) - norm.ppf(F),
                        "c": -(norm.ppf(H) + norm.ppf(F)) / 2}
    return {c: a / n for c, (a, n) in acc.items()}, dprime


@pytest.mark.untimed  # no response deadline: each key waits for its screen; the RT rules are counted from the rows
def test_a_2x2_study_of_our_own_by_models_and_people_checked_by_hand(tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Debian's chromium is not installed ({CHROMIUM})")
    sync_api = pytest.importorskip("playwright.sync_api")
    sys.path.insert(0, str(ROOT / "tests"))
    from web_support import start_server, stop

    spec, sentences = write_study(tmp_path / "study")
    run_cli("run-model", str(spec), "-n", "8", "-p", "meta", "-c", "none", "--out", str(tmp_path / "models"))
    proc, url = start_server(spec, tmp_path / "people")
    try:
        with sync_api.sync_playwright() as p:
            b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            for pid in ("P1", "P2"):
                ctx = b.new_context(viewport={"width": 1024, "height": 768})
                assert play_person(ctx.new_page(), url, pid, sentences) == 8
                ctx.close()
            b.close()
    finally:
        stop(proc)
    out = tmp_path / "report"
    run_cli("analyze", str(tmp_path / "people"), str(tmp_path / "models"), "--out", str(out),
            "--by", "agreement,distance", "--no-mixed", "--n-boot", "300")

    people = read_rows(tmp_path / "people")
    assert len(people) == 16 and {r["subject_kind"] for r in people} == {"human"}
    for r in people:  # what the page recorded is what the person pressed
        agr, dist, item = (sentences[r["words"]] if r["words"] in sentences
                           else sentences[json.loads(r["materials"])["sentence"]])
        assert r["response"] == person_answer(r["subject_id"], agr, dist, item)
    models = read_rows(tmp_path / "models")
    assert len(models) == 64
    by_trial = {}
    for r in models:  # deterministic copies: each item x condition answered alike, counted once
        assert by_trial.setdefault(r["item_id"], r["response"]) == r["response"]
    distinct = list({r["item_id"]: r for r in models}.values())
    assert len(distinct) == 32

    acc = {}
    with open(out / "tables" / "acceptance_long.csv", newline="") as fh:
        for r in csv.DictReader(fh):
            acc[(r["group"].startswith("human"), r["agreement"], r["distance"])] = r
    dps = {}
    with open(out / "tables" / "dprime.csv", newline="") as fh:
        for r in csv.DictReader(fh):
            dps[(r["group"].startswith("human"), r["distance"])] = r
    for is_human, rows in ((True, people), (False, distinct)):
        hand_acc, hand_dp = hand_counts(rows)
        for (agr, dist), v in hand_acc.items():
            got = acc[(is_human, agr, dist)]
            assert float(got["rate"]) == pytest.approx(v), (is_human, agr, dist)
            # people: 2; models: 8 deterministic sessions on 4 lists, each list's two copies one subject
            assert int(got["n_subjects"]) == (2 if is_human else len({r["list"] for r in models}))
            assert got["ci_unit"] == "subject"
        for dist, k in hand_dp.items():
            got = dps[(is_human, dist)]
            assert (int(got["hits"]), int(got["signal_trials"]), int(got["false_alarms"]),
                    int(got["noise_trials"])) == (k["hits"], k["signal"], k["fas"], k["noise"])
            assert (float(got["dprime"]) == pytest.approx(k["dprime"])
                    and float(got["criterion_c"]) == pytest.approx(k["c"]))
    # the people's numbers as designed: P1 and P2 accept every match and reject every near mismatch
    assert hand_counts(people)[0][("match", "near")] == 1.0 and hand_counts(people)[0][("mismatch", "near")] == 0.0
    # the people's RTs: correct trials, 200-3000 ms, then 2.5 SD per subject; each rule's count by hand
    ex = next(csv.DictReader(open(out / "tables" / "rt_exclusions.csv", newline="")))
    wrong = [r for r in people if r["correct"] != "True"]
    ok = [float(r["rt_ms"]) for r in people if r["correct"] == "True"]
    assert (ex["group"], ex["task"], int(ex["trials_with_rt"])) == ("human", "judgment", 16)
    assert int(ex["error_or_unanswered"]) == len(wrong)
    assert int(ex["outside_trim"]) == sum(not 200 <= v <= 3000 for v in ok)
    assert int(ex["kept"]) + int(ex["beyond_sd"]) == sum(200 <= v <= 3000 for v in ok)
    results = json.loads((out / "results.json").read_text())
    assert any("deterministic copies" in n for n in results["notes"])
    copies = list(csv.DictReader(open(out / "tables" / "model_copies.csv", newline="")))
    n_lists = len({r["list"] for r in models})
    assert len(copies) == n_lists and sum(int(c["sessions"]) for c in copies) == 8
    assert sum(int(c["duplicates_dropped"]) for c in copies) == 64 - 32
