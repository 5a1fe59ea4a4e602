"""Simulated Lakretz subjects with known parameters (moved from analysis/simulate.py, which keeps the error
model and the session writer and lends these by name): error rates like seeds/000's Table C1, and rows in the
Lakretz et al. (2021) results format."""
from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.simulate import ErrorModel, logistic, logit
from studies.lakretz2021.frame import STRUCTURE_OF


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
        for _k in range(n_fillers):
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
