"""Reader of jsPsych data as jsPsych writes it: `jsPsych.data.get().csv()` / `.json()` (also saved double-encoded,
a JSON string holding the array), and JATOS result files (one `.json()` array per component, several in one file,
one per line or concatenated). Checked on files jsPsych 6.0.4, 7.3.4 and 8.3.0 wrote (tests/data/imports/jspsych*):
jsPsych 6.0-6.2 store a key as its key code (`key_press`: jspsych_keys.py names it), a button as `button_pressed`,
survey answers as a JSON string in `responses`; 6.3 and later store `response`.

jsPsych writes one row per screen (fixation, stimulus, feedback, questionnaire): the trial is the row that has
the study's `item` data field (or, in a study without one, the row with a response), and item, condition and the
correct response come from that row's data fields; every other row is an `Excluded` with its reason, so every
row is accounted for. A `feedback` of the form `next.FIELD` takes FIELD of the screen right after the trial (the
feedback screen) when it is not the screen that comes before every trial (a fixation). A trial whose own value is
broken (an `rt` below 0 or not a number, a `correct` neither true nor false) is an `Excluded` marked bad, never a
refused file.
"""
from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional

from participants.imports.jspsych_files import MISSING, flag, number, where
from participants.imports.jspsych_keys import KEY_CODE_FIELD, key_name
from participants.imports.kinds import tool_kinds
from participants.imports.records import Excluded, ImportInputError, Mapping, ReadResult, SourceTrial
from participants.imports.text_input import read_text

TOOL = "jspsych"
# role -> the data fields an unedited study uses for it, first present wins (jsPsych 6 names after 7/8 names)
CANDIDATES: dict[str, tuple[str, ...]] = {
    "participant": ("subject", "participant", "PROLIFIC_PID", "participant_id", "subject_id", "workerId",
                    "worker_id", "jatosWorkerId", "jatos_worker_id"),
    "session": ("session",),
    "item": ("item", "item_id", "itemid", "item_number", "stim_id", "stimulus_id", "sentence_id"),
    "condition": ("condition", "cond"),
    "stimulus": ("stimulus",),
    "response": ("response", "key_press", "button_pressed", "responses"),
    "expected": ("correct_response", "correct_key", "correct_answer", "expected_response"),
    "correct": ("correct", "is_correct", "accuracy"),
    "rt": ("rt",),
    "order": ("trial_index",),
}
PRACTICE_FIELDS = ("phase", "block", "stage", "trial_part", "part", "task", "block_type")
PRACTICE_VALUES = ("practice", "training", "train", "prac", "practise")
NEXT = "next."   # feedback "next.FIELD": FIELD of the screen after the trial
# plugins whose rows are screens around the trials, never a trial unless the study gives them an item
NOT_TRIALS = frozenset({"instructions", "fullscreen", "preload", "browser-check", "call-function", "external-html",
                        "survey-text", "survey-likert", "survey-multi-choice", "survey-multi-select", "survey",
                        "survey-html-form", "html-button-response"})
# screens that take no answer: never a trial, even where the study's item field is on every row
SCREENS = frozenset({"instructions", "fullscreen", "preload", "browser-check", "call-function", "external-html"})
JATOS_DIR = re.compile(r"^study_result_(\d+)$")
DOUBLE_ENCODED = re.compile(r'^"\s*\[')   # the array saved as a JSON string: "[{\"rt\": ... (a CSV starts "rt",)


def default_mapping() -> Mapping:
    """The fields of an unedited jsPsych 7/8 study adding item/condition/correct_response data (docs/import.md)."""
    return Mapping(participant="subject", item="item", condition="condition", stimulus="stimulus",
                   response="response", expected="correct_response", correct="correct", rt="rt",
                   order="trial_index", practice="phase", practice_values=PRACTICE_VALUES,
                   feedback=NEXT + "stimulus")


@dataclass(frozen=True)
class _Rec:
    line: int              # CSV: the row's first line; JSON: the record's number in the file (1-based)
    row: dict[str, str]    # every field, as jsPsych's own CSV writes it
    array_start: bool      # the first record of a JSON array (a JATOS component, a run)


