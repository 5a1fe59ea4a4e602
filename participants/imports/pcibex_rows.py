"""What the rows of one PCIbex/Ibex trial say, read row by row as each controller or element wrote them.

Classic Ibex controllers (js_includes/*.js of github.com/addrummond/ibex) write:
- DashedSentence, self-paced reading: one row per press (`Word number`, `Word`, `Reading time`, `Newline?`,
  `Sentence (or sentence MD5)`); with `s` given as a list each `Word` is a chunk of several words (a region);
  in `speeded acceptability` mode, and FlashSentence, one `Sentence (or sentence MD5)` row;
- Question (alone, after a DashedSentence in the same item, inside AcceptabilityJudgment): `Question (NULL if
  none)`, `Answer`, `Whether or not answer was correct (NULL if N/A)` (its own scoring: 1, 0 or NULL),
  `Time taken to answer`;
- Boyce & Witzel's word-choice controller: one row per word with `Alternative`, `Word on (0=left, 1=right)`, `Correct`;
- Form: `Field name`/`Field value` rows; Message and Separator write nothing.
A custom controller's columns are read where the map names them (`response:`, `rt:`, `correct:`).

PennController writes one row per logged event (`PennElementType`, `PennElementName`, `Parameter`, `Value`,
`EventTime`); the response is the first responding element's last event, its RT the time from the last Print
(or the trial's start) before it, both taken in EventTime order (rows of one trial are not written in time order).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from participants.imports.kinds import tool_kinds
from participants.imports.pcibex_format import NULLS, BadValue, Row, tool_time, unescape

TOOL = "pcibex"
QUESTION_TEXT = "Question (NULL if none)"
ANSWER = "Answer"
SCORED = "Whether or not answer was correct (NULL if N/A)"
ANSWER_TIME = "Time taken to answer"
READING_TIME = "Reading time"
SENTENCE = ("Sentence (or sentence MD5)", "Sentence")
RESPONSE_EVENTS = {("Key", "PressedKey"), ("Selector", "Selection"), ("Scale", "Choice"),
                   ("DropDown", "Selected"), ("TextInput", "Final")}
SHOWN = ("Print", "Start")   # an element's events that put something on screen: an RT is measured from the last


@dataclass
class Found:
    words: list[str] = field(default_factory=list)      # each press's word or chunk (a region), as shown
    word_rts: list[float] = field(default_factory=list)
    maze_ok: list[bool] = field(default_factory=list)
    stimulus: Optional[str] = None
    response: Optional[str] = None
    correct: Optional[bool] = None                      # the tool's own scoring (Ibex's Question)
    rt: Optional[float] = None
    task: Optional[str] = None
    question: Optional[str] = None                      # the Question's text, where it logged one
    controller: str = ""                                # the controller or element that answered
    response_row: Optional[Row] = None
    answer_elements: set[str] = field(default_factory=set)   # PennController elements of a responding type seen


def controller_of(r: Row) -> str:
    f = r.fields
    return f.get("PennElementType") or f.get("Controller name") or ""


def read_trial(group: list[Row], response: Optional[str], response_is_column: bool) -> Found:
    """What the trial's rows say; `response` names the answer (a PennElementName, or with `response_is_column`
    a column of a custom controller). A broken time raises BadValue naming its row."""
    found = Found()
    events: list[tuple[Optional[float], int, Row]] = []
    for k, r in enumerate(group):
        f = r.fields
        kind = controller_of(r)
        found.task = found.task or tool_kinds(TOOL).get(kind)
        if response_is_column and response in f and f[response].strip() not in NULLS:
            found.response, found.response_row, found.controller = unescape(f[response]), r, kind
        if READING_TIME in f and ("Word" in f or kind.startswith("Controller-")):
            _word(r, found)
        elif ANSWER in f:
            _question(r, found, kind, keep_response=response_is_column)
        elif "PennElementType" in f:
            events.append((tool_time(r, "EventTime"), k, r))
        else:
            sentence = next((f[c] for c in SENTENCE if c in f), None)
            if sentence is not None:
                found.stimulus = found.stimulus or unescape(sentence)
    if events and not response_is_column:
        _events(events, response, found)
    if found.maze_ok:
        found.correct = all(found.maze_ok)
    return found


def _word(r: Row, found: Found) -> None:
    f = r.fields
    found.words.append(unescape(f["Word"] if "Word" in f else f.get("Value", "")))
    rt = tool_time(r, READING_TIME)
    found.word_rts.append(float("nan") if rt is None else rt)
    if "Correct" in f:
        found.maze_ok.append(f["Correct"].strip().lower() == "yes")
    sentence = next((f[c] for c in SENTENCE if c in f), None)
    found.stimulus = found.stimulus or (unescape(sentence) if sentence else None)


def _question(r: Row, found: Found, kind: str, keep_response: bool = False) -> None:
    """Ibex's Question: the answer, its own scoring (1/0, NULL without `hasCorrect`) and time taken (with
    `keep_response`, the map's response column stays the answer)."""
    f = r.fields
    ok = f.get(SCORED, "NULL").strip()
    if ok not in NULLS and ok not in ("0", "1"):
        raise BadValue(r.line, SCORED, ok, "is not 1, 0 or NULL")
    if keep_response and found.response_row is not None and found.response_row is not r:
        return
    answered = f[ANSWER].strip() not in NULLS   # NULL: the Question timed out (`timeout`), no answer
    found.response, found.response_row, found.controller = unescape(f[ANSWER]) if answered else None, r, kind
    found.correct = None if ok in NULLS or not answered else ok == "1"
    found.rt = tool_time(r, ANSWER_TIME) if answered else None
    question = f.get(QUESTION_TEXT, "NULL")
    found.question = None if question.strip() in NULLS else unescape(question)
    found.task = found.task or tool_kinds(TOOL).get("Question")   # an answer states what a Question states


def _events(events: list[tuple[Optional[float], int, Row]], response: Optional[str], found: Found) -> None:
    """PennController's events in EventTime order (an event that never came, last): the first responding
    element's last event is the answer, its RT from the last Print or trial start before it."""
    last_shown: Optional[float] = None
    for t, _, r in sorted(events, key=lambda e: (e[0] is None, e[0] or 0.0, e[1])):
        f = r.fields
        name = f.get("PennElementName", "")
        event = (f["PennElementType"], f.get("Parameter", ""))
        responding = name == response if response else event in RESPONSE_EVENTS
        if responding or (not response and f["PennElementType"] in {e for e, _ in RESPONSE_EVENTS}):
            found.answer_elements.add(name)
        first = found.response_row is None or found.response_row.fields.get("PennElementName") == name
        if responding and t is not None and first:   # a changed answer (a Scale clicked twice): the last counts
            found.response, found.response_row, found.controller = unescape(f.get("Value", "")), r, event[0]
            found.rt = None if last_shown is None else t - last_shown
        elif t is not None and (f.get("Parameter") in SHOWN and name != "_Trial_"
                                or f.get("Parameter") == "_Trial_" and f.get("Value") == "Start"):
            last_shown = t
