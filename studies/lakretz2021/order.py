"""The Lakretz cells' order: the cell source's run limits and its search (experiments/sources/orders.py).

A Lakretz block's `max_consecutive_violations` is a run limit on the key `violation` (a violation cell has
the value "violation", a grammatical one None, which breaks the run) and `max_consecutive_same_structure`
one on `structure`; a limit not set is n + 1 (no limit, but the guided search still groups the cells by
both). The search is the plain greedy with restarts, then the guided greedy, as these specs have always
been ordered: the design files' look-ahead search makes other draws and would move every Lakretz sequence.
"""
from __future__ import annotations

import random
from typing import Any

from experiments.sources.orders import excess, greedy_order, guided_order, runs_ok
from experiments.spec_model import Block, SpecError

# the plain greedy's restarts stop after this many cell checks (~ 2000 restarts of a 144-trial
# block, the bundled spec's largest), then the feasibility-guided greedy takes over
SHUFFLE_WORK = 2000 * 144 * 145 // 2
GUIDED_TRIES = 50


def cell_value(cell: Any, key: str) -> str | None:
    """A cell's value of a run key: `violation` ("violation" or None) or `structure`."""
    if key == "violation":
        return "violation" if cell.violation != "none" else None
    return cell.structure


def cell_limits(block: Block, n: int) -> dict[str, int]:
    return {"violation": block.max_consecutive_violations or n + 1,
            "structure": block.max_consecutive_same_structure or n + 1}


def check_orderable(cells: list[Any], block: Block) -> None:
    """Counting arguments that make an order impossible, said plainly (before any search)."""
    found = excess(cells, cell_limits(block, len(cells)), cell_value)
    if found is None:
        return
    key, top, m, lim = found
    if key == "violation":
        n_gram = len(cells) - m
        raise SpecError(f"block {block.name!r}: {m} violation trials and {n_gram} grammatical ones cannot be "
                        f"ordered with at most {lim} violations in a row (that needs at least "
                        f"{-(-m // lim) - 1} grammatical trials); raise max_consecutive_violations or the "
                        "grammatical weight")
    raise SpecError(f"block {block.name!r}: {m} of its {len(cells)} trials are {top}, too many for at most "
                    f"{lim} of one structure in a row; raise max_consecutive_same_structure")


def order_cells(cells: list[Any], block: Block, rng: random.Random) -> list[Any]:
    """Random order that respects the run limits: the plain greedy (uniform among the allowed cells) for a
    bounded amount of work, then the greedy that also keeps the rest of the block orderable."""
    limits = cell_limits(block, len(cells))
    check_orderable(cells, block)
    n = len(cells)
    seq = greedy_order(cells, limits, cell_value, rng, max(1, min(2000, SHUFFLE_WORK // max(1, n * (n + 1) // 2))))
    tries = 0
    while seq is None and tries < GUIDED_TRIES:
        seq = guided_order(cells, limits, cell_value, rng)
        tries += 1
    if seq is None:
        raise SpecError(
            f"block {block.name!r}: cannot order {len(cells)} trials under max_consecutive_violations="
            f"{block.max_consecutive_violations}, "
            f"max_consecutive_same_structure={block.max_consecutive_same_structure}")
    assert runs_ok(seq, limits, cell_value)
    return seq
