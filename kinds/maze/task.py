"""Maze (Forster, Guerrera & Elliot 2009; A-maze: Boyce, Futrell & Levy 2020, JML 111): each word of the
sentence is shown beside a distractor, the reader picks the one that continues the sentence (the left or right
key, or a tap on its box); the first word is shown beside `first_foil` (x-x-x), as in the authors' Ibex Maze
controller. The measure is the time of each word's first answer, from the previous correct answer (the first
word: from the first pair's onset), as the Ibex controller records it ("Reading time to first answer").
`error_mode: end`: after a wrong pick the sentence ends; `redo`: it waits for the right word (the time to the
right answer is recorded too). The side of the correct word is drawn per word, seeded by (seed, subject,
trial), the first word's on the left (Ibex); it is recorded (`extra.maze_sides`: 0 left, 1 right).
Per-word correctness is the kind's own columns (`word_correct`, `first_error`: __init__.py `COLUMNS`), made by
`word_columns` for every writer (the human runners' `derive`, the import through it, the model protocol) and
read by `word_correct_of` (sessions written before the columns kept them in `extra`)."""
from __future__ import annotations

import json
import random
import unicodedata
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from experiments.screen_texts import key_label, kind_text
from kinds.api import (
    FRAME_SLACK_MS,
    Answer,
    KindSettings,
    TaskError,
    TaskKind,
    TaskPlan,
    TaskResultError,
    TaskSettings,
    Trial,
    clash,
    event_time,
    normalize_answer,
    regions,
    valid_key,
)

FIRST_FOIL = "x-x-x"
MAX_WORDS = 200  # words of one maze sentence: a longer one is a file's mistake (a paragraph), not a sentence
MAX_WORD_CHARS = 60  # characters of one word or distractor (the longest English words are about 45)


