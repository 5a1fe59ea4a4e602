"""Write the Ibex/PCIbex results corpus (tests/data/imports/ibex/) through tests/support/ibex_server.py, the port of
Ibex's own results-file code: each study below is a running order of real controllers (what each item holds,
which controller logs what), and the participants' answers and times drawn from a seeded generator.

    python tests/support/ibex_corpus.py tests/data/imports/ibex

writes the same bytes every time (fixed seeds and reception times).
"""
from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Callable

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support.ibex_server import (  # noqa: E402
    PENN_PREAMBLE,
    Element,
    Submission,
    dashed_sentence,
    flash_sentence,
    form,
    maze,
    penn_line,
    question,
    results_text,
)

T0 = 1700000000
WORDS = ["The", "reporter", "who", "the", "senator", "attacked", "admitted", "the", "error."]
ALT = ["x-x-x", "ceremony", "sin", "arm", "lecture", "flowing", "approach", "joy", "bloom."]


def md5(k: int) -> str:
    return f"{k:02d}" + "ab3f9c1d7e5a8b2c4d6e8f0a1b3c5d7"[: 30]


def sentence(i: int, cond: str) -> list[str]:
    words = list(WORDS)
    words[1] = ["reporter", "senator", "banker", "lawyer", "doctor", "teacher", "farmer", "singer"][i % 8]
    if cond.endswith("obj"):
        words[2:6] = ["who", "the", "senator", "attacked"]
    else:
        words[2:6] = ["who", "attacked", "the", "senator"]
    return words


def spr_yesno(rng: random.Random, bad: bool = False) -> str:
    """DashedSentence word by word + Question (hasCorrect: Yes/No) in one item; 8 items x 2 conditions in a Latin
    square (Group = the item), 4 fillers and 2 practice items (Group NULL), a demographics Form."""
    out = ""
    for p in range(3):
        sub = Submission()
        sub.finished(Element("Form", 0, 0, "intro"), form([("age", str(20 + p)), ("native", "yes")], 15321 + p))
        order = [("practice", 1 + k, None, k) for k in range(2)]
        test = [(("rel-subj", "rel-obj")[(i + p) % 2], 3 + 2 * i + (i + p) % 2, i + 1, i) for i in range(8)]
        test += [("filler", 19 + k, None, 10 + k) for k in range(4)]
        rng.shuffle(test)
        for label, item, group, i in order + test:
            words = sentence(i, label)
            rts = [rng.randint(250, 700) + rng.random() for _ in words]
            if bad and p == 1 and i == 4:
                rts[3] = -2080.0
            sub.finished(Element("DashedSentence", item, 0, label, group), dashed_sentence(words, rts))
            right = "Yes" if i % 2 else "No"
            ok = rng.random() < 0.85
            answer = right if ok else ("No" if right == "Yes" else "Yes")
            sub.finished(Element("Question", item, 1, label, group),
                         question("Did the senator attack the reporter?", answer, ok, rng.randint(800, 2500)))
        out += results_text(sub, T0 + 1000 * p, md5(p), p)
    return out


def spr_chunks(rng: random.Random) -> str:
    """DashedSentence with `s` a list of chunks (one region per press) + Question with item-specific answers
    (`as: [...]`, hasCorrect: the first), GuidedPractice1..3 practice; SIMPLE_RESULTS_FILE_COMMENTS on."""
    out = ""
    for p in range(3):
        sub = Submission()
        order = [(f"GuidedPractice{k + 1}", 1 + k, None, k) for k in range(3)]
        test = [(("early", "late")[(i + p) % 2], 4 + 2 * i + (i + p) % 2, i + 1, i) for i in range(6)]
        rng.shuffle(test)
        for label, item, group, i in order + test:
            chunks = ["The old man", "who lived", "by the river" if label != "late" else "near the sea",
                      "sold his boat", "last year."]
            rts = [rng.randint(300, 1200) + 0.5 for _ in chunks]
            sub.finished(Element("DashedSentence", item, 0, label, group),
                         dashed_sentence(chunks, rts, " ".join(chunks)))
            options = [f"a boat {i}", f"a house {i}", f"a car {i}"]
            answer = options[0] if rng.random() < 0.7 else options[rng.randint(1, 2)]
            sub.finished(Element("Question", item, 1, label, group),
                         question(f"What did the man sell (item {i})?", answer, answer == options[0],
                                  rng.randint(900, 3000)))
        out += results_text(sub, T0 + 5000 + 1000 * p, md5(10 + p), p, simple=True)
    return out


