"""The built-in task kinds. Each gets its own module as it grows (the owner of the task-kinds work
splits them); scoring functions stay pure: (trial, response) -> bool | None."""
from __future__ import annotations

from typing import Any

from experiments.tasks.base import TaskKind, register


def _answer_equals(trial: Any, response: Any) -> bool | None:
    answer = trial.mat.get("answer")
    if answer in (None, ""):
        return None
    return None if response in (None, "") else str(response) == str(answer)


register(TaskKind(
    name="violation_detection", description="RSVP sentence; report a violation (key or panel)",
    materials=(), runners=("psychopy", "browser", "model"),
    model_protocols=("violation_judgment", "forced_choice", "direct"),
))
register(TaskKind(
    name="judgment", description="one sentence (whole or word by word), two or more labelled answers",
    materials=("sentence",), optional_materials=("answer", "pair_sentence", "question"),
    runners=("psychopy", "browser"), model_protocols=("meta", "direct"), score=_answer_equals,
))
register(TaskKind(
    name="choice", description="2 to n options shown together, position counterbalanced",
    materials=("options",), optional_materials=("prefix", "answer", "question"),
    recorded=("response", "correct", "rt_ms", "option_order", "chosen_position"),
    runners=("psychopy", "browser"), model_protocols=("direct", "meta", "production"), score=_answer_equals,
))
register(TaskKind(
    name="rating", description="a k-point scale",
    materials=("sentence",), optional_materials=("question",),
    recorded=("response", "rating", "rt_ms"), runners=("psychopy", "browser"), model_protocols=("meta", "direct"),
))
register(TaskKind(
    name="completion", description="a prefix and a typed answer (cloze)",
    materials=("prefix", "target"), optional_materials=("accepted",),
    recorded=("response", "response_text", "keystrokes", "correct", "rt_ms"),
    runners=("psychopy", "browser"), model_protocols=("direct", "production", "meta"),
))
register(TaskKind(
    name="self_paced_reading", description="moving window, per-word reading times, optional question",
    materials=("sentence",), optional_materials=("regions", "question", "question_options", "question_answer"),
    recorded=("word_rts_ms", "region_rts_ms", "response", "correct", "rt_ms"),
    runners=("psychopy", "browser"), model_protocols=("surprisal",),
))
register(TaskKind(
    name="lexical_decision", description="a letter string; word / non-word keys",
    materials=("sentence", "answer"), recorded=("response", "correct", "rt_ms"),
    runners=("psychopy", "browser"), model_protocols=("direct", "meta"), score=_answer_equals,
))
