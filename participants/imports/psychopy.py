"""PsychoPy Builder's trial-by-trial CSV (one file per participant) -> SourceTrial records.

What Builder writes (PsychoPy 1.90 to 2026.2 and PsychoJS; the files in tests/data/imports/psychopy*): one row per
iteration of every loop (ExperimentHandler.nextEntry), one row per routine outside a loop (instructions, the
end screen), in the order the participant went through them. Each loop `L` has `L.thisN` (0-based, over the
loop's run), `L.thisTrialN`, `L.thisRepN` and `L.thisIndex`; a loop inside another keeps the outer loop's
columns on its rows, and the outer loop writes one row of its own at the end of each of its iterations. A
keyboard `C` gives `C.keys` ('None' when nothing was pressed), `C.rt` (seconds) and `C.corr` (1/0); newer
versions also write loop-prefixed copies (`trials.C.keys`). The experiment-info fields (`participant`,
`session`, ...) and `date`, `expName`, `psychopyVersion`, `frameRate` are on every row.

A trial is a row whose innermost loop is a trial loop: a loop named in the mapping's `loops`, else a loop whose
own rows carry the answer (psychopy_loops.py: the answer component found from the data, any name). Every other
row is excluded with its reason (outside every loop, an outer loop's end-of-iteration row, a loop without the
answer, blank); a trial whose own value is broken (a negative RT) is excluded as a bad trial. Every original
cell of a trial is kept in `extra`. The study's `.psyexp`, given with the data, is read too (psychopy_psyexp.py).
"""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from participants.imports.kinds import tool_kinds
from participants.imports.psychopy_loops import (
    ANSWER_SUFFIXES,
    LoopMap,
    answer_columns,
    component_kind,
    component_of,
    is_practice_loop,
    loop_names,
    map_loops,
    pick_answer,
    trial_loops,
)
from participants.imports.psychopy_psyexp import SUFFIX as PSYEXP
from participants.imports.psychopy_psyexp import BuilderStudy, read_psyexp
from participants.imports.records import Excluded, ImportInputError, Mapping, ReadResult, SourceTrial
from participants.imports.sniff import other_tool
from participants.imports.source_csv import SourceTable, read_source_table, require_columns
from participants.imports.values import bool_cell, rt_ms
from stimuli.input_rules import ascii_int

TOOL = "psychopy"
# what Builder itself writes: a file with none of these is not a Builder data file
BUILDER_COLUMNS = ("psychopyVersion", "expName", "frameRate", "date")
NO_RESPONSE = ("", "None", "[]")
# conditions-file columns a Builder study commonly names; the first present is the default (--show-map says)
CANDIDATES = {"item": ("item", "item_id", "itemID", "Item", "item_nr", "itemNr", "item_no"),
              "condition": ("condition", "cond", "Condition", "conditions"),
              "stimulus": ("sentence", "stimulus", "stim", "text", "word", "target", "Sentence", "Word"),
              "expected": ("corrAns", "correct_answer", "corr_ans", "correctAns", "answer", "corr_resp", "correct_key",
                           "CorrectAnswer")}
_FIELDS = ("participant", "session", "item", "condition", "stimulus", "response", "expected", "correct", "rt",
           "order", "practice", "feedback")


def default_mapping() -> Mapping:
    """An unedited Builder study: the keyboard `key_resp`, the info dialog's participant and session (the
    answer component and the trial loops are found from each file's rows when the file has no `key_resp`)."""
    return Mapping(participant="participant", session="session", item="item", condition="condition",
                   task=None, stimulus="sentence", response="key_resp.keys", expected="corrAns",
                   correct="key_resp.corr", rt="key_resp.rt", rt_unit="s", practice_values=("practice",),
                   feedback="feedback.started")


