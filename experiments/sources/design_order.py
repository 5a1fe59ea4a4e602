"""A design's rows in a random order under a block's `max_run` limits (the design-file source's ordering):
the look-ahead search of experiments/sources/orders.py over the rows' values (docs/general_model.md).
"""
from __future__ import annotations

import random
from functools import partial

from experiments.design import Row
from experiments.sources.orders import excess, lookahead_order
from experiments.spec_model import Block, Experiment, SpecError

SHUFFLE_ATTEMPTS = 200
ORDER_STEPS = 100_000  # steps of the greedy over all restarts (a 5,000-row block: 20 restarts)


def run_value(row: Row, key: str, factors: list[str]) -> str | None:
    """The run key of a row: its level of a factor, its condition, its item or its answer; None (e.g. a
    filler without factors) breaks the run."""
    if key in factors:
        return row.levels[factors.index(key)] if row.levels is not None else None
    if key == "item":
        return row.item
    if key == "answer":
        answer = dict(row.materials).get("answer")
        return answer if isinstance(answer, str) and answer else None
    return row.condition if row.levels is not None else None  # key == "condition"


def _row_value(factors: list[str], row: Row, key: str) -> str | None:
    return run_value(row, key, factors)


def check_orderable(rows: list[Row], block: Block, exp: Experiment, where: str) -> None:
    """The counting bound that makes an order impossible, said plainly before any search."""
    factors = list(exp.design.factors)  # type: ignore[union-attr]
    found = excess(rows, dict(block.max_run or {}), partial(_row_value, factors))
    if found is not None:
        key, value, m, limit = found
        n = len(rows)
        raise SpecError(f"{where}: blocks: block {block.name!r}: {m} of its {n} trials have {key} = "
                        f"{value!r}, too many for max_run {key}: {limit} (at most {limit * (n - m + 1)}); "
                        "raise the limit or add fillers")


def order_rows(rows: list[Row], block: Block, factors: list[str], rng: random.Random) -> list[Row]:
    """A random order in which no factor level (or condition) runs longer than the block's max_run: at most
    SHUFFLE_ATTEMPTS restarts and ORDER_STEPS steps of the look-ahead greedy, then the block is refused,
    saying why. No limits: a plain shuffle."""
    limits = dict(block.max_run or {})
    if not limits:
        out = rows[:]
        rng.shuffle(out)
        return out
    seq = lookahead_order(rows, limits, partial(_row_value, factors), rng, SHUFFLE_ATTEMPTS, ORDER_STEPS)
    if seq is None:
        raise SpecError(f"block {block.name!r}: cannot order its {len(rows)} trials under max_run "
                        f"{dict(limits)} ({SHUFFLE_ATTEMPTS} attempts, or {ORDER_STEPS} steps); raise the limits or "
                        "add fillers")
    return seq
