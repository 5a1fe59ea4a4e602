"""The Lakretz cells' order: a random order under a block's `max_consecutive_violations` and
`max_consecutive_same_structure` (the cell source's ordering strategy, experiments/sources/lakretz_cells.py).

Kept as it was (the plain greedy with restarts, then the feasibility-guided greedy), so the bundled
specs compile to the same sequences; the general designs' `max_run` order (design_order.py) makes other
draws (it looks ahead from the first step), which would move every Lakretz sequence.
"""
from __future__ import annotations

import random
from typing import Protocol, TypeVar

from experiments.spec_model import Block, SpecError


class _Runs(Protocol):
    """What the order reads of a cell (lakretz_cells.Cell)."""

    @property
    def structure(self) -> str: ...

    @property
    def violation(self) -> str: ...


Cell = TypeVar("Cell", bound=_Runs)


def _ok(seq: list[Cell], block: Block) -> bool:
    run_v = run_s = 0
    for k, c in enumerate(seq):
        run_v = run_v + 1 if c.violation != "none" else 0
        run_s = run_s + 1 if k and seq[k - 1].structure == c.structure else 1
        if block.max_consecutive_violations and run_v > block.max_consecutive_violations:
            return False
        if block.max_consecutive_same_structure and run_s > block.max_consecutive_same_structure:
            return False
    return True


# the plain greedy's restarts stop after this many cell checks (~ 2000 restarts of a 144-trial
# block, the bundled spec's largest), then the feasibility-guided greedy takes over
SHUFFLE_WORK = 2000 * 144 * 145 // 2


def order_cells(cells: list[Cell], block: Block, rng: random.Random) -> list[Cell]:
    """Random order that respects the run-length constraints (greedy with restarts).

    The plain greedy (uniform among the allowed cells) is kept as it was, so existing specs compile
    to the same sequences; it rarely finishes a long block, so after a bounded amount of work a
    greedy that also keeps the rest of the block orderable takes over (`_guided_shuffle`).
    """
    max_v = block.max_consecutive_violations or len(cells) + 1
    max_s = block.max_consecutive_same_structure or len(cells) + 1
    check_orderable(cells, block, max_v, max_s)
    n = len(cells)
    attempts = max(1, min(2000, SHUFFLE_WORK // max(1, n * (n + 1) // 2)))
    for _ in range(attempts):
        remaining = cells[:]
        rng.shuffle(remaining)
        seq: list[Cell] = []
        run_v = run_s = 0
        while remaining:
            last = seq[-1].structure if seq else None
            choices = [
                k for k, c in enumerate(remaining)
                if (c.violation == "none" or run_v < max_v) and (c.structure != last or run_s < max_s)
            ]
            if not choices:
                break
            c = remaining.pop(rng.choice(choices))
            run_v = run_v + 1 if c.violation != "none" else 0
            run_s = run_s + 1 if c.structure == last else 1
            seq.append(c)
        if not remaining:
            assert _ok(seq, block)
            return seq
    for _ in range(50):
        seq = _guided_shuffle(cells, max_v, max_s, rng)
        if seq is not None:
            assert _ok(seq, block)
            return seq
    raise SpecError(
        f"block {block.name!r}: cannot order {len(cells)} trials under max_consecutive_violations="
        f"{block.max_consecutive_violations}, max_consecutive_same_structure={block.max_consecutive_same_structure}"
    )


def check_orderable(cells: list[Cell], block: Block, max_v: int, max_s: int) -> None:
    """Counting arguments that make an order impossible, said plainly (before any search)."""
    n_viol = sum(c.violation != "none" for c in cells)
    n_gram = len(cells) - n_viol
    if n_viol > max_v * (n_gram + 1):
        raise SpecError(f"block {block.name!r}: {n_viol} violation trials and {n_gram} grammatical ones cannot be "
                        f"ordered with at most {max_v} violations in a row (that needs at least "
                        f"{-(-n_viol // max_v) - 1} grammatical trials); raise max_consecutive_violations or the "
                        "grammatical weight")
    counts: dict[str, int] = {}
    for c in cells:
        counts[c.structure] = counts.get(c.structure, 0) + 1
    top, m = max(counts.items(), key=lambda kv: kv[1])
    if m > max_s * (len(cells) - m + 1):
        raise SpecError(f"block {block.name!r}: {m} of its {len(cells)} trials are {top}, too many for at most "
                        f"{max_s} of one structure in a row; raise max_consecutive_same_structure")


def _guided_shuffle(cells: list[Cell], max_v: int, max_s: int, rng: random.Random) -> list[Cell] | None:
    """One greedy pass choosing, uniformly among the allowed cells, only those after which the counting
    bounds of `check_orderable` still hold for the rest; O(n x kinds of cell). None on a dead end."""
    groups: dict[tuple[bool, str], list[Cell]] = {}
    for c in cells:
        groups.setdefault((c.violation != "none", c.structure), []).append(c)
    for g in groups.values():
        rng.shuffle(g)
    by_structure: dict[str, int] = {}
    for (_, st), g in groups.items():
        by_structure[st] = by_structure.get(st, 0) + len(g)
    n_viol = sum(len(g) for (v, _), g in groups.items() if v)
    remaining = len(cells)
    seq: list[Cell] = []
    run_v = run_s = 0
    last: str | None = None
    while remaining:
        options = []
        for (viol, st), g in groups.items():
            if not g or (viol and run_v >= max_v) or (st == last and run_s >= max_s):
                continue
            rv = run_v + 1 if viol else 0
            rs = run_s + 1 if st == last else 1
            nv, rest = n_viol - viol, remaining - 1
            if nv > (max_v - rv) + (rest - nv) * max_v:  # violations left must still fit between grammatical ones
                continue
            counts = dict(by_structure)
            counts[st] -= 1
            if any(k > (max_s - rs if s == st else max_s) + (rest - k) * max_s for s, k in counts.items()):
                continue
            options.append(((viol, st), len(g)))
        if not options:
            return None
        pick = rng.randrange(sum(w for _, w in options))
        for key, w in options:
            if pick < w:
                break
            pick -= w
        c = groups[key].pop()
        viol, st = key
        run_v = run_v + 1 if viol else 0
        run_s = run_s + 1 if st == last else 1
        last = st
        n_viol -= viol
        by_structure[st] -= 1
        remaining -= 1
        seq.append(c)
    return seq
