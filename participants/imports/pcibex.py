"""Reader of PCIbex/Ibex results files (PennController and the old Ibex controllers), as Ibex's server.py writes
them (participants/imports/pcibex_format.py parses the `#` header blocks).

A trial is one item of one submission: all rows with the same "Order number of item" ("Item number" in old Ibex)
in a row. Its per-word rows (DashedSentence, Maze) give `words`/`word_rts`; a Question row (old Ibex) gives the
answer, its correctness and time; in PennController the first response event (a Key press, Selector selection,
Scale choice, DropDown selection, TextInput's final text; or the element a mapping's `response` names) is the
response, its RT the time from the last Print before it. An item with neither (a message, a form, the
instructions) is excluded row by row with the reason. The person is the submission: the MD5 hash of the IP
address and the reception time (or a column a mapping names, such as a logged participant ID).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional

from participants.imports.kinds import tool_kinds
from participants.imports.jspsych_files import MISSING, flag, number, read_text, where
from participants.imports.pcibex_format import Row, parse
from participants.imports.records import ImportInputError, Mapping, ReadResult, SourceTrial, Excluded

TOOL = "pcibex"
ROLES: dict[str, tuple[str, ...]] = {
    "reception": ("Results reception time", "Time results were received"),
    "md5": ("MD5 hash of participant's IP address", "MD5 hash that hopefully uniquely identifies participant"),
    "controller": ("Controller name",),
    "item": ("Order number of item", "Item number"),
    "label": ("Label", "Type"),
    "group": ("Latin.Square.Group", "Latin Square Group", "Group"),
}
ITEM_COLUMNS = ("item", "Item", "item_id", "ItemID", "item_number", "ItemNumber")
CONDITION_COLUMNS = ("condition", "Condition", "cond")
EXPECTED_COLUMNS = ("correct_response", "correct_answer", "CorrectAnswer", "expected_answer")
PRACTICE_VALUES = ("practice", "training", "train", "prac", "practise")
RESPONSE_EVENTS = {("Key", "PressedKey"), ("Selector", "Selection"), ("Scale", "Choice"),
                   ("DropDown", "Selected"), ("TextInput", "Final")}
NULLS = MISSING + ("NULL", "None", "NA", "undefined")


def default_mapping() -> Mapping:
    """An unedited PennController study: the item and its label; the person is the MD5 + reception time."""
    return Mapping(item="Order number of item", condition="Label", practice="Label",
                   practice_values=PRACTICE_VALUES)


def role(fields: dict[str, str], name: str) -> Optional[str]:
    """The value of a standard column under either of its names (PennController's or old Ibex's)."""
    return next((fields[c] for c in ROLES[name] if c in fields), None)


def read_pcibex(paths: list[Path], mapping: Mapping | None) -> ReadResult:
    """Read PCIbex/Ibex results files; `mapping` None uses the items' own columns where the study has them."""
    result = ReadResult()
    orders: dict[str, int] = {}
    for path in paths:
        path = Path(path)
        rows = parse(path, read_text(path))
        if not rows:
            raise ImportInputError(f"{path}: no results rows (not a PCIbex/Ibex results file, or an empty one)")
        columns = list(dict.fromkeys(c for r in rows for c in r.fields))
        m = infer_mapping(columns) if mapping is None else synonyms(mapping, columns)
        check_mapping(path, columns, m)
        result.rows_read[str(path)] = len(rows)
        result.tool_version[str(path)] = ""   # results files state no Ibex/PennController version
        people = participants(rows, m)
        for group in trials_of(path, rows, people):
            _accept(path, group, people[id(group[0])], m, result, orders)
    return result


def infer_mapping(columns: list[str]) -> Mapping:
    """Defaults for this file: the items' own item/condition/answer columns where present, else the standard ones."""
    first = lambda names: next((c for c in names if c in columns), None)  # noqa: E731
    return Mapping(item=first(ITEM_COLUMNS) or first(ROLES["item"]),
                   condition=first(CONDITION_COLUMNS) or first(ROLES["label"]),
                   practice=first(ROLES["label"]), practice_values=PRACTICE_VALUES,
                   expected=first(EXPECTED_COLUMNS))


