"""Choice's import rules (participants/imports): the labels' values are the options, in order, shown where the
tool showed them (`positions: fixed`); PCIbex's Selector and DropDown state it."""
from __future__ import annotations

from typing import Any, Callable, Optional

from participants.imports.kind_importer import KindImporter
from participants.imports.records import SourceTrial


class ChoiceImporter(KindImporter):
    kind = "choice"
    order = 30
    tool_hints = {"pcibex": ("Selector", "DropDown")}

    def item_materials(self, t: SourceTrial, labels: list[tuple[str, str]],
                       value_of: Callable[[Optional[str]], Optional[str]]) -> dict[str, str]:
        return {**{f"option_{i}": v for i, (_, v) in enumerate(labels, 1)}, "answer": value_of(t.expected) or ""}

    def task_section(self, labels: list[tuple[str, str]], items: list[dict[str, str]]) -> dict[str, Any]:
        return {"kind": self.kind, "positions": "fixed"}


IMPORTER = ChoiceImporter()