def effective_mapping(header: list[str], mapping: Mapping | None, table: SourceTable | None = None) -> Mapping:
    """The mapping for one file. Without one: the answer found from the rows (psychopy_loops.pick_answer) with its
    `.corr` and `.rt`, and each other field's first candidate column the trials fill. With one: as given, a field
    left at its default that the file lacks taken as without one, a mapped answer with its own `.corr` and `.rt`
    (require_columns checks the rest). Without `table` (the header alone) the answer is `key_resp` or none."""
    d = default_mapping()
    found = pick_answer(answer_columns(table, map_loops(table))) if table is not None else None
    changes: dict[str, str | None] = {}
    if mapping is not None:
        inferred = effective_mapping(header, None, table)
        for f in _FIELDS:
            if getattr(mapping, f) == getattr(d, f) and getattr(mapping, f) not in header:
                changes[f] = getattr(inferred, f)
        answer = mapping.response if mapping.response != d.response else changes.get("response", mapping.response)
        if answer and component_of(answer):   # the answer's own .corr and .rt, where the map names none
            changes.update(_component_fields(header, answer, keep=mapping, default=d))
        return dataclasses.replace(mapping, **changes)
    rows = _answered_loop_rows(table, found) if table is not None and found else []
    for fld in ("participant", "session", "item", "condition", "stimulus", "expected", "feedback"):
        options = [c for c in CANDIDATES.get(fld, (getattr(d, fld),)) if c in header]
        filled = [c for c in options if any(r.get(c, "").strip() for r in rows)]   # a column of another loop: not it
        changes[fld] = (filled or options or [None])[0]
    if found is not None:
        changes.update(_component_fields(header, found, keep=None, default=d))
    else:
        changes.update({f: getattr(d, f) if getattr(d, f) in header else None for f in ("response", "correct", "rt")})
    return dataclasses.replace(d, **changes)


def _answered_loop_rows(table: SourceTable, answer: str) -> list[dict[str, str]]:
    """The rows of the loops that hold the answer (the trials the defaults find)."""
    lm = map_loops(table)
    loops = set(trial_loops(table, lm, answer))
    return [row for line, row in table.rows if lm.inner[line] in loops]


def _component_fields(header: list[str], answer: str, keep: Mapping | None, default: Mapping) -> dict[str, str | None]:
    """response/correct/rt of the found component (`C.keys`, `C.corr`, `C.rt`); a field the map changed is kept."""
    comp = component_of(answer)
    out: dict[str, str | None] = {"response": answer}
    for f, suffix in (("correct", ".corr"), ("rt", ".rt")):
        if keep is not None and getattr(keep, f) != getattr(default, f):
            continue
        col = f"{comp}{suffix}"
        out[f] = col if col in header else None
    return out


def read_psychopy(paths: list[Path], mapping: Mapping | None) -> ReadResult:
    """Every file's trials and excluded rows (ImportInputError for a file that is not Builder's, breaks the
    mapping, or whose answers cannot be found: naming the file, line and column)."""
    result = ReadResult()
    studies = [read_psyexp(Path(p)) for p in paths if Path(p).suffix.lower() == PSYEXP]
    conditions = {name for s in studies for name in s.conditions_files}
    for s in studies:
        result.notes.append(f"{s.path.name}: the study's loops: {', '.join(s.loops) or 'none'}"
                            + "".join(f"; {c} scored against {col}" for c, col in s.scored.items()))
    data = [Path(p) for p in paths if Path(p).suffix.lower() != PSYEXP]
    for path in data:
        if path.name in conditions:   # the study's own conditions file, given in its experiment folder
            result.notes.append(f"{path.name}: a conditions file of the study (.psyexp), not results: not read")
            continue
        table = read_source_table(path, "PsychoPy CSV")
        _check_builder(table)
        m = effective_mapping(table.header, mapping, table)
        if studies:
            m = _with_study(table, m, mapping, studies)
        require_columns(table, {k: v for k, v in _columns(m).items() if v})
        result.mappings[str(table.path)] = m
        _read_file(table, m, result, found=mapping is None)
        result.notes += [f"{table.path.name}: {where}: markup kept as text" for where in table.markup]
    if not result.rows_read:
        raise ImportInputError(f"no PsychoPy data files among {', '.join(str(p) for p in paths)} (only the "
                               "study's .psyexp and conditions files)")
    return result


def _with_study(table: SourceTable, m: Mapping, mapping: Mapping | None, studies: list[BuilderStudy]) -> Mapping:
    """The data file must be of a given study (its loops are the study's loops); without a map, the answer's
    correct-answer column is the one its keyboard is scored against in the study (`correctAns` `$column`)."""
    loops = set(loop_names(table.header))
    study = next((s for s in studies if loops <= set(s.loops)), None)
    if study is None:
        names = ", ".join(f"{s.path.name} ({', '.join(s.loops)})" for s in studies)
        raise ImportInputError(f"{table.path}: line 1: its loops {', '.join(sorted(loops))} are not all loops of the "
                               f"study given ({names}): a data file of another study, or another version of it?")
    column = study.scored.get(component_of(m.response or "") or "")
    if mapping is None and column and column in table.header:
        return dataclasses.replace(m, expected=column)
    return m


def _columns(m: Mapping) -> dict[str, str | None]:
    cols = {f: getattr(m, f) for f in _FIELDS}
    cols.update({f"factors.{k}": v for k, v in m.factors.items()})
    return cols


