"""Choice: 2 to n options shown together (two sentences side by side, two words, n answers of a
multiple-choice item). The response is the chosen option's text; it is correct when it is the item's
`answer` under the one rule (experiments.tasks.scoring), and never when two options are the same text
(a tie cannot be meant). The screen order is `option_order` (recorded as `option_order`, the original
indices in screen order, and `chosen_position`), honouring `positions: fixed`."""
from __future__ import annotations

import itertools
import json
import random
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from kinds.api import (
    Answer,
    KindSettings,
    TaskError,
    TaskKind,
    TaskPlan,
    TaskResultError,
    TaskSettings,
    Trial,
    choice_keys,
    clash,
    derive_answer,
    equals_answer,
    normalize_answer,
    plan_answer,
    valid_key,
)


class ChoiceSettings(KindSettings):
    question: str = "Which is better?"
    positions: Literal["counterbalance", "fixed"] = "counterbalance"
    option_keys: Annotated[list[str], Field(min_length=2)] = ["1", "2", "3", "4", "5", "6", "7", "8", "9"]

    @field_validator("option_keys")
    @classmethod
    def _keys(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("option_keys: a key is given twice")
        return [valid_key(k) for k in v]


def options_tie(options: Any) -> bool:
    """Two options that are the same text under the rule (a choice between them means nothing)."""
    norm = [normalize_answer(o) for o in (options or ())]
    return len(set(norm)) != len(norm)


def check_item(mat: dict[str, Any], settings: Any, where: str) -> None:
    """At least two options, none empty, no two the same text; the answer (if given) one of them."""
    opts = [str(o) for o in (mat.get("options") or ())]
    if len(opts) < 2:
        raise TaskError(f"{where}: options: a choice needs at least two options (option_1, option_2, ...), got "
                        f"{len(opts)}")
    if any(normalize_answer(o) == "" for o in opts):
        raise TaskError(f"{where}: options: an option is empty")
    if options_tie(opts):
        raise TaskError(f"{where}: options: two options are the same text ({' | '.join(opts)}); a choice between them "
                        "means nothing")
    ans = mat.get("answer")
    if ans not in (None, "") and not any(equals_answer(ans, o) for o in opts):
        raise TaskError(f"{where}: answer {ans!r} is not one of the options ({' | '.join(opts)})")


def score(trial: Trial, response: Any) -> bool | None:
    """The chosen option's text against `answer`; never correct when two options tie."""
    ok = equals_answer(trial.mat.get("answer"), response)
    if ok and options_tie(trial.mat.get("options")):
        return False
    return ok


def option_order(n: int, positions: str, key: str, index: int = 0) -> list[int]:
    """The options' original indices in screen order, the same in every runner.

    `fixed`: as in the item. `counterbalance`: the permutations of the n options are cycled through
    over the session's trials (`index`, the trial index) from an offset drawn from `key` (e.g.
    "<seed>:<subject>"): over any n! consecutive trials each option is in each position equally
    often. More than 6 options: a shuffle seeded by key and index."""
    if positions == "fixed" or n < 2:
        return list(range(n))
    if n > 6:
        order = list(range(n))
        random.Random(f"{key}:{index}").shuffle(order)
        return order
    perms = list(itertools.permutations(range(n)))
    offset = random.Random(key).randrange(len(perms))
    return list(perms[(offset + index) % len(perms)])


def trial_option_order(trial: Any, seed: int | None, subject_id: str, positions: str) -> list[int]:
    """`option_order` of a compiled trial for a subject's sequence (seed, subject)."""
    n = len(trial.mat.get("options") or ())
    return option_order(n, positions, f"{seed if seed is not None else 0}:{subject_id}", trial.trial_index)


def chosen_position(order: list[int], options: list[str], response: str) -> int | None:
    """0-based screen position of the chosen option text (None when it is not an option)."""
    try:
        return order.index(list(options).index(response))
    except ValueError:
        return None


def answer_index(options: list[str], answer: Any) -> int | None:
    """The index of the option that is the item's `answer` under the one rule (`score`'s equals_answer:
    "Dog." is the option "dog"); None without an answer or when no option is it."""
    return next((i for i, o in enumerate(options) if equals_answer(answer, o)), None)


def answer_position(order: list[int], options: list[str], answer: Any) -> int | None:
    """0-based screen position of the option `answer_index` finds (None: none, or not shown)."""
    idx = answer_index(options, answer)
    return order.index(idx) if idx is not None and idx in order else None


def answers(trial: Trial, s: TaskSettings, order: list[int] | None = None) -> list[Answer]:
    """The options in screen order (`order`: original indices, option_order) with the position keys."""
    opts = [str(o) for o in trial.mat.get("options") or ()]
    order = order if order is not None else list(range(len(opts)))
    if len(s.keys) < len(opts):
        raise TaskResultError(f"task.keys: {len(opts)} options need {len(opts)} keys")
    return [Answer(opts[i], opts[i], s.keys[p]) for p, i in enumerate(order)]


def derive(trial: Trial, s: TaskSettings, order: list[int] | None, raw: dict, presses: list, pointers: list,
           out: dict, extra: dict) -> None:
    pos, _ = derive_answer(trial, s, order, raw, presses, pointers, out, extra)
    out["option_order"] = json.dumps(order)
    out["chosen_position"] = pos


def plan(trial: Trial, s: TaskSettings, order: list[int] | None, rng: random.Random, right: bool) -> TaskPlan:
    return plan_answer(trial, s, order, rng, right)


def check_keys(settings: Any, given: dict[str, Any], quit_key: str, n_options: int, n_question_options: int) -> None:
    clash("task.option_keys", choice_keys(settings, "option_keys" in given, max(2, n_options)), quit_key)


def human_settings(st: Any, given: dict[str, Any], lang: str, n_options: int) -> dict[str, Any]:
    """The key of each screen position (F, J for two options, the digits for more; `option_keys` if given)."""
    return {"keys": tuple(choice_keys(st, "option_keys" in given, n_options))}


def screen_order(trial: Trial, seed: int | None, subject_id: str, s: TaskSettings | None) -> list[int]:
    """The human runners' option order of a trial (`trial_option_order` under the settings' `positions`)."""
    return trial_option_order(trial, seed, subject_id, s.positions if s is not None else "counterbalance")


KIND = TaskKind(
    name="choice", description="2 to n options shown together, position counterbalanced",
    materials=("options",), optional_materials=("prefix", "answer", "question"),
    recorded=("response", "correct", "rt_ms", "option_order", "chosen_position"),
    runners=("psychopy", "browser", "model"),
    model_protocols=("direct", "direct:mean", "meta", "production", "surprisal"), score=score, settings=ChoiceSettings,
    check_item=check_item, answers=answers, derive=derive, plan=plan,
    check_keys=check_keys, human_settings=human_settings, option_order=screen_order,
)
