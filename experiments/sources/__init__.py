"""Sources of items for the one compiler (experiments/design_compiler.py).

A spec names where its trials come from, and the compiler asks that source, never the spec's name:

- `design:` (a long-format file of items, docs/general_model.md) -> `design_rows.DesignRows`: the rows
  of the subject's list, dealt to the blocks by role (test, practice, fillers);
- `stimuli:` (a study's generator, or a released or hand-written stimulus file) -> the source the study
  that supplies `stimuli:` declares (`STIMULI["source"]` in its light __init__, found through
  experiments/studies.py `stimuli_part`): for the Lakretz study, the crossed cells of each block (structure
  x condition x version), an item chosen for each cell by the Latin-square rotation.

Each source answers the same questions (`ItemSource`, `SubjectDraw`): the blocks' sizes, a block's pool
of units, how a block's sample is balanced, how a block is ordered under its run limits, and the trial a
unit becomes. The compiler does the rest (the random stream, sampling, sessions, dealing) in one place.
"""
from __future__ import annotations

import random
from typing import Any, Protocol

from experiments.spec_model import Block, Experiment
from experiments.studies import stimuli_part
from experiments.trials import Trial


class SubjectDraw(Protocol):
    """One subject's view of a source (its list or rotation, the items it has used)."""

    # True: a unit is a cell of the design (an item is chosen for it afterwards), so a block asking for more
    # trials than its design holds starts another pass; False: a unit is an item shown at most once
    refill: bool

    def pool(self, index: int, block: Block) -> list[Any]:
        """The units block `index` draws on (its design, before sampling and ordering)."""

    def sample_key(self, unit: Any) -> str:
        """The group a sample of the block is balanced over (taken round-robin)."""

    def order(self, units: list[Any], block: Block, rng: random.Random) -> list[Any]:
        """A random order under the block's run limits."""

    def trial(self, block: Block, unit: Any, index: int, block_index: int, rng: random.Random) -> Trial:
        """The trial a unit becomes (a source may draw from `rng` here, e.g. to choose the item)."""

    def meta(self) -> dict[str, Any]:
        """The sequence's meta record (a design's factors and list; empty where there is none)."""


class ItemSource(Protocol):
    def n_lists(self) -> int | None:
        """How many lists the source has (a subject reads one); None: it has none (`--list` is refused)."""

    def sizes(self) -> list[tuple[str, int]]:
        """Each block's trials per session, after checking that the source can supply them (SpecError)."""

    def subject(self, subject_id: str, list_number: int | None) -> SubjectDraw:
        """The subject's draw; `list_number` None: the source's own rotation (SpecError for a bad list)."""


def items_source(exp: Experiment) -> ItemSource:
    """The source the spec names: its `design:` file, else its `stimuli:` (generator or stimulus file), whose
    source the study supplying that section declares."""
    if getattr(exp, "design", None) is not None:
        # experiments.sources.design_rows loads this module back (an import circle)
        from experiments.sources.design_rows import DesignRows

        return DesignRows(exp)

    return stimuli_part("source")(exp)
