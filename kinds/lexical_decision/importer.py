"""Lexical decision's import rules (participants/imports): the labels (word / nonword), each pressed as a key
(KindImporter's defaults). No tool element states it: map `task: lexical_decision` in --map."""
from __future__ import annotations

from participants.imports.kind_importer import KindImporter


class LexicalDecisionImporter(KindImporter):
    kind = "lexical_decision"
    order = 20


IMPORTER = LexicalDecisionImporter()
