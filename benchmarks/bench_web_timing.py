"""Browser timing in headless Chromium: twinlab's frame-counting RSVP plugin vs plain jsPsych sequencing.

Both run in ONE page, sentences alternating (so both see the same machine load):
  - twinlab: one `twinlab-rsvp` trial per sentence; each word is painted in the rAF callback of
    its intended frame (frames counted from the fixation's frame, no timers between words);
  - baseline: plain jsPsych, one html-keyboard-response trial per word and per blank with
    `trial_duration` (the usual way), fixation likewise.
Painted onsets are rAF timestamps: twinlab's are the callbacks that painted each word; the
baseline's are the first frame after jsPsych wrote the word (a MutationObserver notes the write, a
rAF loop the next frame). Word-onset error = (onset - first word's onset) / frame - intended
frames, in frames; the first word of a sentence is the reference (error 0 by definition).

RT resolution: the quantum of KeyboardEvent.timeStamp and performance.now() in a page served as
`twinlab web serve` serves it (cross-origin isolated: COOP/COEP headers) and in a plain page.

    python -m benchmarks.bench_web_timing                 # 5 + 5 sentences of 9 words, 250 ms on / 250 ms off
    python -m benchmarks.bench_web_timing --sentences 10 --word-ms 200 --gap-ms 100 --json out.json
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
JS = REPO / "participants" / "web" / "js"
ORIGIN = "http://localhost:9/"  # answered by page.route; localhost is a secure context (needed for isolation)
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync"]

PAGE_JS = r"""
async (p) => {
  const paints = [];                       // baseline: first frame after each DOM write
  let pending = null;
  const display = document.getElementById("exp");
  new MutationObserver(() => { if (pending === null) pending = { at: performance.now() };
                               pending.text = display.textContent.trim(); })
    .observe(display, { childList: true, subtree: true, characterData: true });
  let running = true;
  const loop = (ts) => {
    if (pending !== null && ts > pending.at) { paints.push({ ts, text: pending.text }); pending = null; }
    if (running) requestAnimationFrame(loop);
  };
  requestAnimationFrame(loop);
  // the frame period, as the experiment page measures it
  const ts = await new Promise((res) => {
    const a = []; const f = (t) => { a.push(t); a.length > 120 ? res(a) : requestAnimationFrame(f); };
    requestAnimationFrame(f);
  });
  const iv = ts.slice(1).map((t, i) => t - ts[i]).sort((a, b) => a - b);
  const F = iv[iv.length - 1] < 1.5 * iv[iv.length >> 1] ? (ts[ts.length - 1] - ts[0]) / iv.length : iv[iv.length >> 1];
  const cfg = { frame_ms: F, response: "key", respond_during_sentence: true,
                timing: { fixation_ms: p.fixation_ms, word_ms: p.word_ms, gap_ms: p.gap_ms, response_ms: 50,
                          feedback_ms: 0, iti_ms: 0, panel_delay_ms: 0 },
                keys: { response: "space" }, texts: { response_prompt: "?" }, colors: {} };
  const jsPsych = initJsPsych({ display_element: display });
  const timeline = [];
  const base = [];
  p.sentences.forEach((words, s) => {
    const unit = { trial_index: s, item_id: "s" + s, units: words, critical_index: 0,
                   correct_response: "no_violation", feedback: false };
    timeline.push({ type: jsPsychTwinlabRsvp, trial: unit, config: cfg, data: { method: "twinlab", s } });
    timeline.push({ type: jsPsychHtmlKeyboardResponse, stimulus: "+", choices: "NO_KEYS",
                    trial_duration: p.fixation_ms, data: { method: "baseline", s } });
    words.forEach((w, j) => {
      timeline.push({ type: jsPsychHtmlKeyboardResponse, stimulus: "<div class='bw'>" + w + "</div>",
                      choices: "NO_KEYS", trial_duration: p.word_ms, data: { method: "baseline", s, j },
                      on_load: () => base.push({ s, j, w, written: performance.now() }) });
      timeline.push({ type: jsPsychHtmlKeyboardResponse, stimulus: "", choices: "NO_KEYS",
                      trial_duration: p.gap_ms, data: { method: "baseline", s } });
    });
    timeline.push({ type: jsPsychHtmlKeyboardResponse, stimulus: "", choices: "NO_KEYS", trial_duration: 300 });
  });
  await jsPsych.run(timeline);
  running = false;
  const ours = jsPsych.data.get().filter({ method: "twinlab" }).values().map((d) => d.twinlab);
  return { frame_ms: F, intervals: iv, ours: ours.map((r) => ({ onsets: r.unit_onsets, offsets: r.unit_offsets,
           dropped: r.dropped_frames })), base, paints, isolated: window.crossOriginIsolated };
}
"""

RESOLUTION_JS = r"""
async (n) => {
  const stamps = [];
  document.addEventListener("keydown", (e) => stamps.push(e.timeStamp));
  window.__stamps = stamps;
  const now = []; for (let i = 0; i < 20000; i++) now.push(performance.now());
  return { now, isolated: window.crossOriginIsolated };
}
"""


def _page_html() -> str:
    return ("<!doctype html><html><head><meta charset='utf-8'>"
            "<link rel='stylesheet' href='static/jspsych.css'><link rel='stylesheet' href='static/twinlab.css'>"
            "<script src='static/jspsych.js'></script><script src='static/plugin-html-keyboard-response.js'></script>"
            "<script src='static/twinlab-frames.js'></script><script "
            "src='static/twinlab-rsvp.js'></script></head><body><div id='exp'></div></body></html>")


def _serve(page, isolated: bool) -> None:
    from participants.web.site import assets

    files = assets()
    headers = {"Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp",
               "Cross-Origin-Resource-Policy": "same-origin"} if isolated else {}

    def handle(route):
        name = route.request.url[len(ORIGIN):].split("?")[0]
        if name in ("", "index.html"):
            return route.fulfill(body=_page_html(), content_type="text/html", headers=headers)
        path = files.get(name.removeprefix("static/"))
        if path is None:
            return route.fulfill(status=404, body="")
        ctype = "text/css" if name.endswith(".css") else "application/javascript"
        return route.fulfill(body=path.read_bytes(), content_type=ctype, headers=headers)

    page.route(ORIGIN + "**", handle)


def _quantum(values: list[float]) -> float | None:
    """The largest of 1, 0.1, 0.01, 0.005, 0.001 ms that every value is a multiple of."""
    for q in (1.0, 0.1, 0.01, 0.005, 0.001):
        if all(abs(v / q - round(v / q)) < 1e-6 for v in values):
            return q
    return None


def _errors(onsets: list[float], frame: float, step_frames: int) -> list[float]:
    return [round((t - onsets[0]) / frame - j * step_frames, 3) for j, t in enumerate(onsets)]


def _summary(errors: list[float], intervals: list[float], target_ms: float) -> dict:
    late = [round(e) for e in errors]
    return {
        "words": len(errors),
        "on_intended_frame": sum(e == 0 for e in late),
        "max_frames_off": max(abs(e) for e in late),
        "frames_off_counts": {str(k): late.count(k) for k in sorted(set(late))},
        "interval_target_ms": round(target_ms, 3),
        "interval_mean_ms": round(statistics.fmean(intervals), 3),
        "interval_sd_ms": round(statistics.pstdev(intervals), 3),
        "interval_max_abs_error_ms": round(max(abs(i - target_ms) for i in intervals), 3),
    }


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sentences", type=int, default=5, help="sentences per method (alternating)")
    ap.add_argument("--words", type=int, default=9, help="words per sentence")
    ap.add_argument("--word-ms", type=float, default=250.0)
    ap.add_argument("--gap-ms", type=float, default=250.0)
    ap.add_argument("--fixation-ms", type=float, default=500.0)
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    words = ["il", "cuoco", "che", "il", "cliente", "vicino", "guarda", "prepara", "la", "torta", "con", "cura"]
    sentences = [[words[(s + j) % len(words)] + ("" if j else "") for j in range(args.words)]
                 for s in range(args.sentences)]
    params = {"sentences": sentences, "word_ms": args.word_ms, "gap_ms": args.gap_ms, "fixation_ms": args.fixation_ms}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1024, "height": 768})
        _serve(page, isolated=True)
        page.goto(ORIGIN)
        raw = page.evaluate(PAGE_JS, params)
        resolution = {}
        for isolated in (True, False):
            pg = browser.new_page()
            _serve(pg, isolated=isolated)
            pg.goto(ORIGIN)
            r = pg.evaluate(RESOLUTION_JS, 0)
            for _ in range(60):
                pg.keyboard.press("f")
            stamps = pg.evaluate("() => window.__stamps")
            now = r["now"]
            diffs = sorted({round(b - a, 6) for a, b in zip(now, now[1:], strict=False) if b > a})
            resolution["isolated (twinlab web serve)" if isolated else "not isolated (plain static host)"] = {
                "crossOriginIsolated": r["isolated"], "performance_now_quantum_ms": _quantum(now),
                "smallest_step_ms": diffs[0] if diffs else None,
                "key_timestamp_quantum_ms": _quantum(stamps), "key_events": len(stamps)}
            pg.close()
        version = browser.version
        browser.close()

    frame = raw["frame_ms"]
    step = round((args.word_ms + args.gap_ms) / frame)
    ours_err, ours_iv = [], []
    for r in raw["ours"]:
        ours_err += _errors(r["onsets"], frame, step)
        ours_iv += [b - a for a, b in zip(r["onsets"], r["onsets"][1:], strict=False)]
    # baseline: painted onset of each word = first frame after jsPsych wrote it
    base_err, base_iv = [], []
    paints = raw["paints"]
    by_sentence: dict[int, list[float]] = {}
    for w in raw["base"]:
        painted = next((pt["ts"] for pt in paints if pt["ts"] > w["written"]), None)
        by_sentence.setdefault(w["s"], []).append(painted)
    for onsets in by_sentence.values():
        base_err += _errors(onsets, frame, step)
        base_iv += [b - a for a, b in zip(onsets, onsets[1:], strict=False)]
    target = step * frame
    out = {
        "chromium": version, "frame_ms": round(frame, 4), "refresh_hz": round(1000 / frame, 3),
        "rAF_interval_ms": {"min": round(min(raw["intervals"]), 3), "max": round(max(raw["intervals"]), 3)},
        "design": {"sentences_per_method": args.sentences, "words": args.words, "word_ms": args.word_ms,
                   "gap_ms": args.gap_ms, "intended_onset_step_frames": step},
        "twinlab_rsvp": {**_summary(ours_err, ours_iv, target),
                         "dropped_frames": sum(r["dropped"] for r in raw["ours"])},
        "jspsych_trial_duration": _summary(base_err, base_iv, target),
        "rt_resolution": resolution,
    }
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    return out


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    main()
