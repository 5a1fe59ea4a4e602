"""A small PsychoPy Builder study, run by the real PsychoPy, whose data files are the import fixtures.

Why: `twinlab import psychopy` must read the CSV that Builder's own compiled script writes, not a file
written here to look like one. This script

1. writes the study: a `.psyexp` made with PsychoPy's own `psychopy.experiment` API (instructions, a
   `practice` loop with feedback, more instructions, a `trials` loop whose conditions file is chosen by
   the participant's list, a keyboard `key_resp` scored against the conditions file's `corrAns`), and
   its conditions files (items, conditions, sentences, correct keys);
2. compiles it with PsychoPy's compiler (`psychopy.scripts.psyexpCompile`) once per participant (the
   experiment-info dialog off, its defaults set to the participant, session and list);
3. runs each compiled script under a private Xvfb display while xdotool presses the keys (space on the
   instruction screens, F or J on the trials, at random with a per-participant seed), and copies the CSV
   PsychoPy wrote into the fixture folder.

    PYTHONPATH=$PWD .venv/bin/python tests/support/psychopy_builder_study.py tests/data/imports/psychopy

The trial files are whatever PsychoPy wrote (real response times), so a rerun gives other RTs and answers;
the tests compare the import with a count of whichever files are there.
"""
from __future__ import annotations

import csv
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STUDY = "acceptability"
# (item, sentence when grammatical, sentence when not): twinlab's own English sentences
ITEMS = [
    (1, "The key to the cabinets is on the table.", "The key to the cabinets are on the table."),
    (2, "The author who the critics admire writes well.", "The author who the critics admire write well."),
    (3, "The dogs near the house bark loudly.", "The dogs near the house barks loudly."),
    (4, "The picture of the children hangs in the hall.", "The picture of the children hang in the hall."),
    (5, "The teachers in the school work hard.", "The teachers in the school works hard."),
    (6, "The girl with the flowers smiles.", "The girl with the flowers smile."),
    (7, "The boxes under the bed are heavy.", "The boxes under the bed is heavy."),
    (8, "The doctor near the nurses waits.", "The doctor near the nurses wait."),
]
PRACTICE = [("p1", "practice", "The cat sleeps on the sofa.", "f"), ("p2", "practice", "The birds sings at dawn.", "j")]
PARTICIPANTS = [("P01", "001", "1", 11), ("P02", "001", "2", 12), ("P03", "001", "1", 13)]  # id, session, list, seed
KEYS = ("f", "j")  # f = acceptable, j = not acceptable


def conditions_rows(list_number: int) -> list[dict[str, str]]:
    """List 1: items 1-4 grammatical, 5-8 not; list 2 the other way round (a Latin square by hand)."""
    rows = []
    for item, good, bad in ITEMS:
        grammatical = (item <= 4) == (list_number == 1)
        rows.append({"item": str(item), "condition": "grammatical" if grammatical else "ungrammatical",
                     "sentence": good if grammatical else bad, "corrAns": "f" if grammatical else "j"})
    return rows


