"""Rating: a k-point scale (1..k, labelled ends, keys or clicks). No right answer: `score` is None;
the chosen point goes to `rating` (and `response` as text)."""
from __future__ import annotations

import random
from typing import Any, Literal

from kinds.api import (
    Answer,
    KindSettings,
    Scale,
    TaskKind,
    TaskPlan,
    TaskSettings,
    Trial,
    clash,
    derive_answer,
    missing,
    rt,
)


class RatingSettings(KindSettings):
    scale: Scale = Scale(points=7, low_label="completely unacceptable", high_label="completely acceptable")
    question: str = "How acceptable is this sentence?"
    presentation: Literal["whole", "rsvp"] = "whole"


def score(trial: Trial, response: Any) -> bool | None:
    return None


def rating_value(response: Any, points: int) -> int | None:
    """A response ("5", 5, 5.0) as a scale point 1..points; None when missing or off the scale."""
    if missing(response) or str(response).strip() == "":
        return None
    try:
        v = float(str(response).strip())
    except ValueError:
        return None
    return int(v) if v.is_integer() and 1 <= v <= points else None


def answers(trial: Trial, s: TaskSettings, order: list[int] | None = None) -> list[Answer]:
    """The scale's points 1..k with their keys."""
    return [Answer(str(p + 1), str(p + 1), s.keys[p]) for p in range(s.scale)]


def derive(trial: Trial, s: TaskSettings, order: list[int] | None, raw: dict, presses: list, pointers: list,
           out: dict, extra: dict) -> None:
    _, a = derive_answer(trial, s, order, raw, presses, pointers, out, extra)
    out["rating"] = float(a.value)
    out["correct"] = None


def plan(trial: Trial, s: TaskSettings, order: list[int] | None, rng: random.Random, right: bool) -> TaskPlan:
    ans = answers(trial, s)
    pick = ans[rng.randrange(len(ans))]
    return TaskPlan({"answer": [(rt(rng), pick.key)]}, pick.value, None)


def check_keys(settings: Any, given: dict[str, Any], quit_key: str, n_options: int, n_question_options: int) -> None:
    clash("task.scale.keys", list(settings.scale.point_keys), quit_key)


def human_settings(st: Any, given: dict[str, Any], lang: str, n_options: int) -> dict[str, Any]:
    """The scale's points, one key per point and its labelled ends."""
    return {"scale": st.scale.points, "keys": tuple(st.scale.point_keys),
            "anchors": (str(st.scale.low_label), str(st.scale.high_label))}


def page_view(trial: Trial, s: TaskSettings, order: list[int] | None, listed: Any) -> dict[str, Any]:
    """The scale's points as answers, with its labelled ends."""
    return {"answers": listed(answers(trial, s, order)), "anchors": list(s.anchors)}


KIND = TaskKind(
    name="rating", description="a k-point scale",
    materials=("sentence",), optional_materials=("question",),
    recorded=("response", "rating", "rt_ms"), runners=("psychopy", "browser", "model"),
    model_protocols=("meta", "direct", "surprisal"),
    score=score, settings=RatingSettings, answers=answers, derive=derive, plan=plan,
    check_keys=check_keys, human_settings=human_settings, page_view=page_view,
)
