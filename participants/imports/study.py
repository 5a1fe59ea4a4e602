"""The design read from the data: people, answers and the spec + items file their trials make.

Every person (participant and session of the source) becomes one list of a design with `lists: given`
(docs/spec.md): the list's practice rows, then its test rows, in the order the person got them, blocks
unshuffled. So the spec compiles, for person k's list, exactly the trials the person saw, in the person's
order: `run-model SPEC` puts model subjects on the same items and lists, `run-model --replay` replays each
person, and the imported sessions are rows of that compiled sequence. The factors are the mapped condition
(factor `condition`) or factors; the answer labels are the mapping's `labels` (raw response -> value), or
the raw responses themselves.
"""
from __future__ import annotations

import html
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Optional

from participants.imports.earlier import keep_lists, require_everyone
from participants.imports.kind_importer import KindImporter
from participants.imports.kinds import importer_for
from participants.imports.records import ImportInputError, Mapping, SourceTrial
from stimuli.input_rules import is_ascii_digits


@dataclass
class Person:
    subject_id: str               # the twinlab id (letters and digits of the source's participant)
    participant: str              # as the source wrote it
    session: str                  # the source's session label
    files: list[str]
    trials: list[SourceTrial]
    list_number: int = 0


@dataclass
class Study:
    name: str
    task: str
    labels: list[tuple[str, str]]                  # (raw response, value), in the spec's order
    factors: dict[str, list[str]]
    people: list[Person]
    items: list[dict[str, str]] = field(default_factory=list)   # the items file's rows
    feedback: dict[str, bool] = field(default_factory=dict)     # phase -> feedback shown
    feedback_counts: dict[str, tuple[int, int]] = field(default_factory=dict)  # phase -> (shown, trials)
    notes: list[str] = field(default_factory=list)              # what the items file renamed, and why

    @property
    def rules(self) -> KindImporter:
        """The kind's import rules (its importer part, kinds/<kind>/importer.py)."""
        return importer_for(self.task)

    def value_of(self, raw: Optional[str]) -> Optional[str]:
        """A raw response or answer as the kind's value (None stays None; the kind's `value_for`)."""
        return self.rules.value_for(self.labels, raw)


def subject_id_for(participant: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "", participant)[:64]


def group_people(trials: list[SourceTrial]) -> list[Person]:
    """One Person per participant; a participant with files of two sessions is refused (a design read from
    the data runs in one session), as is a participant in two files, a participant whose id has no letter or
    digit, or two participants whose ids become one."""
    by: dict[str, Person] = {}
    owner: dict[str, str] = {}
    for t in trials:
        p = by.get(t.participant)
        if p is None:
            sid = subject_id_for(t.participant)
            if not sid:
                raise ImportInputError(f"{t.source_file}: line {t.line}: participant {t.participant!r} has no letter "
                                       "or digit to make a twinlab id of")
            if sid in owner:
                raise ImportInputError(f"{t.source_file}: line {t.line}: participants {owner[sid]!r} and "
                                       f"{t.participant!r} both become the twinlab id {sid!r} (letters and digits)")
            owner[sid] = t.participant
            p = by[t.participant] = Person(sid, t.participant, t.session, [], [])
        elif t.session != p.session:
            raise ImportInputError(
                f"{t.source_file}: line {t.line}: participant {t.participant!r} has data of two sessions "
                f"({p.session!r} in {p.files[0]}, {t.session!r} here); a design read from the data runs in one "
                "session: import each session into its own --out (or leave `session` unmapped if the files are one "
                "session)")
        if t.source_file not in p.files:
            if p.files:   # two files of one id are two runs (or two people), never merged into one person's list
                raise ImportInputError(
                    f"{t.source_file}: line {t.line}: participant {t.participant!r} is also in {p.files[0]}; the "
                    "trials of two files are never merged into one person: import the files separately (each into "
                    "its own --out), or give each file's participant its own id")
            p.files.append(t.source_file)
        p.trials.append(t)
    people = sorted(by.values(), key=lambda q: _natural(q.subject_id))
    for k, p in enumerate(people, start=1):
        p.list_number = k
    return people


def _natural(text: str) -> list[Any]:
    return [int(x) if is_ascii_digits(x) else x for x in re.split(r"([0-9]+)", text)]


