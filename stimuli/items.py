"""Stimulus items and their grammatical / violation versions."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Item:
    """One sentence of the design, in its grammatical form.

    `verbs` maps each dependency ("inner", "outer") to (word index, correct form, flipped form).
    """

    item_id: str
    structure: str
    condition: str
    lexicon: str
    words: tuple[str, ...]
    verbs: dict[str, tuple[int, str, str]]

    @property
    def sentence(self) -> str:
        return " ".join(self.words)

    def version(self, violation: str) -> tuple[str, ...]:
        """The words as presented: grammatical ("none") or with the verb of `violation` flipped."""
        if violation == "none":
            return self.words
        if violation not in self.verbs:
            raise ValueError(f"item {self.item_id} ({self.structure}) has no {violation!r} verb")
        idx, correct, flipped = self.verbs[violation]
        words = list(self.words)
        # keep a sentence-final period attached
        words[idx] = flipped + ("." if words[idx].endswith(".") else "")
        return tuple(words)
