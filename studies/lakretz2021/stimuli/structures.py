"""Sentence structures of the agreement design, each a small builder.

A condition string gives the grammatical number of the nouns in a fixed order (see
`Structure.letters`): for long_nested "PSP" means outer subject plural, inner subject singular,
distractor plural. Every builder returns the grammatical sentence and, for each dependency it
has, the index of its verb and that verb's grammatical and number-flipped forms.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable

from studies.lakretz2021.stimuli.lexicon import Lexicon, Pair

Slots = dict[str, Pair | str]  # slot name -> lexical pair or preposition


@dataclass(frozen=True)
class Built:
    words: tuple[str, ...]
    verbs: dict[str, tuple[int, str, str]]  # dependency -> (index, correct form, flipped form)


@dataclass(frozen=True)
class Structure:
    name: str
    letters: tuple[str, ...]  # meaning of each condition letter, in order
    dependencies: tuple[str, ...]  # which dependencies can be critical
    noun_slots: tuple[str, ...]
    verb_slots: tuple[str, ...]
    prep_slots: tuple[str, ...]
    complement_slots: tuple[str, ...]
    build: Callable[[Slots, str, Lexicon], Built]
    fixed_prefix: str = ""  # letters fixed by the structure (the deeper variant's plural prefix)
    description: str = ""

    @property
    def conditions(self) -> list[str]:
        n = len(self.letters) - len(self.fixed_prefix)
        return [self.fixed_prefix + "".join(p) for p in itertools.product("SP", repeat=n)]


def _num(cond: str, letters: tuple[str, ...], role: str) -> str:
    return cond[letters.index(role)]


def _verb(pair: Pair, number: str) -> tuple[str, str]:
    """(correct form for this subject number, flipped form)."""
    return (pair[0], pair[1]) if number == "S" else (pair[1], pair[0])


def _np(slots: Slots, slot: str, number: str, lex: Lexicon, det: str = "the") -> list[str]:
    return [det, lex.form(slots[slot], number)]  # type: ignore[arg-type]


def _sentence(words: list[str]) -> tuple[str, ...]:
    words = list(words)
    words[0] = words[0][:1].upper() + words[0][1:]
    words[-1] = words[-1] + "."
    return tuple(words)


def _long_nested(slots: Slots, cond: str, lex: Lexicon, extra_pps: int = 0) -> Built:
    L = ("outer", "inner", "distractor")
    o, i, d = (_num(cond, L, r) for r in L)
    words = _np(slots, "n1", o, lex) + ["that"] + _np(slots, "n2", i, lex) + [slots["p1"]] + _np(slots, "n3", d, lex)
    for k in range(extra_pps):
        words += [slots[f"xp{k}"]] + _np(slots, f"xn{k}", "P", lex)  # type: ignore[list-item]
    v2 = _verb(slots["v2"], i)  # type: ignore[arg-type]
    v1 = _verb(slots["v1"], o)  # type: ignore[arg-type]
    words += [v2[0], v1[0]]
    inner_idx = len(words) - 2
    words += _np(slots, "n4", "S" if o == "P" else "P", lex)
    return Built(_sentence(words), {"inner": (inner_idx, *v2), "outer": (inner_idx + 1, *v1)})


def _deeper(slots: Slots, cond: str, lex: Lexicon) -> Built:
    """Plural prefix clause: 'The people whom the N1 that the N2 P the N3 V2 V1 are famous.'"""
    prefix_np, rel, tail = slots["prefix"]  # type: ignore[misc]
    core = cond[1:]
    L = ("outer", "inner", "distractor")
    o, i, d = (_num(core, L, r) for r in L)
    words = ["the", prefix_np, rel] + _np(slots, "n1", o, lex) + ["that"] + _np(slots, "n2", i, lex)
    words += [slots["p1"]] + _np(slots, "n3", d, lex)  # type: ignore[list-item]
    v2 = _verb(slots["v2"], i)  # type: ignore[arg-type]
    v1 = _verb(slots["v1"], o)  # type: ignore[arg-type]
    words += [v2[0], v1[0]]
    inner_idx = len(words) - 2
    words += tail.split()
    return Built(_sentence(words), {"inner": (inner_idx, *v2), "outer": (inner_idx + 1, *v1)})


def _short_nested(slots: Slots, cond: str, lex: Lexicon) -> Built:
    o, i = cond[0], cond[1]
    words = _np(slots, "n1", o, lex) + ["that"] + _np(slots, "n2", i, lex)
    v2, v1 = _verb(slots["v2"], i), _verb(slots["v1"], o)  # type: ignore[arg-type]
    words += [v2[0], v1[0]]
    idx = len(words) - 2
    words += _np(slots, "n4", "S" if o == "P" else "P", lex)
    return Built(_sentence(words), {"inner": (idx, *v2), "outer": (idx + 1, *v1)})


def _single(slots: Slots, cond: str, lex: Lexicon) -> Built:
    o = cond[0]
    v1 = _verb(slots["v1"], o)  # type: ignore[arg-type]
    words = _np(slots, "n1", o, lex) + [v1[0]] + _np(slots, "n4", "S" if o == "P" else "P", lex)
    return Built(_sentence(words), {"outer": (2, *v1)})


def _short_successive(slots: Slots, cond: str, lex: Lexicon) -> Built:
    """'The N1 says that the N2 V2 the N4.' Both dependencies resolve before the next starts."""
    o, i = cond[0], cond[1]
    vc, v2 = _verb(slots["vc"], o), _verb(slots["v2"], i)  # type: ignore[arg-type]
    words = _np(slots, "n1", o, lex) + [vc[0], "that"] + _np(slots, "n2", i, lex) + [v2[0]]
    words += _np(slots, "n4", "S" if i == "P" else "P", lex)
    return Built(_sentence(words), {"outer": (2, *vc), "inner": (6, *v2)})


def _long_successive(slots: Slots, cond: str, lex: Lexicon) -> Built:
    """'The N1 P the N3 says that the N2 V2 the N4.' The distractor PP sits on the first subject."""
    L = ("outer", "inner", "distractor")
    o, i, d = (_num(cond, L, r) for r in L)
    vc, v2 = _verb(slots["vc"], o), _verb(slots["v2"], i)  # type: ignore[arg-type]
    words = _np(slots, "n1", o, lex) + [slots["p1"]] + _np(slots, "n3", d, lex)  # type: ignore[list-item]
    words += [vc[0], "that"] + _np(slots, "n2", i, lex) + [v2[0]]
    words += _np(slots, "n4", "S" if i == "P" else "P", lex)
    return Built(_sentence(words), {"outer": (5, *vc), "inner": (9, *v2)})


LONG = ("outer", "inner", "distractor")
STRUCTURES: dict[str, Structure] = {
    s.name: s
    for s in [
        Structure("long_nested", LONG, ("inner", "outer"), ("n1", "n2", "n3", "n4"), ("v1", "v2"), ("p1",), (),
                  _long_nested, description="The N1 that the N2 P the N3 V2 V1 the N4."),
        Structure("short_nested", ("outer", "inner"), ("inner", "outer"), ("n1", "n2", "n4"), ("v1", "v2"), (), (),
                  _short_nested, description="The N1 that the N2 V2 V1 the N4."),
        Structure("single", ("outer",), ("outer",), ("n1", "n4"), ("v1",), (), (), _single,
                  description="The N1 V1 the N4."),
        Structure("short_successive", ("outer", "inner"), ("inner", "outer"), ("n1", "n2", "n4"), ("v2",), (),
                  ("vc",), _short_successive, description="The N1 VC that the N2 V2 the N4."),
        Structure("long_successive", LONG, ("inner", "outer"), ("n1", "n2", "n3", "n4"), ("v2",), ("p1",),
                  ("vc",), _long_successive, description="The N1 P the N3 VC that the N2 V2 the N4."),
        Structure("long_nested_more_distractors", LONG, ("inner", "outer"),
                  ("n1", "n2", "n3", "n4", "xn0", "xn1"), ("v1", "v2"), ("p1", "xp0", "xp1"), (),
                  lambda s, c, lx: _long_nested(s, c, lx, extra_pps=2),
                  description="Two extra plural PPs in the centre distractor (seeds/000 appendix A)."),
        Structure("long_nested_deeper", ("prefix",) + LONG, ("inner", "outer"), ("n1", "n2", "n3"),
                  ("v1", "v2"), ("p1",), (), _deeper, fixed_prefix="P",
                  description="A plural prefix clause nests the sentence one level deeper (seeds/000 appendix A)."),
    ]
}

# plural prefix clauses for long_nested_deeper, cycled across items: (noun, relative, ending)
DEEPER_PREFIXES: tuple[tuple[str, str, str], ...] = (
    ("people", "whom", "are famous"),
    ("neighbours", "whom", "are friendly"),
    ("critics", "whom", "are angry"),
    ("reporters", "whom", "are tired"),
)
