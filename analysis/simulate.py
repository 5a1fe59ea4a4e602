"""Simulated subjects with known parameters: for tests (parameter recovery) and dry runs of the report.

Sessions are written with the real `SessionWriter` from real compiled sequences, so the analysis
reads exactly what a runner would have written. Responses come from a logistic error model:

    logit P(error) = base(structure, condition, violation) + slope * exposures + session_effect * (session-1)
                     + u_subject,   u_subject ~ Normal(0, subject_sd)

where `exposures` follows the definition in analysis/load/prepare.py (earlier post-training trials of
the same structure x condition x violation position).
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
from studies.lakretz2021.frame import STRUCTURE_OF
from experiments.compiler import compile_sequence
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


def lampinen_like_model(slope: float = -0.25, subject_sd: float = 0.8, slope_sd: float = 0.0) -> ErrorModel:
    """Error rates roughly like the human first-encounter table (seeds/000 Table C1), inner PSP hard."""
    inner = {"SSS": 0.15, "SSP": 0.33, "SPP": 0.40, "SPS": 0.27, "PPP": 0.11, "PPS": 0.20, "PSS": 0.62, "PSP": 0.54}
    outer = {"SSS": 0.24, "SSP": 0.33, "SPP": 0.29, "SPS": 0.26, "PPP": 0.26, "PPS": 0.35, "PSS": 0.18, "PSP": 0.35}
    base = {("long_nested", c, "inner"): logit(p) for c, p in inner.items()}
    base |= {("long_nested", c, "outer"): logit(p) for c, p in outer.items()}
    for c in ("SS", "SP", "PS", "PP"):
        base[("short_nested", c, "inner")] = logit(0.25 if c[0] != c[1] else 0.1)
        base[("short_nested", c, "outer")] = logit(0.12)
    return ErrorModel(base=base, default_logit=logit(0.08), slope=slope, subject_sd=subject_sd, slope_sd=slope_sd)


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
                    cell = (t.structure, t.condition, t.violation_position)
                    exposures = 0 if training else counts.get(cell, 0)
                    if not training:
                        counts[cell] = exposures + 1
                    p = logistic(em.logit_error(*cell, exposures, session, u, v))
                    correct = bool(rng.random() >= p)
                    said_violation = (t.correct_response == "violation") == correct
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
                        m = margin_fn(rng, correct) if margin_fn else (abs(rng.normal(1.5, 1.0)) * (1 if correct else -1))
                        row |= {"protocol": protocol or "forced_choice", "margin": float(m),
                                "option_labels": json.dumps([t.correct_form, t.alternative_word if t.grammatical else t.critical_word]),
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


LAKRETZ_CONDITIONS = {"objrel_nounpp": ["SSS", "SSP", "SPS", "SPP", "PSS", "PSP", "PPS", "PPP"],
                      "objrel": ["SS", "SP", "PS", "PP"],
                      "embedding_mental_SR": ["SS", "SP", "PS", "PP"],
                      "embedding_mental_LR": ["SSS", "SSP", "SPS", "SPP", "PSS", "PSP", "PPS", "PPP"]}


def simulate_lakretz_rows(n_subjects: int, seed: int = 0, error_model: ErrorModel | None = None,
                          reps: int = 1, n_fillers: int = 4, outliers: tuple[int, ...] = (),
                          rejected_rate: float = 0.0, with_session: bool = False) -> pd.DataFrame:
    """Rows in the Lakretz et al. (2021) results format, sorted by design cells as the public file is."""
    em = error_model or lampinen_like_model(slope=0.0, subject_sd=0.0)
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(1, n_subjects + 1):
        trials = []
        for stype, conds in LAKRETZ_CONDITIONS.items():
            for cond in conds:
                for _ in range(reps):
                    for ttype, vtype in (("Acceptable", "None"), ("Violation", "V1"), ("Violation", "V2")):
                        trials.append((stype, cond, ttype, vtype))
        for k in range(n_fillers):
            trials.append(("objrel", "SS", "Filler", "None"))
        order = rng.permutation(len(trials))
        counts: dict = {}
        n_sessions = 2 if with_session else 1
        per_block = 12
        for pos, ti in enumerate(order):
            stype, cond, ttype, vtype = trials[ti]
            structure = STRUCTURE_OF[stype]
            nested = structure.endswith("nested")
            if ttype == "Violation":
                vpos = ("inner" if vtype == "V1" else "outer") if nested else ("outer" if vtype == "V1" else "inner")
                csv_vpos = vpos if (nested or vtype == "V2") else "other"
            else:
                vpos, csv_vpos = ("none" if ttype == "Acceptable" else "other"), "other"
            cell = (structure, cond, vpos)
            exposures = counts.get(cell, 0)
            counts[cell] = exposures + 1
            p = logistic(em.logit_error(structure, cond, vpos if vpos != "other" else "none", exposures, 1, 0.0))
            answer = "CORRECT" if rng.random() >= p else "WRONG"
            if rng.random() < rejected_rate:
                answer = "REJECTED"
            session = 1 + (pos * n_sessions) // len(order)
            in_session = pos - (session - 1) * (len(order) // n_sessions) if with_session else pos
            block = 1 + in_session // per_block
            row = {
                "subject": s, "sentence_type": stype, "trial_type": ttype,
                "violation_type": vtype, "violation_position": csv_vpos,
                "congruent_subjects": cond[0] == cond[1],
                "congruent_attractor": (cond[1] == cond[2]) if len(cond) > 2 else "",
                "congruent_subjects_attractor": f"{cond[0] == cond[1]}_{cond[1] == cond[2]}" if len(cond) > 2 else "",
                "condition": cond, "correct_wrong": answer if answer != "REJECTED" else "NO_RESPONSE",
                "valid_answer": answer, "block": block, "trial_num": 1 + in_session % per_block,
                "slide_num_of_viol": (-3 if ttype == "Filler" else (0 if ttype == "Acceptable" else 7)),
                "RT": round(float(rng.normal(700, 150)), 1) if answer == "CORRECT" and ttype != "Acceptable" else "",
                "is_outlier": s in outliers,
                "_true_order": pos,
            }
            if with_session:
                row["session"] = session
            rows.append(row)
    df = pd.DataFrame(rows)
    sort = ["subject", "sentence_type", "trial_type", "violation_type", "condition", "block", "trial_num"]
    return df.sort_values(sort, kind="stable").reset_index(drop=True)
