"""A sentence's regions: the optional `regions` material of any kind with sentences, read one way.

`regions` is the item's sentence with `|` between regions; without it every word is a region. Per-word
measures summed by region (self-paced reading's reading times, other reading kinds' word RTs, the surprisal
protocol's region sums) all count words of `sentence` split on spaces, so one reading of the field serves
them all: kinds import it, and a layer calls it without asking which kind the trial is.
"""
from __future__ import annotations

from typing import Any

from experiments.tasks.base import TaskError


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