def write_conditions(folder: Path) -> None:
    cols = ["item", "condition", "sentence", "corrAns"]
    for n in (1, 2):
        with open(folder / f"items_list{n}.csv", "w", encoding="utf-8", newline="") as fh:
            w = csv.DictWriter(fh, cols, lineterminator="\n")
            w.writeheader()
            w.writerows(conditions_rows(n))
    with open(folder / "practice.csv", "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(cols)
        w.writerows(PRACTICE)


def build_experiment(info: str | None = None):
    """The Builder experiment, made with PsychoPy's own API (what Builder's GUI saves as .psyexp)."""
    from psychopy import experiment
    from psychopy.experiment.components.code import CodeComponent
    from psychopy.experiment.components.keyboard import KeyboardComponent
    from psychopy.experiment.components.text import TextComponent
    from psychopy.experiment.loops import TrialHandler
    from psychopy.experiment.routines import Routine

    exp = experiment.Experiment()
    s = exp.settings.params
    s["expName"].val = STUDY
    s["Experiment info"].val = info or "{'participant': '', 'session': '001', 'list': '1'}"
    s["Show info dlg"].val = info is None
    s["Full-screen window"].val = False
    s["Window size (pixels)"].val = (800, 600)
    s["Save csv file"].val = False
    s["Save wide csv file"].val = True
    s["Save psydat file"].val = False
    s["Save log file"].val = False

    def page(name: str, text: str) -> Routine:
        r = Routine(name, exp)
        r.addComponent(TextComponent(exp, name, name=f"{name}_text", text=text, stopVal=""))
        r.addComponent(KeyboardComponent(exp, name, name=f"{name}_key", allowedKeys="'space'", stopVal=""))
        exp.addRoutine(name, r)
        return r

    intro = page("instructions", "Is the sentence acceptable English? F = yes, J = no.\\n\\nPress SPACE for practice.")
    trial = Routine("trial", exp)
    stim = TextComponent(exp, "trial", name="stim", text="$sentence", stopVal="")
    stim.params["text"].updates = "set every repeat"
    trial.addComponent(stim)
    trial.addComponent(KeyboardComponent(exp, "trial", name="key_resp", allowedKeys="'f','j'", stopVal="",
                                         storeCorrect=True, correctAns="$corrAns"))
    exp.addRoutine("trial", trial)
    feedback = Routine("feedback", exp)
    code = CodeComponent(exp, "feedback", name="feedback_code")
    code.params["Begin Routine"].val = "msg = 'Correct!' if key_resp.corr else 'Wrong!'"
    feedback.addComponent(code)
    shown = TextComponent(exp, "feedback", name="feedback_text", text="$msg", stopVal=0.8)
    shown.params["text"].updates = "set every repeat"
    feedback.addComponent(shown)
    exp.addRoutine("feedback", feedback)
    main = page("main_instructions", "Now the main part. Press SPACE to begin.")
    practice = TrialHandler(exp, name="practice", loopType="random", nReps=1, conditionsFile="practice.csv")
    trials = TrialHandler(exp, name="trials", loopType="random", nReps=1,
                          conditionsFile="$'items_list' + expInfo['list'] + '.csv'")
    exp.flow.addRoutine(intro, 0)
    exp.flow.addRoutine(trial, 1)
    exp.flow.addRoutine(feedback, 2)
    exp.flow.addLoop(practice, 1, 3)
    exp.flow.addRoutine(main, len(exp.flow))
    exp.flow.addRoutine(trial, len(exp.flow))
    exp.flow.addLoop(trials, len(exp.flow) - 1, len(exp.flow))
    return exp


def compile_for(folder: Path, participant: str, session: str, list_number: str) -> Path:
    """Compile the study for one participant with PsychoPy's compiler (its dialog off, its info set)."""
    from psychopy.scripts.psyexpCompile import compileScript

    exp = build_experiment(f"{{'participant': '{participant}', 'session': '{session}', 'list': '{list_number}'}}")
    psyexp = folder / f"{STUDY}_{participant}.psyexp"
    exp.saveToXML(str(psyexp))
    script = folder / f"{STUDY}_{participant}.py"
    compileScript(str(psyexp), version=None, outfile=str(script))
    return script


def _window(env: dict[str, str], deadline: float) -> str | None:
    while time.monotonic() < deadline:
        r = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", "^PsychoPy$"], env=env,
                           capture_output=True, text=True)
        if r.stdout.strip():
            return r.stdout.split()[0]
        time.sleep(0.5)
    return None


def run_one(script: Path, seed: int, env: dict[str, str], timeout_s: float = 240.0) -> None:
    """Run a compiled script and press keys until it ends: space, then F or J at random, in turn (a key
    the current screen does not accept is ignored by Builder's keyboard), about every 0.6-1.2 s."""
    rng = random.Random(seed)
    log = open(script.with_suffix(".log"), "w+b")  # a file, not a pipe: PsychoPy's warnings would fill a pipe
    proc = subprocess.Popen([sys.executable, script.name], cwd=script.parent, env=env,
                            stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.monotonic() + timeout_s
    win = _window(env, deadline)
    if win is None:
        proc.kill()
        raise RuntimeError(f"{script.name}: no PsychoPy window appeared ({_tail(log)})")
    time.sleep(3.0)  # frame-rate measurement and the first screen
    k = 0
    while proc.poll() is None and time.monotonic() < deadline:
        key = "space" if k % 2 == 0 else rng.choice(KEYS)
        subprocess.run(["xdotool", "windowfocus", "--sync", win, "key", key], env=env, capture_output=True)
        k += 1
        time.sleep(rng.uniform(0.6, 1.2))
    if proc.poll() is None:
        proc.kill()
        raise RuntimeError(f"{script.name}: still running after {timeout_s:.0f} s")
    if proc.returncode != 0:
        raise RuntimeError(f"{script.name} exited {proc.returncode}: {_tail(log)}")
    log.close()


def _tail(log) -> str:
    log.seek(0)
    return log.read().decode(errors="replace")[-2000:]


def generate(out: Path, participants: list[tuple[str, str, str, int]] | None = None) -> list[Path]:
    """Write the study (out/study) and one CSV per participant (out/data), as PsychoPy wrote them."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from xdisplay import start_display

    study, data = out / "study", out / "data"
    study.mkdir(parents=True, exist_ok=True)
    data.mkdir(parents=True, exist_ok=True)
    write_conditions(study)
    build_experiment().saveToXML(str(study / f"{STUDY}.psyexp"))
    shown = start_display()
    if shown is None:
        raise RuntimeError("Xvfb did not start")
    display, xproc = shown
    env = {**os.environ, "DISPLAY": display}
    written = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            for f in study.glob("*.csv"):
                shutil.copy(f, work / f.name)
            for pid, session, list_number, seed in participants or PARTICIPANTS:
                run_one(compile_for(work, pid, session, list_number), seed, env)
                made = sorted((work / "data").glob(f"{pid}_{STUDY}_*.csv"))
                if len(made) != 1:
                    raise RuntimeError(f"{pid}: expected one data file, found {[p.name for p in made]}")
                target = data / made[0].name
                shutil.copy(made[0], target)
                written.append(target)
    finally:
        xproc.terminate()
    return written


if __name__ == "__main__":
    for p in generate(Path(sys.argv[1] if len(sys.argv) > 1 else "tests/data/imports/psychopy")):
        print(p)
