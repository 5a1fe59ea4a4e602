"""A people's folder is input: each person's trials are rebuilt from the spec and checked against the rows.

`run-model --replay PEOPLE` and `people-jsonl SPEC PEOPLE` read every person's session of the spec (PEOPLE a folder,
or one session's table); each session left out is named with the reason (`LeftOut`: a model's, an autopilot's, an
empty or unfinished one, one of another spec). What a
model reads, or a transcript shows, is never taken from a row: each person's sequence is compiled from the spec
(the subject, or the browser slot it ran as, the seed, the session and the list, as the sidecar records them:
experiments/design_compiler.py), and before any model loads or any file is written every row is checked against it
(`read_person`). A difference is a RunError naming the file, the line, the column, what the spec gives and what
the row holds:

- the sidecar: present, a JSON object, `experiment`, `spec_hash` and `sequence_hash` those of the spec's
  compiled sequence (another seed, list or subject compiles another sequence);
- `spec_hash` on every row as `analyze` checks it (analysis/load/spec_versions.py `session_version`: the sidecar's,
  on each row), then the spec's;
- `trial_index`: a number, 0, 1, 2, ... in file order (a repeat, a gap or a non-number is named);
- the trial's own columns (experiment, block, item, materials: the sentence, options, ...; words, feedback,
  list, factors, task, role; `Trial.to_row`) as the spec's trial writes them; an item the spec's sequence lacks
  is named as such; subject, session and `subject_kind` (human) as the sidecar's;
- `response`: one of the trial's answers, or a typed answer that cannot alter a context
  (model_subjects/person_answers.py);
- `correct` and `feedback_text`: what the spec's rules give for that response (experiments/tasks/earned.py).

A person's context and transcript are then built from the spec's trials and the checked responses only, the
feedback from the spec's rule. `Person.sha256` is the SHA-256 of the person's table as read: a replay records it
and refuses to resume once the table changed (model_subjects/replay.py).
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.load.spec_versions import session_version
from experiments.design_compiler import compile_sequence
from experiments.list_index import recorded_list
from experiments.session import SessionError, check_subject_id, format_cell, scan_table
from experiments.spec import Experiment, SpecError
from experiments.tasks.detection import detection_for
from experiments.tasks.earned import person_feedback, person_outcome
from experiments.trials import Trial, TrialSequence
from model_subjects.person_answers import response_problem
from model_subjects.runner import RunError

_NUMBER = re.compile(r"[0-9]{1,9}")


@dataclass
class Person:
    """One person's session as read from PEOPLE_DIR, checked against the spec."""

    subject_id: str
    session: int
    csv: Path
    rows: list[dict[str, str]]  # in trial order
    meta: dict[str, Any] = field(default_factory=dict)
    trials: tuple[Trial, ...] = ()  # the spec's trials the rows answer, in order
    responses: tuple[str, ...] = ()  # the checked responses, one per trial
    feedback: tuple[str | None, ...] = ()  # the feedback each response earned (the spec's rule)
    correct: tuple[bool | None, ...] = ()
    sha256: str = ""  # of the person's table as read


def show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 90 else text[:80] + "...'"


def show_pair(want: str, got: str | None) -> tuple[str, str]:
    """Both cells for a message; long ones from a little before where they first differ (a changed option deep in
    a materials JSON stays visible)."""
    if got is None or (len(want) <= 80 and len(got) <= 80):
        return show(want), show(got)
    at = next((i for i, (a, b) in enumerate(zip(want, got, strict=False)) if a != b), min(len(want), len(got)))
    start = max(0, at - 20)

    def cut(t):
        return ("..." if start else "") + t[start:start + 70] + ("..." if len(t) > start + 70 else "")

    return repr(cut(want)), repr(cut(got))


@dataclass(frozen=True)
class LeftOut:
    """A session under the people's folder that is not replayed, and why (every one is named, never skipped
    silently)."""

    csv: Path
    reason: str

    def line(self) -> str:
        return f"{self.csv}: {self.reason}"


def session_files(people: str | Path) -> list[Path]:
    """The session tables `--replay PEOPLE` names: every `*_data.csv` under a folder, or one session's table
    (its `.csv`, or its sidecar `.json` standing for it)."""
    root = Path(people)
    if root.is_dir():
        return sorted(root.rglob("*_data.csv"))
    if not root.exists():
        raise RunError(f"--replay {root}: no such folder or session file")
    csv = root.with_suffix(".csv") if root.suffix == ".json" else root
    if csv.suffix != ".csv" or not csv.is_file():
        raise RunError(f"--replay {root}: neither a folder of sessions nor a session's table (a .csv beside its "
                       ".json sidecar)")
    return [csv]


