"""Rating's import rules (participants/imports): the scale read from the data (`labels:` mapping each raw
response to its point 1..k, else responses that are 1..k themselves), no correct answer; PCIbex's Scale and
jsPsych's survey-likert and slider plugins state it."""
from __future__ import annotations

import re
from typing import Any, Callable, Optional

from participants.imports.kind_importer import KindImporter
from participants.imports.records import ImportInputError, Mapping, SourceTrial

MAX_POINTS = 9    # a rating scale read from the data: one digit key per point


class RatingImporter(KindImporter):
    kind = "rating"
    order = 40
    tool_hints = {"pcibex": ("Scale",),
                  "jspsych": ("survey-likert", "html-slider-response", "image-slider-response", "audio-slider-response",
                              "video-slider-response"),
                  "psychopy": ("slider",)}   # a Builder Slider (or RatingScale) answer: its `.response`

    def answer_labels(self, trials: list[SourceTrial], m: Mapping) -> list[tuple[str, str]]:
        """The scale: `labels:` (raw -> point 1..k), else raw responses 1..k (k the largest given). Another
        scale (0..8, -3..3) is refused, saying how to map it: a shifted scale read silently would shift every
        rating."""
        if m.labels:
            points = sorted({v for v in m.labels.values()}, key=lambda v: (len(v), v))
            k = len(points)
            if points != [str(p) for p in range(1, k + 1)] or len(m.labels) != k or k < 2 or k > MAX_POINTS:
                raise ImportInputError(f"--map labels: a rating maps each raw response to one point 1..k (k 2 to "
                                       f"{MAX_POINTS}), each point once; got {m.labels}")
            return list(m.labels.items())
        raw = sorted({t.response for t in trials if t.response is not None})
        if not raw or not all(re.fullmatch(r"[0-9]+", r.strip()) for r in raw):
            raise ImportInputError(f"ratings {', '.join(raw[:12]) or '(none)'}: not whole numbers; map `labels:` "
                                   "(each raw response: its point 1..k) in --map")
        values = sorted(int(r) for r in raw)
        if values[0] < 1 or values[-1] > MAX_POINTS or values[-1] < 2:
            shown = ", ".join(f"'{v}': '{v - values[0] + 1}'" for v in values[:3])
            raise ImportInputError(f"ratings {values[0]}..{values[-1]}: twinlab's scale is 1..k (k at most "
                                   f"{MAX_POINTS}); map `labels:` (raw: point) in --map, e.g. {{{shown}, ...}} for a "
                                   f"scale starting at {values[0]}, after checking the study's scale")
        return [(str(p), str(p)) for p in range(1, values[-1] + 1)]

    def checked_answers(self, labels: list[tuple[str, str]]) -> tuple[str, ...]:
        return ("response",)   # a rating has no correct answer

    def item_materials(self, t: SourceTrial, labels: list[tuple[str, str]],
                       value_of: Callable[[Optional[str]], Optional[str]]) -> dict[str, str]:
        return {}

    def task_section(self, labels: list[tuple[str, str]], items: list[dict[str, str]]) -> dict[str, Any]:
        return {"kind": self.kind, "scale": {"points": len(labels)}}


IMPORTER = RatingImporter()