def check_answers(study: Study) -> None:
    """Every response and correct answer is among the labels (else the error names file, line and column)."""
    checked = study.rules.checked_answers(study.labels)
    for p in study.people:
        for t in p.trials:
            for what, raw in ((w, getattr(t, w)) for w in checked):
                if raw is not None and study.value_of(raw) is None:
                    col = _column_name(t, what)
                    raise ImportInputError(
                        f"{t.source_file}: line {t.line}{col}: {what} {raw[:40]!r} is not among the labels "
                        f"({', '.join(f'{r} = {v}' for r, v in study.labels)}); add it to `labels:` in --map")


def _column_name(t: SourceTrial, what: str) -> str:
    return f", {what} column" if what else ""


def factors_of(people: list[Person], m: Mapping) -> dict[str, list[str]]:
    """The factors and their levels (sorted) from the test trials: the mapping's `factors`, else `condition`."""
    test = [t for p in people for t in p.trials if t.phase == "test"]
    if not test:
        raise ImportInputError("no test trials (every trial is practice): check `practice`/`practice_values` in --map")
    names = dict(m.factors) if m.factors else ({"condition": m.condition} if m.condition else {})
    if not names:
        raise ImportInputError("no condition: map `condition:` (or `factors:`) in --map to the column that names "
                               "each trial's condition")
    factors: dict[str, list[str]] = {}
    for name in names:
        levels = sorted({_level(t, name, m) for t in test})
        if "" in levels:
            t = next(t for t in test if _level(t, name, m) == "")
            raise ImportInputError(f"{t.source_file}: line {t.line}: a test trial without a {name} (column "
                                   f"{names[name]!r} is empty)")
        if len(levels) < 2:
            raise ImportInputError(f"factor {name} (column {names[name]!r}) has one level ({levels[0]!r}) over all "
                                   "test "
                                   "trials; a design needs two or more (map another column)")
        factors[name] = levels
    return factors


def _level(t: SourceTrial, name: str, m: Mapping) -> str:
    return (t.factors.get(name) if m.factors else t.condition) or ""


def feedback_by_phase(people: list[Person]) -> tuple[dict[str, bool], dict[str, tuple[int, int]]]:
    """Per phase: was feedback shown (on any of its trials), with the counts (shown, trials) for the report."""
    counts = {ph: (sum(1 for p in people for t in p.trials if t.phase == ph and t.feedback),
                   sum(1 for p in people for t in p.trials if t.phase == ph)) for ph in ("practice", "test")}
    return {ph: c[0] > 0 for ph, c in counts.items()}, counts


def feedback_texts(study: Study) -> dict[str, str]:
    """The spec's feedback texts read from the data: where the tool showed one text after every correct answer
    (and one after every wrong one), that text, markup dropped (the tool's own stays in each row's extra);
    a time (PsychoPy's feedback.started) or texts that vary leave the spec language's texts."""

    seen: dict[str, set[str]] = {"correct_text": set(), "incorrect_text": set()}
    for p in study.people:
        for t in p.trials:
            value = study.value_of(t.response)
            ok = t.correct if t.correct is not None else (
                None if value is None or t.expected is None else value == study.value_of(t.expected))
            if t.feedback and ok is not None and not re.fullmatch(r"[0-9.eE+-]+", t.feedback.strip()):
                seen["correct_text" if ok else "incorrect_text"].add(
                    html.unescape(re.sub(r"<[^>]*>", " ", t.feedback)).strip())
    return {k: next(iter(v)) for k, v in seen.items() if len(v) == 1 and next(iter(v))}


def item_rows(study: Study, m: Mapping) -> list[dict[str, str]]:
    """The items file: per person (list k), the practice then the test trials, in the person's order."""
    rows: list[dict[str, str]] = []
    named = [t for p in study.people for t in p.trials if t.item]
    unnamed = next((t for p in study.people for t in p.trials if not t.item), None)
    if named and unnamed is not None:   # else the sentence would silently stand in for the item on some trials
        raise ImportInputError(f"{unnamed.source_file}: line {unnamed.line}: no item on this trial (column "
                               f"{m.item!r}), while {len(named)} other trials have one (e.g. line {named[0].line}): "
                               "files of another version of the study? import them on their own, or map `item:`")
    # the tool's practice and test lists often number their items alike (two conditions files): a practice
    # item is its own item, never taken for the test item of the same name
    test_items = {(t.item or study.rules.sentence(t)).strip() for p in study.people for t in p.trials
                  if t.phase == "test"}
    for p in study.people:
        phases = [t.phase for t in p.trials]
        if "test" in phases and "practice" in phases[phases.index("test"):]:
            t = next(t for t in p.trials[phases.index("test"):] if t.phase == "practice")
            raise ImportInputError(f"{t.source_file}: line {t.line}: a practice trial after test trials; twinlab gives "
                                   "practice before the test (map `practice` so that these are test trials)")
        seen: dict[tuple[str, str], int] = {}
        for t in p.trials:
            rows.append(_item_row(study, m, p, t, seen, test_items))
    renamed = Counter(r["_renamed"] for r in rows if r.get("_renamed"))
    for why, n in sorted(renamed.items()):
        study.notes.append(f"{n} trial(s) {why}")
    return [{k: v for k, v in r.items() if k != "_renamed"} for r in rows]


