"""The Italian bundled spec in a real PsychoPy window: every screen text drawn is the Italian one.

The session runs in its own process under a private Xvfb, started through a small driver that
records the text of every `psychopy.visual.TextStim` each time it is drawn with a new text (the
stimuli PsychoPy really renders), then runs the ordinary `run-human` command. xdotool plays the
participant: pages, a panel answer, a timeout, the quit key declined with N and then confirmed
with S (the Italian "si"; Y does nothing), and a resumed session to its end.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from experiments.screen_texts import DEFAULTS, fill, screen_texts
from experiments.session import read_rows, session_paths
from experiments.spec import bundled_spec_path, load_spec

try:  # shared helpers and fixtures (the repository root, or tests/, is on sys.path)
    from tests.participants.test_participants_gui import ROOT, env_for, n_rows, wait_for, xdisplay  # noqa: F401
except ModuleNotFoundError:  # plain `pytest` puts tests/ itself on sys.path
    from test_participants_gui import ROOT, env_for, n_rows, wait_for, xdisplay  # noqa: F401

pytestmark = [pytest.mark.gui, pytest.mark.slow]

# records each TextStim's text when it is drawn with a text it did not have at its last draw
DRIVER = """
import json, sys
from psychopy import visual
record = open(sys.argv[1], "a", encoding="utf-8")
draw = visual.TextStim.draw
def recording_draw(self, *args, **kwargs):
    if getattr(self, "_recorded_text", None) != self.text:
        self._recorded_text = self.text
        record.write(json.dumps(self.text, ensure_ascii=False) + "\\n")
        record.flush()
    return draw(self, *args, **kwargs)
visual.TextStim.draw = recording_draw
from experiments.cli import app
sys.argv = ["twinlab", *sys.argv[2:]]
app()
"""


def italian_spec(tmp_path: Path) -> Path:
    """The bundled Italian example with short timings, split in two blocks (an intro and a break), and
    two sessions (the end page of session 1 announces the next)."""
    bundled = bundled_spec_path("lakretz2021_italian_example")
    data = yaml.safe_load(bundled.read_text(encoding="utf-8"))
    data["stimuli"]["file"] = str(load_spec(bundled).stimuli.file)
    data["sessions"] = 2
    data["timing"] = dict(fixation_ms=150, word_ms=120, gap_ms=80, panel_delay_ms=150, response_ms=1500,
                          feedback_ms=250, iti_ms=50)
    first = data["blocks"][0]
    first.update(trials=2, break_after=True, intro_text="Prima parte: {trials} frasi.")
    data["blocks"].append({**first, "name": "second", "trials": 4, "break_after": False, "intro_text": None})
    path = tmp_path / "italiano.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


class Drawn:
    """The texts the session has drawn so far, in order."""

    def __init__(self, path: Path):
        self.path = path

    def texts(self) -> list[str]:
        if not self.path.exists():
            return []
        return [json.loads(ln) for ln in self.path.read_text(encoding="utf-8").splitlines() if ln]

    def count(self, text: str) -> int:
        return self.texts().count(text)


class EventCounter:
    """Counts lines of the session's event log (Event, Block, Trial, Unit, Text, Time) as it grows."""

    def __init__(self, path: Path):
        self.path = path

    def count(self, event: str, trial: int) -> int:
        if not self.path.exists():
            return 0
        lines = self.path.read_text(encoding="utf-8").splitlines()[1:]
        return sum(1 for ln in lines if ln.split("\t")[0] == event and ln.split("\t")[2] == str(trial))


def xkey(display: str, key: str) -> None:
    subprocess.run(["xdotool", "key", key], env=env_for(display), check=True, timeout=10)


