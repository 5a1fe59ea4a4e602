"""Each imported person written as a twinlab session: the rows of the sequence the read spec compiles for the
person's list, filled with the person's answers, through the project's one session writer (staged: written
under temporary names, verified, renamed; SessionWriter(staged=True), as `twinlab import web` writes).

The person's answer is scored by the task kind's own rule against the item's answer; where the tool scored
the trial itself (PsychoPy's `key_resp.corr`), the two must agree, else the import is refused naming the
line (a wrong mapping of labels or answers would otherwise give a silently wrong accuracy). Every original
cell of the trial is kept in the row's `extra.source`.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from experiments.design_compiler import compile_sequence
from experiments.session import SessionError, SessionWriter, session_paths
from experiments.spec import Experiment
from experiments.tasks.detection import detection_for
from experiments.tasks.earned import person_feedback
from experiments.tasks.record import row_fields
from experiments.trials import Trial, TrialSequence
from participants.imports.earlier import kept_reason
from participants.imports.kinds import importer_for
from participants.imports.records import ImportInputError, SourceTrial
from participants.imports.study import Person, Study
from participants.imports.task_rows import task_fields
from participants.rows import trial_row
from participants.rsvp import TrialResult


@dataclass
class Planned:
    person: Person
    seq: TrialSequence
    rows: list[dict[str, Any]]
    meta: dict[str, Any]
    state: str = "new"  # new | unchanged | replace | kept (an earlier session left as it is: --add)


def file_record(path: str) -> dict[str, Any]:
    data = Path(path).read_bytes()
    return {"name": Path(path).name, "path": str(path), "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def check_sequence(seq: TrialSequence, person: Person, task: str) -> None:
    """The compiled sequence is the person's trials, in the person's order (the spec's promise)."""

    if len(seq) != len(person.trials):
        raise ImportInputError(f"internal error: the read spec compiles {len(seq)} trials for {person.participant}, "
                               f"who has {len(person.trials)}")
    for tr, t in zip(seq, person.trials, strict=False):
        if tr.role != t.phase or (tr.mat.get("sentence") or "") != importer_for(task).sentence(t):
            raise ImportInputError(f"internal error: trial {tr.trial_index} of {person.participant} compiles as "
                                   f"{tr.item_id} but the person's line {t.line} is another trial")


def _feedback_text(exp: Experiment, trial: Trial, t: SourceTrial, response: Optional[str]) -> Optional[str]:
    """The feedback the spec's rule gives this answer (experiments.tasks.earned.person_feedback: one rule, the
    one `run-model --replay` checks), on the trials the tool showed feedback on; the tool's own text (the spec's
    texts are read from it where it is one text per outcome: study.feedback_texts) stays in extra.tool_feedback."""

    if not (trial.feedback and t.feedback):
        return None
    return person_feedback(exp, trial, response or "")


def person_rows(exp: Experiment, study: Study, seq: TrialSequence, person: Person) -> list[dict[str, Any]]:
    """The person's rows: each trial's task fields by the kind's own derive (task_rows.py), the tool's own
    scoring checked against them, the feedback and every original cell kept."""

    rows = []
    for trial, t in zip(seq, person.trials, strict=False):
        fields = task_fields(exp, seq, trial, t, study.value_of(t.response))
        correct = fields["correct"]
        _check_tool_scoring(study, t, correct)
        fb = _feedback_text(exp, trial, t, fields["response"])
        result = TrialResult(
            response=fields["response"], correct=correct, rt_ms=fields["rt_ms"], rt_sentence_end_ms=None,
            word_onsets_ms=[], word_durations_ms=[], feedback_shown=fb is not None, feedback_text=fb,
            started_at=None, ended_at=None, iti_onset=0.0, response_mode="task",
            extra={"imported": {"tool": t.tool, "file": Path(t.source_file).name, "line": t.line},
                   **fields["_extra"], "raw_response": t.response, "tool_correct": t.correct,
                   "tool_feedback": t.feedback, "source": t.extra},
            generic=row_fields(fields))  # the generic columns and the kind's own (its declared COLUMNS)
        rows.append(trial_row(trial, result, seq, subject_id=person.subject_id, session=1,
                              detection=detection_for(trial.task, exp.task, None)))
    return rows


def _check_tool_scoring(study: Study, t: SourceTrial, correct: Optional[bool]) -> None:
    """Where the tool scored the trial too, the two must agree: a wrong `labels` or `expected` in --map would
    otherwise give a silently wrong accuracy."""
    if t.correct is None or correct is None or t.correct == correct:
        return
    raise ImportInputError(
        f"{t.source_file}: line {t.line}: the tool scored this trial {'correct' if t.correct else 'wrong'} but "
        f"the response {t.response!r} ({study.value_of(t.response)}) against the answer {t.expected!r} "
        f"({study.value_of(t.expected)}) is {'correct' if correct else 'wrong'}: check `labels` and `expected` "
        "in --map")


def plan_sessions(exp: Experiment, study: Study, out: Path, tool: str, versions: dict[str, str],
                  force: bool, add: bool = False, earlier: Any = None) -> list[Planned]:
    """Every person's sequence, rows and sidecar, and what writing would do to `out` (checked, nothing written)."""

    planned = []
    for p in study.people:
        seq = compile_sequence(exp, p.subject_id, list_number=p.list_number)
        check_sequence(seq, p, study.task)
        files = [file_record(f) for f in p.files]
        meta = {"runner": f"twinlab import {tool}", "data_kind": f"human participant (imported from {tool})",
                "participant_info": {"participant": p.participant, "session": p.session}, "autopilot": False,
                "seed": seq.seed, "n_trials_in_sequence": len(seq),
                "list_assignment": {"method": "given", "list": p.list_number,
                                    "by": "the person's own trials, in the person's order (twinlab import)"},
                "imported": {"tool": tool, "tool_version": sorted({versions.get(f, "") for f in p.files} - {""}),
                             "source_files": files}}
        plan = Planned(p, seq, person_rows(exp, study, seq, p), meta)
        plan.state = _state(out, exp, plan, force, add, earlier)
        planned.append(plan)
    return planned


def _state(out: Path, exp: Experiment, plan: Planned, force: bool, add: bool, earlier: Any) -> str:
    """new, unchanged (the same files imported by the same spec: a re-import changes nothing), kept (--add: an
    earlier session whose person's trials the extended spec compiles unchanged, left byte for byte) or replace
    (--force); anything else is refused, naming the session."""
    csv_path, json_path = session_paths(out, exp.name, plan.person.subject_id, 1)
    if not (csv_path.exists() or json_path.exists()):
        return "new"
    try:
        old = json.loads(json_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        old = {}
    same = (old.get("spec_hash") == exp.spec_hash and old.get("sequence_hash") == plan.seq.sequence_hash
            and [f["sha256"] for f in old.get("imported", {}).get("source_files", [])]
            == [f["sha256"] for f in plan.meta["imported"]["source_files"]] and old.get("status") == "completed")
    if same:
        return "unchanged"
    if force:
        return "replace"
    if add:
        why = kept_reason(earlier, exp, plan.person, plan.meta["imported"]["source_files"])
        if why is None:
            return "kept"
        raise ImportInputError(f"{csv_path}: --add leaves earlier sessions as they are, but this one cannot stay: "
                               f"{why}; nothing was written (--force rewrites every session from the files given now)")
    raise ImportInputError(
        f"{csv_path} already exists from another import (other source files, or a spec read from other data: "
        f"spec hash {old.get('spec_hash')} vs {exp.spec_hash}); nothing was written. New people make new lists, so "
        "the spec hash changes: give --add to write the new people's sessions under the extended spec and leave the "
        "earlier sessions byte for byte (they keep their spec hash; OUT/spec/versions/ keeps their spec), --force "
        "to rewrite every session under the new spec, or import into a new --out")


def write_session(out: Path, exp: Experiment, plan: Planned) -> None:
    """Staged (temporary names, verified, renamed); a --force replacement is written beside and renamed over."""
    target_root = out
    if plan.state == "replace":
        target_root = out / ".twinlab-import-staging"
    p = plan.person
    try:
        w = SessionWriter.create(target_root, experiment=exp.name, subject_id=p.subject_id, session=1,
                                 subject_kind="human", spec_hash=exp.spec_hash, sequence_hash=plan.seq.sequence_hash,
                                 n_trials=len(plan.seq), metadata=plan.meta, staged=True, sequence=plan.seq)
        try:
            w.append_rows(plan.rows)
        except BaseException:
            w.close("crashed")
            raise
        w.close("completed" if len(plan.rows) == len(plan.seq) else "incomplete")
    except SessionError as exc:
        raise ImportInputError(str(exc)) from None
    if plan.state == "replace":
        for new, old in zip(session_paths(target_root, exp.name, p.subject_id, 1),
                            session_paths(out, exp.name, p.subject_id, 1), strict=False):
            os.replace(new, old)
