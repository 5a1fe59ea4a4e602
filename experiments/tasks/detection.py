"""Which answer of a judgment-like kind accepts and which rejects (for acceptance, hits, false alarms).

The rule is each kind's own (`TaskKind.detection`, in kinds/<kind>/task.py; docs/general_model/kinds.md
"Detection values"); the built-in kinds':
  judgment            the label whose *text* (else value) says it accepts (yes, acceptable, grammatical, good, ok,
                      true, correct, sensible, natural, word...) accepts and the one whose value says it
                      rejects (no, unacceptable, ungrammatical, bad, ...) rejects, whatever their order on
                      screen ("no" listed first, F = Not acceptable, is a common layout); two values that
                      say neither: the first label accepts (default labels: yes, no); a judgment with
                      more than two labels is not a detection task (None)
  violation_detection no_violation accepts, violation rejects
  lexical_decision    word accepts, nonword rejects
  any other kind      None
A *signal* trial is one whose item's answer is the rejecting value (a violation, an unacceptable
sentence, a non-word): a hit is a rejecting response there, a false alarm a rejecting response elsewhere.
"""
from __future__ import annotations

from typing import Any

from experiments.kinds import parts  # the registry itself (experiments/trials.py reads this module: no tasks.base)


def label_field(settings: Any, field: str = "value") -> list[str] | None:
    labels = settings.get("labels") if isinstance(settings, dict) else getattr(settings, "labels", None)
    if labels is None:
        return None
    out = []
    for lab in labels:
        value = lab.get(field) if isinstance(lab, dict) else getattr(lab, field, lab if field == "value" else "")
        out.append(str(value if value is not None else ""))
    return out


ACCEPTING = frozenset({"yes", "y", "acceptable", "grammatical", "good", "ok", "okay", "fine", "true", "correct",
                       "right", "sensible", "makes_sense", "natural", "possible", "word", "real", "real_word",
                       "accept", "accepted", "valid", "well_formed", "plausible"})
REJECTING = frozenset({"no", "n", "unacceptable", "not_acceptable", "ungrammatical", "not_grammatical", "bad",
                       "not_ok", "false", "incorrect", "wrong", "nonsense", "no_sense", "not_sensible", "unnatural",
                       "impossible", "nonword", "non_word", "not_a_word", "pseudoword", "reject", "rejected",
                       "invalid", "ill_formed", "implausible", "odd", "strange", "weird", "unusual", "not_fine"})


def _meaning(value: str) -> str:
    """'accept', 'reject' or '' for a label's value (case, spaces and hyphens aside)."""
    v = "_".join(str(value).strip().casefold().replace("-", " ").split())
    return "accept" if v in ACCEPTING else "reject" if v in REJECTING else ""


def judgment_values(labels: list[str], texts: list[str] | None = None) -> tuple[str, str] | None:
    """(accepting, rejecting) of two label values, never by their order: by what the texts people read say
    when one accepts and the other rejects (no = "Fine", yes = "Odd" for "Is this sentence odd?": no accepts),
    else by what the values say, else the first label accepts; None unless there are two labels."""
    if len(labels) != 2:
        return None
    for words in (texts, labels):
        said = [_meaning(v) for v in words] if words and len(words) == 2 else []
        if sorted(said) == ["accept", "reject"]:
            return (labels[0], labels[1]) if said[0] == "accept" else (labels[1], labels[0])
    return labels[0], labels[1]


def detection_values(kind: str, settings: Any = None) -> tuple[str, str] | None:
    """(accepting value, rejecting value) of `kind` under its `task:` settings (a dict as the spec gives
    them, or the kind's settings model; None or {}: the defaults), or None when the kind has no such pair:
    the kind's own rule (`TaskKind.detection`, in kinds/<kind>/task.py)."""
    k = parts("task", "KIND").get(kind)
    return k.detection(settings) if k is not None and k.detection is not None else None


def settled_detection(kind: str) -> tuple[str, str] | None:
    """The (accepting, rejecting) pair a kind has whatever its settings (violation detection, lexical
    decision); None where the settings decide it (a judgment's labels) or the kind has none."""
    k = parts("task", "KIND").get(kind)
    if k is None or k.detection is None or k.detection_by_settings:
        return None
    return k.detection(None)


def detection_for(kind: str, task: Any = None, overrides: dict[str, Any] | None = None) -> tuple[str, str] | None:
    """`detection_values` of a trial of `kind` in a spec whose `task:` is `task`, with the runners' setting
    `overrides` (the labels given beside the spec win; a trial of another kind than the spec's gets its
    kind's defaults, as the runners present it)."""
    over = overrides or {}
    if "labels" in over:
        return detection_values(kind, over)
    settings = task.settings() if task is not None and getattr(task, "kind", None) == kind else None
    return detection_values(kind, settings)
