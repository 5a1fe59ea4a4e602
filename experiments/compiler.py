"""Spec + subject id + seed (+ session) -> TrialSequence (deterministic, hashed, counterbalanced).

Counterbalancing: the versions of an item (grammatical, inner violation, outer violation) are
rotated across subjects in a Latin square, so subject k sees item i only in version
(i + k) mod n_versions, and no item is used twice by one subject: not within a session (across
blocks too), and not across the sessions of a multi-session spec. All of a subject's sessions
are compiled together (in order), so session k continues the counterbalancing of sessions
1..k-1; a block with `across_sessions` has its design drawn once for all its sessions and dealt
out in order (balanced over the sessions together, as in Lakretz et al. 2021).
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from experiments.spec_model import MAX_BLOCK_TRIALS, Block, Experiment, SpecError
from experiments.subjects import subject_number  # noqa: F401 (re-exported: the rule lives there)
from experiments.trials import Trial, TrialSequence
from stimuli.generate import generate_items
from stimuli.items import Item
from stimuli.structures import STRUCTURES

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
    from stimuli.files import load_items

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


def check_sizes(exp: Experiment) -> list[tuple[str, int]]:
    """Each block's trials per session, after checking that the design and the pool can supply them.

    Runs before anything is built, so an impossible size is one SpecError naming the block and the
    numbers, never a long wait or a memory blow-up (specs are also bounded field by field).
    """
    if exp.design is not None:  # a factorial design of items (experiments/design_compiler.py)
        from experiments.design_compiler import design_sizes

        return design_sizes(exp)
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
            _check_orderable(cells, b, b.max_consecutive_violations or len(cells) + 1,
                             b.max_consecutive_same_structure or len(cells) + 1)
        sizes.append((b.name, per_session))
    return sizes


def _sample_cells(cells: list[Cell], n: int, rng: random.Random) -> list[Cell]:
    """Take n cells balanced over structures: round-robin over structures, each list shuffled."""
    by_structure: dict[str, list[Cell]] = {}
    for c in cells:
        by_structure.setdefault(c.structure, []).append(c)
    queues = {}
    for s, cs in by_structure.items():
        q = cs[:]
        rng.shuffle(q)
        queues[s] = q
    out: list[Cell] = []
    refill = {s: list(cs) for s, cs in by_structure.items()}
    while len(out) < n:
        for s in by_structure:
            if len(out) >= n:
                break
            if not queues[s]:  # more trials than the design has: start another pass
                queues[s] = refill[s][:]
                rng.shuffle(queues[s])
            out.append(queues[s].pop())
    return out


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


def _constrained_shuffle(cells: list[Cell], block: Block, rng: random.Random) -> list[Cell]:
    """Random order that respects the run-length constraints (greedy with restarts).

    The plain greedy (uniform among the allowed cells) is kept as it was, so existing specs compile
    to the same sequences; it rarely finishes a long block, so after a bounded amount of work a
    greedy that also keeps the rest of the block orderable takes over (`_guided_shuffle`).
    """
    max_v = block.max_consecutive_violations or len(cells) + 1
    max_s = block.max_consecutive_same_structure or len(cells) + 1
    _check_orderable(cells, block, max_v, max_s)
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


def _check_orderable(cells: list[Cell], block: Block, max_v: int, max_s: int) -> None:
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
    bounds of `_check_orderable` still hold for the rest; O(n x kinds of cell). None on a dead end."""
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


def compile_sequence(exp: Experiment, subject_id: str, seed: int | None = None, session: int = 1,
                     list_number: int | None = None) -> TrialSequence:
    """One session's trial sequence. Same (spec, subject, seed, session, list) -> same bytes and hash.
    `list_number`: a design's list given by hand or by the server (experiments/lists.py); None: the id rotation."""
    if not 1 <= session <= exp.sessions:
        raise SpecError(f"session {session}: {exp.name} has {exp.sessions} session(s) per subject "
                        f"(spec field `sessions`)")
    return compile_sessions(exp, subject_id, seed, list_number)[session - 1]


def _deal(cells: list[Cell], n: int) -> list[list[Cell]]:
    """Split an ordered list into n consecutive, nearly equal parts (earlier parts get the extra)."""
    size, extra = divmod(len(cells), n)
    out, start = [], 0
    for k in range(n):
        end = start + size + (1 if k < extra else 0)
        out.append(cells[start:end])
        start = end
    return out


def _block_parts(exp: Experiment, block: Block, sessions: list[int], rng: random.Random) -> list[list[Cell]]:
    """The block's ordered cells for each of its sessions."""
    def draw(n_sessions: int) -> list[Cell]:
        cells = block_cells(block, exp.stimuli.file)
        if block.trials is not None:
            cells = _sample_cells(cells, block.trials * n_sessions, rng)
        if block.shuffle:
            cells = _constrained_shuffle(cells, block, rng)
        return cells

    if block.across_sessions and len(sessions) > 1:
        return _deal(draw(len(sessions)), len(sessions))
    return [draw(1) for _ in sessions]


def compile_sessions(exp: Experiment, subject_id: str, seed: int | None = None,
                     list_number: int | None = None) -> list[TrialSequence]:
    """All sessions of one subject, in order (item use and counterbalancing run across them)."""
    if exp.design is not None:  # a factorial design of items: lists, roles, max_run
        from experiments.design_compiler import compile_design_sessions

        return compile_design_sessions(exp, subject_id, seed, list_number)
    if list_number is not None:
        raise SpecError(f"list {list_number}: {exp.name} has no lists (its spec has no `design:` of items)")
    check_sizes(exp)
    seed = exp.seed if seed is None else seed
    rng = random.Random(f"{exp.spec_hash}:{subject_id}:{seed}")
    rotation = subject_number(subject_id)
    used: set[str] = set()
    per_session: list[list[Trial]] = [[] for _ in range(exp.sessions)]
    for block in exp.blocks:
        sessions = exp.block_sessions(block)
        for s, cells in zip(sessions, _block_parts(exp, block, sessions, rng)):
            trials = per_session[s - 1]
            for k, cell in enumerate(cells):
                item = _choose_item(exp, block, cell, rotation, used, rng)
                used.add(item.item_id)
                trials.append(_make_trial(exp, block, cell, item, len(trials), k))
    for s, trials in enumerate(per_session, start=1):
        if not trials:
            raise SpecError(f"{exp.name}: session {s} has no blocks (check the blocks' `sessions`)")
    return [TrialSequence(experiment=exp.name, subject_id=subject_id, seed=seed, spec_hash=exp.spec_hash,
                          trials=tuple(trials), session=s)
            for s, trials in enumerate(per_session, start=1)]


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
        candidates = [it for k, it in enumerate(pool) if (k + rotation) % len(versions) == vi and it.item_id not in used]
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
        return Trial.lakretz(
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
    return Trial.lakretz(
        experiment=exp.name, block=block.name, trial_index=index, block_trial_index=block_index,
        item_id=item.item_id, structure=item.structure, condition=item.condition,
        dependency=cell.dependency,  # type: ignore[arg-type]
        violation_position=cell.violation,  # type: ignore[arg-type]
        words=words, critical_index=idx, critical_word=presented, correct_form=correct,
        alternative_word=flipped if presented == correct else correct,
        correct_response="no_violation" if cell.violation == "none" else "violation",
        feedback=block.feedback, lexicon=item.lexicon,
    )
