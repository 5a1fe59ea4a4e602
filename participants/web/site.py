"""The experiment page and its files: one HTML page, the pinned jsPsych build, twinlab's scripts.

`assets()` names every file the page loads (served from a fixed table, never from a path taken from
a request): the pinned jsPsych build, twinlab's scripts and every registered kind's page code
(kinds/<kind>/page.js, as `kind-<kind>.js`, loaded after twinlab-task.js, whose builders they register).
`build_site` writes them with precompiled sequences into a folder any static host serves.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from experiments.kinds import kind_file, kind_names
from experiments.lists import n_lists
from experiments.outputs import unsafe_target
from experiments.run_prep import RunPlan
from experiments.spec import Experiment
from participants.web.payload import page_config, sequence_payload, slot_subject

JS_DIR = Path(__file__).parent / "js"
NODE_MODULES = JS_DIR / "node_modules"
# page name -> file in this package (own scripts) or node_modules (npm, pinned in package-lock.json)
_ASSETS = {
    "jspsych.js": NODE_MODULES / "jspsych" / "dist" / "index.browser.min.js",
    "jspsych.css": NODE_MODULES / "jspsych" / "css" / "jspsych.css",
    "plugin-html-keyboard-response.js":
        NODE_MODULES / "@jspsych" / "plugin-html-keyboard-response" / "dist" / "index.browser.min.js",
    "twinlab-frames.js": JS_DIR / "twinlab-frames.js",
    "twinlab-rsvp.js": JS_DIR / "twinlab-rsvp.js",
    "twinlab-task.js": JS_DIR / "twinlab-task.js",
    "twinlab-experiment.js": JS_DIR / "twinlab-experiment.js",
    "twinlab.css": JS_DIR / "twinlab.css",
}
MAX_SLOTS = 1000


class SiteError(RuntimeError):
    """The site cannot be built (missing npm packages, an existing output folder...)."""


def kind_pages() -> dict[str, Path]:
    """Each registered kind's page code (its folder's page.js), as the page names it, in listing order."""

    pages = {name: kind_file(name, "page.js") for name in kind_names()}
    return {f"kind-{name}.js": path for name, path in pages.items() if path is not None}


def assets() -> dict[str, Path]:
    """The page's static files; refuses when the npm packages are not installed."""
    missing = [str(p) for p in _ASSETS.values() if not p.is_file()]
    if missing:
        raise SiteError(f"missing JavaScript file(s) {', '.join(missing)}; install them with "
                        f"`npm ci` in {JS_DIR} (scripts/setup.sh does it)")
    return {**_ASSETS, **kind_pages()}


def index_html(exp: Experiment, config: dict[str, Any], with_sequences: bool = False) -> str:
    """The page: config as inline JSON (never as markup), scripts from static/."""
    blob = json.dumps(config, ensure_ascii=False).replace("<", "\\u003c")
    title = exp.name.replace("<", "").replace("&", "")
    seq = '  <script src="sequences.js"></script>\n' if with_sequences else ""
    kinds = "".join(f'  <script src="static/{name}"></script>\n' for name in kind_pages())
    return f"""<!doctype html>
<html lang="{config['language']}">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>{title}</title>
  <link rel="stylesheet" href="static/jspsych.css">
  <link rel="stylesheet" href="static/twinlab.css">
  <script src="static/jspsych.js"></script>
  <script src="static/plugin-html-keyboard-response.js"></script>
  <script src="static/twinlab-frames.js"></script>
  <script src="static/twinlab-rsvp.js"></script>
  <script src="static/twinlab-task.js"></script>
{kinds}  <script id="twinlab-config" type="application/json">{blob}</script>
{seq}  <script src="static/twinlab-experiment.js" defer></script>
</head>
<body></body>
</html>
"""


def build_site(exp: Experiment, out: Path, *, slots: int, seed: int | None = None, force: bool = False,
               list_number: int | None = None) -> dict[str, Any]:
    """Write the static site into `out` (a new folder, or with `force` a replaced one); returns a summary.

    Slot k (1..slots) runs the sequences twinlab compiles for subject id `web<k:03d>`, every session
    of the spec; the page picks the slot from the `slot` URL parameter, else from a stable hash of
    the participant id (participants/web/js/twinlab-experiment.js). A design's slots carry their list
    (`slot_lists`; `?list=N` picks among the slots of list N); with `list_number` every slot is one of
    list N (slot numbers N, N + L, N + 2L, ...: the id rotation gives them list N, so the import
    recompiles them unchanged).
    """
    files = assets()
    if not 1 <= slots <= MAX_SLOTS:
        raise SiteError(f"--slots must be from 1 to {MAX_SLOTS}, got {slots}")

    if out.exists() and not force:
        raise SiteError(f"{out} exists; choose another --out or pass --force to replace it")
    if unsafe_target(out, folder=True):  # rmtree and rename below: never a link or a device
        raise SiteError(f"--out {out} {unsafe_target(out, folder=True)}")

    n = n_lists(exp)
    numbers = list(range(1, slots + 1)) if list_number is None or n is None else \
        [list_number + j * n for j in range(slots)]
    plan = RunPlan(exp, seed=seed, keep=0)  # experiments/run_prep.py; each slot compiled once, here
    sequences: dict[str, Any] = {}
    slot_lists = []
    for k in numbers:
        sid = slot_subject(k)
        compiled = {s: plan.sequence(sid, s) for s in range(1, exp.sessions + 1)}
        sequences[sid] = {str(s): sequence_payload(seq, exp=exp) for s, seq in compiled.items()}
        slot_lists.append((compiled[1].design or {}).get("list"))
    config = page_config(exp, "static")
    config["slots"] = [slot_subject(k) for k in numbers]
    if n is not None:  # a design's lists: the page's ?list=N picks among the slots of list N
        config["n_lists"] = n
        config["slot_lists"] = slot_lists
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        (tmp / "static").mkdir()
        for name, src in files.items():
            shutil.copyfile(src, tmp / "static" / name)
        (tmp / "index.html").write_text(index_html(exp, config, with_sequences=True), encoding="utf-8")
        blob = json.dumps(sequences, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
        (tmp / "sequences.js").write_text(f"window.TWINLAB_SEQUENCES = {blob};\n", encoding="utf-8")
        os.chmod(tmp, 0o755)
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {"out": str(out), "slots": slots, "sessions": exp.sessions, "spec_hash": exp.spec_hash,
            "trials_per_slot": {s: len(v[s]["trials"]) for v in list(sequences.values())[:1] for s in v}}
