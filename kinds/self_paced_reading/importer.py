"""Self-paced reading's import rules (participants/imports): the sentence is the words as read (chunks of
several words are regions, read with `reveal: region`), the presses are spaced by the tool's reading times, a
comprehension question's answers (2 to 4) are the labels where trials were answered; PCIbex's DashedSentence
states it."""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Optional

from participants.imports.kind_importer import ANSWER_FIELDS, KindImporter, answer_record, press, screen_answers
from participants.imports.records import ImportInputError, Mapping, SourceTrial

QUESTION = ("question_options", "question_answer", "question")
OWN_OPTIONS = "_question_options"   # a reader's per-trial answers to the trial's own question ("|" between them)
OWN_QUESTION = "_question"          # and that question's text, where the tool logged it


def regions_read(t: SourceTrial) -> Optional[str]:
    """Presses that revealed several words at once (PennController's chunks "was doing it"): the items file's
    `regions` (the chunks, `|` between them), read with `reveal: region`; None: word by word."""
    chunks = [w.strip() for w in t.words or ()]
    return " | ".join(chunks) if any(len(c.split()) > 1 for c in chunks) else None


class SelfPacedReadingImporter(KindImporter):
    kind = "self_paced_reading"
    order = 50
    tool_hints = {"pcibex": ("DashedSentence", "Controller-DashedSentence")}
    labels_what = "comprehension answers"
    most_labels = 4
    labels_optional = True

    def answer_labels(self, trials: list[SourceTrial], m: Mapping) -> list[tuple[str, str]]:
        """The study's answers; where every answered trial names its own question's answers (Ibex's item-specific
        `as: [...]`, extra `_question_options`), all of them, each item offering its own (item_materials)."""
        answered = [t for t in trials if t.response is not None]
        own = [t.extra.get(OWN_OPTIONS, "").split("|") for t in answered]
        if m.labels or not answered or not all(o != [""] for o in own):
            return super().answer_labels(trials, m)
        if max(len(o) for o in own) > self.most_labels:
            raise ImportInputError(f"a comprehension question with {max(len(o) for o in own)} answers (at most "
                                   f"{self.most_labels})")
        return [(x, x) for x in sorted({x for o in own for x in o})]

    def checked_answers(self, labels: list[tuple[str, str]]) -> tuple[str, ...]:
        return ANSWER_FIELDS if labels else ()

    def sentence(self, t: SourceTrial) -> str:
        """The words as read (checked: each with its reading time, read once)."""
        if not t.words or not t.word_rts:
            raise ImportInputError(f"{t.source_file}: line {t.line}: a self_paced_reading trial without the words "
                                   "and their reading times (map `task:` to the kind of this study's trials)")
        shown = (t.stimulus or "").split()
        if shown and len(t.words) > len(shown) and list(t.words) == shown * (len(t.words) // len(shown)):
            raise ImportInputError(f"{t.source_file}: line {t.line}: the sentence was read "
                                   f"{len(t.words) // len(shown)} times in one trial; twinlab's self-paced reading "
                                   "reads it once")
        if any(x != x or x is None for x in t.word_rts) or len(t.word_rts) != len(t.words):
            raise ImportInputError(f"{t.source_file}: line {t.line}: a word without its reading time")
        if any(not w.strip() or "|" in w for w in t.words):
            raise ImportInputError(f"{t.source_file}: line {t.line}: an empty word, or one with '|', among the "
                                   "words read")
        return " ".join(w.strip() for w in t.words)

    def item_materials(self, t: SourceTrial, labels: list[tuple[str, str]],
                       value_of: Callable[[Optional[str]], Optional[str]]) -> dict[str, str]:
        regions = regions_read(t)
        own = [value_of(x) for x in (t.extra.get(OWN_OPTIONS) or "").split("|") if x]
        options = list(dict.fromkeys(v for v in own if v)) or [v for _, v in labels]   # the item's own, else all
        question = (t.extra.get(OWN_QUESTION) or "").strip()
        return {**({"regions": regions} if regions else {}),
                **({"question": question} if question and labels else {}),
                **({"question_options": "|".join(options),
                    "question_answer": value_of(t.expected) or ""} if labels else {})}

    def task_section(self, labels: list[tuple[str, str]], items: list[dict[str, str]]) -> dict[str, Any]:
        if any(r.get("regions") for r in items):
            return {"kind": self.kind, "reveal": "region"}   # a press revealed a chunk: times are per region
        return {"kind": self.kind}

    def task_record(self, trial: Any, s: Any, order: Any, t: SourceTrial, value: Optional[str],
                    where: str) -> Optional[dict[str, Any]]:
        """The dashes at 0, each word shown at the press that reveals it, the presses spaced by the tool's
        per-word reading times; then the comprehension answer, if any."""
        times = [0.0]
        for rt in t.word_rts or ():
            times.append(times[-1] + float(rt))
        presses = [press(s.advance_key, x) for x in times]
        raw: dict[str, Any] = {"steps": [0.0] + times[:-1], "presses": presses, "pointers": []}
        if value is not None:
            more, by = answer_record(screen_answers(trial, s, order), value, times[-1], where)
            raw.update(presses=presses + more, question_onset=times[-1], question_answered_by=by,
                       question_answer_time=more[0]["t"])
        return raw

    def derived_trial(self, trial: Any, value: Optional[str]) -> Any:
        """The sentence read, its question not answered: the reading times only."""
        if value is not None:
            return trial
        return replace(trial, materials=tuple((k, v) for k, v in trial.materials if k not in QUESTION))


IMPORTER = SelfPacedReadingImporter()
