"""Choice: 2 to n options shown together (two sentences side by side, two words, n answers of a
multiple-choice item). The response is the chosen option's text; it is correct when it equals the
item's `answer`. Positions are counterbalanced by `option_order` (recorded as `option_order`, the
original indices in screen order, and `chosen_position`)."""
from __future__ import annotations

import hashlib
import random
from typing import Any

from experiments.tasks.base import TaskKind, register
from experiments.tasks.config import ChoiceSettings
from experiments.tasks.scoring import equals_answer


def score(trial: Any, response: Any) -> bool | None:
    """The chosen option's text against `answer`."""
    return equals_answer(trial.mat.get("answer"), response)


def option_order(n: int, positions: str, key: str) -> list[int]:
    """The options' original indices in screen order: as in the item (`fixed`) or a permutation drawn
    from `key` (`counterbalance`; e.g. "<subject>:<item_id>", so every runner shows the same order)."""
    if positions == "fixed":
        return list(range(n))
    seed = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big")
    order = list(range(n))
    random.Random(seed).shuffle(order)
    return order


def chosen_position(order: list[int], options: list[str], response: str) -> int | None:
    """0-based screen position of the chosen option text (None when it is not an option)."""
    try:
        return order.index(list(options).index(response))
    except ValueError:
        return None


KIND = register(TaskKind(
    name="choice", description="2 to n options shown together, position counterbalanced",
    materials=("options",), optional_materials=("prefix", "answer", "question"),
    recorded=("response", "correct", "rt_ms", "option_order", "chosen_position"),
    runners=("psychopy", "browser", "model"), model_protocols=("direct", "direct:mean", "meta", "production", "surprisal"), score=score, settings=ChoiceSettings,
))
