"""The Lakretz items as a source of the one compiler: the crossed cells of a block and the items for them.

The items come from the nested-agreement generator (studies/lakretz2021/stimuli/generate.py) or from a stimulus file
(the released Lakretz et al. 2021 materials or a hand-written file, stimuli/files.py). A block's units are its
cells (structure x condition x version, with repetitions and weights); the compiler samples (balanced over
structures) and orders them (order.py), and an item is then chosen for each cell: the versions
of an item (grammatical, inner violation, outer violation) are rotated across subjects in a Latin square,
so subject k sees item i only in version (i + k) mod n_versions, and no item is used twice by one
subject (across blocks and sessions: all of a subject's sessions are compiled together).
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from experiments.spec_model import MAX_BLOCK_TRIALS, Block, Experiment, SpecError
from experiments.subjects import subject_number
from experiments.trials import Trial
from stimuli.files import load_items
from stimuli.items import Item
from studies.lakretz2021.order import check_orderable, order_cells
from studies.lakretz2021.stimuli.generate import generate_items
from studies.lakretz2021.stimuli.structures import STRUCTURES

VERSION_TO_VIOLATION = {"grammatical": "none", "inner": "inner", "outer": "outer", "filler": "other"}


@dataclass(frozen=True)
class Cell:
    structure: str
    condition: str
    violation: str  # none / inner / outer / other (filler)
    dependency: str | None  # the critical verb (None for fillers)


@dataclass(frozen=True)
class StructureInfo:
    """What a block can ask of a structure: its conditions and dependencies, and whether it has fillers."""

    name: str
    conditions: list[str]
    dependencies: tuple[str, ...]
    fillers: bool


def _item_pool(exp: Experiment, structure: str, lexicon: str) -> tuple[Item, ...]:
    if exp.stimuli.file is not None:
        return _file_pool(exp.stimuli.file, structure, lexicon)
    return tuple(generate_items(structure, lexicon, exp.stimuli.items_per_condition, exp.stimuli.seed))


@lru_cache(maxsize=16)
def _file_items(path: str) -> tuple[Item, ...]:
    return tuple(load_items(path))


def _condition_pool(exp: Experiment, structure: str, lexicon: str, condition: str) -> list[Item]:
    return [i for i in _item_pool(exp, structure, lexicon) if i.condition == condition]


def _file_pool(path: str, structure: str, lexicon: str) -> tuple[Item, ...]:
    return tuple(i for i in _file_items(path) if i.structure == structure and i.lexicon == lexicon)


def structure_info(name: str, stimulus_file: str | None = None) -> StructureInfo:
    """The generator's structure, or what the stimulus file's items of that structure offer."""
    if stimulus_file is None:
        st = STRUCTURES[name]
        return StructureInfo(name, st.conditions, st.dependencies, name in _GENERATOR_FILLERS)
    items = [i for i in _file_items(stimulus_file) if i.structure == name]
    if not items:
        raise SpecError(f"stimulus file {stimulus_file}: no items of structure {name!r}")
    conds = list(dict.fromkeys(i.condition for i in items))
    deps = tuple(d for d in ("inner", "outer") if any(d in i.verbs for i in items))
    return StructureInfo(name, conds, deps, any(i.filler is not None for i in items))


_GENERATOR_FILLERS = {"long_nested", "long_nested_more_distractors", "short_nested", "short_successive",
                      "long_successive", "single"}


def _entries(block: Block) -> list[tuple[str, Any, list[tuple[str, int]], int]]:
    """(structure, conditions, [(version, weight)], repetitions) per structure of the block."""
    if block.design is not None:
        return [(d.structure, d.conditions, list(d.versions.items()), d.repetitions) for d in block.design]
    weights = [(v, block.grammatical_weight if v == "grammatical" else 1) for v in block.versions]
    return [(s, block.conditions, weights, block.repetitions) for s in block.structures or []]


def block_cells(block: Block, stimulus_file: str | None = None) -> list[Cell]:
    """The crossed design of a block (before sampling `trials` and shuffling)."""
    cells: list[Cell] = []
    for k, (sname, conditions, weights, repetitions) in enumerate(_entries(block)):
        st = structure_info(sname, stimulus_file)
        conds = st.conditions if conditions == "all" else list(conditions)
        wrong = [c for c in conds if c not in st.conditions]
        if wrong:
            raise SpecError(
                f"block {block.name!r}: condition(s) {wrong} do not fit structure {sname!r} "
                f"(its conditions: {', '.join(st.conditions)})"
            )
        if block.design is not None:  # an explicit design may not ask for what the structure lacks
            for version, w in weights:
                v = VERSION_TO_VIOLATION[version]
                lacks = (v == "other" and not st.fillers) or (v in ("inner", "outer") and v not in st.dependencies)
                if w and lacks:
                    raise SpecError(f"block {block.name!r}, design entry {k} ({sname}): version {version!r} is not "
                                    f"available for this structure (its dependencies: {', '.join(st.dependencies)}; "
                                    f"fillers: {'yes' if st.fillers else 'no'})")
        for rep in range(repetitions):
            for cond in conds:
                for version, weight in weights:
                    violation = VERSION_TO_VIOLATION[version]
                    if violation == "none":
                        for g in range(weight):
                            dep = st.dependencies[(rep + g) % len(st.dependencies)]
                            cells.append(Cell(sname, cond, "none", dep))
                    elif violation == "other":
                        if st.fillers:
                            cells += [Cell(sname, cond, "other", None)] * weight
                    elif violation in st.dependencies:
                        cells += [Cell(sname, cond, violation, violation)] * weight
    if not cells:
        raise SpecError(f"block {block.name!r} has no trials (check its structures and versions)")
    return cells


def design_size(block: Block, stimulus_file: str | None = None) -> int:
    """How many cells `block_cells` would build, counted without building them."""
    total = 0
    for sname, conditions, weights, repetitions in _entries(block):
        st = structure_info(sname, stimulus_file)
        n_conds = len(st.conditions) if conditions == "all" else len(conditions)
        per_cond = 0
        for version, weight in weights:
            v = VERSION_TO_VIOLATION[version]
            if v == "none" or (v == "other" and st.fillers) or v in st.dependencies:
                per_cond += weight
        total += repetitions * n_conds * per_cond
    return total


def block_pool_size(exp: Experiment, block: Block) -> int:
    """Distinct stimulus items a block can draw on (its structures and conditions, in its lexicon).

    The generator writes `items_per_condition` distinct items per structure and condition, so its
    pool is counted without generating it (`validate` stays fast for large pools)."""
    if exp.stimuli.file is None:
        total = 0
        for sname, conditions, _, _ in _entries(block):
            n_conds = len(structure_info(sname).conditions) if conditions == "all" else len(conditions)
            total += exp.stimuli.items_per_condition * n_conds
        return total
    ids: set[str] = set()
    for sname, conditions, _, _ in _entries(block):
        for it in _item_pool(exp, sname, block.lexicon):
            if conditions == "all" or it.condition in conditions:
                ids.add(it.item_id)
    return len(ids)



def cell_sizes(exp: Experiment) -> list[tuple[str, int]]:
    """Each block's trials per session, after checking that the design and the pool can supply them.

    Runs before anything is built, so an impossible size is one SpecError naming the block and the
    numbers, never a long wait or a memory blow-up (specs are also bounded field by field).
    """
    sizes = []
    for b in exp.blocks:
        design = design_size(b, exp.stimuli.file)
        if design == 0:
            raise SpecError(f"block {b.name!r} has no trials (check its structures and versions)")
        if design > MAX_BLOCK_TRIALS:
            raise SpecError(f"block {b.name!r}: its design holds {design} trials (structures x conditions x versions "
                            f"x repetitions); at most {MAX_BLOCK_TRIALS} per block; lower repetitions or weights, "
                            "or set `trials`")
        n_sessions = len(exp.block_sessions(b))
        per_session = b.trials if b.trials is not None else design
        needed = per_session * n_sessions
        if b.trials is not None and b.across_sessions and needed > MAX_BLOCK_TRIALS:
            raise SpecError(f"block {b.name!r}: {b.trials} trials x {n_sessions} sessions = {needed} trials drawn "
                            f"together; at most {MAX_BLOCK_TRIALS}")
        pool = block_pool_size(exp, b)
        if needed > pool:
            src = f"stimulus file {exp.stimuli.file}" if exp.stimuli.file else \
                f"the generator (stimuli.items_per_condition: {exp.stimuli.items_per_condition})"
            raise SpecError(f"block {b.name!r}: needs {needed} items ({per_session} trials"
                            + (f" x {n_sessions} sessions" if n_sessions > 1 else "")
                            + f") but {src} holds only {pool} items of its structures and conditions in lexicon "
                            f"{b.lexicon!r}; an item is shown at most once per subject, so lower `trials`"
                            + (" or raise stimuli.items_per_condition" if not exp.stimuli.file else " or add items"))
        if b.shuffle and b.trials is None:  # the whole design is ordered: the counting bounds apply now
            cells = block_cells(b, exp.stimuli.file)
            check_orderable(cells, b)
        sizes.append((b.name, per_session))
    return sizes


@dataclass
class LakretzCells:
    """The source of a spec with `stimuli:` (experiments/sources/__init__.py)."""

    exp: Experiment

    def n_lists(self) -> int | None:
        return None  # each item's versions rotate over the subjects instead (the Latin square above)

    def sizes(self) -> list[tuple[str, int]]:
        return cell_sizes(self.exp)

    def subject(self, subject_id: str, list_number: int | None) -> "CellDraw":
        if list_number is not None:
            raise SpecError(f"list {list_number}: {self.exp.name} has no lists (its spec has no `design:` of items)")
        cell_sizes(self.exp)
        return CellDraw(self.exp, subject_number(subject_id))


@dataclass
class CellDraw:
    """One subject's cells: its place in the Latin square and the items it has seen."""

    exp: Experiment
    rotation: int
    used: set[str] = field(default_factory=set)
    refill = True  # a cell is not an item: a block may take a cell again (another item is chosen for it)

    def pool(self, index: int, block: Block) -> list[Cell]:
        return block_cells(block, self.exp.stimuli.file)

    def sample_key(self, cell: Cell) -> str:
        return cell.structure

    def order(self, cells: list[Cell], block: Block, rng: random.Random) -> list[Cell]:
        return order_cells(cells, block, rng)

    def trial(self, block: Block, cell: Cell, index: int, block_index: int, rng: random.Random) -> Trial:
        item = _choose_item(self.exp, block, cell, self.rotation, self.used, rng)
        self.used.add(item.item_id)
        return _make_trial(self.exp, block, cell, item, index, block_index)

    def meta(self) -> dict[str, Any]:
        return {}


