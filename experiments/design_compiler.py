"""The one compiler: spec + subject id + seed (+ list) -> its sessions' TrialSequences (deterministic, hashed).

Every spec compiles through this path (docs/general_model.md). Its source of items (experiments/sources:
a design file's rows, or the Lakretz cells of the generator or a stimulus file) gives each block's pool
of units; here, per block and in block order, the units are sampled where the block sets `trials`
(balanced over the source's groups), ordered under the block's run limits (the source's order), dealt
over the sessions of an `across_sessions` block (balanced over the sessions together, as in Lakretz et
al. 2021), and made into trials. One random stream per subject, drawn in that order: the same spec,
subject, seed and list give the same bytes and hash, and recorded sessions stay resumable.
"""
from __future__ import annotations

import random
from typing import Any, Callable

from experiments.sources import SubjectDraw, items_source
from experiments.spec_model import Block, Experiment, SpecError
from experiments.trials import Trial, TrialSequence


def check_sizes(exp: Experiment) -> list[tuple[str, int]]:
    """Each block's trials per session, after checking that the spec's source can supply them.

    Runs before anything is built, so an impossible size is one SpecError naming the block and the
    numbers, never a long wait or a memory blow-up (specs are also bounded field by field)."""
    return items_source(exp).sizes()


def compile_sequence(exp: Experiment, subject_id: str, seed: int | None = None, session: int = 1,
                     list_number: int | None = None) -> TrialSequence:
    """One session's trial sequence. Same (spec, subject, seed, session, list) -> same bytes and hash.
    `list_number`: a design's list given by hand or by the server (experiments/lists.py); None: the id rotation."""
    if not 1 <= session <= exp.sessions:
        raise SpecError(f"session {session}: {exp.name} has {exp.sessions} session(s) per subject "
                        f"(spec field `sessions`)")
    return compile_sessions(exp, subject_id, seed, list_number)[session - 1]


def compile_sessions(exp: Experiment, subject_id: str, seed: int | None = None,
                     list_number: int | None = None) -> list[TrialSequence]:
    """All sessions of one subject, in order (item use and counterbalancing run across them)."""
    draw = items_source(exp).subject(subject_id, list_number)
    seed = exp.seed if seed is None else seed
    rng = random.Random(f"{exp.spec_hash}:{subject_id}:{seed}")
    per_session: list[list[Trial]] = [[] for _ in range(exp.sessions)]
    for b, block in enumerate(exp.blocks):
        sessions = exp.block_sessions(block)
        for s, units in zip(sessions, _block_parts(draw, b, block, len(sessions), rng), strict=False):
            trials = per_session[s - 1]
            for k, unit in enumerate(units):
                trials.append(draw.trial(block, unit, len(trials), k, rng))
    for s, trials in enumerate(per_session, start=1):
        if not trials:
            raise SpecError(f"{exp.name}: session {s} has no blocks (check the blocks' `sessions`)")
    return [TrialSequence(experiment=exp.name, subject_id=subject_id, seed=seed, spec_hash=exp.spec_hash,
                          trials=tuple(trials), session=s, meta=draw.meta())
            for s, trials in enumerate(per_session, start=1)]


def _block_parts(draw: SubjectDraw, index: int, block: Block, n_sessions: int,
                 rng: random.Random) -> list[list[Any]]:
    """The block's ordered units for each of its sessions: drawn once for all of them and dealt out in
    order (`across_sessions`), else drawn anew for each session."""
    def one(n: int) -> list[Any]:
        units = draw.pool(index, block)
        if block.trials is not None:
            units = balanced_sample(units, block.trials * n, draw.sample_key, rng, draw.refill)
        if block.shuffle:
            units = draw.order(units, block, rng)
        return units

    if block.across_sessions and n_sessions > 1:
        return deal(one(n_sessions), n_sessions)
    return [one(1) for _ in range(n_sessions)]


def balanced_sample(units: list[Any], n: int, key: Callable[[Any], str], rng: random.Random,
                    refill: bool) -> list[Any]:
    """n units balanced over their groups (`key`): each group's units shuffled, then taken round-robin in
    the order the groups first appear. An emptied group is skipped, or with `refill` shuffled anew and
    taken again (units that are cells of a design, not items)."""
    if not refill and n > len(units):
        raise ValueError(f"a sample of {n} from {len(units)} units without refill")
    groups: dict[str, list[Any]] = {}
    for u in units:
        groups.setdefault(key(u), []).append(u)
    queues = {}
    for g, us in groups.items():
        q = us[:]
        rng.shuffle(q)
        queues[g] = q
    out: list[Any] = []
    while len(out) < n:
        for g in groups:
            if len(out) >= n:
                break
            if not queues[g]:
                if not refill:
                    continue
                queues[g] = groups[g][:]  # more trials than the design has: start another pass
                rng.shuffle(queues[g])
            out.append(queues[g].pop())
    return out


def deal(units: list[Any], n: int) -> list[list[Any]]:
    """Split an ordered list into n consecutive, nearly equal parts (earlier parts get the extra)."""
    size, extra = divmod(len(units), n)
    out, start = [], 0
    for k in range(n):
        end = start + size + (1 if k < extra else 0)
        out.append(units[start:end])
        start = end
    return out
