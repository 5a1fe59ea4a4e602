"""A design file's rows as a source of the one compiler (docs/general_model.md).

The subject's rows come from experiments/design.py (its list of the Latin square, the file's list, or
every item in every condition); here they are dealt to the blocks by role (test, practice, and fillers
mixed into test blocks or given a block of their own), balanced over conditions when a block sets
`trials`, and ordered under the block's `max_run` limits (design_order.py).
"""
from __future__ import annotations

import functools
import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from experiments.design import DesignError, DesignFile, Row, check_factors, read_design
from experiments.sources.design_order import check_orderable, order_rows
from experiments.spec_model import MAX_BLOCK_TRIALS, Block, Experiment, SpecError
from experiments.subjects import subject_number
from experiments.tasks import TaskError, registry
from experiments.tasks.items import check_items, line_list
from experiments.trials import Trial


@functools.lru_cache(maxsize=16)
def _read_cached(path: str, size: int, mtime_ns: int, factors: tuple[tuple[str, tuple[str, ...]], ...],
                 mode: str, item_column: str) -> DesignFile:
    return read_design(path, {k: list(v) for k, v in factors}, mode, item_column)  # type: ignore[arg-type]


def load_design(exp: Experiment) -> DesignFile:
    """The spec's design file, read and checked (cached by path, size and modification time)."""
    d = exp.design
    assert d is not None
    p = Path(d.file)
    st = p.stat()
    return _read_cached(str(p.resolve()), st.st_size, st.st_mtime_ns,
                        tuple((k, tuple(v)) for k, v in d.factors.items()), d.lists, d.item_column)


def _block_pools(exp: Experiment, df: DesignFile, list_number: int,
                 shared: dict[str, list[Row]] | None = None) -> list[list[Row]]:
    """Each block's rows (before subsampling and ordering): the rows of a role are dealt to the blocks
    that take them, in block order, as consecutive nearly equal parts of the file's order. `shared`: the
    practice and filler rows (the same in every list), when the caller has them already."""
    pools: list[list[Row]] = [[] for _ in exp.blocks]
    shared = shared or {"practice": df.shared_rows("practice", list_number),
                        "filler": df.shared_rows("filler", list_number)}
    sources = {"test": df.test_rows(list_number), "practice": shared["practice"], "filler": shared["filler"]}
    for role, rows in sources.items():
        takers = [k for k, b in enumerate(exp.blocks) if b.role == role or (role == "filler" and b.fillers)]
        if not takers:
            continue
        size, extra = divmod(len(rows), len(takers))
        start = 0
        for j, k in enumerate(takers):
            end = start + size + (1 if j < extra else 0)
            pools[k] += rows[start:end]
            start = end
    return pools


def check_design(exp: Experiment, where: str) -> DesignFile:
    """Read the design file and check that every block can be built; SpecError naming file/field/line."""
    try:
        check_factors(exp.design.factors)  # type: ignore[union-attr]
    except DesignError as exc:
        raise SpecError(f"{where}: {exc}") from None
    try:
        df = load_design(exp)
    except DesignError as exc:
        raise SpecError(f"{where}: design.file: {exc}") from None
    _check_task_materials(exp, df, where)
    roles = Counter(r.role for r in df.rows)
    for k, b in enumerate(exp.blocks):
        if b.role in ("practice", "filler") and not roles[b.role]:
            raise SpecError(f"{where}: blocks.{k}.role: block {b.name!r} takes {b.role} rows but "
                            f"{df.path} has none (a `role` column with {b.role} rows)")
        if b.fillers and not roles["filler"]:
            raise SpecError(f"{where}: blocks.{k}.fillers: block {b.name!r} mixes in fillers but {df.path} "
                            "has no rows with role filler")
    for role, how in (("practice", "a block with role: practice"),
                      ("filler", "`fillers: true` on a test block, or a block with role: filler")):
        takers = [b for b in exp.blocks if b.role == role or (role == "filler" and b.fillers)]
        if roles[role] and not takers:  # rows the spec would never show: said, not dropped
            lines = [r.line for r in df.rows if r.role == role]
            raise SpecError(f"{where}: blocks: {df.path} has {roles[role]} {role} row(s) (line(s) {_lines(lines)}) "
                            f"but no block takes them; add {how}, or remove the rows")
    shared = None if df.mode == "given" else {"practice": df.role_rows("practice"), "filler": df.role_rows("filler")}
    for list_number in sorted(df.lists_by_number):  # linear in the rows: at most MAX_LISTS lists
        for k, (b, pool) in enumerate(zip(exp.blocks, _block_pools(exp, df, list_number, shared), strict=False)):
            if not pool:
                raise SpecError(f"{where}: blocks.{k}: block {b.name!r} gets no rows from {df.path} "
                                f"(list {list_number})")
            if b.trials is not None and b.trials > len(pool):
                raise SpecError(f"{where}: blocks.{k}.trials: block {b.name!r} asks for {b.trials} trials but has "
                                f"{len(pool)} rows in list {list_number} of {df.path}; a row is shown at most once")
            if len(pool) > MAX_BLOCK_TRIALS:
                raise SpecError(f"{where}: blocks.{k}: block {b.name!r} holds {len(pool)} trials; at most "
                                f"{MAX_BLOCK_TRIALS} per block")
            if b.shuffle and b.max_run and b.trials is None:
                check_orderable(pool, b, exp, where)
    return df