def synonyms(m: Mapping, columns: list[str]) -> Mapping:
    """A standard column named by PennController's name or old Ibex's ("Label"/"Type") means the one the file has."""
    def present(name: Optional[str]) -> Optional[str]:
        if not name or name in columns:
            return name
        names = next((n for n in ROLES.values() if name in n), ())
        return next((c for c in names if c in columns), name)
    return replace(m, **{k: present(getattr(m, k)) for k in ("participant", "session", "item", "condition",
                                                             "practice", "stimulus", "feedback")})


def check_mapping(path: Path, columns: list[str], m: Mapping) -> None:
    """Refuse a mapping naming a column no header of the file names (the response names a PennElementName)."""
    named = [("participant", m.participant), ("session", m.session), ("item", m.item),
             ("condition", m.condition), ("correct answer", m.expected), ("correctness", m.correct),
             ("rt", m.rt), ("practice", m.practice), ("stimulus", m.stimulus), ("feedback", m.feedback)]
    named += [(f"factor {k}", v) for k, v in m.factors.items()]
    for what, name in named:
        if name and name not in columns:
            raise ImportInputError(f'{where(path, field=name)}: the mapping names it as the {what}, but no header '
                                   f"of the file names that column (its columns: {', '.join(columns[:30])})")


def participants(rows: list[Row], m: Mapping) -> dict[int, str]:
    """id(row) -> the person: a mapped column's value anywhere in the submission, else MD5-hash + reception time."""
    def submission(r: Row) -> str:
        return f"{role(r.fields, 'md5')}-{role(r.fields, 'reception')}"
    named: dict[str, str] = {}
    if m.participant:
        for r in rows:
            v = r.fields.get(m.participant, "").strip()
            if v not in NULLS:
                named.setdefault(submission(r), v)
    return {id(r): named.get(submission(r), submission(r)) for r in rows}


def trials_of(path: Path, rows: list[Row], people: dict[int, str]) -> list[list[Row]]:
    """Consecutive rows of one person's item; an item coming back after another began is refused (out of order)."""
    groups: list[list[Row]] = []
    seen: dict[tuple[str, int, str], int] = {}
    for r in rows:
        key = (people[id(r)], r.submission, role(r.fields, "item") or "")
        if groups and (people[id(groups[-1][0])], groups[-1][0].submission,
                       role(groups[-1][0].fields, "item") or "") == key:
            groups[-1].append(r)
            continue
        if key in seen:
            raise ImportInputError(f"{where(path, r.line, ROLES['item'][0])}: rows out of order: item {key[2]} "
                                   f"of this submission began at line {seen[key]}, and another item came between")
        seen[key] = r.line
        groups.append([r])
    return groups


@dataclass
class _Found:
    words: list[str]
    word_rts: list[float]
    maze_ok: list[bool]
    stimulus: Optional[str] = None
    response: Optional[str] = None
    correct: Optional[bool] = None
    rt: Optional[float] = None
    task: Optional[str] = None
    response_row: Optional[Row] = None


def unescape(value: str) -> str:
    """Ibex writes a comma inside a value as %2C."""
    return value.replace("%2C", ",")


def _read_group(path: Path, group: list[Row], m: Mapping) -> _Found:
    found = _Found([], [], [])
    last_print: Optional[float] = None
    for r in group:
        f = r.fields
        kind = f.get("PennElementType") or role(f, "controller") or ""
        found.task = found.task or tool_kinds(TOOL).get(kind)
        if "Reading time" in f and ("Word" in f or kind.startswith("Controller-")):
            _word(path, r, found)
        elif "Answer" in f:
            _question(path, r, found)
        elif "PennElementType" in f:
            when = f.get("EventTime", "")   # "Never": PennController's time of an event that never came (a Key
            t = None if when.strip() == "Never" else number(path, r.line, "EventTime", when)  # not pressed)
            event = (f["PennElementType"], f.get("Parameter", ""))
            name = f.get("PennElementName")
            wanted = (name == m.response if m.response else event in RESPONSE_EVENTS) and when.strip() != "Never"
            first_responder = found.response_row is None or found.response_row.fields.get("PennElementName") == name
            if wanted and first_responder:   # a changed answer (a Scale clicked twice): the last one counts
                found.response, found.response_row = unescape(f.get("Value", "")), r
                found.rt = None if t is None or last_print is None else t - last_print
            elif f.get("Parameter") in ("Print", "Start") and f.get("PennElementName") != "_Trial_" or \
                    f.get("Parameter") == "_Trial_" and f.get("Value") == "Start":
                last_print = t if t is not None else last_print
        elif "Sentence (or sentence MD5)" in f:
            found.stimulus = found.stimulus or unescape(f["Sentence (or sentence MD5)"])
    if found.maze_ok:
        found.correct = all(found.maze_ok)
    return found