def find_people(people: str | Path, exp: Experiment, left_out: list[LeftOut] | None = None) -> list[Person]:
    """Every person's session of `exp` under the folder `people` (or the one session file it names), each
    checked against the spec (RunError naming the file, line and column of the first difference). The sessions
    that are not replayed (a model's, an autopilot's, an empty or unfinished one, one of another spec) are
    appended to `left_out` with the reason; with none replayable, the RunError names each and why."""
    found: list[LeftOut] = []
    people_read = []
    for f in session_files(people):
        got = read_person(f, exp)
        if isinstance(got, LeftOut):
            found.append(got)
        else:
            people_read.append(got)
    if left_out is not None:
        left_out.extend(found)
    if not people_read:
        why = "".join(f"\n  left out {x.line()}" for x in found)
        raise RunError(f"--replay {people}: no people's sessions (human rows in *_data.csv) of {exp.name!r} to "
                       f"replay{why}")
    return people_read


def read_sidecar(csv: Path) -> dict[str, Any]:
    side = csv.with_suffix(".json")
    try:
        meta = json.loads(side.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunError(f"{side}: missing; a person's sidecar records the seed and list their trials were compiled "
                       "from, so their trials cannot be checked without it") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RunError(f"{side}: unreadable sidecar ({exc})") from None
    if not isinstance(meta, dict):
        raise RunError(f"{side}: unreadable sidecar (not a JSON object)")
    return meta


def read_person(csv: Path, exp: Experiment) -> Person | LeftOut:
    """One session file checked against the spec; a LeftOut (with the reason) when it is not a person's finished
    session of this spec: a model's, an autopilot's, an empty one, one not completed, one of another spec."""

    try:
        scan = scan_table(csv)
    except SessionError as exc:
        raise RunError(str(exc)) from None
    rows = scan.rows
    if not rows:
        return LeftOut(csv, "no trials written")
    if not any(r.get("subject_kind") == "human" for r in rows):
        kinds = sorted({r.get("subject_kind") or "?" for r in rows})
        return LeftOut(csv, f"not a person's session (subject_kind {', '.join(kinds)})")
    meta = read_sidecar(csv)
    if meta.get("autopilot"):
        return LeftOut(csv, "its sidecar says autopilot: a simulated participant, not a person")
    other = check_spec_hash(csv, meta, scan, exp)
    if other:
        return LeftOut(csv, other)
    status = meta.get("status")
    if status != "completed":
        planned = meta.get("n_trials_planned")
        return LeftOut(csv, f"its sidecar says status {status!r} ({len(rows)} trial(s) of "
                            f"{planned if planned is not None else '?'}): only a completed session is replayed as "
                            "the person's")
    seq = person_sequence(csv, meta, exp)
    if len(rows) > len(seq):
        raise RunError(f"{csv} line {scan.lines[len(seq)]}: row {len(seq) + 1}, but the spec's sequence for this "
                       f"person has {len(seq)} trials")
    answers = [check_row(csv, line, i, row, seq, exp, meta)
               for i, (line, row) in enumerate(zip(scan.lines, rows, strict=False))]
    digest = hashlib.sha256(csv.read_bytes()).hexdigest()
    return Person(str(meta["subject_id"]), int(meta["session"]), csv, rows, meta, seq.trials[:len(rows)],
                  tuple(a[0] for a in answers), tuple(a[2] for a in answers), tuple(a[1] for a in answers), digest)


def check_spec_hash(csv: Path, meta: dict[str, Any], scan: Any, exp: Experiment) -> str | None:
    """The sidecar's spec hash, on every row (`analyze`'s check, analysis/load/spec_versions.py), is the spec's:
    a table whose rows disagree with their sidecar is refused (RunError); a session run on another spec is named
    (the returned reason) and left out."""


    side = csv.with_suffix(".json")
    if not meta.get("spec_hash"):
        raise RunError(f"{side}: the sidecar records no spec_hash; a person's session must say which spec it ran")
    df = pd.DataFrame(scan.rows, index=[line - 2 for line in scan.lines], dtype="string")
    v = session_version(csv, meta, df, None)
    if v.spec_hash != exp.spec_hash and v.n_other == len(scan.rows) and {r.get("spec_hash") for r in scan.rows} \
            == {exp.spec_hash}:
        raise RunError(f"{side}: field spec_hash: expected {show(exp.spec_hash)} (the spec's, as every row has it), "
                       f"found {show(v.spec_hash)}")
    if v.n_other:
        line, found = v.other_rows[0]
        raise RunError(f"{csv} line {line}, column spec_hash: expected {show(v.spec_hash)} (the sidecar's), found "
                       f"{show(found)} ({v.n_other} row(s) carry another spec_hash than the sidecar's)")
    name = meta.get("experiment") or scan.rows[0].get("experiment")
    if name != exp.name or v.spec_hash != exp.spec_hash:
        return (f"run on spec {name!r} (spec hash {v.spec_hash}); this run's spec is {exp.name!r} (spec hash "
                f"{exp.spec_hash}): replay people with the spec they were run on")
    return None


def person_sequence(csv: Path, meta: dict[str, Any], exp: Experiment) -> TrialSequence:
    """The person's sequence compiled from the spec with the sidecar's subject (or browser slot), seed, session
    and list; refused unless it is the sequence the sidecar records (its sequence hash)."""

    side = csv.with_suffix(".json")
    sid, slot, seed, session = (meta.get("subject_id"), meta.get("slot_subject_id") or meta.get("subject_id"),
                                meta.get("seed"), meta.get("session", 1))
    for key, value in (("subject_id", sid), ("slot_subject_id", slot)):
        try:
            check_subject_id(value)
        except SessionError as exc:
            raise RunError(f"{side}: field {key}: {exc}") from None
    for key, value, ok in (("seed", seed, seed is None or isinstance(seed, int)),
                           ("session", session, isinstance(session, int) and session >= 1)):
        if isinstance(value, bool) or not ok:
            raise RunError(f"{side}: field {key}: {show(value)} is not a whole number")
    if not isinstance(meta.get("design") or {}, dict):
        raise RunError(f"{side}: field design: {show(meta.get('design'))} is not an object")
    try:
        seq = compile_sequence(exp, slot, seed, session=session, list_number=recorded_list(meta))
    except SpecError as exc:
        raise RunError(f"{side}: this person's trials cannot be compiled from the spec ({exc})") from None
    if meta.get("sequence_hash") != seq.sequence_hash:
        raise RunError(f"{side}: field sequence_hash: expected {show(seq.sequence_hash)} (the spec's sequence for "
                       f"subject {slot}, seed {seq.seed}, session {session}, list {recorded_list(meta)}), found "
                       f"{show(meta.get('sequence_hash'))}")
    return seq


def expected_cells(exp: Experiment, trial: Trial, seq: TrialSequence, meta: dict[str, Any]) -> dict[str, str]:
    """The cells a person's row of `trial` holds, as the session writer formats them (the trial's own columns,
    the hashes, the subject)."""

    row = trial.to_row(detection_for(trial.task, exp.task) if trial.task else None)
    row.update(spec_hash=seq.spec_hash, sequence_hash=seq.sequence_hash, subject_id=meta["subject_id"],
               session=meta.get("session", 1), subject_kind="human")
    return {k: format_cell(v) for k, v in row.items()}


def check_row(csv: Path, line: int, i: int, row: dict[str, str], seq: TrialSequence, exp: Experiment,
              meta: dict[str, Any]) -> tuple[str, bool | None, str | None]:
    """Row `i` (file line `line`) against trial `i` of the spec's sequence; (response, correct, feedback)."""

    where = f"{csv} line {line}"
    raw = row.get("trial_index") or ""
    if not _NUMBER.fullmatch(raw.strip()):
        raise RunError(f"{where}, column trial_index: {show(raw)} is not a trial number")
    if int(raw) != i:
        what = "a repeat of an earlier trial" if int(raw) < i else "a gap in the trials"
        raise RunError(f"{where}, column trial_index: expected {i} (the person's trials in order from 0), found "
                       f"{int(raw)} ({what})")
    trial = seq.trials[i]
    for col, want in expected_cells(exp, trial, seq, meta).items():
        got = row.get(col)
        if got is None and want == "":
            continue  # a column this table's header does not have, and the trial leaves empty
        if got != want:
            note = ""
            if col == "item_id" and got not in {t.item_id for t in seq.trials}:
                note = " (an item the spec's sequence for this person does not have)"
            shown = show_pair(want, got)
            raise RunError(f"{where}, column {col}: expected {shown[0]} (the spec's trial {i}), found {shown[1]}{note}")
    response = row.get("response") or ""
    problem = response_problem(exp, trial, response)
    if problem:
        raise RunError(f"{where}, column response: {problem}")
    correct, feedback = person_outcome(exp, trial, response), person_feedback(exp, trial, response)
    for col, want in (("correct", "" if correct is None else str(correct)), ("feedback_text", feedback or "")):
        if (row.get(col) or "") != want:
            raise RunError(f"{where}, column {col}: expected {show(want)} (the spec's rule for response "
                           f"{show(response)}), found {show(row.get(col))}")
    return response, correct, feedback
