"""A block's units in a random order under run limits, for every source of items.

A run limit `{key: lim}` allows at most `lim` units in a row with the same value of `key` (a unit's value
comes from its source: a design row's factor level, condition, item or answer; a Lakretz cell's
structure, or `violation` for a violation cell); a value None (a grammatical cell, a filler without
factors) breaks the run. One counting bound (`excess`) says before any search when no order exists.
Two searches, each the random draws of the specs that use it (so recorded sessions keep their
hashes): `lookahead_order` (design files' `max_run`) checks at every step that the rest stays
placeable; `greedy_order` then `guided_order` (the Lakretz blocks' limits) try the plain greedy first and
look ahead only after a bounded amount of work.
"""
from __future__ import annotations

import random
from collections import Counter
from typing import Any, Callable, Sequence

import numpy as np

Value = Callable[[Any, str], "str | None"]


def excess(units: Sequence[Any], limits: dict[str, int], value: Value) -> tuple[str, str, int, int] | None:
    """(key, value, its count m, lim) for the first key whose most frequent value cannot be spaced out,
    m > lim * (n - m + 1); None when the bound holds for every key."""
    n = len(units)
    for key, lim in limits.items():
        counts = Counter(v for v in (value(u, key) for u in units) if v is not None)
        if counts:
            top, m = max(counts.items(), key=lambda kv: kv[1])
            if m > lim * (n - m + 1):
                return key, top, m, lim
    return None


def runs_ok(seq: Sequence[Any], limits: dict[str, int], value: Value) -> bool:
    """Whether no run in `seq` is longer than its limit."""
    for key, lim in limits.items():
        cur, length = None, 0
        for u in seq:
            v = value(u, key)
            length = 0 if v is None else (length + 1 if v == cur else 1)
            cur = v
            if length > lim:
                return False
    return True


def greedy_order(units: list[Any], limits: dict[str, int], value: Value, rng: random.Random,
                 attempts: int) -> list[Any] | None:
    """The plain greedy with restarts: each step takes, uniformly, one of the units the limits allow now
    (no look-ahead, so it may dead-end); None after `attempts` dead ends."""
    cols = [[value(u, k) for u in units] for k in limits]  # each key's values, by unit
    lims = tuple(limits.values())
    keys = range(len(lims))
    for _ in range(attempts):
        remaining = list(range(len(units)))
        rng.shuffle(remaining)
        seq: list[int] = []
        cur: list[Any] = [None] * len(lims)
        length = [0] * len(lims)
        while remaining:
            full = [(cols[k], cur[k]) for k in keys if cur[k] is not None and length[k] >= lims[k]]
            if full:  # the runs at their limit: a unit continuing one of them may not come now
                choices: Sequence[int] = _free(remaining, full)
                if not choices:
                    break
            else:
                choices = range(len(remaining))  # the same draw as a list of every position
            i = remaining.pop(rng.choice(choices))
            for k in keys:
                v = cols[k][i]
                length[k] = 0 if v is None else (length[k] + 1 if v == cur[k] else 1)
                cur[k] = v
            seq.append(i)
        if not remaining:
            return [units[i] for i in seq]
    return None


def _free(remaining: list[int], full: list[tuple[list[Any], Any]]) -> list[int]:
    """The positions in `remaining` of the units that continue none of the full runs (written out for one
    and two keys: this is the greedy's inner loop)."""
    if len(full) == 1:
        (col, v), = full
        return [j for j, i in enumerate(remaining) if col[i] != v]
    if len(full) == 2:
        (c1, v1), (c2, v2) = full
        return [j for j, i in enumerate(remaining) if c1[i] != v1 and c2[i] != v2]
    return [j for j, i in enumerate(remaining) if all(col[i] != v for col, v in full)]