def _check_task_materials(exp: Experiment, df: DesignFile, where: str) -> None:
    """Every row through its kind's own item check (experiments.tasks.items: every bad line named)."""

    if exp.task.kind in registry():  # the kind's own checks, and the keys the largest item needs
        try:
            check_items(exp.task, ((r.line, dict(r.materials)) for r in df.rows), str(df.path))
        except TaskError as exc:
            raise SpecError(f"{where}: design.file: {exc}") from None


def _lines(numbers: list[int]) -> str:
    return line_list(numbers)


# ---- trials -----------------------------------------------------------------------------------------
def make_trial(exp: Experiment, block: Block, row: Row, index: int, block_index: int, list_number: int) -> Trial:
    """A generic trial (docs/general_model.md); its Lakretz columns follow from it
    (studies.lakretz2021.materials.design_values)."""
    factors = list(exp.design.factors)  # type: ignore[union-attr]
    pairs = tuple(zip(factors, row.levels, strict=False)) if row.levels else ()
    return Trial(
        experiment=exp.name, block=block.name, trial_index=index, block_trial_index=block_index,
        item_id=row.row_id, feedback=block.feedback,
        item=row.item, list_number=list_number, factors=pairs, task=exp.task.kind, role=row.role,
        materials=row.materials,
    )


def design_meta(exp: Experiment, df: DesignFile, list_number: int) -> dict[str, Any]:
    """The sidecar's `design` record (and the sequence's)."""
    # a kind's settings live in its settings model (Task.settings()), not on the Task: self_paced_reading's
    # region_names name the regions for the analysis
    names = getattr(exp.task.settings(), "region_names", None)
    return {"factors": {k: list(v) for k, v in exp.design.factors.items()},  # type: ignore[union-attr]
            "list": list_number, "lists": df.n_lists, "mode": df.mode, "file": Path(df.path).name,
            **({"region_names": list(names)} if names else {})}


def design_sizes(exp: Experiment) -> list[tuple[str, int]]:
    """Each block's trials (list 1; every list has as many), for `validate`."""
    df = check_design(exp, exp.source_path or exp.name)
    pools = _block_pools(exp, df, 1)
    return [(b.name, b.trials if b.trials is not None else len(p)) for b, p in zip(exp.blocks, pools, strict=False)]


@dataclass
class DesignRows:
    """The source of a spec with `design:` (experiments/sources/__init__.py)."""

    exp: Experiment

    def n_lists(self) -> int | None:
        return check_design(self.exp, self.exp.source_path or self.exp.name).n_lists

    def sizes(self) -> list[tuple[str, int]]:
        return design_sizes(self.exp)

    def subject(self, subject_id: str, list_number: int | None) -> "RowDraw":
        """The subject's list: `list_number`, else the id rotation (DesignFile.list_for)."""

        df = check_design(self.exp, self.exp.source_path or self.exp.name)
        if list_number is None:
            list_number = df.list_for(subject_number(subject_id))
        elif list_number not in df.lists_by_number:
            raise SpecError(f"list {list_number}: {self.exp.name} has lists 1 to {df.n_lists}")
        return RowDraw(self.exp, df, list_number, _block_pools(self.exp, df, list_number))


@dataclass
class RowDraw:
    """One subject's rows: its list's rows dealt to the blocks."""

    exp: Experiment
    df: DesignFile
    list_number: int
    pools: list[list[Row]]
    refill = False  # a row is an item, shown at most once (check_design bounds `trials` by the pool)

    def pool(self, index: int, block: Block) -> list[Row]:
        return self.pools[index]

    def sample_key(self, row: Row) -> str:
        return row.condition

    def order(self, rows: list[Row], block: Block, rng: random.Random) -> list[Row]:
        return order_rows(rows, block, list(self.exp.design.factors), rng)  # type: ignore[union-attr]

    def trial(self, block: Block, row: Row, index: int, block_index: int, rng: random.Random) -> Trial:
        return make_trial(self.exp, block, row, index, block_index, self.list_number)

    def meta(self) -> dict[str, Any]:
        return {"design": design_meta(self.exp, self.df, self.list_number)}
