"""Self-paced reading: moving window (dashes of the words' lengths, one word or region per key press),
per-word and per-region reading times; an optional comprehension question after the sentence, scored
against `question_answer` (the trial is unscored without one)."""
from __future__ import annotations

import json
import random
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from experiments.screen_texts import key_label, kind_text
from kinds.api import (
    FRAME_SLACK_MS,
    Answer,
    KeySettingError,
    KindSettings,
    Presentation,
    TaskError,
    TaskKind,
    TaskPlan,
    TaskResultError,
    TaskSettings,
    Trial,
    clash,
    counted_answer,
    equals_answer,
    event_time,
    normalize_answer,
    pick_answer,
    regions,
    round_ms,
    rt,
    valid_key,
)


class SelfPacedReadingSettings(KindSettings):
    presentation: Presentation = "moving_window"
    reveal: Literal["word", "region"] = "word"  # humans: one word or one region per key press
    advance_key: str = "space"
    option_keys: Annotated[list[str], Field(min_length=2)] = ["f", "j", "k", "d"]  # comprehension answers
    region_names: list[str] | None = None  # names of the regions in order (analysis); None: each region's own words

    @field_validator("region_names")
    @classmethod
    def _names(cls, v: list[str] | None) -> list[str] | None:
        """One name per region, each given once (a region is chosen by its name: `analyze --region NAME`)."""
        if v is None:
            return v
        if not v:
            raise ValueError("region_names: give one name per region, or leave it out")
        seen: dict[str, int] = {}
        for k, name in enumerate(v):
            if not str(name).strip():
                raise ValueError(f"region_names: name {k + 1} is empty")
            key = str(name).strip().casefold()
            if key in seen:
                raise ValueError(f"region_names: {name!r} is given twice (names {seen[key] + 1} and {k + 1}); "
                                 "each region needs its own name")
            seen[key] = k
        return v

    @field_validator("advance_key")
    @classmethod
    def _key(cls, v: str) -> str:
        return valid_key(v)

    @field_validator("option_keys")
    @classmethod
    def _keys(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("option_keys: a key is given twice")
        return [valid_key(k) for k in v]


def score(trial: Trial, response: Any) -> bool | None:
    return equals_answer(trial.mat.get("question_answer"), response)


def region_texts(mat: dict[str, Any]) -> list[str]:
    """Each region's text (its words joined by one space), in order."""
    words = str(mat.get("sentence", "")).split()
    return [" ".join(words[i] for i in r) for r in regions(mat)]


def units(mat: dict[str, Any], reveal: str = "word") -> tuple[list[str], list[list[int]]]:
    """What one press reveals (`reveal: word`: each word; `region`: each region's text) and each
    region's word indices: the one reading of `sentence` and `regions` every runner uses."""
    regs = regions(mat)
    if reveal == "region":
        return region_texts(mat), regs
    return str(mat.get("sentence", "")).split(), regs


def check_item(mat: dict[str, Any], settings: Any, where: str) -> None:
    """Refuse (TaskError naming the field) regions that do not split the sentence, and a comprehension
    answer that is not among its options."""
    try:
        regs = regions(mat)
    except TaskError as exc:
        raise TaskError(f"{where}: {exc}") from None
    names = getattr(settings, "region_names", None)
    if names is not None and len(names) != len(regs):  # the analysis names regions by them (one per region)
        raise TaskError(f"{where}: task.region_names names {len(names)} region(s) ({', '.join(names)}) but the item "
                        f"has {len(regs)}" + (f" ({mat.get('regions')!r})" if mat.get("regions") else
                                              " (no `regions`: each word is a region)")
                        + "; give one name per region of every item")
    opts, qa = list(mat.get("question_options") or ()), mat.get("question_answer")
    if len({normalize_answer(o) for o in opts}) != len(opts) or any(normalize_answer(o) == "" for o in opts):
        raise TaskError(f"{where}: question_options: an option is empty or given twice ({' | '.join(map(str, opts))})")
    if qa not in (None, "") and not opts:
        raise TaskError(f"{where}: question_answer {qa!r} needs question_options to answer from")
    if qa not in (None, "") and not any(equals_answer(qa, o) for o in opts):
        raise TaskError(f"{where}: question_answer {qa!r} is not among question_options ({' | '.join(map(str, opts))})")


def region_sums(values: list[float], mat: dict[str, Any]) -> list[float]:
    """Per-word values (reading times, surprisals) summed per region."""
    return [sum(values[i] for i in r) for r in regions(mat)]


def masked(words: list[str], shown: list[int], mask: str = "-") -> str:
    """The moving-window display: every word as dashes of its length, the words in `shown` in the clear."""
    return " ".join(w if i in shown else mask * len(w) for i, w in enumerate(words))


def trial_units(trial: Any, reveal: str) -> tuple[list[str], list[list[int]]]:
    """`units` of a compiled trial (its sentence, else its words)."""
    m = trial.mat
    return units(m if m.get("sentence") else {**m, "sentence": " ".join(trial.words)}, reveal)


def answers(trial: Trial, s: TaskSettings, order: list[int] | None = None) -> list[Answer]:
    """The comprehension question's options with their keys (none: no question)."""
    opts = [str(o) for o in trial.mat.get("question_options") or ()]
    return [Answer(o, o, k) for o, k in zip(opts, s.question_keys, strict=False)]


def derive(trial: Trial, s: TaskSettings, order: list[int] | None, raw: dict, presses: list, pointers: list,
           out: dict, extra: dict) -> None:
    """Key-to-key reading times from the advance key's own timestamps (per word and summed per region,
    or per region with `reveal: region`); the flips that showed each step beside them; the question."""
    unit_texts, regs = trial_units(trial, s.reveal)
    steps = raw.get("steps")
    if not isinstance(steps, list) or len(steps) != len(unit_texts) + 1:
        raise TaskResultError(f"steps: expected {len(unit_texts) + 1} onsets (the dashes, then each unit)")
    steps = [event_time(x, "steps") for x in steps]
    if steps != sorted(steps):  # type: ignore[type-var]
        raise TaskResultError("steps: onsets out of order")
    adv = [p for p in presses if p["key"] == s.advance_key and p["t"] >= steps[0]]  # type: ignore[operator]
    if len(adv) < len(unit_texts) + 1:
        raise TaskResultError(f"presses: {len(unit_texts) + 1} presses of {s.advance_key!r} read this sentence, "
                              f"got {len(adv)}")
    adv = adv[: len(unit_texts) + 1]
    for k in range(1, len(unit_texts) + 1):  # unit k-1 appears after the k-th press
        # (a browser's frame timestamp is the frame's start, which may precede an input event
        # handled in that frame: up to two frames of slack)
        if steps[k] < adv[k - 1]["t"] - FRAME_SLACK_MS:  # type: ignore[operator]
            raise TaskResultError(f"steps: unit {k - 1} shown before the press that reveals it")
    rts = [round_ms(adv[k + 1]["t"] - adv[k]["t"]) for k in range(len(unit_texts))]
    if s.reveal == "word":
        out["word_rts_ms"] = json.dumps(rts)
        out["region_rts_ms"] = json.dumps([round_ms(sum(rts[w] for w in reg)) for reg in regs])  # type: ignore[misc]
    else:
        out["region_rts_ms"] = json.dumps(rts)
    extra["display_lag_ms"] = [round_ms(steps[k] - adv[k - 1]["t"]) for k in range(1, len(unit_texts) + 1)]
    ans = answers(trial, s)
    if ans:
        q_on = event_time(raw.get("question_onset"), "question_onset")
        if q_on < adv[-1]["t"] - FRAME_SLACK_MS:  # type: ignore[operator]
            raise TaskResultError("question_onset: the question comes after the sentence")
        got = counted_answer(raw, ans, presses, pointers, q_on, "question_answered_by", "question_answer_time",
                      s.mouse)
        if got is None:
            raise TaskResultError("question_answered_by: the comprehension question waits for an answer")
        pos, at, by = got
        out["response"] = ans[pos].value
        out["rt_ms"] = round_ms(at - q_on)  # type: ignore[operator]
        out["correct"] = score(trial, ans[pos].value)
        extra["answered_by"] = by
    elif raw.get("question_onset") is not None:
        raise TaskResultError("question_onset: this trial has no comprehension question")


def plan(trial: Trial, s: TaskSettings, order: list[int] | None, rng: random.Random, right: bool) -> TaskPlan:
    """Reading presses paced by the units' lengths, then the question's answer."""
    unit_texts, _ = trial_units(trial, s.reveal)
    t, read = 0.0, []
    for u in range(len(unit_texts) + 1):
        t += round(rng.uniform(0.18, 0.32) + 0.01 * (len(unit_texts[u]) if u < len(unit_texts) else 0), 3)
        read.append((round(t, 3), s.advance_key))
    phases = {"read": read}
    ans = answers(trial, s)
    intended, ok = "", None
    if ans:
        pick = pick_answer(trial, ans, rng, right, "self_paced_reading", wrong_at_random=False)
        phases["question"] = [(rt(rng), pick.key)]
        intended, ok = pick.value, score(trial, pick.value)
    return TaskPlan(phases, intended, ok)


def check_keys(settings: Any, given: dict[str, Any], quit_key: str, n_options: int, n_question_options: int) -> None:
    """Enough comprehension keys, none shared, none the quit key; the advance key neither quits nor answers."""
    qk = list(settings.option_keys)
    if n_question_options > len(qk):
        raise KeySettingError(f"task.option_keys: comprehension questions with {n_question_options} options need "
                              f"{n_question_options} keys, got {len(qk)} ({', '.join(qk)})")
    clash("task.option_keys", qk[:max(n_question_options, 0)] or qk, quit_key)
    if settings.advance_key == quit_key:
        raise KeySettingError(f"task.advance_key: {quit_key!r} is the quit key (task.quit_key)")
    if settings.advance_key in qk[:n_question_options]:
        raise KeySettingError(f"task.advance_key: {settings.advance_key!r} is also a comprehension answer key "
                              "(task.option_keys)")


def human_settings(st: Any, given: dict[str, Any], lang: str, n_options: int) -> dict[str, Any]:
    """The comprehension answers' keys, and the hint that names the advance key."""

    return {"question_keys": tuple(st.option_keys),
            "hint": kind_text("self_paced_reading", lang, "hint", key=key_label(st.advance_key, lang))}


def page_view(trial: Trial, s: TaskSettings, order: list[int] | None, listed: Any) -> dict[str, Any]:
    """The units one press reveals, the advance key and the comprehension question (none: no question)."""
    return {"units": trial_units(trial, s.reveal)[0], "advance_key": s.advance_key,
            "question_answers": listed(answers(trial, s)), "question": str(trial.mat.get("question") or "")}


RAW_FIELDS = (frozenset({"presses", "pointers", "steps", "taps"}),
              frozenset({"question_onset", "question_answered_by", "question_answer_time"}))

KIND = TaskKind(
    name="self_paced_reading", description="moving window, per-word reading times, optional question",
    materials=("sentence",), optional_materials=("regions", "question", "question_options", "question_answer"),
    recorded=("word_rts_ms", "region_rts_ms", "response", "correct", "rt_ms"),
    runners=("psychopy", "browser", "model"), model_protocols=("surprisal",), score=score,
    settings=SelfPacedReadingSettings,
    check_item=check_item, answers=answers, derive=derive, plan=plan,
    check_keys=check_keys, human_settings=human_settings, page_view=page_view,
    raw_fields=RAW_FIELDS, record_keys=lambda s: (s.advance_key,),
)