def _word(path: Path, r: Row, found: _Found) -> None:
    f = r.fields
    found.words.append(unescape(f["Word"] if "Word" in f else f.get("Value", "")))
    rt = f["Reading time"]
    found.word_rts.append(math.nan if rt.strip() in NULLS else number(path, r.line, "Reading time", rt))
    if "Correct" in f:
        found.maze_ok.append(f["Correct"].strip().lower() == "yes")
    sentence = f.get("Sentence (or sentence MD5)", f.get("Sentence"))
    found.stimulus = found.stimulus or (unescape(sentence) if sentence else None)


def _question(path: Path, r: Row, found: _Found) -> None:
    f = r.fields
    ok = f.get("Whether or not answer was correct (NULL if N/A)", "NULL")
    found.response, found.response_row = unescape(f["Answer"]), r
    found.correct = None if ok.strip() in NULLS else flag(path, r.line, "Whether or not answer was correct", ok)
    t = f.get("Time taken to answer", "")
    found.rt = None if t.strip() in NULLS else number(path, r.line, "Time taken to answer", t)
    found.task = found.task or tool_kinds(TOOL).get("Question")   # an answer states what a Question states


def _accept(path: Path, group: list[Row], person: str, m: Mapping, result: ReadResult,
            orders: dict[str, int]) -> None:
    found = _read_group(path, group, m)
    first = group[0].fields
    label = role(first, "label") or ""
    if not found.words and found.response_row is None:
        why = (f"{role(first, 'controller') or '?'} item {role(first, 'item')} ({label}): no response or reading "
               "times (a message, form or instructions screen)")
        result.excluded.extend(Excluded(str(path), r.line, why) for r in group)
        return
    order = orders.get(person, 0)
    orders[person] = order + 1
    result.trials.append(_trial(path, group, person, order, m, found))


def _column(group: list[Row], name: Optional[str], prefer: Optional[Row] = None) -> Optional[str]:
    """A mapped column's value: on the response row if it has it, else the first row of the item that does."""
    if not name:
        return None
    for r in ([prefer] if prefer else []) + group:
        v = r.fields.get(name)
        if v is not None and v.strip() not in NULLS:
            return unescape(v)
    return None


def _trial(path: Path, group: list[Row], person: str, order: int, m: Mapping, found: _Found) -> SourceTrial:
    first = group[0]
    practice_value = (_column(group, m.practice) or "").strip().lower()
    practice = practice_value in {v.lower() for v in m.practice_values} or practice_value.startswith("practice")
    rt = found.rt
    if m.rt:
        mapped = _column(group, m.rt, found.response_row)
        rt = None if mapped is None else number(path, first.line, m.rt, mapped)
    extra = dict(first.fields)
    extra["_rows"] = json.dumps([dict(line=r.line, **r.fields) for r in group], ensure_ascii=False)
    extra["_design_number"] = first.design
    return SourceTrial(
        tool=TOOL, source_file=str(path), line=first.line, participant=person,
        session=_column(group, m.session) or "", order=order, phase="practice" if practice else "test",
        item=_column(group, m.item), condition=_column(group, m.condition),
        factors={k: _column(group, v) or "" for k, v in m.factors.items()},
        task=found.task, stimulus=_column(group, m.stimulus) or found.stimulus,
        words=tuple(found.words) or None, response=found.response, expected=_column(group, m.expected),
        correct=flag(path, first.line, m.correct, _column(group, m.correct) or "") if m.correct else found.correct,
        rt_ms=None if rt is None else rt * (1000.0 if m.rt_unit == "s" else 1.0),
        word_rts=tuple(found.word_rts) or None, feedback=_column(group, m.feedback), extra=extra,
        rows=tuple(r.line for r in group))
