"""Completion's import rules (participants/imports): the typed text is the value (no labels), the correct
answer is the target (`expected:` required), the record types the text key by key; PCIbex's TextInput and
jsPsych's survey-text and cloze plugins state it."""
from __future__ import annotations

from typing import Any, Callable, Optional

from participants.imports.kind_importer import KindImporter, press
from participants.imports.records import ImportInputError, Mapping, SourceTrial

TYPED = {" ": "space", "'": "apostrophe", "-": "minus", ".": "period", ",": "comma"}


class CompletionImporter(KindImporter):
    kind = "completion"
    order = 60
    tool_hints = {"pcibex": ("TextInput",), "jspsych": ("survey-text", "cloze"), "psychopy": ("textbox",)}

    def answer_labels(self, trials: list[SourceTrial], m: Mapping) -> list[tuple[str, str]]:
        return []   # the typed text is the value

    def value_for(self, labels: list[tuple[str, str]], raw: Optional[str]) -> Optional[str]:
        return None if raw is None else raw.strip()

    def checked_answers(self, labels: list[tuple[str, str]]) -> tuple[str, ...]:
        return ()

    def item_materials(self, t: SourceTrial, labels: list[tuple[str, str]],
                       value_of: Callable[[Optional[str]], Optional[str]]) -> dict[str, str]:
        target = (t.expected or "").strip()
        if t.phase == "test" and not target:
            raise ImportInputError(f"{t.source_file}: line {t.line}: a completion trial without its correct answer "
                                   "(map `expected:` in --map to the column holding the target word)")
        return {"prefix": (t.stimulus or "").strip(), "target": target}

    def task_section(self, labels: list[tuple[str, str]], items: list[dict[str, str]]) -> dict[str, Any]:
        longest = max((len(r.get("target", "")) for r in items), default=1)
        return {"kind": self.kind, "max_chars": min(200, max(40, longest))}

    def task_record(self, trial: Any, s: Any, order: Any, t: SourceTrial, value: Optional[str],
                    where: str) -> Optional[dict[str, Any]]:
        """Each character's key, then the submit key (None: nothing typed)."""
        if value is None or not value.strip():
            return None
        keys = []
        for c in value:
            key = TYPED.get(c, c if len(c) == 1 and c.isalpha() else None)
            if key is None:
                raise ImportInputError(f"{where}: the typed answer {value[:40]!r} has {c!r}, which a completion row "
                                       "cannot hold (letters, spaces and ' - . , are typed)")
            keys.append(key)
        presses = [press(k, 1.0 + i) for i, k in enumerate(keys)]
        end = float(len(keys) + 1)
        return {"response_onset": 0.0, "presses": presses + [press(s.submit_key, end)], "pointers": [],
                "submit_time": end, "text": value}


IMPORTER = CompletionImporter()