def guided_order(units: list[Any], limits: dict[str, int], value: Value, rng: random.Random) -> list[Any] | None:
    """One greedy pass over the kinds of unit (their tuple of values), choosing among the allowed kinds,
    weighted by how many units each has left, only those after which `excess` still holds for the rest;
    O(n x kinds). None on a dead end."""
    lims = tuple(limits.values())
    keys = range(len(lims))
    groups: dict[tuple[Any, ...], list[Any]] = {}
    for u, vs in zip(units, [tuple(value(u, k) for k in limits) for u in units], strict=False):
        groups.setdefault(vs, []).append(u)
    for g in groups.values():
        rng.shuffle(g)
    counts: list[dict[Any, int]] = [{} for _ in keys]
    for vs, g in groups.items():
        for k in keys:
            if vs[k] is not None:
                counts[k][vs[k]] = counts[k].get(vs[k], 0) + len(g)
    remaining, seq = len(units), []
    cur: list[Any] = [None] * len(lims)
    length = [0] * len(lims)
    while remaining:
        options = [(vs, len(g)) for vs, g in groups.items()
                   if g and _placeable(vs, counts, cur, length, lims, remaining - 1)]
        if not options:
            return None
        pick = rng.randrange(sum(w for _, w in options))
        for vs, w in options:  # noqa: B007 - `vs` is the pick, used after the loop breaks
            if pick < w:
                break
            pick -= w
        seq.append(groups[vs].pop())
        for k in keys:
            v = vs[k]
            length[k] = 0 if v is None else (length[k] + 1 if v == cur[k] else 1)
            cur[k] = v
            if v is not None:
                counts[k][v] -= 1
        remaining -= 1
    return seq


def _placeable(vs: tuple[Any, ...], counts: list[dict[Any, int]], cur: list[Any], length: list[int],
               lims: tuple[int, ...], rest: int) -> bool:
    """Whether a unit with values `vs` may come now: its runs stay within the limits, and every value's
    units left (c) still fit, c <= room + (rest - c) * lim (room: lim, less the run it continues)."""
    for k, lim in enumerate(lims):
        v = vs[k]
        if v is not None and v == cur[k] and length[k] >= lim:
            return False
        run = 0 if v is None else (length[k] + 1 if v == cur[k] else 1)
        for u, c in counts[k].items():
            c -= u == v
            if c > (lim - run if u == v else lim) + (rest - c) * lim:
                return False
    return True


def lookahead_order(units: list[Any], limits: dict[str, int], value: Value, rng: random.Random,
                    attempts: int, max_steps: int) -> list[Any] | None:
    """Greedy with restarts; each step takes, uniformly among the units allowed now, only one after which
    the counting bound still holds for the rest (so dead ends are rare). Each step is a few array
    operations over the remaining units (the values coded as integers): a 5,000-trial block is ordered in
    about a second; the random draws are the same as a unit-by-unit check's. At most `max_steps` steps over
    all restarts (all `attempts` restarts for a block of up to 500 units); None after that."""
    codes, n_values = {}, {}
    for k in limits:
        index: dict[str, int] = {}
        codes[k] = np.array([-1 if v is None else index.setdefault(v, len(index))
                             for v in (value(u, k) for u in units)], dtype=np.int64)
        n_values[k] = max(len(index), 1)
    steps = 0
    for _ in range(attempts):
        if steps + len(units) > max_steps and steps:
            break
        order = list(range(len(units)))
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
            return [units[i] for i in seq]
    return None


def _allowed(values: np.ndarray, counts: np.ndarray, run: tuple[int, int], lim: int, rest: int) -> np.ndarray:
    """For each remaining unit (its value's code, -1 for none), whether taking it now keeps the run within
    `lim` and leaves every value's units placeable: c units of a value need c <= room + (rest - c) * lim."""
    cur, length = run
    new_len = np.where(values < 0, 0, np.where(values == cur, length + 1, 1))
    ok = new_len <= lim
    # another value u than the unit's own: c_u <= lim + (rest - c_u) * lim must hold for every u
    too_many = np.flatnonzero((counts > 0) & (counts > lim + (rest - counts) * lim))
    if len(too_many) > 1:
        return np.zeros(len(values), dtype=bool)
    if len(too_many) == 1:
        ok &= values == too_many[0]
    # the unit's own value, one fewer, with the run in progress using part of its slot
    own = np.where(values >= 0, counts[np.maximum(values, 0)] - 1, 0)
    ok &= (own <= 0) | (own <= (lim - new_len) + (rest - own) * lim)
    return ok