def _check_builder(table: SourceTable) -> None:
    loops = loop_names(table.header)
    have = [c for c in BUILDER_COLUMNS if c in table.header]
    if not loops or len(have) < 2:
        guess = other_tool(table.header)
        raise ImportInputError(
            f"{table.path}: line 1: not a PsychoPy Builder data file (Builder writes loop columns such as "
            f"trials.thisN and {', '.join(BUILDER_COLUMNS)}; this file has "
            f"{'no loop column' if not loops else 'only ' + (', '.join(have) or 'none of them')})"
            + (f"; it looks like a {guess} file: use `twinlab import {guess}`" if guess else ""))


def _trial_loops(table: SourceTable, lm: LoopMap, m: Mapping) -> list[str]:
    """The mapping's `loops` (each must be a loop of the file), else the loops whose rows carry the answer;
    refused when there is none: a file imported without its answers would be a silent wrong number."""
    if m.loops:
        for lp in m.loops:
            if lp not in lm.loops:
                raise ImportInputError(f"{table.path}: line 1: the mapping's loops names {lp!r}, which is not a loop "
                                       f"of this file (its loops: {', '.join(lm.loops)})")
        return list(m.loops)
    if not m.response:
        answers = sorted(h for h in table.header if h.endswith(ANSWER_SUFFIXES))
        raise ImportInputError(
            f"{table.path}: line 1: the answers cannot be found: no component's answer column ("
            + ", ".join(f"COMPONENT{s}" for s in ANSWER_SUFFIXES) + ") has a value on any loop's row"
            + (f" (this file's answer columns: {', '.join(answers[:12])})" if answers else "")
            + "; name the column in --map (response: COMPONENT.keys), or save the keyboard's keys in Builder")
    found = trial_loops(table, lm, m.response)
    if not found:
        raise ImportInputError(f"{table.path}: line 1, column {table.column_number(m.response)} ({m.response}): no "
                               f"loop's row holds an answer in {m.response} (the loops: {', '.join(lm.loops)}); name "
                               "the answer column (response:) or the trial loops (loops:) in --map")
    return found


def _practice_answers(table: SourceTable, lm: LoopMap, trial_set: set[str], m: Mapping) -> dict[str, Mapping]:
    """Practice loops (by name) whose rows hold another component's answer than the test's (a copied routine's
    `key_resp_2`): loop -> the mapping with that component's answer, `.corr` and `.rt` (defaults only)."""
    out: dict[str, Mapping] = {}
    for lp in lm.loops:
        if lp in trial_set or not _practice_loop(lp, m) or any(lm.encloses(lp, o) for o in lm.loops):
            continue   # an outer loop's own row (training_block's "train again?" key) is not a practice trial
        answer = pick_answer([a for a in answer_columns(table, lm, {lp}) if a.share >= 0.5])
        if answer:
            out[lp] = dataclasses.replace(m, **_component_fields(table.header, answer, keep=None, default=m))
    return out


def _read_file(table: SourceTable, m: Mapping, result: ReadResult, found: bool = False) -> None:
    name = str(table.path)
    lm = map_loops(table)
    trial_set = set(_trial_loops(table, lm, m))
    own = _practice_answers(table, lm, trial_set, m) if found and not m.loops else {}
    trial_set |= set(own)
    result.rows_read[name] = len(table.rows)
    versions = {r.get("psychopyVersion", "") for _, r in table.rows} - {""}
    result.tool_version[name] = sorted(versions)[0] if len(versions) == 1 else ", ".join(sorted(versions))
    result.notes.append(f"{table.path.name}: trials: the rows of the loop(s) {', '.join(sorted(trial_set))} "
                        + ("(loops: in --map)" if m.loops else f"(their rows hold {m.response})") + "; practice: "
                        + (f"{m.practice} in {', '.join(m.practice_values)}" if m.practice else
                           ", ".join(sorted(lp for lp in trial_set if _practice_loop(lp, m))) or "none")
                        + "".join(f"; {lp}'s answer: {pm.response}" for lp, pm in own.items()))
    last_n: dict[str, int] = {}
    who: tuple[str, str] | None = None
    order = 0
    for line, row in table.rows:
        if not any(v.strip() for v in row.values()):
            result.excluded.append(Excluded(name, line, "blank row (Builder writes one e.g. after a loop)"))
            continue
        loop = lm.inner[line]
        if loop is None:
            result.excluded.append(Excluded(name, line, "not a loop iteration (a routine outside every loop: "
                                                        "instructions, the end screen)"))
            continue
        _check_order(table, line, row, loop, last_n)
        if loop not in trial_set:
            result.excluded.append(Excluded(name, line, _not_trial_loop(lm, loop, trial_set, m)))
            continue
        loop_m = own.get(loop, m)
        bad = _bad_value(table, line, row, loop_m)
        if bad:
            result.excluded.append(Excluded(name, line, bad, bad=True))
            continue
        trial = _trial(table, line, row, loop, loop_m, order)
        if who is None:
            who = (trial.participant, trial.session)
        elif (trial.participant, trial.session) != who:
            raise ImportInputError(f"{name}: line {line}, column {table.column_number(m.participant)} "
                                   f"({m.participant}): participant {trial.participant!r} session {trial.session!r} "
                                   f"in the file of {who[0]!r} session {who[1]!r} (Builder writes one file per "
                                   "participant and session)")
        result.trials.append(trial)
        order += 1


