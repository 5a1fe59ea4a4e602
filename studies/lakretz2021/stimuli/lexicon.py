"""Lexicons for the agreement stimuli: nouns and verbs in singular/plural pairs, prepositions.

The test lexicon is the English vocabulary of the Lakretz et al. (2022) BIG-bench items (it is
spelled out in the contamination regular expressions of seeds/000, appendix A). The training
lexicon is disjoint from it in every word, as the human training block of Lakretz et al. (2021)
used a different lexicon from the main experiment.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

Pair = tuple[str, str]  # (singular, plural); verbs: (3rd person singular, plural)


@dataclass(frozen=True)
class Lexicon:
    name: str
    nouns: tuple[Pair, ...]
    verbs: tuple[Pair, ...]  # transitive verbs
    prepositions: tuple[str, ...]
    complement_verbs: tuple[Pair, ...]  # take a that-clause (successive structures)
    inanimate: tuple[Pair, ...] = ()  # filler subjects: an inanimate noun cannot know or greet

    def gerund(self, verb: str) -> str:
        """The -ing form of an inflected verb of the lexicon (fillers: a non-finite verb form)."""
        for sg, pl in self.verbs + self.complement_verbs:
            if verb in (sg, pl):
                if pl == "stop":
                    return "stopping"
                return (pl[:-1] if pl.endswith("e") and not pl.endswith("ee") else pl) + "ing"
        raise KeyError(f"{verb!r} is not a verb of lexicon {self.name!r}")

    def form(self, pair: Pair, number: str) -> str:
        return pair[0] if number == "S" else pair[1]

    @cached_property
    def flips(self) -> dict[str, str]:
        """Every inflected word -> its number-flipped form."""
        out: dict[str, str] = {}
        for sg, pl in self.nouns + self.verbs + self.complement_verbs:
            out[sg], out[pl] = pl, sg
        return out

    def flip(self, word: str) -> str:
        try:
            return self.flips[word]
        except KeyError:
            raise KeyError(f"{word!r} is not an inflected word of lexicon {self.name!r}") from None

    @cached_property
    def words(self) -> frozenset[str]:
        ws: set[str] = set(self.prepositions)
        for sg, pl in self.nouns + self.verbs + self.complement_verbs:
            ws.update((sg, pl))
        return frozenset(ws)


def _nouns(spec: str) -> tuple[Pair, ...]:
    out = []
    for tok in spec.split():
        sg, _, pl = tok.partition("/")
        out.append((sg, pl or sg + "s"))
    return tuple(out)


def _verbs(spec: str) -> tuple[Pair, ...]:
    out = []
    for tok in spec.split():
        pl, _, sg = tok.partition("/")
        out.append((sg or pl + "s", pl))
    return tuple(out)


TEST = Lexicon(
    name="test",
    nouns=_nouns(
        "boy friend daughter sister son mother student girl actress/actresses father man/men "
        "actor farmer brother woman/women"
    ),
    verbs=_verbs(
        "defend stop greet watch/watches meet know attract welcome avoid block interrupt observe ignore"
    ),
    prepositions=("behind", "before", "beside", "near"),
    complement_verbs=_verbs("think believe"),
    inanimate=_nouns("pen table chair bottle lamp"),
)

TRAINING = Lexicon(
    name="training",
    nouns=_nouns(
        "pilot lawyer nurse baker painter driver cook dentist guard judge clerk poet uncle aunt neighbor"
    ),
    verbs=_verbs("help call follow praise thank admire trust warn hire push/pushes chase invite"),
    prepositions=("with", "from", "among", "opposite"),
    complement_verbs=_verbs("hope claim"),
    inanimate=_nouns("cup spoon brick basket kettle"),
)

LEXICONS: dict[str, Lexicon] = {"test": TEST, "training": TRAINING}


def get_lexicon(name: str) -> Lexicon:
    try:
        return LEXICONS[name]
    except KeyError:
        raise KeyError(f"unknown lexicon {name!r}; known: {', '.join(LEXICONS)}") from None