def aj(rng: random.Random, scale: bool) -> str:
    """AcceptabilityJudgment (a VBox of FlashSentence + Question in one element): as a 1-7 scale
    (`presentAsScale`, no hasCorrect) or as Yes/No with a 5 s `timeout` (one judgment timed out); 8 items x 2
    conditions, 2 practice items."""
    out = ""
    for p in range(3):
        sub = Submission()
        order = [("practice", 1 + k, None, k) for k in range(2)]
        test = [(("gram", "ungram")[(i + p) % 2], 3 + 2 * i + (i + p) % 2, i + 1, i) for i in range(8)]
        rng.shuffle(test)
        for label, item, group, i in order + test:
            s = " ".join(sentence(i, "subj")) if label != "ungram" else " ".join(sentence(i, "subj")[:-1])
            if scale:
                answer = str(rng.randint(4, 7) if label != "ungram" else rng.randint(1, 4))
            else:
                answer = ("Yes" if rng.random() < 0.8 else "No") if label != "ungram" else \
                    ("No" if rng.random() < 0.7 else "Yes")
            timed_out = not scale and p == 2 and i == 5   # `timeout` passed: Answer NULL
            lines = flash_sentence(s) + question("How natural is this sentence?" if scale else None,
                                                 None if timed_out else answer, None,
                                                 5000 if timed_out else rng.randint(700, 4000))
            sub.finished(Element("AcceptabilityJudgment", item, 0, label, group), lines)
        out += results_text(sub, T0 + 9000 + 1000 * p, md5(20 + p), p)
    return out


def dashed_aj(rng: random.Random) -> str:
    """DashedAcceptabilityJudgment: DashedSentence in `speeded acceptability` mode (the sentence only) + Question
    with hasCorrect (Yes for the grammatical version, No for the other), one element; practice `Practice*`."""
    out = ""
    for p in range(2):
        sub = Submission()
        order = [(f"Practice{k + 1}", 1 + k, None, k) for k in range(2)]
        test = [(("gram", "ungram")[(i + p) % 2], 3 + 2 * i + (i + p) % 2, i + 1, i) for i in range(6)]
        rng.shuffle(test)
        for label, item, group, i in order + test:
            words = sentence(i, "subj")
            s = " ".join(words if label != "ungram" else words[:-1])
            right = "No" if label == "ungram" else "Yes"
            answer = right if rng.random() < 0.8 else ("Yes" if right == "No" else "No")
            lines = flash_sentence(s) + question("Is this a good sentence?", answer, answer == right,
                                                 rng.randint(500, 2000))
            sub.finished(Element("DashedAcceptabilityJudgment", item, 0, label, group), lines)
        out += results_text(sub, T0 + 60000 + 1000 * p, md5(90 + p), p)
    return out


def flash_question(rng: random.Random) -> str:
    """FlashSentence then a Question (hasCorrect) in one item: the question is scored by Ibex."""
    out = ""
    for p in range(2):
        sub = Submission()
        test = [(("a", "b")[(i + p) % 2], 1 + 2 * i + (i + p) % 2, i + 1, i) for i in range(6)]
        for label, item, group, i in test:
            sub.finished(Element("FlashSentence", item, 0, label, group), flash_sentence(" ".join(sentence(i, label))))
            ok = rng.random() < 0.75
            right = ("True", "False")[i % 2]
            answer = right if ok else ("False" if right == "True" else "True")
            sub.finished(Element("Question", item, 1, label, group),
                         question("Was the sentence true?", answer, ok, rng.randint(600, 2000)))
        out += results_text(sub, T0 + 13000 + 1000 * p, md5(30 + p), p)
    return out


def maze_study(rng: random.Random) -> str:
    """Maze (end mode): 6 items x 2 conditions, 2 practice items (Group NULL); some sentences end at an error."""
    out = ""
    for p in range(3):
        sub = Submission()
        order = [("practice", 1 + k, None, k) for k in range(2)]
        test = [(("and_comma", "and_no_comma")[(i + p) % 2], 3 + 2 * i + (i + p) % 2, i + 1, i) for i in range(6)]
        rng.shuffle(test)
        for label, item, group, i in order + test:
            words = sentence(i, "subj")
            err = rng.randint(2, len(words) - 1) if rng.random() < 0.25 else None
            rts = [rng.randint(500, 1600) for _ in words]
            sides = [rng.randint(0, 1) for _ in words]
            sub.finished(Element("Maze", item, 0, label, group), maze(words, ALT, sides, err, rts, " ".join(words)))
        out += results_text(sub, T0 + 16000 + 1000 * p, md5(40 + p), p)
    return out


