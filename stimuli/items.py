"""Stimulus items and their grammatical / violation / filler versions."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Item:
    """One sentence of the design, in its grammatical form.

    `words` are the RSVP units as shown (a unit may hold more than one word, e.g. Italian
    "l' uomo"). `verbs` maps each dependency ("inner", "outer") to (unit index, correct form,
    flipped form). `filler`, when given, is (unit index, replacement, kind): the item's filler
    version shows a violation of another kind there (a non-finite verb, an inanimate subject).
    """

    item_id: str
    structure: str
    condition: str
    lexicon: str
    words: tuple[str, ...]
    verbs: dict[str, tuple[int, str, str]]
    filler: tuple[int, str, str] | None = None

    @property
    def sentence(self) -> str:
        return " ".join(self.words)

    def version(self, violation: str) -> tuple[str, ...]:
        """The units as presented: grammatical ("none"), a verb flipped, or the filler ("other")."""
        if violation == "none":
            return self.words
        if violation == "other":
            if self.filler is None:
                raise ValueError(f"item {self.item_id} ({self.structure}) has no filler version")
            idx, word = self.filler[0], self.filler[1]
        elif violation not in self.verbs:
            raise ValueError(f"item {self.item_id} ({self.structure}) has no {violation!r} verb")
        else:
            idx, word = self.verbs[violation][0], self.verbs[violation][2]
        words = list(self.words)
        # keep a sentence-final period attached
        words[idx] = word + ("." if words[idx].endswith(".") else "")
        return tuple(words)
