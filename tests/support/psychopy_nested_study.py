"""Write tests/data/imports/psychopy_corpus/nested_lexical_decision/: PsychoPy's own ExperimentHandler and
TrialHandler2 (the data objects a compiled Builder script uses) record a lexical decision study with nested
loops, making the calls in the order Builder's generated code makes them (`thisExp.addData`, `loop.addData`,
`thisExp.nextEntry()` at the end of each iteration of every loop, `saveAsWideText`), so the CSV is what PsychoPy
2026.2.5 itself writes for such a study. No window is opened: the answers, their times and the routines' start
and stop times are drawn with a per-participant seed (the file holds them as PsychoPy wrote them).

The study (rows in the order Builder writes them):
- `intro` outside every loop (one row);
- `training_block` (outer loop, up to 3 passes) around `training` (4 items, keyboard `ld_resp`, feedback), then
  a `repeat_training` routine with keyboard `repeat_key` (r: train again, space: go on), then the outer
  loop's own row; P01 trains twice, P02 once;
- `blocks` (outer, 2 blocks, each naming its conditions file) around `trials` (6 items each, keyboard `ld_resp`
  scored against `corr_ans`), then a `break` routine and the outer loop's own row;
- `questionnaire` (3 statements, a slider `q_slider`: its `.response` and `.rt`);
- `flanker_trials` (another task: 4 trials, keyboard `flanker_key`);
- `end` outside every loop.

    PYTHONPATH=$PWD .venv/bin/python tests/support/psychopy_nested_study.py OUT_DIR [--legacy PSYCHOPY_1_90_DIR DEPS]
(tests/data/imports/psychopy_corpus/nested_lexical_decision: the CSVs then go in its data/, see PROVENANCE.md)

With `--legacy`, PsychoPy 1.90.3's own `psychopy.data` records the study instead (its source unpacked from PyPI's
PsychoPy-1.90.3.zip, DEPS a folder with configobj, future and setuptools<70 for its imports): its `TrialHandler`,
as 1.90's Builder used it (`loop.addData` writes unprefixed columns; an RT only when a key was pressed; the
experiment info without `psychopyVersion`, which 1.90's Builder did not store).
"""
from __future__ import annotations

import csv
import random
import shutil
import sys
import tempfile
from pathlib import Path

EXP = "nested_ld"
WORDS = [("w1", "word", "house", "j"), ("w2", "word", "river", "j"), ("w3", "word", "candle", "j"),
         ("n1", "nonword", "blorf", "f"), ("n2", "nonword", "trenk", "f"), ("n3", "nonword", "plime", "f"),
         ("w4", "word", "garden", "j"), ("w5", "word", "window", "j"), ("w6", "word", "pencil", "j"),
         ("n4", "nonword", "drisk", "f"), ("n5", "nonword", "vunter", "f"), ("n6", "nonword", "glapen", "f")]
TRAINING = [("t1", "word", "table", "j"), ("t2", "nonword", "spoth", "f"), ("t3", "word", "chair", "j"),
            ("t4", "nonword", "frunt", "f")]
STATEMENTS = [("q1", "I read a lot."), ("q2", "I speak several languages."), ("q3", "The task was easy.")]
FLANKER = [("congruent", "<<<<<", "left"), ("incongruent", "<<><<", "right"), ("congruent", ">>>>>", "right"),
           ("incongruent", ">><>>", "left")]
# participant -> (seed, passes of training, test trials that time out (0-based over the test), accuracy)
PEOPLE = {"P01": (31, 2, (), 0.85), "P02": (32, 1, (3, 9), 0.7)}


