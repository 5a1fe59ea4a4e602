"""The toy kind's import rules (test support): its answers are its two labels (KindImporter's defaults); the spec's
`task:` is the kind alone (its labels and keys are its own settings, not a list read from the data); a made-up
jsPsych plugin `colour-word` states it. Nothing in twinlab names it."""
from __future__ import annotations

from typing import Any

from participants.imports.kind_importer import KindImporter


class ToyImporter(KindImporter):
    kind = "colour_toy"
    tool_hints = {"jspsych": ("colour-word",)}

    def task_section(self, labels: list[tuple[str, str]], items: list[dict[str, str]]) -> dict[str, Any]:
        return {"kind": self.kind}


IMPORTER = ToyImporter()
