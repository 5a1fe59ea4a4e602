"""What an import does per task kind: which kinds it writes, the study's one kind from the records, the
answers (labels, a rating's scale), the items file's columns and the spec's `task:` section of each kind.

Each reader states a trial's kind where its file says it (PCIbex's controller or element: Scale a rating,
DashedSentence self-paced reading, Selector a choice; jsPsych's plugin: survey-likert a rating), else None (a
key press may be any kind: judgment unless `task:` in --map says otherwise). A spec has one task, so the
records' kinds must be one; with `task:` in --map, trials a reader states to be of another kind are excluded,
each row counted with the reason. The rows themselves are built by the kind's own `derive` (rows.py).
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from typing import Any, Optional

from participants.imports.records import Excluded, ImportInputError, Mapping, ReadResult, SourceTrial

IMPORT_TASKS = ("judgment", "lexical_decision", "choice", "rating", "self_paced_reading", "completion")
LABELLED = ("judgment", "lexical_decision", "choice")     # the answers are labels (2 to MAX_LABELS)
NO_KIND = {"maze": "Maze has no twinlab kind yet (a Maze study's words, choices and times stay readable with "
                   "participants.imports.pcibex.read_pcibex, in each trial's words, word_rts and extra)"}
MAX_LABELS = 9
MAX_POINTS = 9    # a rating scale read from the data: one digit key per point


def refuse_kind(kind: str, where: str = "") -> None:
    """Refuse a kind the import cannot write: the message names it and lists those it can."""
    if kind in IMPORT_TASKS:
        return
    why = NO_KIND.get(kind, f"the import cannot write task kind {kind!r}")
    raise ImportInputError(f"{where}{why}; an import writes the task kinds {', '.join(IMPORT_TASKS)}")


def decide_task(result: ReadResult, m: Mapping) -> str:
    """The study's kind: the mapping's `task`, else the one kind the records state (judgment where none is
    stated). With `task:` mapped, trials stated to be another kind become excluded rows (in `result`)."""
    stated = Counter(t.task or "judgment" for t in result.trials)
    if m.task:
        refuse_kind(m.task, "--map task: ")
        keep = [t for t in result.trials if t.task in (None, m.task)]
        for t in result.trials:
            if t.task not in (None, m.task):
                why = f"a {t.task} trial, not of the study's task {m.task} (`task:` in --map)"
                result.excluded += [Excluded(t.source_file, line, why) for line in (t.rows or (t.line,))]
        if not keep:
            raise ImportInputError(f"no {m.task} trials (`task:` in --map); the files' trials are "
                                   + ", ".join(f"{n} {k}" for k, n in stated.most_common()))
        result.trials = [replace(t, task=m.task) for t in keep]
        return m.task
    if len(stated) > 1:
        raise ImportInputError("the trials are of several task kinds (" + ", ".join(
            f"{n} {k}" for k, n in stated.most_common()) + "); a twinlab spec has one task: map `task: KIND` in "
            "--map to import that kind's trials (the others are excluded, each row counted)")
    kind = next(iter(stated))
    t = next(t for t in result.trials if (t.task or "judgment") == kind)
    refuse_kind(kind, f"{t.source_file}: line {t.line}: ")
    return kind


def answer_labels(kind: str, trials: list[SourceTrial], m: Mapping) -> list[tuple[str, str]]:
    """(raw response, value) pairs: a label kind's labels, a rating's points, a comprehension question's
    options (self-paced reading, none without questions); completion has none (the typed text is the value)."""
    if kind == "completion":
        return []
    if kind == "rating":
        return rating_points(trials, m)
    labels = list(m.labels.items()) if m.labels else [
        (x, x) for x in sorted({x for t in trials for x in (t.response, t.expected) if x is not None})]
    if kind == "self_paced_reading" and not labels:
        return []
    what = "comprehension answers" if kind == "self_paced_reading" else "answer labels"
    most = 4 if kind == "self_paced_reading" else MAX_LABELS
    if len(labels) < 2:
        raise ImportInputError(f"the responses give {len(labels)} {what} ({', '.join(v for _, v in labels)}); a "
                               f"{kind} needs two or more: map `labels:` in --map")
    if len(labels) > most:
        raise ImportInputError(f"{len(labels)} different responses ({', '.join(r for r, _ in labels[:12])} ...): too "
                               f"many for {what} (at most {most}); map `response` to the answer column and `labels:` "
                               "(raw -> value) in --map")
    return labels


def rating_points(trials: list[SourceTrial], m: Mapping) -> list[tuple[str, str]]:
    """A rating's scale: `labels:` mapping each raw response to its point 1..k, else responses that are the
    whole numbers 1..k themselves (k the largest given: stated in the report). Another scale (0..8, -3..3)
    is refused, saying how to map it: a shifted scale read silently would shift every rating."""
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
        raise ImportInputError(f"ratings {values[0]}..{values[-1]}: twinlab's scale is 1..k (k at most {MAX_POINTS}); "
                               f"map `labels:` (raw: point) in --map, e.g. {{{shown}, ...}} for a scale starting at "
                               f"{values[0]}, after checking the study's scale")
    return [(str(p), str(p)) for p in range(1, values[-1] + 1)]


def trial_sentence(kind: str, t: SourceTrial) -> str:
    """The items file's `sentence` of a trial: self-paced reading's words as read, else the stimulus."""
    if kind != "self_paced_reading":
        return (t.stimulus or "").strip()
    if not t.words or not t.word_rts:
        raise ImportInputError(f"{t.source_file}: line {t.line}: a self_paced_reading trial without the words and "
                               "their reading times (map `task:` to the kind of this study's trials)")
    shown = (t.stimulus or "").split()
    if shown and len(t.words) > len(shown) and list(t.words) == shown * (len(t.words) // len(shown)):
        raise ImportInputError(f"{t.source_file}: line {t.line}: the sentence was read {len(t.words) // len(shown)} "
                               "times in one trial; twinlab's self-paced reading reads it once")
    if any(x != x or x is None for x in t.word_rts) or len(t.word_rts) != len(t.words):
        raise ImportInputError(f"{t.source_file}: line {t.line}: a word without its reading time")
    if any(not w.strip() or "|" in w for w in t.words):
        raise ImportInputError(f"{t.source_file}: line {t.line}: an empty word, or one with '|', among the words read")
    return " ".join(w.strip() for w in t.words)


def regions_read(t: SourceTrial) -> Optional[str]:
    """Self-paced reading whose presses revealed several words at once (PennController's chunks "was doing it"):
    the items file's `regions` (the chunks, `|` between them), read with `reveal: region`; None: word by word."""
    chunks = [w.strip() for w in t.words or ()]
    return " | ".join(chunks) if any(len(c.split()) > 1 for c in chunks) else None


def item_materials(kind: str, labels: list[tuple[str, str]], t: SourceTrial,
                   value_of: Any) -> dict[str, str]:
    """The kind's own columns of a trial's items-file row (design.py's material keys)."""
    answer = value_of(t.expected) or ""
    if kind in ("judgment", "lexical_decision"):
        return {"answer": answer}
    if kind == "choice":
        return {**{f"option_{i}": v for i, (_, v) in enumerate(labels, 1)}, "answer": answer}
    if kind == "self_paced_reading":
        regions = regions_read(t)
        return {**({"regions": regions} if regions else {}),
                **({"question_options": "|".join(v for _, v in labels), "question_answer": answer} if labels else {})}
    if kind == "completion":
        target = (t.expected or "").strip()
        if t.phase == "test" and not target:
            raise ImportInputError(f"{t.source_file}: line {t.line}: a completion trial without its correct answer "
                                   "(map `expected:` in --map to the column holding the target word)")
        return {"prefix": (t.stimulus or "").strip(), "target": target}
    return {}


def task_section(kind: str, labels: list[tuple[str, str]], items: list[dict[str, str]]) -> dict[str, Any]:
    """The spec's `task:` for the kind, read from the data (labels, points, options kept in their order)."""
    from experiments.psychopy_names import check_key

    if kind in ("judgment", "lexical_decision"):
        keys_ok = all(check_key(r) is None for r, _ in labels) and len({r for r, _ in labels}) == len(labels)
        return {"kind": kind, "labels": [{"value": v, "text": v, **({"key": r} if keys_ok else {})} for r, v in labels]}
    if kind == "choice":
        return {"kind": kind, "positions": "fixed"}
    if kind == "rating":
        return {"kind": kind, "scale": {"points": len(labels)}}
    if kind == "completion":
        longest = max((len(r.get("target", "")) for r in items), default=1)
        return {"kind": kind, "max_chars": min(200, max(40, longest))}
    if kind == "self_paced_reading" and any(r.get("regions") for r in items):
        return {"kind": kind, "reveal": "region"}   # a press revealed a chunk: reading times are per region
    return {"kind": kind}


def value_for(kind: str, labels: list[tuple[str, str]], raw: Optional[str]) -> Optional[str]:
    """A raw response or answer as the kind's value: a label's value (None when it is none), the typed text."""
    if raw is None:
        return None
    if kind == "completion":
        return raw.strip()
    for r, v in labels:   # a raw response first (a rating's "1" may be the point of raw "0")
        if raw == r:
            return v
    return next((v for _, v in labels if raw == v), None)