def write_conditions(folder: Path) -> dict[str, Path]:
    files = {}
    cols = ["item", "condition", "word", "corr_ans"]
    for name, rows in (("training.csv", TRAINING), ("block1.csv", WORDS[:6]), ("block2.csv", WORDS[6:])):
        with open(folder / name, "w", encoding="utf-8", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(cols)
            w.writerows(rows)
        files[name] = folder / name
    with open(folder / "blocks.csv", "w", encoding="utf-8", newline="") as fh:
        fh.write("block_file\nblock1.csv\nblock2.csv\n")
    with open(folder / "questionnaire.csv", "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["q_id", "statement"])
        w.writerows(STATEMENTS)
    with open(folder / "flanker.csv", "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["flank_cond", "arrows", "flank_corr"])
        w.writerows(FLANKER)
    return files


def _read_conditions(path: str) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return [dict(row) for row in csv.DictReader(fh)]


class Clock:
    """The routines' times, drawn: what Builder's globalClock would have read."""

    def __init__(self, rng: random.Random):
        self.t, self.rng = 0.0, rng

    def routine(self, exp, name: str, low: float = 0.5, high: float = 2.0) -> tuple[float, float]:
        start = self.t
        self.t += self.rng.uniform(low, high)
        exp.addData(f"{name}.started", start)
        return start, self.t

    def stop(self, exp, name: str) -> None:
        exp.addData(f"{name}.stopped", self.t)
        self.t += 0.02


def keyboard_trial(exp, loop, clock: Clock, rng: random.Random, corr: str, accuracy: float, timeout: bool,
                   comp: str = "ld_resp", keys: tuple[str, str] = ("f", "j"), legacy: bool = False) -> None:
    """A routine with a keyboard scored against `corr`, stored as Builder stores it (`loop.addData`)."""
    clock.routine(exp, "trial")
    exp.addData("fix.started", clock.t - 0.4)
    if timeout:
        key, rt, hit = "None", None, 0
    else:
        key = corr if rng.random() < accuracy else next(k for k in keys if k != corr)
        rt = rng.uniform(0.35, 1.3)
        hit = int(key == corr)
    clock.stop(exp, "trial")
    loop.addData(f"{comp}.keys", key)
    loop.addData(f"{comp}.corr", hit)
    if rt is not None:
        loop.addData(f"{comp}.rt", rt)
        if not legacy:   # 1.90's keyboard stored no duration
            loop.addData(f"{comp}.duration", None)


def run(pid: str, seed: int, passes: int, timeouts: tuple[int, ...], accuracy: float, study: Path, out: Path,
        legacy: bool = False) -> Path:
    import psychopy
    from psychopy import data

    rng = random.Random(seed)
    expInfo = {"participant": pid, "session": "001", "date": data.getDateStr(), "expName": EXP,  # noqa: N806
               "psychopyVersion": psychopy.__version__, "frameRate": 60.0}
    if legacy:
        del expInfo["psychopyVersion"]
    Loop = data.TrialHandler if legacy else data.TrialHandler2  # noqa: N806 (Builder's class of each version)
    # 1.90's importConditions opens files in mode 'rU' and asks pandas for what pandas 3 refuses: the conditions
    # (text columns only, as importConditions would return them) are read here for it
    conditions = _read_conditions if legacy else data.importConditions
    stem = out / f"{pid}_{EXP}_{expInfo['date']}"
    thisExp = data.ExperimentHandler(name=EXP, version="", extraInfo=expInfo, runtimeInfo=None,  # noqa: N806
                                     originPath=str(Path(__file__)), savePickle=False, saveWideText=True,
                                     dataFileName=str(stem), **({} if legacy else {"sortColumns": "time"}))
    clock = Clock(rng)
    clock.routine(thisExp, "intro")
    thisExp.addData("intro_key.keys", "space")
    thisExp.addData("intro_key.rt", rng.uniform(1, 3))
    clock.stop(thisExp, "intro")
    thisExp.nextEntry()

    training_block = Loop(name="training_block", nReps=3, method="sequential", extraInfo=expInfo,
                                        originPath=-1, trialList=[None], seed=None)
    thisExp.addLoop(training_block)
    done = 0
    for _ in training_block:
        training = Loop(name="training", nReps=1, method="random", extraInfo=expInfo, originPath=-1,
                                      trialList=conditions(str(study / "training.csv")), seed=seed)
        thisExp.addLoop(training)
        for this in training:
            keyboard_trial(thisExp, training, clock, rng, this["corr_ans"], accuracy, False, legacy=legacy)
            clock.routine(thisExp, "feedback", 0.5, 0.5)
            clock.stop(thisExp, "feedback")
            thisExp.nextEntry()
        done += 1
        clock.routine(thisExp, "repeat_training")
        again = done < passes
        thisExp.addData("repeat_key.keys", "r" if again else "space")
        thisExp.addData("repeat_key.rt", rng.uniform(0.8, 2.5))
        clock.stop(thisExp, "repeat_training")
        if not again:
            training_block.finished = True
        thisExp.nextEntry()

    blocks = Loop(name="blocks", nReps=1, method="sequential", extraInfo=expInfo, originPath=-1,
                                trialList=conditions(str(study / "blocks.csv")), seed=None)
    thisExp.addLoop(blocks)
    n_test = 0
    for block in blocks:
        trials = Loop(name="trials", nReps=1, method="random", extraInfo=expInfo, originPath=-1,
                                    trialList=conditions(str(study / block["block_file"])), seed=seed + 7)
        thisExp.addLoop(trials)
        for this in trials:
            keyboard_trial(thisExp, trials, clock, rng, this["corr_ans"], accuracy, n_test in timeouts,
                           legacy=legacy)
            n_test += 1
            thisExp.nextEntry()
        clock.routine(thisExp, "break", 2.0, 6.0)
        thisExp.addData("break_key.keys", "space")
        clock.stop(thisExp, "break")
        thisExp.nextEntry()

    questionnaire = Loop(name="questionnaire", nReps=1, method="sequential", extraInfo=expInfo,
                                       originPath=-1, trialList=conditions(str(study / "questionnaire.csv")),
                                       seed=None)
    thisExp.addLoop(questionnaire)
    for _ in questionnaire:
        clock.routine(thisExp, "rate")
        questionnaire.addData("q_slider.response", rng.randint(1, 7))
        questionnaire.addData("q_slider.rt", rng.uniform(1, 4))
        clock.stop(thisExp, "rate")
        thisExp.nextEntry()

    flanker_trials = Loop(name="flanker_trials", nReps=1, method="sequential", extraInfo=expInfo,
                                        originPath=-1, trialList=conditions(str(study / "flanker.csv")),
                                        seed=None)
    thisExp.addLoop(flanker_trials)
    for this in flanker_trials:
        keyboard_trial(thisExp, flanker_trials, clock, rng, this["flank_corr"], 0.9, False, comp="flanker_key",
                       keys=("left", "right"), legacy=legacy)
        thisExp.nextEntry()

    clock.routine(thisExp, "end")
    clock.stop(thisExp, "end")
    thisExp.nextEntry()
    thisExp.saveAsWideText(str(stem) + ".csv", **({} if legacy else {"delim": "auto"}))   # as each Builder called it
    thisExp.abort()  # saved above: nothing more to write at exit
    return Path(str(stem) + ".csv")


def main() -> int:
    out = Path(sys.argv[1])
    legacy = len(sys.argv) > 2 and sys.argv[2] == "--legacy"
    if legacy:   # PsychoPy 1.90.3's own modules first on the path (its source, its dependencies)
        sys.path[:0] = [sys.argv[3], sys.argv[4]]
        import numpy as np  # the numpy 1 names 1.90 calls, gone from numpy 2 (the same functions)

        for old, new in (("product", np.prod), ("float", float), ("int", int), ("bool", bool), ("object", object),
                         ("str", str), ("alltrue", np.all), ("sometrue", np.any)):
            if old not in np.__dict__:
                setattr(np, old, new)

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        study = Path(tmp)
        write_conditions(study)
        for pid, (seed, passes, timeouts, acc) in PEOPLE.items():
            run(pid, seed, passes, timeouts, acc, study, out, legacy)
        (out / "conditions").mkdir(exist_ok=True)
        for f in study.glob("*.csv"):
            shutil.copy(f, out / "conditions" / f.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
