"""Spec with `design:` + subject + seed -> TrialSequence (docs/general_model.md).

The subject's rows come from experiments/design.py (its list of the Latin square, the file's list,
or every item in every condition); here they are dealt to the blocks by role, subsampled where a
block sets `trials` (balanced over conditions), and ordered under the block's `max_run`
constraints. Same spec, subject and seed give the same bytes and hash, as for the Lakretz designs.
"""
from __future__ import annotations

import functools
import random
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from experiments.design import DesignError, DesignFile, Row, check_factors, read_design
from experiments.spec_model import MAX_BLOCK_TRIALS, Block, Experiment, SpecError
from experiments.trials import Trial, TrialSequence

SHUFFLE_ATTEMPTS = 200
ORDER_STEPS = 100_000  # steps of the greedy over all restarts (a 5,000-row block: 20 restarts)


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
    shared = shared or {"practice": df.role_rows("practice"), "filler": df.role_rows("filler")}
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
    shared = {"practice": df.role_rows("practice"), "filler": df.role_rows("filler")}
    for list_number in sorted(df.lists_by_number):  # linear in the rows: at most MAX_LISTS lists
        for k, (b, pool) in enumerate(zip(exp.blocks, _block_pools(exp, df, list_number, shared))):
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
                _check_orderable(pool, b, exp, where)
    return df


def _check_task_materials(exp: Experiment, df: DesignFile, where: str) -> None:
    from experiments.tasks import TaskError, registry

    kind = exp.task.kind
    if kind == "violation_detection":
        bad = [r.line for r in df.rows if dict(r.materials).get("answer") not in ("violation", "no_violation")]
        if bad:
            raise SpecError(f"{where}: design.file: {df.path}: task violation_detection needs an `answer` column "
                            f"of violation or no_violation on every row; line(s) {_lines(bad)} lack one")
        bad = [r.line for r in df.rows if "sentence" not in dict(r.materials)]
        if bad:
            raise SpecError(f"{where}: design.file: {df.path}: task violation_detection needs a `sentence` on "
                            f"every row; line(s) {_lines(bad)} lack one")
        return
    if kind in registry():  # the kind's own checks, and the keys the largest item needs (experiments.tasks.items)
        from experiments.tasks.items import check_items

        try:
            check_items(exp.task, ((r.line, dict(r.materials)) for r in df.rows), str(df.path))
        except TaskError as exc:
            raise SpecError(f"{where}: design.file: {exc}") from None


def _lines(numbers: list[int]) -> str:
    return ", ".join(map(str, numbers[:8])) + (f" and {len(numbers) - 8} more" if len(numbers) > 8 else "")


# ---- ordering ---------------------------------------------------------------------------------------
def _value(row: Row, key: str, factors: list[str]) -> str | None:
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


def _check_orderable(rows: list[Row], block: Block, exp: Experiment, where: str) -> None:
    """The counting bound that makes an order impossible, said plainly before any search."""
    factors = list(exp.design.factors)  # type: ignore[union-attr]
    n = len(rows)
    for key, limit in (block.max_run or {}).items():
        counts = Counter(v for v in (_value(r, key, factors) for r in rows) if v is not None)
        for value, m in counts.items():
            if m > limit * (n - m + 1):
                raise SpecError(f"{where}: blocks: block {block.name!r}: {m} of its {n} trials have {key} = "
                                f"{value!r}, too many for max_run {key}: {limit} (at most {limit * (n - m + 1)}); "
                                "raise the limit or add fillers")


def _order(rows: list[Row], block: Block, factors: list[str], rng: random.Random) -> list[Row]:
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
                             for v in (_value(r, k, factors) for r in rows)], dtype=np.int64)
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


def _subsample(rows: list[Row], n: int, rng: random.Random) -> list[Row]:
    """n rows balanced over conditions: each condition's rows shuffled, then taken round-robin."""
    by_cond: dict[str, list[Row]] = {}
    for r in rows:
        by_cond.setdefault(r.condition, []).append(r)
    for q in by_cond.values():
        rng.shuffle(q)
    out: list[Row] = []
    while len(out) < n:
        for q in by_cond.values():
            if q and len(out) < n:
                out.append(q.pop())
    return out


# ---- trials -----------------------------------------------------------------------------------------
def make_trial(exp: Experiment, block: Block, row: Row, index: int, block_index: int, list_number: int) -> Trial:
    """A generic trial (docs/general_model.md); its Lakretz columns follow from it
    (experiments.tasks.lakretz_materials.design_values)."""
    factors = list(exp.design.factors)  # type: ignore[union-attr]
    pairs = tuple(zip(factors, row.levels)) if row.levels else ()
    return Trial(
        experiment=exp.name, block=block.name, trial_index=index, block_trial_index=block_index,
        item_id=row.row_id, feedback=block.feedback,
        item=row.item, list_number=list_number, factors=pairs, task=exp.task.kind, role=row.role,
        materials=row.materials,
    )


def design_meta(exp: Experiment, df: DesignFile, list_number: int) -> dict[str, Any]:
    """The sidecar's `design` record (and the sequence's)."""
    names = getattr(exp.task, "region_names", None)  # self_paced_reading: the analysis names the regions with them
    return {"factors": {k: list(v) for k, v in exp.design.factors.items()},  # type: ignore[union-attr]
            "list": list_number, "lists": df.n_lists, "mode": df.mode, "file": Path(df.path).name,
            **({"region_names": list(names)} if names else {})}


def compile_design_sessions(exp: Experiment, subject_id: str, seed: int | None = None,
                            list_number: int | None = None) -> list[TrialSequence]:
    """The subject's one session of a design spec; `list_number` None: the id rotation (DesignFile.list_for)."""
    from experiments.subjects import subject_number

    df = check_design(exp, exp.source_path or exp.name)
    seed = exp.seed if seed is None else seed
    rng = random.Random(f"{exp.spec_hash}:{subject_id}:{seed}")
    if list_number is None:
        list_number = df.list_for(subject_number(subject_id))
    elif list_number not in df.lists_by_number:
        raise SpecError(f"list {list_number}: {exp.name} has lists 1 to {df.n_lists}")
    factors = list(exp.design.factors)  # type: ignore[union-attr]
    trials: list[Trial] = []
    for block, pool in zip(exp.blocks, _block_pools(exp, df, list_number)):
        rows = _subsample(pool, block.trials, rng) if block.trials is not None else pool
        if block.shuffle:
            rows = _order(rows, block, factors, rng)
        for k, row in enumerate(rows):
            trials.append(make_trial(exp, block, row, len(trials), k, list_number))
    return [TrialSequence(experiment=exp.name, subject_id=subject_id, seed=seed, spec_hash=exp.spec_hash,
                          trials=tuple(trials), meta={"design": design_meta(exp, df, list_number)})]


def design_sizes(exp: Experiment) -> list[tuple[str, int]]:
    """Each block's trials (list 1; every list has as many), for `validate`."""
    df = check_design(exp, exp.source_path or exp.name)
    pools = _block_pools(exp, df, 1)
    return [(b.name, b.trials if b.trials is not None else len(p)) for b, p in zip(exp.blocks, pools)]
