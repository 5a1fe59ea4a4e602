"""Each person's session as one Psych-201-style JSONL line, as Psych-101 gives Centaur.

`text` is the transcript a model subject would read in a replay (model_subjects/replay.py): the instructions,
block intros, every trial's prompt (the protocol's first query, as `twinlab context` shows), the person's answer
in the task's words marked `<<...>>` (exactly one marked answer per trial), then the feedback the person got. The
trials are the spec's, compiled for each person and checked against every row first (model_subjects/people.py: a
row that differs is refused, naming file, line and column; a typed answer holding a line end, a control or format
character or `<`/`>` is refused, so it can never add a trial). Beside it: the experiment, the person,
the session, the spec hash, the protocol whose prompts were used, and per trial the item, the answer, whether it
was right and the RT (ms; null where none), so the data can train or test such models.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from experiments.atomic import atomic_write_text
from experiments.options import OptionError
from experiments.outputs import check_output_file
from experiments.screen_texts import block_sizes
from experiments.spec import Experiment, load_spec
from model_subjects.context import History, history_entry
from model_subjects.people import Person, find_people
from model_subjects.protocols import default_protocol, get_protocol
from model_subjects.runner import RunError

OPEN, CLOSE = "<<", ">>"


def mark(answer: str) -> str:
    """' Acceptable' -> ' <<Acceptable>>' (the leading space stays outside the marks); no answer -> '<<>>', so every
    trial has exactly one marked answer (a person's answer never holds < or >: model_subjects/person_answers.py)."""
    body = answer.lstrip(" ")
    return answer[: len(answer) - len(body)] + OPEN + body + CLOSE


def _num(v: Any) -> float | None:
    """A recorded RT as a number; None where there is none (or it is not a finite number: JSON has no NaN)."""
    try:
        x = float(v) if v not in (None, "") else None
    except ValueError:
        return None
    return x if x is not None and math.isfinite(x) else None


def person_line(exp: Experiment, protocol: Any, p: Person) -> dict[str, Any]:
    """One person's transcript and trials, from the spec's trials and the person's checked answers
    (model_subjects/people.py); only the RTs come from the rows as recorded."""
    hist = History(exp, sizes=block_sizes(list(p.trials)))
    for trial, response, feedback in zip(p.trials, p.responses, p.feedback, strict=False):
        hist.begin_trial(trial)
        e = history_entry(protocol, trial, response, feedback)
        hist.commit(trial, e.question, mark(e.answer), e.feedback)
    return {"text": hist.text, "experiment": exp.name, "participant": p.subject_id, "session": p.session,
            "spec_hash": exp.spec_hash, "protocol": protocol.name, "source": str(p.csv),
            "trials": [{"trial_index": t.trial_index, "block": t.block, "item_id": t.item_id, "response": response,
                        "correct": correct, "rt_ms": _num(r.get("rt_ms"))}
                       for t, response, correct, r in zip(p.trials, p.responses, p.correct, p.rows, strict=False)]}


def check_jsonl_out(out: str | Path, spec: str, people_dir: str | Path, force: bool) -> None:
    """--out a regular file (or a new one) outside the people's folder, not the spec, not a session's table or
    sidecar, not a link or a device, an existing file only with --force (experiments/outputs.py); RunError."""

    try:
        folder = Path(people_dir) if Path(people_dir).is_dir() else Path(people_dir).parent  # or one session's
        check_output_file("--out", Path(out), force, [("the spec", Path(spec))] if Path(spec).is_file() else [],
                          input_folders=[("the people's folder", folder)])
    except OptionError as exc:
        raise RunError(str(exc)) from None


def export_jsonl(spec: str, people_dir: str | Path, out: str | Path, protocol: str | None = None,
                 force: bool = False, left_out: list | None = None) -> int:
    """Write one line per person's session to `out` (atomically; an existing file only with `force`); the
    sessions not written are appended to `left_out` (model_subjects.people.LeftOut: the file and why)."""

    check_jsonl_out(out, spec, people_dir, force)
    exp = load_spec(spec)
    out = Path(out)
    proto = get_protocol(protocol or default_protocol(exp.task.kind, exp.task.response), panel=exp.task.panel,
                         task=exp.task)
    people = find_people(people_dir, exp, left_out)
    lines = [json.dumps(person_line(exp, proto, p), ensure_ascii=False) for p in people]
    atomic_write_text(out, "\n".join(lines) + "\n")
    return len(lines)
