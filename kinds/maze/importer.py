"""Maze's import rules (participants/imports): a Maze sentence as PCIbex/Ibex wrote it, one row per word (the
old Ibex `Maze` controller, PennController's `Controller-Maze`): the word, its distractor (`Alternative`), the
correct word's side (`Word on (0=left, 1=right)`), whether the first pick was right (`Correct`) and its reading
time; a word never shown after an error has no time. The items file gets the sentence (the words as shown) and
its distractors; the raw record replays each word's pick at its time (the right side, or the other one at the
first error), and the kind's own `derive` (task.py) makes the row: per-word RTs, the picks, `correct`.

Only what the file states is imported: an `end`-mode study (a wrong pick ends the sentence). A file whose words
after a wrong pick still have times (Ibex's `redo`) is refused, naming the line, since the spec's `task:` is read
from the items file and could not say so. jsPsych's `maze` plugins (several, each with its own data fields) are
claimed by name, but the jsPsych reader reads no per-word data: such a trial is refused, naming its line."""
from __future__ import annotations

import json
import math
from typing import Any, Callable, Optional

from participants.imports.kind_importer import KindImporter
from participants.imports.records import ImportInputError, Mapping, SourceTrial

ALTERNATIVE = "Alternative"
SIDE = "Word on (0=left, 1=right)"
CORRECT = "Correct"
READING_TIME = "Reading time"
YES_NO = {"yes": True, "no": False}


def word_rows(t: SourceTrial) -> list[dict[str, Any]]:
    """The trial's per-word rows, as the PCIbex reader kept them (extra `_rows`: every row of the item), in order."""
    rows = json.loads(t.extra.get("_rows") or "[]")
    return [r for r in rows if READING_TIME in r]


def _where(t: SourceTrial, line: Optional[int] = None) -> str:
    return f"{t.source_file}: line {line if line is not None else t.line}"


def checked_words(t: SourceTrial) -> list[dict[str, Any]]:
    """The per-word rows, each with its distractor, side and correctness: refused (file, line, column) where the
    file lacks one, or where a word after the first error has a time (a `redo` study)."""
    if not t.words or not t.word_rts:
        how = (" (the jsPsych reader reads no maze plugin's per-word data)" if t.tool == "jspsych" else "")
        raise ImportInputError(f"{_where(t)}: a maze trial without its words and their reading times{how}")
    rows = word_rows(t)
    if len(rows) != len(t.words) or len(t.word_rts) != len(t.words):
        raise ImportInputError(f"{_where(t)}: {len(t.words)} words, {len(rows)} per-word rows: the rows of the "
                               "Maze sentence are not one per word")
    out, error_at = [], None
    for k, r in enumerate(rows):
        line = r.get("line")
        missing = [c for c in (ALTERNATIVE, CORRECT) if str(r.get(c, "")).strip() in ("", "NULL", "None")]
        if missing:
            raise ImportInputError(f"{_where(t, line)}, column {missing[0]!r}: a Maze word without its "
                                   f"{'distractor' if missing[0] == ALTERNATIVE else 'correctness'}")
        ok = YES_NO.get(str(r[CORRECT]).strip().lower())
        if ok is None:
            raise ImportInputError(f"{_where(t, line)}, column {CORRECT!r}: {r[CORRECT]!r} is not yes or no")
        side = str(r.get(SIDE, "")).strip()
        if side not in ("", "0", "1"):
            raise ImportInputError(f"{_where(t, line)}, column {SIDE!r}: {side!r} is not 0 or 1")
        rt = t.word_rts[k]
        shown = error_at is None
        if shown and (rt is None or math.isnan(rt)):
            raise ImportInputError(f"{_where(t, line)}, column {READING_TIME!r}: word {k + 1} was answered but "
                                   "has no reading time")
        if not shown and not math.isnan(rt):
            raise ImportInputError(f"{_where(t, line)}, column {READING_TIME!r}: word {k + 1} has a time after the "
                                   f"wrong pick at word {error_at + 1} (a `redo` Maze study): twinlab's import "
                                   "writes `error_mode: end` studies only")
        if shown and not ok:
            error_at = k
        out.append({"word": t.words[k].strip(), "foil": str(r[ALTERNATIVE]).replace("%2C", ",").strip(),
                    "side": int(side) if side else None, "ok": ok, "rt": rt})
    return out


class MazeImporter(KindImporter):
    kind = "maze"
    order = 80
    tool_hints = {"pcibex": ("Maze", "Controller-Maze"), "jspsych": ("maze",)}
    labels_what = "answers"
    labels_optional = True

    def answer_labels(self, trials: list[SourceTrial], m: Mapping) -> list[tuple[str, str]]:
        """None: a Maze pick is a side per word, scored by the kind against the sentence (no label set)."""
        return []

    def checked_answers(self, labels: list[tuple[str, str]]) -> tuple[str, ...]:
        return ()

    def sentence(self, t: SourceTrial) -> str:
        """The words as shown (checked: each with its distractor, correctness and, where shown, its time)."""
        words = [w["word"] for w in checked_words(t)]
        if any(not w or " " in w for w in words):
            raise ImportInputError(f"{_where(t)}: an empty word, or one with a space, among the Maze words")
        return " ".join(words)

    def item_materials(self, t: SourceTrial, labels: list[tuple[str, str]],
                       value_of: Callable[[Optional[str]], Optional[str]]) -> dict[str, str]:
        """The distractors of the words after the first (the first word's foil is the spec's `first_foil`)."""
        foils = [w["foil"] for w in checked_words(t)][1:]
        if any(not f or " " in f for f in foils):
            raise ImportInputError(f"{_where(t)}: an empty distractor, or one with a space, in the Maze sentence")
        return {"distractors": " ".join(foils)}

    def task_section(self, labels: list[tuple[str, str]], items: list[dict[str, str]]) -> dict[str, Any]:
        return {"kind": self.kind, "error_mode": "end"}

    def task_record(self, trial: Any, s: Any, order: Any, t: SourceTrial, value: Optional[str],
                    where: str) -> Optional[dict[str, Any]]:
        """Each word's pair shown at the previous right answer, its pick (the right side, or the other at the
        first error) after the word's reading time; the sentence ends at the first error. Where the file states
        every word's side, those are the sides (`order`, the drawn ones, is replaced in place: the record and
        its `maze_sides` are the person's); else the drawn ones stand."""
        words = checked_words(t)
        if isinstance(order, list) and all(w["side"] is not None for w in words) and len(order) == len(words):
            order[:] = [w["side"] for w in words]
        keys = list(s.keys[:2])
        steps, presses, now = [], [], 0.0
        for k, w in enumerate(words):
            steps.append(now)
            now += float(w["rt"])
            presses.append({"key": keys[order[k] if w["ok"] else 1 - order[k]], "t": now})
            if not w["ok"]:
                break
        return {"steps": steps, "presses": presses, "pointers": []}


IMPORTER = MazeImporter()
