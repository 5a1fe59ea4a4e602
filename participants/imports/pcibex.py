"""Reader of PCIbex/Ibex results files (PennController and the classic Ibex controllers), as Ibex's server.py
writes them (pcibex_format.py parses the `#` header blocks, pcibex_rows.py reads what each controller's or
element's rows say, pcibex_practice.py is the practice rule).

A trial is one showing of one item of one submission: the rows with the same "Order number of item" ("Item
number" in classic Ibex) in a row; an item shown again later (an attention check after every block, a second
training pass) is another trial when its rows begin again (PennController's `_Trial_` Start, Ibex's element 0).
An item with neither reading times nor an answer is a screen (a message, a form, instructions), excluded row by
row with the reason, unless other trials of its label were answered: then it is a trial without an answer (a
Scale never clicked). A trial holding a broken value of the tool's own (a negative reading time) is excluded as a
bad trial naming the line. The person is the submission: the MD5 hash of the IP address and the reception time
(or a column a mapping names, such as a logged participant ID).
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional

from participants.imports.jspsych_files import flag, number, where
from participants.imports.kinds import tool_kinds
from participants.imports.pcibex_format import NULLS, BadValue, Row, parse, unescape
from participants.imports.pcibex_practice import PRACTICE_VALUES, describe, is_practice
from participants.imports.pcibex_rows import TOOL, Found, read_trial
from participants.imports.pcibex_scoring import implied_answers, question_options
from participants.imports.records import Excluded, ImportInputError, Mapping, ReadResult, SourceTrial
from participants.imports.text_input import read_text

ROLES: dict[str, tuple[str, ...]] = {
    "reception": ("Results reception time", "Time results were received"),
    "md5": ("MD5 hash of participant's IP address", "MD5 hash that hopefully uniquely identifies participant"),
    "controller": ("Controller name",),
    "item": ("Order number of item", "Item number"),
    "element": ("Inner element number", "Element number"),
    "label": ("Label", "Type"),
    "group": ("Latin.Square.Group", "Latin Square Group", "Group"),
}
ITEM_COLUMNS = ("item", "Item", "item_id", "ItemID", "item_number", "ItemNumber")
CONDITION_COLUMNS = ("condition", "Condition", "cond")
EXPECTED_COLUMNS = ("correct_response", "correct_answer", "CorrectAnswer", "expected_answer")
STIMULUS_COLUMNS = ("sentence", "Sentence", "stimulus", "Stimulus")   # a Template's logged sentence (PennController)
CLASSIC_GROUP = "Group"          # classic Ibex: an item's Latin-square group, the item across its conditions
QUESTIONS = ("Question", "AcceptabilityJudgment", "DashedAcceptabilityJudgment", "Controller-Question",
             "Controller-AcceptabilityJudgment", "Controller-DashedAcceptabilityJudgment")
WHOLE_NUMBER = re.compile(r"^[0-9]+$")


def default_mapping() -> Mapping:
    """An unedited PennController study: the item and its label; the person is the MD5 + reception time."""
    return Mapping(item="Order number of item", condition="Label", practice="Label",
                   practice_values=PRACTICE_VALUES)


def role(fields: dict[str, str], name: str) -> Optional[str]:
    """The value of a standard column under either of its names (PennController's or old Ibex's)."""
    return next((fields[c] for c in ROLES[name] if c in fields), None)


@dataclass
class _Showing:
    rows: list[Row]
    person: str
    found: Optional[Found] = None


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
        m = infer_mapping(columns) if mapping is None else synonyms(over_file_defaults(mapping, columns), columns)
        response_is_column = check_mapping(path, columns, m, rows)
        result.rows_read[str(path)] = len(rows)
        result.tool_version[str(path)] = ""   # results files state no Ibex/PennController version
        people = participants(rows, m)
        showings = [_Showing(g, people[id(g[0])]) for g in trials_of(path, rows, people)]
        showings = _one_version(path, showings, m, result)
        for s in showings:
            try:
                s.found = read_trial(s.rows, m.response, response_is_column)
            except BadValue as bad:
                why = f"a bad value: {bad} (a bad trial: its own value is broken)"
                result.excluded.extend(Excluded(str(path), r.line, why, bad=True) for r in s.rows)
        read = [s for s in showings if s.found is not None]
        _scales_as_ratings(read, m)
        answered = {role(s.rows[0].fields, "label") for s in read if s.found.response_row or s.found.words}
        studied = _labels_with_items(read, m)
        trials, keys = [], []
        for s in read:
            why = _screen(s, m, answered, studied)
            if why:
                result.excluded.extend(Excluded(str(path), r.line, why) for r in s.rows)
                continue
            order = orders.get(s.person, 0)
            orders[s.person] = order + 1
            trials.append(_trial(path, s, order, m))
            keys.append((role(s.rows[0].fields, "controller") or "", s.found.question or ""))
        _refuse_unknown_answers(path, read, len(trials))
        per_item = [(c, q or f"item {t.item}") for (c, q), t in zip(keys, trials, strict=True)]
        trials = question_options(implied_answers(trials, per_item) if not m.expected else trials, keys)
        trials = repeated_showings(trials)
        own = sum(bool(t.extra.get("_own_item_id")) for t in trials)
        again = sum(t.extra.get("_showing", "1") != "1" for t in trials)
        if own:
            result.notes.append(f"{path}: {own} trial(s) without a {m.item} value (practice, fillers): each its "
                                "own item, named label-item number")
        if again:
            result.notes.append(f"{path}: {again} repeated showing(s) of an item to the same person (an attention "
                                "check, a second training pass): each its own item, named ITEM#2, ITEM#3, ...")
        result.trials += trials
        result.notes.append(f"{path}: practice: {m.practice or '-'} is {describe(m.practice_values)}")
    return result


def files_mapping(paths: list[Path], mapping: Optional[Mapping] = None) -> Mapping:
    """The mapping as the reader applies it to the first file (for --show-map: the same rules as the import)."""
    rows = parse(Path(paths[0]), read_text(Path(paths[0])))
    columns = list(dict.fromkeys(c for r in rows for c in r.fields))
    return infer_mapping(columns) if mapping is None else synonyms(over_file_defaults(mapping, columns), columns)


def infer_mapping(columns: list[str]) -> Mapping:
    """Defaults for this file: the items' own item/condition/answer (PennController: sentence) columns where
    present, else the standard ones (classic Ibex: the item is its Latin-square `Group`, the item across its
    conditions; the sentence is the one its controllers log)."""
    first = lambda names: next((c for c in names if c in columns), None)  # noqa: E731
    penn = "PennElementType" in columns
    classic = not penn and CLASSIC_GROUP in columns
    return Mapping(item=first(ITEM_COLUMNS) or (CLASSIC_GROUP if classic else first(ROLES["item"])),
                   condition=first(CONDITION_COLUMNS) or first(ROLES["label"]),
                   practice=first(ROLES["label"]), practice_values=PRACTICE_VALUES,
                   expected=first(EXPECTED_COLUMNS), stimulus=first(STIMULUS_COLUMNS) if penn else None)


def over_file_defaults(m: Mapping, columns: list[str]) -> Mapping:
    """A map's item, condition and practice left at the tool's defaults mean this file's defaults, as without a
    map (a classic Ibex file's item is its Group, not each item x condition's number)."""
    base, inferred = default_mapping(), infer_mapping(columns)
    return replace(m, **{k: getattr(inferred, k) for k in ("item", "condition", "practice")
                         if getattr(m, k) == getattr(base, k)})


def synonyms(m: Mapping, columns: list[str]) -> Mapping:
    """A standard column named by PennController's name or old Ibex's ("Label"/"Type") means the one the file has."""
    def present(name: Optional[str]) -> Optional[str]:
        if not name or name in columns:
            return name
        names = next((n for n in ROLES.values() if name in n), ())
        return next((c for c in names if c in columns), name)
    return replace(m, **{k: present(getattr(m, k)) for k in ("participant", "session", "item", "condition",
                                                             "practice", "stimulus", "feedback")})


def check_mapping(path: Path, columns: list[str], m: Mapping, rows: list[Row]) -> bool:
    """Refuse a mapping naming a column no header of the file names; `response` names a PennController element
    (PennElementName) or a column (a custom controller's "Chosen answer"). True: the response is a column."""
    named = [("participant", m.participant), ("session", m.session), ("item", m.item),
             ("condition", m.condition), ("correct answer", m.expected), ("correctness", m.correct),
             ("rt", m.rt), ("practice", m.practice), ("stimulus", m.stimulus), ("feedback", m.feedback)]
    named += [(f"factor {k}", v) for k, v in m.factors.items()]
    for what, name in named:
        if name and name not in columns:
            raise ImportInputError(f'{where(path, field=name)}: the mapping names it as the {what}, but no header '
                                   f"of the file names that column (its columns: {', '.join(columns[:30])})")
    if not m.response or m.response in columns:
        return bool(m.response)
    elements = list(dict.fromkeys(r.fields["PennElementName"] for r in rows if "PennElementName" in r.fields
                                  and r.fields.get("PennElementType") != "PennController"))
    if m.response in elements:
        return False
    there = (f"the elements that logged: {', '.join(elements[:30])}; " if elements else "") + \
        f"the columns: {', '.join(columns[:30])}"
    raise ImportInputError(f'{where(path, field=m.response)}: the mapping names it as the response, but no element '
                           f"of the file has that name and no header names that column ({there})")


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


def _begins_showing(r: Row) -> bool:
    """A row that begins a showing of an item: PennController's `_Trial_` Start, classic Ibex's first element."""
    f = r.fields
    if "PennElementType" in f:
        return f.get("Parameter") == "_Trial_" and f.get("Value") == "Start"
    return (role(f, "element") or "").strip() == "0"


def trials_of(path: Path, rows: list[Row], people: dict[int, str]) -> list[list[Row]]:
    """Consecutive rows of one showing of one person's item. An item shown again after another (a repeated
    check, a second training pass) is another showing where its rows begin again; an item's rows coming back
    in the middle (another item came between) are refused as out of order."""
    groups: list[list[Row]] = []
    seen: dict[tuple[str, int, str], int] = {}
    for r in rows:
        key = (people[id(r)], r.submission, role(r.fields, "item") or "")
        last = groups[-1][0] if groups else None
        if last is not None and (people[id(last)], last.submission, role(last.fields, "item") or "") == key \
                and not (_begins_showing(r) and "PennElementType" in r.fields):
            groups[-1].append(r)
            continue
        if key in seen and not _begins_showing(r):
            raise ImportInputError(f"{where(path, r.line, ROLES['item'][0])}: rows out of order: item {key[2]} "
                                   f"of this submission began at line {seen[key]}, and another item came between")
        seen[key] = r.line
        groups.append([r])
    return groups


def _one_version(path: Path, showings: list[_Showing], m: Mapping, result: ReadResult) -> list[_Showing]:
    """The submissions of the study version the map names: where the item is one of the items' own columns, a
    submission none of whose rows has that column ran another version (other items, other columns); its rows are
    excluded with the reason and counted, to be imported on their own with a map naming that version's columns."""
    if not m.item or any(m.item in names for names in ROLES.values()):
        return showings
    has: dict[tuple[str, int], bool] = {}
    for s in showings:
        key = (s.person, s.rows[0].submission)
        has[key] = has.get(key, False) or any(m.item in r.fields for r in s.rows)
    other = {k for k, v in has.items() if not v}
    if not other:
        return showings
    starts = {}
    for s in showings:
        starts.setdefault((s.person, s.rows[0].submission), s.rows[0].line)
    for s in showings:
        key = (s.person, s.rows[0].submission)
        if key in other:
            why = (f"the submission beginning at line {starts[key]} ran another version of the study (its rows have "
                   f"no column {m.item!r}): import it on its own, with a map naming its columns")
            result.excluded.extend(Excluded(str(path), r.line, why) for r in s.rows)
    result.notes.append(f"{path}: {len(other)} submission(s) of another version of the study (no column {m.item!r}) "
                        "excluded; import them with a map naming their columns")
    return [s for s in showings if (s.person, s.rows[0].submission) not in other]


def _labels_with_items(read: list[_Showing], m: Mapping) -> Optional[set[str]]:
    """Where the item is one of the items' own logged columns (a PennController Template's `item`): the labels
    of trials that have a value in it (None: the item is a standard column, every trial has one)."""
    if not m.item or any(m.item in names for names in ROLES.values()):
        return None
    return {role(s.rows[0].fields, "label") or "" for s in read if _column(s.rows, m.item) is not None}


def _screen(s: _Showing, m: Mapping, answered: set[Optional[str]], studied: Optional[set[str]]) -> str:
    """Why a showing is not a trial ("" : it is one): a screen that logged neither reading times nor an answer
    (unless trials of its label were answered and, where the items have their own item column, it has an item:
    then it is a trial without an answer, a Scale never clicked), or
    one outside the study's items (an ID, consent or questionnaire screen: no item value, and no trial of its
    label has one) that is not practice."""
    first = s.rows[0].fields
    label = role(first, "label") or ""
    what = f"{role(first, 'controller') or '?'} item {role(first, 'item')} ({label})"
    unanswered = not s.found.words and s.found.response_row is None
    if unanswered and (label not in answered or studied is not None and _column(s.rows, m.item) is None):
        return f"{what}: no response or reading times (a message, form or instructions screen)"
    if studied is not None and label not in studied and _column(s.rows, m.item) is None \
            and not is_practice(_column(s.rows, m.practice) or "", m.practice_values):
        return (f"{what}: no {m.item} value, as no trial of its label has (a screen outside the study's items: "
                "an ID, consent or questionnaire)")
    return ""


SCREENS = ("Form", "Message", "Separator", "PennController", "VBox", "FlashSentence", "__SendResults__")


def _refuse_unknown_answers(path: Path, read: list[_Showing], trials: int) -> None:
    """A file whose only answers are in a study's own controller's columns gives no trial: refused, naming the
    controller and its columns (a map's `response:` reads them), never imported as empty."""
    if trials:
        return
    known = (*SCREENS, *QUESTIONS, *tool_kinds(TOOL))   # Ibex's own controllers and those a kind states
    unknown = [s for s in read if (role(s.rows[0].fields, "controller") or "") not in known]
    if not unknown:
        return
    first = unknown[0].rows[0]
    cols = [c for c in first.fields if c not in sum(ROLES.values(), ())]
    raise ImportInputError(f"{where(path, first.line)}: no trial with an answer twinlab can read: the rows of "
                           f"controller {role(first.fields, 'controller')!r} hold the columns {', '.join(cols)}; map "
                           "`response:` (and `rt:`, `correct:`) to that controller's columns in --map")


def _scales_as_ratings(read: list[_Showing], m: Mapping) -> None:
    """A classic Question or AcceptabilityJudgment whose answers are all whole numbers and which scores none
    (`as: ["1", ..., "7"]`, no `hasCorrect`) is a rating scale, not a judgment with seven answers; with `task:
    rating` in the map, any unscored one is (its answers words: `labels:` gives each its point)."""
    rating = tool_kinds(TOOL).get("Scale")
    by: dict[str, list[Found]] = defaultdict(list)
    for s in read:
        f = s.found
        if f.response_row is not None and not f.words and f.controller in QUESTIONS:
            by[role(s.rows[0].fields, "controller") or f.controller].append(f)
    for found in by.values():
        answers = [f.response for f in found if f.response is not None and f.response.strip() not in NULLS]
        numbers = all(WHOLE_NUMBER.match(a.strip()) for a in answers) and len({a.strip() for a in answers}) > 2
        if answers and all(f.correct is None for f in found) and (numbers or (m.task and m.task == rating)):
            for f in found:
                f.task = rating or f.task


def _column(group: list[Row], name: Optional[str], prefer: Optional[Row] = None) -> Optional[str]:
    """A mapped column's value: on the response row if it has it, else the first row of the item that does."""
    if not name:
        return None
    for r in ([prefer] if prefer else []) + group:
        v = r.fields.get(name)
        if v is not None and v.strip() not in NULLS:
            return unescape(v)
    return None


def _item(group: list[Row], m: Mapping, practice: bool) -> tuple[Optional[str], bool]:
    """The item and whether it is the trial's own id: an item without a Latin-square group (classic Ibex's
    practice items and fillers have Group NULL), or a practice item without the mapped value, is an item of its
    own, named by its label and item number."""
    item = _column(group, m.item)
    if item is not None or not (practice or m.item in ROLES["group"]):
        return item, False
    first = group[0].fields
    return f"{role(first, 'label') or 'item'}-{role(first, 'item') or group[0].line}", True


def repeated_showings(trials: list[SourceTrial]) -> list[SourceTrial]:
    """A person's second and later showings of one item (in one condition and phase) become items of their own,
    ITEM#2, ITEM#3 (extra `_showing`), so that a running order that repeats an item imports as the person saw it."""
    count: dict[tuple, int] = {}
    out = []
    for t in trials:
        key = (t.participant, t.item, t.condition, t.phase)
        n = count[key] = count.get(key, 0) + 1
        out.append(t if n == 1 or t.item is None else
                   replace(t, item=f"{t.item}#{n}", extra={**t.extra, "_showing": str(n)}))
    return out


def _trial(path: Path, s: _Showing, order: int, m: Mapping) -> SourceTrial:
    group, found, first = s.rows, s.found, s.rows[0]
    practice = is_practice(_column(group, m.practice) or "", m.practice_values)
    rt = found.rt
    if m.rt:
        mapped = _column(group, m.rt, found.response_row)
        rt = None if mapped is None else number(path, first.line, m.rt, mapped)
    correct = found.correct
    if m.correct:
        correct = flag(path, first.line, m.correct, _column(group, m.correct, found.response_row) or "")
    item, own = _item(group, m, practice)
    extra = dict(first.fields)
    extra["_rows"] = json.dumps([dict(line=r.line, **r.fields) for r in group], ensure_ascii=False)
    extra["_design_number"] = first.design
    if own:
        extra["_own_item_id"] = "1"
    return SourceTrial(
        tool=TOOL, source_file=str(path), line=first.line, participant=s.person,
        session=_column(group, m.session) or "", order=order, phase="practice" if practice else "test",
        item=item, condition=_column(group, m.condition),
        factors={k: _column(group, v) or "" for k, v in m.factors.items()},
        task=found.task, stimulus=_column(group, m.stimulus) or found.stimulus,
        words=tuple(found.words) or None, response=found.response,
        expected=_column(group, m.expected),
        correct=correct, rt_ms=None if rt is None else rt * (1000.0 if m.rt_unit == "s" else 1.0),
        word_rts=tuple(found.word_rts) or None, feedback=_column(group, m.feedback), extra=extra,
        rows=tuple(r.line for r in group))

