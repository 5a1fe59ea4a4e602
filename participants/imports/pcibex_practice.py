"""Which PCIbex/Ibex trials are practice: the one rule the reader and `--show-map` use.

Ibex and PennController studies name their practice items by label (Ibex's `Type`, PennController's `Label`),
by the studies' own conventions: `practice`, `Practice-good`, `GuidedPractice1`..`3`, `practice_trials`,
`training`, `train1`, `prac`. A map that lists its own `practice_values` means exactly those values.
"""
from __future__ import annotations

import re
from typing import Iterable

PRACTICE_VALUES = ("practice", "training", "train", "prac", "practise")
CONVENTION = re.compile(r"practi[cs]e|^prac(?![a-z])|^train", re.IGNORECASE)
RULE = ("a label containing 'practice' or 'practise', or starting with 'train' or 'prac' "
        "(practice, GuidedPractice1, Practice-good, training, train2, prac)")


def is_practice(value: str, values: Iterable[str]) -> bool:
    """Whether a label means practice: one of `values`, or (with the default values) the tools' conventions."""
    values = tuple(values)
    v = value.strip()
    if v.lower() in {x.lower() for x in values}:
        return True
    return (not values or values == PRACTICE_VALUES) and bool(CONVENTION.search(v))


def describe(values: Iterable[str]) -> str:
    """The rule in words, for --show-map and the report."""
    values = tuple(values)
    if values and values != PRACTICE_VALUES:
        return "one of " + ", ".join(values) + " (--map practice_values)"
    return RULE
