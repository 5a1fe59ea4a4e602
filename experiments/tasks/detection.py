"""Which answer of a judgment-like kind accepts and which rejects (for acceptance, hits, false alarms).

The rule, per kind (docs/general_model.md "Detection values"):
  judgment            the first label accepts, the second rejects (default labels: yes, no); a judgment
                      with more than two labels is not a detection task (None)
  violation_detection no_violation accepts, violation rejects
  lexical_decision    word accepts, nonword rejects
  any other kind      None
A *signal* trial is one whose item's answer is the rejecting value (a violation, an unacceptable
sentence, a non-word): a hit is a rejecting response there, a false alarm a rejecting response elsewhere.
"""
from __future__ import annotations

from typing import Any


def _labels(settings: Any) -> list[str] | None:
    labels = settings.get("labels") if isinstance(settings, dict) else getattr(settings, "labels", None)
    if labels is None:
        return None
    out = []
    for lab in labels:
        value = lab.get("value") if isinstance(lab, dict) else getattr(lab, "value", lab)
        out.append(str(value))
    return out


def detection_values(kind: str, settings: Any = None) -> tuple[str, str] | None:
    """(accepting value, rejecting value) of `kind` under its `task:` settings (a dict as the spec gives
    them, or the kind's settings model; None or {}: the defaults), or None when the kind has no such pair."""
    if kind == "violation_detection":
        return ("no_violation", "violation")
    if kind == "lexical_decision":
        return ("word", "nonword")
    if kind == "judgment":
        labels = _labels(settings or {})
        if labels is None:
            return ("yes", "no")
        return (labels[0], labels[1]) if len(labels) == 2 else None
    return None


def detection_for(kind: str, task: Any = None, overrides: dict[str, Any] | None = None) -> tuple[str, str] | None:
    """`detection_values` of a trial of `kind` in a spec whose `task:` is `task`, with the runners' setting
    `overrides` (the labels given beside the spec win; a trial of another kind than the spec's gets its
    kind's defaults, as the runners present it)."""
    over = overrides or {}
    if "labels" in over:
        return detection_values(kind, over)
    settings = task.settings() if task is not None and getattr(task, "kind", None) == kind else None
    return detection_values(kind, settings)