def read_jspsych(paths: list[Path], mapping: Mapping | None) -> ReadResult:
    """Read jsPsych data files; `mapping` None infers the fields an unedited study uses, file by file."""
    result = ReadResult()
    orders: dict[tuple[str, str], int] = {}
    for path in paths:
        path = Path(path)
        text = read_text(path)
        columns, recs, unit = load_records(path, text)
        m = infer_mapping(columns, recs) if mapping is None else over_defaults(mapping, columns, recs)
        check_mapping(path, columns, m)
        result.mappings[str(path)] = m
        result.rows_read[str(path)] = len(recs)
        result.tool_version[str(path)] = stated_version(recs)
        people = participants(path, recs, m, unit)
        _accept(path, recs, people, m, unit, result, orders)
    return result


def load_records(path: Path, text: str) -> tuple[list[str], list[_Rec], str]:
    """(columns, records, the unit a refusal names: "line" or "record"), refusing a file of another tool."""
    head = text.lstrip()
    if not head:
        raise ImportInputError(f"{path}: the file is empty")
    if head.startswith("[") or DOUBLE_ENCODED.match(head):   # an array (or several); a JSON string holding one
        columns, recs = _json_records(path, text)
        unit = "record"
    elif head.startswith("{"):
        raise ImportInputError(f"{where(path, 1)}: a JSON object, not jsPsych's data (a JSON array of trials, "
                               "as jsPsych.data.get().json() writes it)")
    else:
        columns, recs = _csv_records(path, text)
        unit = "line"
    return columns, recs, unit


def _require_jspsych(path: Path, columns: list[str]) -> None:
    """jsPsych writes trial_type and trial_index on every row: without them the file is another tool's."""
    missing = [c for c in ("trial_type", "trial_index") if c not in columns]
    if missing:
        raise ImportInputError(f"{path}: not jsPsych data: no {' or '.join(missing)} field{_other_tool(columns)}")


def _other_tool(columns: list[str]) -> str:
    if "psychopyVersion" in columns or any(c.endswith(".thisN") for c in columns):
        return " (a PsychoPy file: use `twinlab import psychopy`)"
    if columns and columns[0].startswith("#"):
        return " (a PCIbex/Ibex results file: use `twinlab import pcibex`)"
    return ""


def _csv_records(path: Path, text: str) -> tuple[list[str], list[_Rec]]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader)
        if header and header[0].startswith("#"):
            header = ["#"]
    except (StopIteration, csv.Error) as exc:
        raise ImportInputError(f"{where(path, 1)}: not a CSV header ({exc})") from None
    if len(set(header)) != len(header):
        dup = sorted({c for c in header if header.count(c) > 1})
        raise ImportInputError(f"{where(path, 1, dup[0])}: the header names this field twice")
    _require_jspsych(path, header)
    recs: list[_Rec] = []
    last = text.rstrip("\r\n").count("\n") + 1
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error:
            raise ImportInputError(f"{where(path, start)}: a quoted field never closes: a torn last line "
                                   "or a partial file") from None
        if not row:
            continue
        if len(row) != len(header):
            torn = " (a torn last line?)" if reader.line_num >= last else ""
            raise ImportInputError(f"{where(path, start)}: {len(row)} fields, the header has {len(header)}{torn}")
        recs.append(_Rec(start, dict(zip(header, row, strict=True)), False))
    return header, recs


def _json_records(path: Path, text: str) -> tuple[list[str], list[_Rec]]:
    decoder, pos, arrays = json.JSONDecoder(), 0, []
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos == len(text):
            break
        line = text.count("\n", 0, pos) + 1
        if text[pos] not in '["':
            raise ImportInputError(f"{where(path, line)}: expected a JSON array of trials (one jsPsych run or "
                                   "JATOS component per array)")
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            if not text.rstrip().endswith(("]", '"')):
                raise ImportInputError(f"{where(path, exc.lineno)}: the JSON ends inside an array: a torn "
                                       "last line or a partial file") from None
            raise ImportInputError(f"{where(path, exc.lineno)}: not valid JSON ({exc.msg}, column "
                                   f"{exc.colno})") from None
        arrays.append(_array(path, line, value))
    columns: dict[str, None] = {}
    number = 0
    for array in arrays:
        for rec in array:
            number += 1
            if not isinstance(rec, dict):
                raise ImportInputError(f"{where(path, number, unit='record')}: not a trial object (jsPsych writes one "
                                       f"{{...}} per trial): {str(rec)[:60]!r}")
            columns.update(dict.fromkeys(rec))
    _require_jspsych(path, list(columns))
    recs, n = [], 0
    for array in arrays:
        for i, rec in enumerate(array):
            n += 1
            recs.append(_Rec(n, {c: js_text(rec[c]) if c in rec else "" for c in columns}, i == 0))
    return list(columns), recs