def custom(rng: random.Random) -> str:
    """A study's own controller (`PictureChoice`) writing its own columns: only a map can say which is the answer."""
    out = ""
    for p in range(2):
        sub = Submission()
        for i in range(6):
            label = ("match", "mismatch")[(i + p) % 2]
            chosen = rng.choice(["left", "right"])
            right = ("left", "right")[i % 2]
            sub.finished(Element("PictureChoice", 1 + 2 * i + (i + p) % 2, 0, label, i + 1),
                         [[("Picture shown", f"pic{i}.png"), ("Chosen answer", chosen),
                           ("Accurate", int(chosen == right)), ("Response time", rng.randint(500, 1500))]])
        out += results_text(sub, T0 + 20000 + 1000 * p, md5(50 + p), p)
    return out


def penn_scale(rng: random.Random) -> str:
    """PennController: a Scale rating per item (its Print logged after its Choice in the file, earlier in time),
    some Scales never clicked (no Choice row), an attention `check` item after each block (the same item shown
    again), practice labelled Practice-1/2, an instructions screen with the trials' label (no item, no answer)."""
    out = ""
    for p in range(3):
        sub = Submission(preamble=list(PENN_PREAMBLE))
        t = T0 * 1000 + p * 10 ** 7
        blocks = [[("experiment", 3 + 2 * i + (i + p) % 2, ("A", "B")[p % 2], i) for i in range(b * 4, b * 4 + 4)]
                  for b in range(2)]
        order = [("Practice-1", 1, "NULL", 90), ("Practice-2", 2, "NULL", 91)]
        for b in blocks:
            rng.shuffle(b)
            order += b + [("check", 30, "NULL", 99)]
        intro = [penn_line("PennController", "40", "_Trial_", "Start", t, [("item", "NULL"), ("condition", "NULL"),
                                                                           ("sentence", "NULL")]),
                 penn_line("PennController", "40", "_Trial_", "End", t + 4000, [("item", "NULL"),
                                                                              ("condition", "NULL"),
                                                                              ("sentence", "NULL")])]
        sub.finished(Element("PennController", 40, 0, "experiment", "NULL"), intro)   # its instructions screen
        t += 4010
        for label, item, group, i in order:
            cond = ("plain", "odd")[item % 2] if label == "experiment" else label
            cols = [("item", i + 1 if label == "experiment" else ("check" if label == "check" else "NULL")),
                    ("condition", cond), ("sentence", " ".join(sentence(i % 8, cond)))]
            el = Element("PennController", item, 0, label, group)
            start, printed = t, t + 5
            lines = [penn_line("PennController", str(item), "_Trial_", "Start", start, cols)]
            skip = label == "experiment" and rng.random() < 0.15
            if not skip:
                choice = rng.randint(1, 7) if label != "check" else 7
                chosen = printed + rng.randint(900, 4000)
                lines.append(penn_line("Scale", "rating", "Choice", choice, chosen, cols))
            lines.append(penn_line("Scale", "rating", "Print", "NULL", printed, cols))
            end = t + 6000
            lines.append(penn_line("PennController", str(item), "_Trial_", "End", end, cols))
            sub.finished(el, lines)
            t = end + 10
        out += results_text(sub, T0 + 30000 + 1000 * p, md5(60 + p), p)
    return out


