"""A design's rows in a random order under a block's `max_run` limits (the design-file source's ordering).

Greedy with restarts, each step looking ahead so that the rest stays placeable (docs/general_model.md).
"""
from __future__ import annotations

import random
from collections import Counter

import numpy as np

from experiments.design import Row
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


def check_orderable(rows: list[Row], block: Block, exp: Experiment, where: str) -> None:
    """The counting bound that makes an order impossible, said plainly before any search."""
    factors = list(exp.design.factors)  # type: ignore[union-attr]
    n = len(rows)
    for key, limit in (block.max_run or {}).items():
        counts = Counter(v for v in (run_value(r, key, factors) for r in rows) if v is not None)
        for value, m in counts.items():
            if m > limit * (n - m + 1):
                raise SpecError(f"{where}: blocks: block {block.name!r}: {m} of its {n} trials have {key} = "
                                f"{value!r}, too many for max_run {key}: {limit} (at most {limit * (n - m + 1)}); "
                                "raise the limit or add fillers")


def order_rows(rows: list[Row], block: Block, factors: list[str], rng: random.Random) -> list[Row]:
    """A random order in which no factor level (or condition) runs longer than the block's max_run.

    Greedy with restarts; each step takes, uniformly among the rows allowed now, only one after which
    the counting bound still holds for the rest (so dead ends are rare). Each step is a few array
    operations over the remaining rows (the values coded as integers): a 5,000-trial block is ordered
    in about a second; the random draws are the same as a row-by-row check's, so orders do not change.
    At most ORDER_STEPS steps over all restarts (all SHUFFLE_ATTEMPTS restarts for a block of up to 500
    rows), then the block is refused, saying why."""
    limits = dict(block.max_run or {})
    if not limits:
        out = rows[:]
        rng.shuffle(out)
        return out
    codes, n_values = {}, {}
    for k in limits:
        index: dict[str, int] = {}
        codes[k] = np.array([-1 if v is None else index.setdefault(v, len(index))
                             for v in (run_value(r, k, factors) for r in rows)], dtype=np.int64)
        n_values[k] = max(len(index), 1)
    steps = 0
    for _ in range(SHUFFLE_ATTEMPTS):
        if steps + len(rows) > ORDER_STEPS and steps:
            break
        order = list(range(len(rows)))
        rng.shuffle(order)
        remaining = np.array(order, dtype=np.int64)
        counts = {k: np.bincount(c[c >= 0], minlength=n_values[k]) for k, c in codes.items()}
        run = {k: (-1, 0) for k in limits}  # (the value's code, -1 for none; the run's length)
        seq: list[int] = []
        while len(remaining):
            steps += 1
            rest = len(remaining) - 1
            mask = np.ones(len(remaining), dtype=bool)
            for k, lim in limits.items():
                mask &= _allowed(codes[k][remaining], counts[k], run[k], lim, rest)
            allowed = np.flatnonzero(mask)
            if not len(allowed):
                break
            pos = int(allowed[rng.choice(range(len(allowed)))])  # the draw random.choice(allowed) makes
            i = int(remaining[pos])
            remaining = np.delete(remaining, pos)
            seq.append(i)
            for k in limits:
                v = int(codes[k][i])
                cur, length = run[k]
                run[k] = (v, length + 1 if v >= 0 and v == cur else (1 if v >= 0 else 0))
                if v >= 0:
                    counts[k][v] -= 1
        if not len(remaining):
            return [rows[i] for i in seq]
    raise SpecError(f"block {block.name!r}: cannot order its {len(rows)} trials under max_run "
                    f"{dict(limits)} ({SHUFFLE_ATTEMPTS} attempts, or {ORDER_STEPS} steps); raise the limits or "
                    "add fillers")


def _allowed(values: np.ndarray, counts: np.ndarray, run: tuple[int, int], lim: int, rest: int) -> np.ndarray:
    """For each remaining row (its value's code, -1 for none), whether taking it now keeps the run within
    `lim` and leaves every value's rows placeable: c rows of a value need c <= room + (rest - c) * lim."""
    cur, length = run
    new_len = np.where(values < 0, 0, np.where(values == cur, length + 1, 1))
    ok = new_len <= lim
    # another value u than the row's own: c_u <= lim + (rest - c_u) * lim must hold for every u
    too_many = np.flatnonzero((counts > 0) & (counts > lim + (rest - counts) * lim))
    if len(too_many) > 1:
        return np.zeros(len(values), dtype=bool)
    if len(too_many) == 1:
        ok &= values == too_many[0]
    # the row's own value, one fewer, with the run in progress using part of its slot
    own = np.where(values >= 0, counts[np.maximum(values, 0)] - 1, 0)
    ok &= (own <= 0) | (own <= (lim - new_len) + (rest - own) * lim)
    return ok