def start(display: str, record: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", DRIVER, str(record), "run-human", *args], env=env_for(display),
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def press_until(display: str, key: str, cond, proc: subprocess.Popen, what: str, every: float = 0.8) -> None:
    """Press `key` now and again until `cond()` (pages ignore presses in their first 0.3 s)."""
    t0 = last = time.monotonic()
    xkey(display, key)
    while not cond():
        if proc.poll() is not None:
            if cond():
                return
            raise AssertionError(f"session exited ({proc.returncode}) waiting for {what}: {proc.stderr.read()}")
        if time.monotonic() - t0 > 60:
            raise AssertionError(f"timed out waiting for {what}")
        if time.monotonic() - last > every:
            xkey(display, key)
            last = time.monotonic()
        time.sleep(0.05)


def test_italian_spec_draws_only_italian_screen_texts(xdisplay, tmp_path):
    if shutil.which("xdotool") is None:
        pytest.skip("xdotool is not installed")
    spec_path = italian_spec(tmp_path)
    spec = load_spec(spec_path)
    texts = screen_texts(spec)
    out, pid = tmp_path / "data", "P3"
    csv_path, json_path = session_paths(out, spec.name, pid, 1)
    events = EventCounter(out / "events" / csv_path.name.replace("_data.csv", "_events.tsv"))
    drawn = Drawn(tmp_path / "drawn.jsonl")
    shots = tmp_path / "shots"
    common = [str(spec_path), "--participant", pid, "--out", str(out)]

    proc = start(xdisplay, drawn.path, *common, "--trials", "4", "--screenshots", str(shots))
    pages = [" ".join(p.split()) for p in spec.texts.instructions]
    try:
        # instructions (two pages), then the first block's intro: SPACE until the first panel is up
        wait_for(lambda: pages[0] in drawn.texts(), 60, "the first instruction page", proc)
        press_until(xdisplay, "space", lambda: pages[1] in drawn.texts(), proc, "the second page")
        # the intro's {trials}: the block's 2 trials
        press_until(xdisplay, "space", lambda: "Prima parte: 2 frasi." in drawn.texts(), proc, "the block intro")
        press_until(xdisplay, "space", lambda: events.count("FIX_ON", 0), proc, "trial 0")
        # trial 0: answered with F (VIOLAZIONE); trial 1: no answer (Troppo lento!)
        wait_for(lambda: events.count("PanelOn", 0), 30, "the first panel", proc)
        time.sleep(0.3)
        xkey(xdisplay, "f")
        # the break: ESC, then N goes back to the break page, then SPACE on to the second block
        wait_for(lambda: drawn.count(texts["break_text"]) == 1, 60, "the break page", proc)
        xkey(xdisplay, "Escape")
        wait_for(lambda: drawn.count(texts["quit_prompt"]) == 1, 30, "the quit prompt", proc)
        xkey(xdisplay, "n")
        wait_for(lambda: drawn.count(texts["break_text"]) == 2, 30, "the break page again", proc)
        press_until(xdisplay, "space", lambda: events.count("FIX_ON", 2), proc, "trial 2")
        # ESC during trial 2: Y is not the Italian yes and does nothing; S ends the session
        wait_for(lambda: events.count("WORD_ON", 2), 30, "trial 2's first unit", proc)
        xkey(xdisplay, "Escape")
        wait_for(lambda: drawn.count(texts["quit_prompt"]) == 2, 30, "the second quit prompt", proc)
        xkey(xdisplay, "y")
        time.sleep(1.0)
        assert proc.poll() is None, "Y ended an Italian session"
        xkey(xdisplay, "s")
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    meta = json.loads(json_path.read_text(encoding="utf-8"))
    assert meta["status"] == "aborted" and [p["answer"] for p in meta["quit_prompts"]] == ["n", "y"]
    rows = read_rows(csv_path)
    assert len(rows) == 2 and rows[0]["response"] == "violation" and rows[1]["response"] == "none"
    assert rows[0]["feedback_text"] in (texts["correct_text"], texts["incorrect_text"])
    assert rows[1]["feedback_text"] == "Troppo lento!"
    assert meta["runs"][0]["screen_texts"]["texts"] == texts and meta["runs"][0]["screen_texts"]["set"] == "it"
    assert (shots / "quit_confirm.png").exists() and (shots / "break.png").exists()

    # resume: the welcome-back page, two more trials answered with J, the end page
    proc = start(xdisplay, drawn.path, *common, "--trials", "4", "--resume")
    resume = fill(texts["resume_text"], trial=3, total=4)
    try:
        wait_for(lambda: resume in drawn.texts(), 60, "the resume page", proc)
        press_until(xdisplay, "space", lambda: events.count("FIX_ON", 2) == 2, proc, "trial 2 again")
        for k in (2, 3):
            wait_for(lambda k=k: events.count("PanelOn", k), 30, f"panel {k}", proc)
            time.sleep(0.3)
            xkey(xdisplay, "j")
            wait_for(lambda k=k: n_rows(csv_path) == k + 1, 60, f"trial {k}", proc)
        wait_for(lambda: texts["end_text"] in drawn.texts(), 30, "the end page", proc)
        press_until(xdisplay, "space", lambda: proc.poll() is not None, proc, "the end", every=1.0)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    assert [r["response"] for r in read_rows(csv_path)][2:] == ["no_violation", "no_violation"]

    seen = set(drawn.texts())
    expected = {
        "Premi SPAZIO per continuare", "Premi SPAZIO per iniziare", "Vuoi interrompere la sessione?",
        "S = esci (quanto fatto finora è salvato)      N = continua", "La sessione è terminata. Grazie.",
        "Fai una breve pausa. Premi SPAZIO per continuare.", "Troppo lento!", "VIOLAZIONE", "ACCETTABILE",
        "La frase conteneva una violazione grammaticale?", "Bentornato/a. La sessione riprende dalla frase 3 di 4.",
        "Grazie! La sessione è finita.", "La prossima sessione: sessione 2 di 2.",
        " ".join(spec.texts.instructions[0].split()),
    }
    assert expected <= seen, expected - seen
    assert seen & {"Corretto!", "Sbagliato!"}
    english = {fill(t, key="SPACE", yes="Y", no="N") for t in DEFAULTS["en"].values()}
    assert not seen & english, seen & english
    assert not any(t.startswith(("Press", "Welcome", "Quit")) for t in seen)