def _item_row(study: Study, m: Mapping, p: Person, t: SourceTrial, seen: dict[tuple[str, str], int],
              test_items: set[str]) -> dict[str, str]:
    sentence = study.rules.sentence(t)
    item = (t.item or sentence).strip()
    if not item:
        raise ImportInputError(f"{t.source_file}: line {t.line}: no item (map `item:` or `stimulus:` in --map)")
    if not sentence:
        raise ImportInputError(f"{t.source_file}: line {t.line}: no stimulus text (map `stimulus:` to the column "
                               "holding the sentence or word shown)")
    renamed = ""
    if t.phase == "practice" and item in test_items:
        item, renamed = f"practice-{item}", "of practice named like a test item: their items are practice-<item>"
    levels = {n: _level(t, n, m) for n in study.factors}
    keep = t.phase == "test" or all(v in study.factors[n] for n, v in levels.items())
    key = (item, "-".join(levels.values()) if keep else "")
    if key in seen and t.phase == "test":
        raise ImportInputError(f"{t.source_file}: line {t.line}: participant {p.participant!r} got item {item!r}"
                               f"{' in ' + key[1] if key[1] else ''} again (first on line {seen[key]}); twinlab shows "
                               "an item once per condition and person (map `item` to a column that tells repeats "
                               "apart)")
    if key in seen:
        # practice shown again (a second training pass): each later showing is its own item <item>#<n>, in the
        # person's order, counted in the notes
        n = 2
        while (f"{item}#{n}", key[1]) in seen:
            n += 1
        item, key = f"{item}#{n}", (f"{item}#{n}", key[1])
        renamed = "of practice shown again to the same person: each later showing is its own item <item>#<n>"
    seen[key] = t.line
    row = {"item": item, "role": t.phase, "list": str(p.list_number), "sentence": sentence, "_renamed": renamed}
    row.update(study.rules.item_materials(t, study.labels, study.value_of))
    row.update({n: (v if keep else "") for n, v in levels.items()})
    return row


def derive_study(trials: list[SourceTrial], m: Mapping, name: str, task: str, earlier: Any = None) -> Study:
    """People, labels, factors, feedback and the items file: everything the spec and the sessions need
    (`task`: the study's one kind, kinds.decide_task; `earlier`: an earlier import's people keep their lists)."""

    people = group_people(trials)
    if earlier is not None and earlier.lists:
        require_everyone(people, earlier)
        keep_lists(people, earlier)
    study = Study(name=name, task=task, labels=importer_for(task).answer_labels(trials, m),
                  factors=factors_of(people, m), people=people)
    check_answers(study)
    study.feedback, study.feedback_counts = feedback_by_phase(people)
    study.items = item_rows(study, m)
    return study


def spec_dict(study: Study, items_file: str, description: str) -> dict[str, Any]:
    """The spec (YAML-ready): the design with the people's own lists, a practice block with its feedback where
    the people had practice, the test block, the task with its labels."""
    blocks = []
    if any(t.phase == "practice" for p in study.people for t in p.trials):
        blocks.append({"name": "practice", "role": "practice", "feedback": study.feedback["practice"],
                       "shuffle": False})
    blocks.append({"name": "test", "role": "test", "feedback": study.feedback["test"], "shuffle": False})
    return {"name": study.name, "description": description, "seed": 1,
            "design": {"file": items_file, "factors": study.factors, "lists": "given"},
            "blocks": blocks, "task": study.rules.task_section(study.labels, study.items),
            **({"feedback": texts} if (texts := feedback_texts(study)) else {})}