def _not_trial_loop(lm: LoopMap, loop: str, trial_set: set[str], m: Mapping) -> str:
    inside = sorted(t for t in trial_set if lm.encloses(loop, t))
    if inside:
        return (f"the row loop {loop} writes at the end of each of its iterations (its inner loop "
                f"{', '.join(inside)} holds the trials)")
    why = "not one of the mapping's loops" if m.loops else f"its rows hold no answer in {m.response}"
    return f"an iteration of loop {loop}, {why} (a questionnaire or another task's loop)"


def _practice_loop(loop: str, m: Mapping) -> bool:
    return is_practice_loop(loop) or loop in m.practice_values


def _bad_value(table: SourceTable, line: int, row: dict[str, str], m: Mapping) -> str | None:
    """The trial's own broken value (an RT below 0 or not a number, a correctness cell that is neither) as the
    reason it is excluded; None when its values are readable."""

    for read in (lambda: rt_ms(table, line, row, m.rt, m.rt_unit), lambda: bool_cell(table, line, row, m.correct)):
        try:
            read()
        except ImportInputError as exc:
            text = str(exc)
            return "bad value: " + (text.split("): ", 1)[1] if "): " in text else text)
    return None


def _check_order(table: SourceTable, line: int, row: dict[str, str], loop: str, last_n: dict[str, int]) -> None:
    """A loop's thisN counts 0, 1, 2, ... in the file (0 again when the loop runs anew); anything else
    means rows out of order (a sorted or edited file)."""
    col = f"{loop}.thisN"

    n = ascii_int(row[col])
    if n is None:
        raise ImportInputError(f"{table.path}: line {line}, column {table.column_number(col)} ({col}): "
                               f"{row[col][:20]!r} is not a whole number")
    prev = last_n.get(loop)
    if n != 0 and n != (prev if prev is not None else -1) + 1:
        raise ImportInputError(f"{table.path}: line {line}, column {table.column_number(col)} ({col}): rows out of "
                               f"order: {loop} iteration {n} follows iteration {prev if prev is not None else 'none'} "
                               "(Builder writes each iteration in turn; was the file sorted?)")
    last_n[loop] = n


def _cell(row: dict[str, str], col: str | None) -> str | None:
    if not col:
        return None
    v = row.get(col, "")
    return v if v != "" else None


def _trial(table: SourceTable, line: int, row: dict[str, str], loop: str, m: Mapping, order: int) -> SourceTrial:
    practice = (row.get(m.practice, "") in m.practice_values) if m.practice else _practice_loop(loop, m)
    response = _cell(row, m.response)
    kind = component_kind(m.response)
    if kind == "slider" and response is not None and re.fullmatch(r"-?[0-9]+\.0", response.strip()):
        response = response.strip()[:-2]   # a Slider's float (5.0) is the point 5; 5.5 stays (a rating refuses it)
    return SourceTrial(
        tool=TOOL, source_file=str(table.path), line=line,
        participant=(_cell(row, m.participant) or "").strip(), session=(_cell(row, m.session) or "").strip(),
        order=order, phase="practice" if practice else "test",
        item=_cell(row, m.item), condition=_cell(row, m.condition),
        factors={k: row.get(c, "") for k, c in m.factors.items()}, task=tool_kinds(TOOL).get(kind or ""),
        stimulus=_cell(row, m.stimulus),
        response=None if response in NO_RESPONSE else response, expected=_cell(row, m.expected),
        correct=bool_cell(table, line, row, m.correct), rt_ms=rt_ms(table, line, row, m.rt, m.rt_unit),
        feedback=_cell(row, m.feedback), extra={**{k: v for k, v in row.items() if v != ""}, "psychopy.loop": loop})