def _choose_item(exp: Experiment, block: Block, cell: Cell, rotation: int, used: set[str],
                 rng: random.Random) -> Item:
    pool = _condition_pool(exp, cell.structure, block.lexicon, cell.condition)
    if not pool:
        raise SpecError(
            f"block {block.name!r}: no stimulus items for structure {cell.structure!r}, condition "
            f"{cell.condition!r}, lexicon {block.lexicon!r}"
        )
    if cell.violation == "other":
        pool = [it for it in pool if it.filler is not None]
    versions = ["none"] + list(STRUCTURES[cell.structure].dependencies) if exp.stimuli.file is None else None
    if versions is not None and cell.violation != "other":
        vi = versions.index(cell.violation)
        candidates = [it for k, it in enumerate(pool)
                      if (k + rotation) % len(versions) == vi and it.item_id not in used]
    else:
        candidates = [it for it in pool if it.item_id not in used]
    if not candidates:  # small pools: fall back to any unused item, then to any item
        candidates = [it for it in pool if it.item_id not in used] or pool
    if not candidates:
        raise SpecError(f"block {block.name!r}: no filler items for structure {cell.structure!r}, condition "
                        f"{cell.condition!r} (give filler_index/filler_word in the stimulus file)")
    return rng.choice(candidates)


