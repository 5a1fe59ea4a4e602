"""People's sessions of a bundled spec written as the human runner writes them (for the twins tests).

Each person's compiled sequence, answered by a seeded generator (a known share of right answers), through
the one session writer; RTs drawn too. Not the PsychoPy runner (the GUI tests cover that): the point is the
arithmetic of the twins analyses on real people's table format."""
from __future__ import annotations

import json
import random
from pathlib import Path

from experiments.design_compiler import compile_sequence
from experiments.session import SessionWriter
from experiments.spec import Experiment
from experiments.tasks.detection import detection_for


def options_of(exp: Experiment, trial) -> list[str]:
    if (trial.task or exp.task.kind) == "violation_detection":  # the panel's or the key's two answers
        return ["violation", "no_violation"]
    if (trial.task or exp.task.kind) == "self_paced_reading":  # the comprehension question's options (or none)
        return [str(o) for o in trial.mat.get("question_options") or ()] or [""]
    s = exp.task.settings()
    if getattr(s, "labels", None):
        return [str(lab.value) for lab in s.labels]
    if trial.mat.get("target"):  # completion: the target, its accepted variants, one other word (typed)
        return [str(trial.mat["target"]), *[str(a) for a in trial.mat.get("accepted") or ()], "window"]
    if trial.mat.get("options"):
        return [str(o) for o in trial.mat["options"]]
    return [str(v) for v in s.scale.values]


def write_people(exp: Experiment, out: Path, ids: list[str], p_right: float = 0.8, seed: int = 7) -> list[Path]:
    from participants.rows import table_columns

    paths = []
    for _k, pid in enumerate(ids):
        rng = random.Random(f"{seed}:{pid}")
        seq = compile_sequence(exp, pid)
        w = SessionWriter.create(out, experiment=exp.name, subject_id=pid, session=1, subject_kind="human",
                                 spec_hash=seq.spec_hash, sequence_hash=seq.sequence_hash, n_trials=len(seq),
                                 metadata={"seed": seq.seed}, sequence=seq, columns=table_columns(seq))
        for t in seq:
            opts = options_of(exp, t)
            ans = t.mat.get("answer", t.mat.get("target", t.mat.get("question_answer")))
            if (t.task or exp.task.kind) == "violation_detection":
                ans = t.study_record.correct_response
            right = str(ans) if ans is not None and str(ans) in opts else None
            resp = right if right is not None and rng.random() < p_right else rng.choice(opts)
            accepted = {right, *(str(a) for a in t.mat.get("accepted") or ())}  # a typed answer's other spellings
            correct = None if right is None else resp in accepted
            fb = None
            if t.feedback and correct is not None:  # feedback on a scored answer (the runners' rule)
                fb = exp.feedback.correct_text if correct else exp.feedback.incorrect_text
            row = t.to_row(detection_for(t.task, exp.task) if t.task else None)
            row.update(subject_id=pid, subject_kind="human", session=1, spec_hash=seq.spec_hash,
                       sequence_hash=seq.sequence_hash, response=resp, correct=correct,
                       rt_ms=round(rng.uniform(400, 1500), 1), context_mode="human",
                       feedback_shown=fb is not None, feedback_text=fb, started_at="", ended_at="",
                       extra=json.dumps({}))
            w.append({c: v for c, v in row.items() if c in w.columns} if getattr(w, "columns", None) else row)
        w.close("completed")
        paths.append(w.csv_path if hasattr(w, "csv_path") else out)
    return paths