def _array(path: Path, line: int, value: object) -> list:
    """A top-level JSON value as an array of trials: an array, or a JSON string holding one (the array saved
    double-encoded: `JSON.stringify(jsPsych.data.get().json())`)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ImportInputError(f"{where(path, line)}: a JSON string that is not JSON itself ({exc.msg}); "
                                   "jsPsych's data is a JSON array of trials (a string holding one is read "
                                   "too)") from None
    if not isinstance(value, list):
        raise ImportInputError(f"{where(path, line)}: expected a JSON array of trials, got a JSON "
                               f"{type(value).__name__}")
    return value


def js_text(value: object) -> str:
    """A JSON value as jsPsych's own `.csv()` writes it (null "null", objects JSON.stringify'd, 12.0 as "12")."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)
    if isinstance(value, int):
        return str(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def infer_mapping(columns: list[str], recs: list[_Rec]) -> Mapping:
    """The mapping of an unedited study: for each role the first field of CANDIDATES the file has."""
    pick = {role: next((c for c in names if c in columns), None) for role, names in CANDIDATES.items()}
    pick["response"] = _answer_field(columns, recs, pick["item"])
    practice = next((c for c in PRACTICE_FIELDS if c in columns
                     and any(r.row[c].strip().lower() in PRACTICE_VALUES for r in recs)), None)
    return replace(default_mapping(), **pick, practice=practice,
                   feedback=NEXT + pick["stimulus"] if pick["stimulus"] else None)


def _answer_field(columns: list[str], recs: list[_Rec], item: Optional[str]) -> Optional[str]:
    """The response field the study's trials (the records with an item, else every record) fill most often:
    a study of html-button-response trials answers in `button_pressed` even where another screen of the same
    jsPsych 6 run stored a `key_press`; on a tie the order of CANDIDATES (7/8 names first)."""
    names = [c for c in CANDIDATES["response"] if c in columns]
    if len(names) < 2:
        return names[0] if names else None
    rows = [r.row for r in recs if not item or r.row[item].strip() not in MISSING] or [r.row for r in recs]
    filled = {c: sum(row[c].strip() not in MISSING for row in rows) for c in names}
    return max(names, key=lambda c: (filled[c], -names.index(c)))


def over_defaults(m: Mapping, columns: list[str], recs: list[_Rec]) -> Mapping:
    """A --map over the defaults, for one file: a field the map left at its default that this file lacks takes
    the file's own default (the first candidate it has, as without --map), else none; a field the map changed
    must exist (check_mapping)."""
    d, inferred = default_mapping(), infer_mapping(columns, recs)
    names = [f for f in ("participant", "session", "item", "condition", "stimulus", "response", "expected", "correct",
                         "rt", "order", "practice", "feedback") if getattr(m, f) == getattr(d, f)]
    present = lambda v: v is not None and (v[len(NEXT):] if v.startswith(NEXT) else v) in columns  # noqa: E731
    return replace(m, **{f: getattr(inferred, f) for f in names if not present(getattr(m, f))})


def named_fields(m: Mapping) -> list[tuple[str, str]]:
    """(role, field) for every source field the mapping names."""
    roles = [(r, getattr(m, r)) for r in ("participant", "session", "item", "condition", "stimulus", "response",
                                          "expected", "correct", "rt", "order", "practice")]
    roles += [(f"factor {k}", v) for k, v in m.factors.items()]
    if m.feedback:
        roles.append(("feedback", m.feedback[len(NEXT):] if m.feedback.startswith(NEXT) else m.feedback))
    return [(r, f) for r, f in roles if f]


def check_mapping(path: Path, columns: list[str], m: Mapping) -> None:
    """Refuse a mapping naming a field the file lacks, before any row is read into a trial."""
    for role, name in named_fields(m):
        if name not in columns:
            shown = ", ".join(columns[:25]) + (", ..." if len(columns) > 25 else "")
            raise ImportInputError(f'{where(path, field=name)}: the mapping names it as the {role}, but the file '
                                   f"has no such field (its fields: {shown})")
    if m.rt_unit not in ("ms", "s"):
        raise ImportInputError(f"{path}: rt_unit {m.rt_unit!r} is not ms or s")


def stated_version(recs: list[_Rec]) -> str:
    """jsPsych 8 states each plugin's version (plugin_version); earlier versions state none ("")."""
    found = sorted({(r.row.get("trial_type", ""), r.row["plugin_version"]) for r in recs
                    if r.row.get("plugin_version", "") not in MISSING})
    return ("jsPsych plugins: " + ", ".join(f"{t} {v}" for t, v in found)) if found else ""


def jatos_id(path: Path) -> Optional[str]:
    """A JATOS results archive keeps each study result in study_result_N/: the person is that study result."""
    for part in path.resolve().parts[::-1]:
        hit = JATOS_DIR.match(part)
        if hit:
            return "jatos_study_result_" + hit.group(1)
    return None


def participants(path: Path, recs: list[_Rec], m: Mapping, unit: str) -> list[Optional[str]]:
    """Each record's person, after checking that rows run in order (runs restart at the first order value).

    Without a participant field the person is the JATOS study result the file sits in, or the file itself
    (one file per person); a file holding several runs then is refused, as whose they are is unknown.
    """
    first = number(path, recs[0].line, m.order, recs[0].row[m.order], unit) if recs and m.order else None
    people: list[Optional[str]] = []
    prev_order, prev_person, runs = None, None, 0
    for rec in recs:
        person = rec.row[m.participant].strip() if m.participant else None
        person = None if person in MISSING else person
        value = number(path, rec.line, m.order, rec.row[m.order], unit) if m.order else None
        new_run = rec.array_start or prev_order is None or (value is not None and value == first)
        if not new_run and value is not None and prev_order is not None and value <= prev_order:
            raise ImportInputError(f"{where(path, rec.line, m.order, unit)}: rows out of order ({value:g} after "
                                   f"{prev_order:g} in one run)")
        if not new_run and m.participant and person != prev_person and prev_person is not None:
            raise ImportInputError(f"{where(path, rec.line, m.participant, unit)}: {person!r} begins without "
                                   f"{m.order or 'the order'} restarting: rows of several people interleaved")
        runs += new_run
        prev_order, prev_person = (value if value is not None else prev_order), person
        people.append(person)
    if not m.participant:
        owner = jatos_id(path)
        if owner is None and runs > 1:
            raise ImportInputError(f"{path}: {runs} runs of the study (trial_index restarts) and no participant "
                                   "field: name it in the mapping (participant:), or give one file per person")
        people = [owner or path.stem] * len(recs)
    return people


def _is_trial(row: dict[str, str], m: Mapping) -> bool:
    if row.get("trial_type", "") in SCREENS:
        return False
    if m.item:
        return row[m.item].strip() not in MISSING
    has_response = bool(m.response) and row[m.response].strip() not in MISSING
    return has_response and row.get("trial_type", "") not in NOT_TRIALS


def feedback_rows(recs: list[_Rec], trial: list[bool], field: str) -> dict[int, int]:
    """trial record index -> its feedback screen's index: the screen right after the trial, when it is not a
    trial, shows something, and is not what the screen right before the trial showed (a fixation)."""
    taken: dict[int, int] = {}
    used: set[int] = set()
    for i, is_trial in enumerate(trial):
        j = i + 1
        if not is_trial or j >= len(recs) or trial[j] or recs[j].array_start:
            continue
        shown = recs[j].row[field].strip()
        before = recs[i - 1].row[field].strip() if i > 0 and not trial[i - 1] and (i - 1) not in used \
            and not recs[i].array_start else None
        if shown not in MISSING and shown != before:
            taken[i] = j
            used.add(j)
    return taken


def _accept(path: Path, recs: list[_Rec], people: list[Optional[str]], m: Mapping, unit: str,
            result: ReadResult, orders: dict[tuple[str, str], int]) -> None:
    """Each record becomes a trial or an Excluded with its reason."""
    trial = [_is_trial(r.row, m) for r in recs]
    fb_next = m.feedback[len(NEXT):] if m.feedback and m.feedback.startswith(NEXT) else None
    fb_of = feedback_rows(recs, trial, fb_next) if fb_next else {}
    feedback_for = {j: i for i, j in fb_of.items()}
    for i, rec in enumerate(recs):
        if i in feedback_for:
            result.excluded.append(Excluded(str(path), rec.line, f"the feedback shown after the trial at {unit} "
                                            f"{recs[feedback_for[i]].line} (kept as that trial's feedback)"))
        elif not trial[i]:
            result.excluded.append(Excluded(str(path), rec.line, _why_not(rec.row, m)))
        elif people[i] is None:
            result.excluded.append(Excluded(str(path), rec.line, f'no participant id (field "{m.participant}" '
                                            "is empty)"))
        else:
            session = rec.row[m.session].strip() if m.session else ""
            key = (people[i], session)
            order = orders.get(key, 0)
            orders[key] = order + 1
            fb = recs[fb_of[i]].row[fb_next] if i in fb_of else (
                rec.row[m.feedback] if m.feedback and not fb_next else None)
            try:
                made = _trial(path, rec, people[i], session, order, m, unit, fb)
            except ImportInputError as exc:   # the trial's own value is broken: that trial, not the file
                orders[key] = order
                result.excluded.append(Excluded(str(path), rec.line, "bad value: " + _without_place(str(exc), path),
                                                bad=True))
                continue
            result.trials.append(made)


def _without_place(message: str, path: Path) -> str:
    """'FILE, record 12, field "rt": '-3' is ...' -> 'field "rt": '-3' is ...' (the place is the exclusion's own)."""
    head = f"{path}, "
    if not message.startswith(head):
        return message
    rest = message[len(head):]
    return rest.split(", ", 1)[1] if ", " in rest and rest.split(" ", 1)[0] in ("line", "record") else rest


def _why_not(row: dict[str, str], m: Mapping) -> str:
    kind = row.get("trial_type", "")
    if kind in NOT_TRIALS:
        return f"{kind} screen, not a trial (no {m.item or 'item'})"
    if m.item:
        return f'no {m.item} ({kind}: a fixation, feedback or other screen)'
    return f"no response ({kind}: a fixation, feedback or other screen)"


def _value(row: dict[str, str], name: Optional[str]) -> Optional[str]:
    if not name:
        return None
    v = row[name]
    return None if v.strip() in MISSING else v


def one_answer(value: Optional[str]) -> Optional[str]:
    """A survey plugin's response of one question ({"Q0": 3}, as jsPsych writes it) is that answer ("3");
    any other value as written (several questions stay the JSON text; extra keeps it either way)."""
    if value is None or not value.startswith("{"):
        return value
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        return value
    if isinstance(parsed, dict) and len(parsed) == 1:
        (answer,) = parsed.values()
        return None if answer is None else js_text(answer)
    return value


def _trial(path: Path, rec: _Rec, person: str, session: str, order: int, m: Mapping, unit: str,
           feedback: Optional[str]) -> SourceTrial:
    row = rec.row
    rt = number(path, rec.line, m.rt, row[m.rt], unit) if m.rt else None
    if rt is not None and rt < 0:
        raise ImportInputError(f"{where(path, rec.line, m.rt, unit)}: {row[m.rt]!r} is below 0 (not a response time)")
    codes = m.response == KEY_CODE_FIELD   # jsPsych 6.0-6.2: keyCodes, named as jsPsych 6 names the keys
    practice = m.practice and row[m.practice].strip().lower() in {v.lower() for v in m.practice_values}
    task = tool_kinds(TOOL).get(row.get("trial_type", ""))   # the plugins that state a kind (a key or button: none)
    return SourceTrial(
        tool=TOOL, source_file=str(path), line=rec.line, participant=person, session=session, order=order,
        phase="practice" if practice else "test", item=_value(row, m.item), condition=_value(row, m.condition),
        factors={k: row[v] for k, v in m.factors.items()}, task=task,
        stimulus=_value(row, m.stimulus),
        expected=key_name(_value(row, m.expected)) if codes else _value(row, m.expected),
        response=key_name(_value(row, m.response)) if codes else one_answer(_value(row, m.response)),
        correct=flag(path, rec.line, m.correct, row[m.correct], unit) if m.correct else None,
        rt_ms=None if rt is None else rt * (1000.0 if m.rt_unit == "s" else 1.0),
        feedback=None if feedback is None or feedback.strip() in MISSING else feedback, extra=dict(row))
