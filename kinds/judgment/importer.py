"""Judgment's import rules (participants/imports): the labels, each pressed as a key (KindImporter's defaults).
A key press states no kind, so a trial no tool element names is a judgment (`default`); PCIbex's
AcceptabilityJudgment controller and old Ibex's Question state it."""
from __future__ import annotations

from participants.imports.kind_importer import KindImporter


class JudgmentImporter(KindImporter):
    kind = "judgment"
    order = 10
    default = True
    tool_hints = {"pcibex": ("AcceptabilityJudgment", "Question")}


IMPORTER = JudgmentImporter()
