"""The per-kind rules of an import, as one small interface a kind's `importer` part fills in.

A kind's kinds/<kind>/importer.py says `IMPORTER = <a KindImporter subclass>()`: which tool elements mean the
kind (`tool_hints`), its answer labels, how a SourceTrial becomes the kind's items-file columns, the spec's
`task:` section read from the data and the raw record handed to the kind's own `derive` (task_rows.py). The
defaults are those of a kind whose answers are two or more labels, each pressed as a key; a kind overrides
what differs. The pipeline finds the importers through the one registry (participants/imports/kinds.py) and
names no kind: a kind without an importer part is refused by the import, listing those that have one.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from experiments.psychopy_names import check_key
from experiments.tasks.record import answers
from participants.imports.records import ImportInputError, Mapping, SourceTrial

MAX_LABELS = 9
ANSWER_FIELDS = ("response", "expected")   # the SourceTrial fields whose values must be among the labels


CONTINUE_KEY = "space"   # the spec's default continue key (task.response_key)
SPARE_CONTINUE_KEYS = ("return", "backspace", "tab")


def press(key: str, t: float) -> dict[str, Any]:
    """One key press of a raw record (experiments/tasks/record.py)."""
    return {"key": key, "t": t}


def answer_record(answers: list[Any], value: str, t0: float, where: str) -> tuple[list[dict[str, Any]], str]:
    """The press of the answer whose value is `value` (its key, at t0 + 1 s) and how it was answered."""
    pos = next((i for i, a in enumerate(answers) if a.value == value), None)
    if pos is None:
        raise ImportInputError(f"{where}: the answer {value!r} is not one of the trial's answers "
                               f"({', '.join(a.value for a in answers)})")
    return [press(answers[pos].key, t0 + 1.0)], f"key:{answers[pos].key}"


def screen_answers(trial: Any, s: Any, order: Any) -> list[Any]:
    """The answers on the trial's screen, with their keys (the human runners' one reading)."""

    return answers(trial, s, order)


class KindImporter:
    """A kind's import rules; the defaults: answers are 2 to `most_labels` labels, each pressed as a key."""
    kind: str = ""                                   # the kind's registered name
    order: int = 1000                                # where it stands in the import's list of kinds
    default: bool = False                            # the kind of a trial no tool element states (a key press)
    tool_hints: dict[str, tuple[str, ...]] = {}      # tool -> the elements/plugins that mean this kind
    labels_what = "answer labels"                    # what the labels are, in messages
    most_labels = MAX_LABELS
    labels_optional = False                          # no labels at all is allowed (reading without questions)

    def answer_labels(self, trials: list[SourceTrial], m: Mapping) -> list[tuple[str, str]]:
        """(raw response, value) pairs: the mapping's `labels`, else the raw responses and answers themselves."""
        labels = list(m.labels.items()) if m.labels else [
            (x, x) for x in sorted({x for t in trials for x in (t.response, t.expected) if x is not None})]
        if self.labels_optional and not labels:
            return []
        what, most = self.labels_what, self.most_labels
        if len(labels) < 2:
            raise ImportInputError(f"the responses give {len(labels)} {what} ({', '.join(v for _, v in labels)}); a "
                                   f"{self.kind} needs two or more: map `labels:` in --map")
        if len(labels) > most:
            raise ImportInputError(f"{len(labels)} different responses ({', '.join(r for r, _ in labels[:12])} ...): "
                                   f"too many for {what} (at most {most}); map `response` to the answer column and "
                                   "`labels:` (raw -> value) in --map")
        return labels

    def value_for(self, labels: list[tuple[str, str]], raw: Optional[str]) -> Optional[str]:
        """A raw response or answer as the kind's value: a label's value (None when it is none)."""
        if raw is None:
            return None
        for r, v in labels:   # a raw response first (a rating's "1" may be the point of raw "0")
            if raw == r:
                return v
        return next((v for _, v in labels if raw == v), None)

    def checked_answers(self, labels: list[tuple[str, str]]) -> tuple[str, ...]:
        """The SourceTrial fields whose values must be among the labels (study.check_answers)."""
        return ANSWER_FIELDS

    def sentence(self, t: SourceTrial) -> str:
        """The items file's `sentence` of a trial: the stimulus shown."""
        return (t.stimulus or "").strip()

    def item_materials(self, t: SourceTrial, labels: list[tuple[str, str]],
                       value_of: Callable[[Optional[str]], Optional[str]]) -> dict[str, str]:
        """The kind's own columns of a trial's items-file row (design.py's material keys)."""
        return {"answer": value_of(t.expected) or ""}

    def task_section(self, labels: list[tuple[str, str]], items: list[dict[str, str]]) -> dict[str, Any]:
        """The spec's `task:` read from the data: the labels, each with its raw key where every raw is a key name."""

        keys_ok = all(check_key(r) is None for r, _ in labels) and len({r for r, _ in labels}) == len(labels)
        task: dict[str, Any] = {"kind": self.kind,
                                "labels": [{"value": v, "text": v, **({"key": r} if keys_ok else {})}
                                           for r, v in labels]}
        if keys_ok and any(r == CONTINUE_KEY for r, _ in labels):
            # the people answered with the spec's default continue key: pages continue on another key instead
            task["response_key"] = next(k for k in SPARE_CONTINUE_KEYS if k not in {r for r, _ in labels})
        return task

    def task_record(self, trial: Any, s: Any, order: Any, t: SourceTrial, value: Optional[str],
                    where: str) -> Optional[dict[str, Any]]:
        """The raw record a human runner would report for this answer (None: a trial without a response)."""
        if value is None:
            return None
        presses, by = answer_record(screen_answers(trial, s, order), value, 0.0, where)
        return {"response_onset": 0.0, "presses": presses, "pointers": [], "answered_by": by,
                "answer_time": presses[0]["t"]}

    def derived_trial(self, trial: Any, value: Optional[str]) -> Any:
        """The trial as the kind's derive reads this record (the trial itself unless a kind says otherwise)."""
        return trial
