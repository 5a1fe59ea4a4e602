"""Self-paced reading: moving window (dashes of the words' lengths, one word or region per key press),
per-word and per-region reading times; an optional comprehension question after the sentence, scored
against `question_answer` (the trial is unscored without one)."""
from __future__ import annotations

from typing import Any

from experiments.tasks.base import TaskError, TaskKind, register
from experiments.tasks.config import SelfPacedReadingSettings
from experiments.tasks.scoring import equals_answer, normalize_answer


def score(trial: Any, response: Any) -> bool | None:
    return equals_answer(trial.mat.get("question_answer"), response)


def regions(mat: dict[str, Any]) -> list[list[int]]:
    """The word indices (of `sentence` split on spaces) of each region: `regions` is the sentence with
    `|` between regions; without it every word is a region. A `regions` whose words differ from the
    sentence's is refused."""
    words = str(mat.get("sentence", "")).split()
    text = mat.get("regions")
    if not text:
        return [[i] for i in range(len(words))]
    parts = [p.split() for p in str(text).split("|")]
    if [w for p in parts for w in p] != words or any(not p for p in parts):
        raise TaskError(f"regions: {text!r} do not split the sentence {' '.join(words)!r} into non-empty regions")
    out, k = [], 0
    for p in parts:
        out.append(list(range(k, k + len(p))))
        k += len(p)
    return out


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
        regions(mat)
    except TaskError as exc:
        raise TaskError(f"{where}: {exc}") from None
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


KIND = register(TaskKind(
    name="self_paced_reading", description="moving window, per-word reading times, optional question",
    materials=("sentence",), optional_materials=("regions", "question", "question_options", "question_answer"),
    recorded=("word_rts_ms", "region_rts_ms", "response", "correct", "rt_ms"),
    runners=("psychopy", "browser", "model"), model_protocols=("surprisal",), score=score, settings=SelfPacedReadingSettings,
    check_item=check_item,
))
