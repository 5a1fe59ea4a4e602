"""Each person's session as one Psych-201-style JSONL line (issue 40, part 6), as Psych-101 gives Centaur.

`text` is the transcript a model subject would read in a replay (model_subjects/replay.py): the instructions,
block intros, every trial's prompt (the protocol's first query, as `twinlab context` shows), the person's answer
in the task's words marked `<<...>>`, then the feedback the person got. Beside it: the experiment, the person,
the session, the spec hash, the protocol whose prompts were used, and per trial the item, the answer, whether it
was right and the RT (ms; null where none), so the data can train or test such models.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from experiments.screen_texts import block_sizes
from experiments.spec import Experiment
from model_subjects.context import History, history_entry
from model_subjects.replay import Person, person_feedback, person_trial

OPEN, CLOSE = "<<", ">>"


def mark(answer: str) -> str:
    """' Acceptable' -> ' <<Acceptable>>' (the leading space stays outside the marks)."""
    body = answer.lstrip(" ")
    return answer[: len(answer) - len(body)] + OPEN + body + CLOSE if body else answer


def _num(v: Any) -> float | None:
    try:
        return float(v) if v not in (None, "") else None
    except ValueError:
        return None


def person_line(exp: Experiment, protocol: Any, p: Person) -> dict[str, Any]:
    trials = [person_trial(exp, r) for r in p.rows]
    hist = History(exp, sizes=block_sizes(trials))
    for trial, row in zip(trials, p.rows):
        hist.begin_trial(trial)
        e = history_entry(protocol, trial, str(row.get("response") or ""), person_feedback(exp, trial, row))
        hist.commit(trial, e.question, mark(e.answer), e.feedback)
    return {"text": hist.text, "experiment": exp.name, "participant": p.subject_id, "session": p.session,
            "spec_hash": exp.spec_hash, "protocol": protocol.name, "source": str(p.csv),
            "trials": [{"trial_index": int(r["trial_index"]), "block": r["block"], "item_id": r["item_id"],
                        "response": r.get("response"), "correct": {"True": True, "False": False}.get(r.get("correct")),
                        "rt_ms": _num(r.get("rt_ms"))} for r in p.rows]}


def check_jsonl_out(out: str | Path, spec: str, people_dir: str | Path, force: bool) -> None:
    """--out a regular file (or a new one) outside the people's folder, not the spec, not a session's table or
    sidecar, not a link or a device, an existing file only with --force (experiments/outputs.py); RunError."""
    from experiments.options import OptionError
    from experiments.outputs import check_output_file
    from model_subjects.runner import RunError

    try:
        check_output_file("--out", Path(out), force, [("the spec", Path(spec))] if Path(spec).is_file() else [],
                          input_folders=[("the people's folder", Path(people_dir))])
    except OptionError as exc:
        raise RunError(str(exc)) from None


def export_jsonl(spec: str, people_dir: str | Path, out: str | Path, protocol: str | None = None,
                 force: bool = False) -> int:
    """Write one line per person's session to `out` (atomically; an existing file only with `force`)."""
    from experiments.atomic import atomic_write_text
    from experiments.spec import load_spec
    from model_subjects.protocols import default_protocol, get_protocol
    from model_subjects.replay import find_people
    from model_subjects.runner import RunError

    check_jsonl_out(out, spec, people_dir, force)
    exp = load_spec(spec)
    out = Path(out)
    proto = get_protocol(protocol or default_protocol(exp.task.kind, exp.task.response), panel=exp.task.panel,
                         task=exp.task)
    people = find_people(people_dir, exp)
    lines = [json.dumps(person_line(exp, proto, p), ensure_ascii=False) for p in people]
    atomic_write_text(out, "\n".join(lines) + "\n")
    return len(lines)
