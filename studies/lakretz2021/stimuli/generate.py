"""Seeded, balanced generation of agreement items (Lakretz et al. 2021/2022 design).

Balance: every lexical slot draws from its own shuffled cycle of the lexicon, restarted per
condition, so within a condition each noun/verb/preposition is used equally often (+-1) and the
conditions share the same distribution. Nouns within one sentence are distinct lemmas.
"""
from __future__ import annotations

import random
from functools import lru_cache

from stimuli.items import Item
from studies.lakretz2021.stimuli.lexicon import Lexicon, get_lexicon
from studies.lakretz2021.stimuli.structures import DEEPER_PREFIXES, STRUCTURES, Slots


class _Cycle:
    """An endless, reshuffled-per-pass cycle over a list."""

    def __init__(self, values: list, rng: random.Random):
        self.values, self.rng, self.queue = list(values), rng, []

    def take(self, avoid: set = frozenset()) -> object:  # type: ignore[assignment]
        for _ in range(2):
            if not self.queue:
                self.queue = self.values[:]
                self.rng.shuffle(self.queue)
            for k, v in enumerate(self.queue):
                key = v[0] if isinstance(v, tuple) else v
                if key not in avoid:
                    return self.queue.pop(k)
            # everything left in this pass collides: append the next pass and look again
            extra = self.values[:]
            self.rng.shuffle(extra)
            self.queue += extra
        raise ValueError("lexicon too small for distinct words in one sentence")


def generate_items(structure: str, lexicon: str | Lexicon = "test", n_per_condition: int = 512,
                   seed: int = 1, conditions: list[str] | None = None) -> list[Item]:
    """All items of one structure, `n_per_condition` per condition, reproducible from `seed`."""
    lex = get_lexicon(lexicon) if isinstance(lexicon, str) else lexicon
    return list(_generate(structure, lex.name if lex is get_lexicon(lex.name) else lex, n_per_condition,
                          seed, tuple(conditions) if conditions else None))


@lru_cache(maxsize=64)
def _generate(structure: str, lex_key, n: int, seed: int, conditions: tuple[str, ...] | None) -> tuple[Item, ...]:
    lex = get_lexicon(lex_key) if isinstance(lex_key, str) else lex_key
    st = STRUCTURES[structure]
    conds = list(conditions) if conditions else st.conditions
    bad = [c for c in conds if c not in st.conditions]
    if bad:
        raise ValueError(f"structure {structure} has conditions {st.conditions}; not {bad}")
    items: list[Item] = []
    for cond in conds:
        rng = random.Random(f"{seed}:{structure}:{lex.name}:{cond}")
        cycles = {s: _Cycle(list(lex.nouns), rng) for s in st.noun_slots}
        cycles.update({s: _Cycle(list(lex.verbs), rng) for s in st.verb_slots})
        cycles.update({s: _Cycle(list(lex.prepositions), rng) for s in st.prep_slots})
        cycles.update({s: _Cycle(list(lex.complement_verbs), rng) for s in st.complement_slots})
        for k in range(n):
            slots: Slots = {}
            used_nouns: set[str] = set()
            for s in st.noun_slots:
                pair = cycles[s].take(used_nouns)
                used_nouns.add(pair[0])  # type: ignore[index]
                slots[s] = pair  # type: ignore[assignment]
            used_verbs: set[str] = set()
            for s in st.verb_slots + st.complement_slots:
                pair = cycles[s].take(used_verbs)
                used_verbs.add(pair[0])  # type: ignore[index]
                slots[s] = pair  # type: ignore[assignment]
            used_preps: set[str] = set()
            for s in st.prep_slots:
                prep = cycles[s].take(used_preps)
                used_preps.add(prep)  # type: ignore[arg-type]
                slots[s] = prep  # type: ignore[assignment]
            if structure == "long_nested_deeper":
                slots["prefix"] = DEEPER_PREFIXES[k % len(DEEPER_PREFIXES)]  # type: ignore[assignment]
            built = st.build(slots, cond, lex)
            items.append(Item(
                item_id=f"{structure}-{lex.name}-{cond}-{k:04d}", structure=structure, condition=cond,
                lexicon=lex.name, words=built.words, verbs=built.verbs,
                filler=make_filler(structure, built.words, built.verbs, lex, k),
            ))
    return tuple(items)


# Filler kinds cycled over a structure's items, in about the proportions of Lakretz et al. (2021)
# (nested: 4 verb : 1 noun fillers at each position; successive: the embedded verb, or the subject).
FILLER_KINDS: dict[str, tuple[str, ...]] = {
    "nested": ("verb_inner", "verb_outer") * 4 + ("noun_outer", "noun_inner"),
    "successive": ("verb_inner",) * 4 + ("noun_outer",),
    "single": ("verb_outer",) * 4 + ("noun_outer",),
}
# unit index of the subject nouns (after "the") per structure
SUBJECT_INDEX: dict[str, dict[str, int]] = {
    "long_nested": {"noun_outer": 1, "noun_inner": 4},
    "long_nested_more_distractors": {"noun_outer": 1, "noun_inner": 4},
    "short_nested": {"noun_outer": 1, "noun_inner": 4},
    "short_successive": {"noun_outer": 1},
    "long_successive": {"noun_outer": 1},
    "single": {"noun_outer": 1},
}


def make_filler(structure: str, words: tuple[str, ...], verbs: dict[str, tuple[int, str, str]], lex: Lexicon,
                k: int) -> tuple[int, str, str] | None:
    """The item's filler: a verb in its -ing form, or a subject noun made inanimate (same number)."""
    if structure not in SUBJECT_INDEX or not lex.inanimate:
        return None
    family = "nested" if "nested" in structure else "successive" if "successive" in structure else "single"
    kind = FILLER_KINDS[family][k % len(FILLER_KINDS[family])]
    if kind.startswith("verb_"):
        idx, correct, _ = verbs[kind[5:]]
        return idx, lex.gerund(correct), kind
    idx = SUBJECT_INDEX[structure][kind]
    noun = words[idx].rstrip(".")
    plural = any(noun == pl for _, pl in lex.nouns)
    sg, pl = lex.inanimate[(k // len(FILLER_KINDS[family])) % len(lex.inanimate)]
    return idx, pl if plural else sg, kind