class MazeSettings(KindSettings):
    error_mode: Literal["end", "redo"] = "end"  # after a wrong pick: the sentence ends, or waits for the right word
    option_keys: Annotated[list[str], Field(min_length=2, max_length=2)] = ["e", "i"]  # left, right (Ibex: e, i)
    first_foil: Annotated[str, Field(min_length=1)] = FIRST_FOIL  # shown beside the first word
    error_text: str = "Incorrect. Please try again."  # redo: shown after a wrong pick
    region_names: list[str] | None = None  # names of the regions in order (analysis); None: each region's words

    @field_validator("option_keys")
    @classmethod
    def _keys(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("option_keys: the left and right keys are the same key")
        return [valid_key(k) for k in v]


def words_of(mat: dict[str, Any]) -> list[str]:
    return str(mat.get("sentence", "")).split()


def distractors(mat: dict[str, Any]) -> list[str]:
    """One distractor per word after the first (the item's `distractors`, split on spaces); an Ibex-style
    list of one per word whose first is x-x-x is taken too (its first dropped)."""
    ds = str(mat.get("distractors") or "").split()
    if len(ds) == len(words_of(mat)) and ds and ds[0] == FIRST_FOIL:
        ds = ds[1:]
    return ds


def foils(mat: dict[str, Any], first_foil: str = FIRST_FOIL) -> list[str]:
    """What stands beside each word: the first foil, then the distractors."""
    return [first_foil] + distractors(mat)


def check_item(mat: dict[str, Any], settings: Any, where: str) -> None:
    """A distractor per word after the first, none equal to its word (under the one normaliser); regions
    (self-paced reading's rule) that split the sentence, one name per region when `region_names` names them."""
    ws, ds = words_of(mat), str(mat.get("distractors") or "").split()
    if len(ws) < 2:
        raise TaskError(f"{where}: sentence: a maze needs at least two words, got {len(ws)}")
    check_words("sentence", ws, where)
    check_words("distractors", ds, where)
    got = distractors(mat)
    if len(got) != len(ws) - 1:
        raise TaskError(f"{where}: distractors: one per word after the first ({len(ws) - 1} for "
                        f"{' '.join(ws)!r}), got {len(ds)} ({' '.join(ds)!r})")
    same = [f"word {k + 1} {w!r}" for k, (w, d) in enumerate(zip(ws[1:], got, strict=False), start=1)
            if normalize_answer(w) == normalize_answer(d)]
    if same:
        raise TaskError(f"{where}: distractors: the distractor equals its word at {', '.join(same)}")
    regs = region_words(mat, where)
    names = getattr(settings, "region_names", None)
    if names is not None and len(names) != len(regs):
        raise TaskError(f"{where}: task.region_names names {len(names)} region(s) but the item has {len(regs)}")


def check_words(field: str, words: list[str], where: str) -> None:
    """At most MAX_WORDS words of at most MAX_WORD_CHARS characters, each with something to see (a word of
    zero-width or control characters alone would stand beside its foil as an empty box); TaskError naming it."""
    if len(words) > MAX_WORDS:
        raise TaskError(f"{where}: {field}: {len(words):,} words; a maze sentence has at most {MAX_WORDS}")
    for k, w in enumerate(words, start=1):
        if len(w) > MAX_WORD_CHARS:
            raise TaskError(f"{where}: {field}: word {k} has {len(w):,} characters ({w[:20]!r}...); at most "
                            f"{MAX_WORD_CHARS}")
        if not any(unicodedata.category(c)[0] not in "CZ" for c in w):
            raise TaskError(f"{where}: {field}: word {k} ({w!r}) has no visible character (only zero-width or "
                            "control characters)")


def region_words(mat: dict[str, Any], where: str = "item") -> list[list[int]]:
    """The word indices of each region: the one reading of `regions` (experiments.tasks.regions)."""
    try:
        return regions(mat)
    except TaskError as exc:
        raise TaskError(f"{where}: {exc}") from None


def sides(n: int, key: str) -> list[int]:
    """The correct word's side per word (0 left, 1 right): the first on the left, the others drawn from `key`."""
    rng = random.Random(f"maze:{key}")
    return [0] + [rng.randrange(2) for _ in range(n - 1)]


def screen_order(trial: Trial, seed: int | None, subject_id: str, s: TaskSettings | None) -> list[int]:
    """The option_order hook: the sides of a compiled trial for a subject's sequence (seed, subject, trial)."""
    return sides(len(words_of(trial.mat)), f"{seed if seed is not None else 0}:{subject_id}:{trial.trial_index}")


def picks_text(words: list[str], fs: list[str], picks: list[bool]) -> str:
    """The `response`: the word the reader picked first at each position reached (True: the sentence's)."""
    return " ".join(w if ok else f for w, f, ok in zip(words, fs, picks, strict=False))


def word_columns(first: list[bool | None]) -> dict[str, Any]:
    """The kind's columns of a row from each word's first pick (True right, False the distractor, None not
    reached): `word_correct` (JSON list, one per word) and `first_error` (0-based, None without an error)."""
    return {"word_correct": json.dumps(list(first)),
            "first_error": next((k for k, ok in enumerate(first) if ok is False), None)}


def _parsed(v: Any) -> list[Any] | None:
    """A per-word list as a cell or an `extra` entry holds it (JSON text or a list); None when absent or empty."""
    if isinstance(v, str) and v.strip():
        try:
            v = json.loads(v)
        except json.JSONDecodeError:
            return None
    return list(v) if isinstance(v, list) and v else None


def word_correct_of(row: Any) -> list[bool | None] | None:
    """The one reading of a row's per-word correctness: its `word_correct` column; where that is absent or empty
    (a session written before the kind declared it), `extra.word_correct` (as it was kept then) or
    `extra.columns.word_correct` (a declared column a session's older header lacks, kept in `extra`)."""
    got = _parsed(row.get("word_correct"))
    if got is not None:
        return got
    extra = row.get("extra")
    if isinstance(extra, str):
        try:
            extra = json.loads(extra) if extra.strip() else {}
        except json.JSONDecodeError:
            extra = {}
    if not isinstance(extra, dict):
        return None
    kept = extra.get("columns") if isinstance(extra.get("columns"), dict) else {}
    return _parsed(extra.get("word_correct")) or _parsed(kept.get("word_correct"))


def score(trial: Trial, response: Any) -> bool | None:
    """Correct when the first picks are the whole sentence (no error at any word)."""
    ws = words_of(trial.mat)
    got = str(response or "").split()
    return len(got) == len(ws) and all(normalize_answer(a) == normalize_answer(b)
                                       for a, b in zip(got, ws, strict=False))


def person_response(trial: Any, s: Any, response: str) -> str | None:
    """Why `response` cannot be a person's on this trial (None: it can). A Maze row's `response` is the word
    picked first at each position reached (`picks_text`), as every writer makes it (the runners' `derive`, the
    import through it, the model): each the word or its foil; in `end` mode the picks stop at the first wrong
    one (a sentence left without an error is complete), in `redo` one pick per word."""
    ws = words_of(trial.mat)
    fs = foils(trial.mat, str((getattr(s, "extra", None) or {}).get("first_foil", FIRST_FOIL)))
    got = str(response or "").split()
    if not got:
        return "an empty response (a Maze trial's response is the words picked, the first at least)"
    if len(got) > len(ws):
        return f"{len(got)} words picked, but the sentence has {len(ws)}"
    for k, w in enumerate(got):
        if w not in (ws[k], fs[k]):
            return f"word {k + 1} picked is {w!r}, neither the sentence's {ws[k]!r} nor its foil {fs[k]!r}"
    wrong = [k for k, w in enumerate(got) if w != ws[k]]
    if mode_of(s) == "redo":
        return None if len(got) == len(ws) else (f"{len(got)} words picked of {len(ws)} (in `error_mode: redo` "
                                                 "every word is picked)")
    if wrong and wrong[0] != len(got) - 1:
        return f"picks go on after the wrong pick at word {wrong[0] + 1} (in `error_mode: end` a wrong pick ends it)"
    if not wrong and len(got) < len(ws):
        return f"{len(got)} words picked of {len(ws)}, none wrong (in `error_mode: end` only a wrong pick ends it)"
    return None


def mode_of(s: Any) -> str:
    return str((getattr(s, "extra", None) or {}).get("error_mode", "end"))


def answers(trial: Trial, s: TaskSettings, order: list[int] | None = None) -> list[Answer]:
    """The two positions (left, right) with their keys; the words in them change per word (page_view)."""
    return [Answer("left", "left", s.keys[0]), Answer("right", "right", s.keys[1])]



def maze_responses(s: Any, presses: list, pointers: list) -> list[tuple[float, int, str]]:
    """Every answer given, in time order: (t, side, by) from the left/right keys and (with `mouse`) taps on the
    two boxes (a click beside them is no answer)."""
    keys = list(s.keys[:2])
    out = [(p["t"], keys.index(p["key"]), "key:" + p["key"]) for p in presses if p["key"] in keys]
    if s.mouse:
        out += [(p["t"], p["target"], p["type"]) for p in pointers if p["target"] in (0, 1)]
    return sorted(out, key=lambda r: r[0])


def walk(sides_: list[int], steps: list[float], responses: list[tuple[float, int, str]], mode: str) -> dict[str, Any]:
    """The one reading of a maze record, which the page follows too: an answer counts for word k when it comes
    at or after word k's pair is shown (steps[k]); the first answer at each word is its pick (RT from the
    previous correct answer, the first word's from its onset); a wrong pick ends the sentence (`end`) or
    waits for the right side (`redo`: the time to it is recorded too)."""
    n = len(sides_)
    first: list[bool | None] = [None] * n
    rt_first: list[float | None] = [None] * n
    rt_right: list[float | None] = [None] * n
    by: list[str | None] = [None] * n
    pos, prev, ended, last = 0, steps[0] if steps else 0.0, False, None
    for t, side, how in responses:
        if pos >= n or ended or pos >= len(steps) or t < steps[pos]:
            continue
        ok = side == sides_[pos]
        if first[pos] is None:
            first[pos], rt_first[pos], by[pos] = ok, round(t - prev, 3), how
        last = t
        if ok:
            rt_right[pos], prev = round(t - prev, 3), t
            pos += 1
        elif mode == "end":
            ended = True
    return {"first": first, "rt_first": rt_first, "rt_right": rt_right, "by": by, "reached": pos + (1 if ended else 0),
            "completed": pos == n, "ended": ended, "last": last}


def derive(trial: Trial, s: TaskSettings, order: list[int] | None, raw: dict, presses: list, pointers: list,
           out: dict, extra: dict) -> None:
    """Per-word RTs (first answers) and region sums, the picks as `response`, `correct` = no error, per-word
    correctness and the first error's position (the kind's columns); the sides and (redo) the times to the
    right answer in `extra`."""
    ws = words_of(trial.mat)
    n, mode = len(ws), mode_of(s)
    if not isinstance(order, list) or len(order) != n or any(x not in (0, 1) for x in order):
        raise TaskResultError(f"maze: the sides of the trial's {n} words are not known")
    steps = raw.get("steps")
    if not isinstance(steps, list) or not 1 <= len(steps) <= n:
        raise TaskResultError(f"steps: expected 1 to {n} onsets (one per word pair shown)")
    steps = [event_time(x, "steps") for x in steps]
    if steps != sorted(steps):  # type: ignore[type-var]
        raise TaskResultError("steps: onsets out of order")
    w = walk(order, steps, maze_responses(s, presses, pointers), mode)  # type: ignore[arg-type]
    if not (w["completed"] or w["ended"]):
        raise TaskResultError(f"steps: the sentence waits for an answer at word {w['reached'] + 1}")
    if len(steps) != w["reached"]:
        raise TaskResultError(f"steps: {len(steps)} pairs shown, the answers reach word {w['reached']}")
    rights = _right_times(w, steps)
    for k in range(1, len(steps)):  # pair k is shown after the right answer to pair k-1
        if steps[k] < rights[k - 1] - FRAME_SLACK_MS:  # type: ignore[operator]
            raise TaskResultError(f"steps: word {k + 1} shown before the answer that reveals it")
    picks = [bool(x) for x in w["first"][: w["reached"]]]
    fs = foils(trial.mat, (s.extra or {}).get("first_foil", FIRST_FOIL))
    out["response"] = picks_text(ws, fs, picks)
    out["correct"] = score(trial, out["response"])
    out["word_rts_ms"] = json.dumps(w["rt_first"])
    out["region_rts_ms"] = json.dumps([None if any(w["rt_first"][i] is None for i in r)
                                       else round(sum(w["rt_first"][i] for i in r), 3)
                                       for r in region_words(trial.mat)])
    out["rt_ms"] = round(w["last"] - steps[0], 3)  # type: ignore[operator]
    out.update(word_columns(w["first"]))
    extra.update(maze_sides=list(order), error_mode=mode, completed=w["completed"], word_answered_by=w["by"],
                 word_right_rts_ms=w["rt_right"])


def _right_times(w: dict[str, Any], steps: list[float]) -> list[float]:
    """The time of each word's right answer (its RT to the right answer from the previous one, summed)."""
    out, t = [], steps[0]
    for r in w["rt_right"]:
        if r is None:
            break
        t += r
        out.append(t)
    return out


def plan(trial: Trial, s: TaskSettings, order: list[int] | None, rng: random.Random, right: bool) -> TaskPlan:
    """A simulated reader: the right side at each word (paced by the word's length), or, when not `right`,
    one wrong pick at a word after the first (`end`: the presses stop there; `redo`: the right side follows)."""
    ws = words_of(trial.mat)
    keys, mode = list(s.keys[:2]), mode_of(s)
    wrong_at = rng.randrange(1, len(ws)) if not right else None
    t, read, picks = 0.0, [], []
    for k, w in enumerate(ws):
        t += round(rng.uniform(0.45, 0.7) + 0.02 * len(w), 3)
        if k == wrong_at:
            read.append((round(t, 3), keys[1 - order[k]]))
            picks.append(False)
            if mode == "end":
                break
            t += round(rng.uniform(0.35, 0.5), 3)
        else:
            picks.append(True)
        read.append((round(t, 3), keys[order[k]]))
    fs = foils(trial.mat, (s.extra or {}).get("first_foil", FIRST_FOIL))
    intended = picks_text(ws, fs, picks)
    return TaskPlan({"read": read}, intended, score(trial, intended))


def check_keys(settings: Any, given: dict[str, Any], quit_key: str, n_options: int, n_question_options: int) -> None:
    clash("task.option_keys", list(settings.option_keys), quit_key)


def human_settings(st: Any, given: dict[str, Any], lang: str, n_options: int) -> dict[str, Any]:
    """The left and right keys, the error mode and texts (in `extra`), the hint naming the keys."""

    left, right = st.option_keys
    hint = kind_text("maze", lang, "hint", left=key_label(left, lang), right=key_label(right, lang))
    return {"keys": (left, right), "hint": hint,
            "extra": {"error_mode": st.error_mode, "first_foil": st.first_foil, "error_text": st.error_text}}


def page_view(trial: Trial, s: TaskSettings, order: list[int] | None, listed: Any) -> dict[str, Any]:
    """The words, the foils, the correct sides, the mode; the two keys as answers (boxes for taps)."""
    ex = s.extra or {}
    return {"words": words_of(trial.mat), "foils": foils(trial.mat, ex.get("first_foil", FIRST_FOIL)),
            "sides": list(order or []), "error_mode": ex.get("error_mode", "end"),
            "error_text": ex.get("error_text", ""), "answers": listed(answers(trial, s, order)), "anchors": None}


RAW_FIELDS = (frozenset({"presses", "pointers", "steps"}), frozenset({"error_onsets"}))

KIND = TaskKind(
    name="maze", description="A-maze: each word beside a distractor, per-word RTs, errors end or redo",
    materials=("sentence", "distractors"), optional_materials=("regions",),
    recorded=("word_rts_ms", "region_rts_ms", "response", "correct", "rt_ms", "word_correct", "first_error"),
    runners=("psychopy", "browser", "model"), model_protocols=("choice", "surprisal"), score=score,
    settings=MazeSettings, check_item=check_item, answers=answers, person_response=person_response, derive=derive,
    plan=plan,
    check_keys=check_keys, human_settings=human_settings, page_view=page_view, option_order=screen_order,
    raw_fields=RAW_FIELDS,
)