def _make_trial(exp: Experiment, block: Block, cell: Cell, item: Item, index: int, block_index: int) -> Trial:
    if cell.violation == "other":
        assert item.filler is not None
        idx, word, _kind = item.filler
        original = item.words[idx].rstrip(".")
        return Trial.of_record(
            experiment=exp.name, block=block.name, trial_index=index, block_trial_index=block_index,
            item_id=item.item_id, structure=item.structure, condition=item.condition, dependency=None,
            violation_position="other", words=item.version("other"), critical_index=idx, critical_word=word,
            correct_form=original, alternative_word=original, correct_response="violation",
            feedback=block.feedback, lexicon=item.lexicon,
        )
    if cell.dependency not in item.verbs:
        raise SpecError(f"item {item.item_id} has no {cell.dependency!r} verb")
    idx, correct, flipped = item.verbs[cell.dependency]
    presented = correct if cell.violation == "none" else flipped
    words = item.version(cell.violation)
    return Trial.of_record(
        experiment=exp.name, block=block.name, trial_index=index, block_trial_index=block_index,
        item_id=item.item_id, structure=item.structure, condition=item.condition,
        dependency=cell.dependency,  # type: ignore[arg-type]
        violation_position=cell.violation,  # type: ignore[arg-type]
        words=words, critical_index=idx, critical_word=presented, correct_form=correct,
        alternative_word=flipped if presented == correct else correct,
        correct_response="no_violation" if cell.violation == "none" else "violation",
        feedback=block.feedback, lexicon=item.lexicon,
    )
