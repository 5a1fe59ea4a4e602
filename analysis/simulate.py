"""Simulated subjects with known parameters: for tests (parameter recovery) and dry runs of the report.

Sessions are written with the real `SessionWriter` from real compiled sequences, so the analysis
reads exactly what a runner would have written. Responses come from a logistic error model:

    logit P(error) = base(structure, condition, violation) + slope * exposures + session_effect * (session-1)
                     + u_subject,   u_subject ~ Normal(0, subject_sd)

where `exposures` follows the definition in analysis/load/prepare.py (earlier post-training trials of
the same structure x condition x violation position). A study's own simulation (its cells' error rates,
rows in its release's format: e.g. `lampinen_like_model`, `simulate_lakretz_rows`) lives in the study
(`SIMULATION` in its `__init__` names the module: studies/lakretz2021/simulate.py) and is imported from there.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from analysis.load.prepare import is_training_block
from experiments.design_compiler import compile_sequence
from experiments.session import SessionWriter
from experiments.spec import load_spec


def logistic(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def logit(p: float) -> float:
    return math.log(p / (1.0 - p))


@dataclass
class ErrorModel:
    """Known generating parameters (log-odds of an error)."""

    base: dict[tuple[str, str, str], float] = field(default_factory=dict)  # (structure, condition, violation)
    default_logit: float = logit(0.15)
    grammatical_logit: float = logit(0.05)  # false alarms
    slope: float = 0.0
    session_effect: float = 0.0
    subject_sd: float = 0.0
    slope_sd: float = 0.0  # SD of the subjects' own exposure slopes (random slopes)

    def logit_error(self, structure: str, condition: str, violation: str, exposures: int, session: int,
                    u: float, v: float = 0.0) -> float:
        if violation == "none":
            b = self.grammatical_logit
        else:
            b = self.base.get((structure, condition, violation), self.default_logit)
        return b + (self.slope + v) * exposures + self.session_effect * (session - 1) + u


def simulate_sessions(
    root: str | Path,
    n_subjects: int,
    *,
    spec: str = "lakretz2021_nested",
    error_model: ErrorModel | None = None,
    seed: int = 0,
    sessions: int = 1,
    subject_kind: str = "human",
    prefix: str = "S",
    model: str | None = None,
    context_mode: str | None = None,
    protocol: str | None = None,
    margin_fn: Callable[[np.random.Generator, bool], float] | None = None,
    trials: int | None = None,
    mark_simulated: bool = True,
) -> list[Path]:
    """Write `n_subjects` x `sessions` session files under `root`; return the CSV paths.

    Human sessions carry `participant.simulated: true` in their sidecar, so the analysis reports them
    as the group "human (simulated)"; `mark_simulated=False` (tests only) lets them stand in for real
    participants to exercise the analyses that only real humans get (Table C1 beside the paper, ...).

    Model subjects get `protocol`, option columns and a margin (sign agrees with `correct`).
    """
    exp = load_spec(spec)
    em = error_model or ErrorModel()
    rng = np.random.default_rng(seed)
    paths: list[Path] = []
    for k in range(1, n_subjects + 1):
        subject_id = f"{prefix}{k:02d}"
        u = rng.normal(0.0, em.subject_sd) if em.subject_sd > 0 else 0.0
        v = rng.normal(0.0, em.slope_sd) if em.slope_sd > 0 else 0.0  # drawn only when asked: old seeds stay put
        counts: dict[tuple[str, str, str], int] = {}
        for session in range(1, sessions + 1):
            seq = compile_sequence(exp, subject_id, seed=exp.seed + 1000 * (session - 1))
            seq_hash = seq.sequence_hash  # a property that hashes the whole sequence: compute once
            meta = {"model": {"name": model}} if model else {"participant": {"simulated": mark_simulated}}
            with SessionWriter.create(
                root, experiment=exp.name, subject_id=subject_id, session=session, subject_kind=subject_kind,
                spec_hash=exp.spec_hash, sequence_hash=seq_hash,
                n_trials=len(seq) if trials is None else trials, metadata=meta,
            ) as writer:
                for t in list(seq)[: trials]:
                    training = bool(is_training_block(pd.Series([t.block])).iloc[0])
                    rec = t.study_record  # the study's record of the trial (its cell, forms and answer)
                    cell = (rec.structure, t.condition, rec.violation_position)
                    exposures = 0 if training else counts.get(cell, 0)
                    if not training:
                        counts[cell] = exposures + 1
                    p = logistic(em.logit_error(*cell, exposures, session, u, v))
                    correct = bool(rng.random() >= p)
                    said_violation = (rec.correct_response == "violation") == correct
                    row = t.to_row() | {
                        "subject_id": subject_id, "subject_kind": subject_kind, "session": session,
                        "spec_hash": exp.spec_hash, "sequence_hash": seq_hash,
                        "response": "violation" if said_violation else "no_violation", "correct": correct,
                        "feedback_shown": t.feedback, "context_mode": context_mode or (
                            "human" if subject_kind == "human" else "none"),
                    }
                    if subject_kind == "human":
                        row["rt_ms"] = float(np.round(rng.normal(650, 120), 1)) if said_violation else None
                    else:
                        m = (margin_fn(rng, correct) if margin_fn
                             else (abs(rng.normal(1.5, 1.0)) * (1 if correct else -1)))
                        row |= {"protocol": protocol or "forced_choice", "margin": float(m),
                                "option_labels": json.dumps([rec.correct_form, rec.alternative_word if rec.grammatical
                                                             else rec.critical_word]),
                                "option_logprobs": json.dumps([-5.0, -5.0 - float(m)])}
                    writer.append(row)
            paths.append(writer.csv_path)
    return paths


def simulate_exposure_frame(n_subjects: int, n_exposures: int, slope: float, intercept: float,
                            subject_sd: float, seed: int = 0) -> pd.DataFrame:
    """A plain frame (subject, exposures, error) from the random-intercept logistic model."""
    rng = np.random.default_rng(seed)
    u = rng.normal(0.0, subject_sd, n_subjects) if subject_sd > 0 else np.zeros(n_subjects)
    subj = np.repeat(np.arange(n_subjects), n_exposures)
    x = np.tile(np.arange(n_exposures), n_subjects)
    p = 1.0 / (1.0 + np.exp(-(intercept + slope * x + u[subj])))
    return pd.DataFrame({"subject": [f"S{s:03d}" for s in subj], "exposures": x,
                         "error": (rng.random(len(x)) < p).astype(int)})