def penn_key_training(rng: random.Random) -> str:
    """PennController: a Key F/J judgment; a TextInput ID kept in a Var and logged on every trial; the training
    items run twice (a second pass); Button and Timer events that are not answers; two submissions."""
    out = ""
    for p in range(2):
        sub = Submission(preamble=list(PENN_PREAMBLE))
        t = T0 * 1000 + 5 * 10 ** 8 + p * 10 ** 7
        pid = f"P{p + 7:02d}"
        intro = Element("PennController", 0, 0, "intro", "NULL")
        sub.finished(intro, [penn_line("PennController", "0", "_Trial_", "Start", t, [("ID", pid)]),
                             penn_line("TextInput", "ID", "Final", pid, t + 3000, [("ID", pid)]),
                             penn_line("Button", "start", "Click", "Click", t + 3500, [("ID", pid)]),
                             penn_line("PennController", "0", "_Trial_", "End", t + 3600, [("ID", pid)])])
        t += 4000
        order = [("training", 1 + k, "NULL", k) for k in range(2)] * 2
        order += [("test", 4 + 2 * i + (i + p) % 2, ("A", "B")[p % 2], i) for i in range(6)]
        for label, item, group, i in order:
            cond = ("subj", "obj")[(i + p) % 2] if label == "test" else "NULL"
            cols = [("ID", pid), ("item", f"i{i}" if label == "test" else "NULL"), ("condition", cond),
                    ("sentence", " ".join(sentence(i, cond)))]
            key = rng.choice(["F", "J"])
            shown = t + 500
            pressed = shown + rng.randint(400, 1800)
            sub.finished(Element("PennController", item, 0, label, group), [
                penn_line("PennController", str(item), "_Trial_", "Start", t, cols),
                penn_line("Timer", "fixation", "Start", "Start", t + 1, cols),
                penn_line("Timer", "fixation", "End", "End", shown - 1, cols),
                penn_line("Text", "sentence", "Print", "NULL", shown, cols),
                penn_line("Key", "answer", "PressedKey", key, pressed, cols),
                penn_line("Var", "ID", "Final", pid, pressed + 1, cols),
                penn_line("PennController", str(item), "_Trial_", "End", pressed + 2, cols)])
            t = pressed + 100
        out += results_text(sub, T0 + 40000 + 1000 * p, md5(70 + p), p)
    return out


def penn_controllers(rng: random.Random) -> str:
    """PennController's Controller element: newController("DashedSentence") word by word, then
    newController("Question") with hasCorrect; the item's own columns logged."""
    out = ""
    for p in range(2):
        sub = Submission(preamble=list(PENN_PREAMBLE))
        t = T0 * 1000 + 9 * 10 ** 8 + p * 10 ** 7
        for i in range(4):
            label = "exp"
            item = 1 + 2 * i + (i + p) % 2
            cols = [("item", i + 1), ("condition", ("subj", "obj")[(i + p) % 2])]
            words = sentence(i, cols[1][1])
            lines = [penn_line("PennController", str(item), "_Trial_", "Start", t, cols)]
            now = t
            for k, w in enumerate(words):
                rt = rng.randint(250, 650)
                now += rt
                lines.append(penn_line("Controller-DashedSentence", "DashedSentence", k + 1, w, now,
                                       [("Reading time", rt), ("Newline?", "false"),
                                        ("Sentence (or sentence MD5)", " ".join(words))] + cols))
            ok = rng.random() < 0.7
            answer = ("Yes", "No")[i % 2] if ok else ("No", "Yes")[i % 2]
            lines.append(penn_line("Controller-Question", "Question", "NA", "NA", now + 1500,
                                   [("Question (NULL if none)", "Was it the senator?"), ("Answer", answer),
                                    ("Whether or not answer was correct (NULL if N/A)", int(ok)),
                                    ("Time taken to answer", 1400)] + cols))
            lines.append(penn_line("PennController", str(item), "_Trial_", "End", now + 1600, cols))
            sub.finished(Element("PennController", item, 0, label, ("A", "B")[p]), lines)
            t = now + 2000
        out += results_text(sub, T0 + 50000 + 1000 * p, md5(80 + p), p)
    return out


STUDIES: dict[str, tuple[int, Callable[[random.Random], str]]] = {
    "ibex_spr_yesno_results": (1, spr_yesno),
    "ibex_spr_bad_rt_results": (2, lambda r: spr_yesno(r, bad=True)),
    "ibex_spr_chunks_results": (3, spr_chunks),
    "ibex_aj_scale_results": (4, lambda r: aj(r, scale=True)),
    "ibex_aj_yesno_results": (5, lambda r: aj(r, scale=False)),
    "ibex_flash_question_results": (6, flash_question),
    "ibex_dashed_aj_results": (12, dashed_aj),
    "ibex_maze_results": (7, maze_study),
    "ibex_custom_controller_results": (8, custom),
    "pcibex_scale_check_results": (9, penn_scale),
    "pcibex_key_training_results": (10, penn_key_training),
    "pcibex_controllers_results": (11, penn_controllers),
}


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, (seed, study) in STUDIES.items():
        (out / name).write_text(study(random.Random(seed)), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
