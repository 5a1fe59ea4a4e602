"""Turn log trials and results-table rows into trial-table rows (experiments/schema.py).

Log trials give everything (order, words, timings, answers); a results-table row matched to a trial
adds the subject's outlier flag and its line number. Table rows that match no log trial become rows
whose order is unknown (session `unknown`, `extra.order = "unknown"`).

`extra` (JSON) of every imported row holds:
  source        "log+table" | "log" | "table"
  match         exact | answer_mismatch | log_only | subject_not_in_table | no_table | training |
                unfinished | table_only
  order         "log" (chronological, from the session log) | "unknown" (table only)
  trial_type    Acceptable | Violation | Filler (the release's; Filler rows have violation_position other)
  violation_type, slide_num_of_viol, outcome (END_TRIAL / correct_wrong code), valid_answer,
  release_rt_s  the release's RT: first key press minus the onset of slide |Viol_on_slide| (0: none)
  is_outlier    the table's flag for the subject (null when the subject is not in the table)
  log_file, log_line (FIX_ON), log_block, log_trial; table_line (when matched)
  key_presses   early key presses before the panel (key_presses_total: all), early_response_phase
  panel_on_ms, feedback_on_ms, feedback_off_ms (from the trial's FIX_ON)
  table_outcome, table_release_rt_s   (answer_mismatch only: the table's values)
"""
from __future__ import annotations

import json
from datetime import timedelta

import numpy as np
import pandas as pd

from analysis.importers.lakretz_format import (
    CRITICAL_UNIT, PANEL_RESPONSE, STRUCTURE_OF_TYPE, VALID_ANSWER_OF_OUTCOME, dependency_of, trial_type_of_slide,
)
from analysis.importers.lakretz_logs import LogFile

EXPERIMENT = "lakretz2021"


def subject_id(number: int) -> str:
    """The twinlab id of a release subject (letters and digits, as Psych-DS file names need): 21 -> L21."""
    return f"L{int(number)}"


def _none(x):
    if x is None or x is pd.NA:
        return None
    if isinstance(x, float) and np.isnan(x):
        return None
    return x


def _positions(stype: pd.Series, trial_type: pd.Series, vtype: pd.Series) -> pd.Series:
    dep = pd.Series([dependency_of(s, v) for s, v in zip(stype, vtype)], index=stype.index, dtype=object)
    return pd.Series(np.where(trial_type == "Acceptable", "none", np.where(trial_type == "Violation", dep, "other")),
                     index=stype.index)


def _correct_of_outcome(outcome: pd.Series) -> list:
    va = outcome.map(VALID_ANSWER_OF_OUTCOME)
    return [True if a == "CORRECT" else (False if a == "WRONG" else None) for a in va]


def _iso(start, seconds: float | None) -> str | None:
    if seconds is None or seconds != seconds:
        return None
    return (start + timedelta(seconds=float(seconds))).isoformat(timespec="milliseconds")


def _ms(x: float) -> float | None:
    return None if x is None or x != x else round(float(x) * 1000.0, 3)


def log_rows(trials: pd.DataFrame, logs: list[LogFile], table: pd.DataFrame | None) -> pd.DataFrame:
    """Trial-table rows for every log trial, with `extra`; `trials` carries `table_idx` and `match`.

    Returns a frame of row dicts' values (schema columns) plus `_subject`, `_session`, `_file`.
    """
    lf_of = {i: lf for i, lf in enumerate(logs)}
    tt = trials["vslide"].astype(int).map(trial_type_of_slide)
    vpos = _positions(trials["stype"], tt, trials["vtype"].fillna("None"))
    rows = []
    outlier_of = {}
    if table is not None and len(table):
        outlier_of = table.groupby("subject")["is_outlier"].agg(lambda s: bool(s.fillna(False).any()) if s.notna().any() else None).to_dict()
    correct = _correct_of_outcome(trials["outcome"])
    for i, tr in enumerate(trials.itertuples(index=False)):
        lf = lf_of[tr.file]
        units = list(tr.units) if isinstance(tr.units, list) else []
        onsets = list(tr.onsets) if isinstance(tr.onsets, list) else []
        offs = list(tr.offs) if isinstance(tr.offs, list) else []
        t0 = tr.t_fix
        answered = isinstance(tr.panel_word, str) and tr.panel_word != ""
        finished = bool(tr.finished)
        ttype = tt.iat[i]
        position = vpos.iat[i]
        crit_unit = CRITICAL_UNIT.get((tr.stype, tr.vtype)) if ttype != "Acceptable" else None
        if crit_unit is not None and crit_unit >= len(units):
            crit_unit = None
        table_idx = _none(tr.table_idx)
        extra = {
            "source": "log+table" if table_idx is not None else "log",
            "match": tr.match,
            "order": "log",
            "trial_type": ttype,
            "violation_type": tr.vtype,
            "slide_num_of_viol": int(tr.vslide),
            "outcome": _none(tr.outcome),
            "valid_answer": VALID_ANSWER_OF_OUTCOME.get(tr.outcome) if finished else None,
            "release_rt_s": _none(tr.release_rt_s),
            "is_outlier": outlier_of.get(lf.subject),
            "log_file": lf.path.name,
            "log_line": int(tr.line),
            "log_block": int(tr.block),
            "log_trial": int(tr.trial),
            "table_line": int(table.at[table_idx, "line"]) if table_idx is not None else None,
            "key_presses": int(tr.n_keys),
            "key_presses_total": int(tr.n_keys_total),
            "early_response_phase": _none(tr.key_phase),
            "panel_on_ms": _ms(tr.t_panel_on - t0),
            "feedback_on_ms": _ms(tr.t_feedback_on - t0),
            "feedback_off_ms": _ms(tr.t_feedback_off - t0),
        }
        if tr.match == "answer_mismatch":
            extra["table_outcome"] = _none(table.at[table_idx, "outcome"])
            extra["table_release_rt_s"] = _none(table.at[table_idx, "release_rt_s"])
        if not finished:
            extra["unfinished"] = True
        t_end = next((t for t in (tr.t_feedback_off, tr.t_feedback_on, tr.t_panel_on,
                                  offs[-1] if offs else None) if t is not None and t == t), None)
        rows.append({
            "subject_id": subject_id(lf.subject),
            "subject_kind": "human",
            "session": lf.session,
            "experiment": EXPERIMENT,
            "block": "training" if lf.training else "main",
            "structure": STRUCTURE_OF_TYPE[tr.stype],
            "condition": tr.condition,
            "dependency": position if position in ("inner", "outer") else None,
            "violation_position": position,
            "grammatical": ttype == "Acceptable",
            "words": " ".join(units) if units else None,
            "rsvp_units": json.dumps(units, ensure_ascii=False) if any(" " in u for u in units) else None,
            "critical_index": (sum(len(u.split()) for u in units[:crit_unit]) if crit_unit is not None else None),
            "critical_word": units[crit_unit] if crit_unit is not None else None,
            "correct_response": "no_violation" if ttype == "Acceptable" else "violation",
            "feedback": True,
            "response": (PANEL_RESPONSE.get(tr.panel_word if answered else "", "none") if finished else None),
            "correct": correct[i] if finished else None,
            "response_mode": "panel",
            "rt_ms": _ms(tr.panel_rt_s) if answered else None,
            "rt_sentence_end_ms": _ms(tr.t_panel_on + tr.panel_rt_s - tr.t_last_off) if answered else None,
            "early_response": (PANEL_RESPONSE.get(tr.key_word, str(tr.key_word).lower()) if tr.n_keys else None),
            "early_response_unit": int(tr.key_slide) - 1 if tr.n_keys and _none(tr.key_slide) is not None else None,
            "early_response_ms": _ms(tr.key_time - onsets[0]) if tr.n_keys and onsets else None,
            "word_onsets_ms": json.dumps([round((t - t0) * 1000.0, 1) for t in onsets]),
            "word_durations_ms": json.dumps([round((b - a) * 1000.0, 1) if b == b else None for a, b in zip(onsets, offs)]),
            "context_mode": "human",
            "feedback_shown": bool(tr.t_feedback_on == tr.t_feedback_on),
            "started_at": _iso(lf.started, t0 - tr.t_grand_start) if tr.t_grand_start == tr.t_grand_start else None,
            "ended_at": (_iso(lf.started, t_end - tr.t_grand_start)
                         if t_end is not None and tr.t_grand_start == tr.t_grand_start else None),
            "extra": json.dumps(extra, separators=(",", ":"), ensure_ascii=False),
            "_subject": lf.subject,
            "_session": lf.session,
            "_file": tr.file,
        })
    return pd.DataFrame(rows)


def table_rows(table: pd.DataFrame, match: str = "table_only") -> pd.DataFrame:
    """Rows from results-table rows alone: no words or timings, order unknown (session `unknown`)."""
    tt = table["trial_type"]
    vpos = _positions(table["stype"], tt, table["vtype"])
    correct = table["valid_answer"].map({"CORRECT": True, "WRONG": False})
    rows = []
    for i, r in enumerate(table.itertuples(index=False)):
        position = vpos.iat[i]
        c = _none(correct.iat[i])
        truth = "no_violation" if r.trial_type == "Acceptable" else "violation"
        flip = "violation" if truth == "no_violation" else "no_violation"
        extra = {
            "source": "table", "match": match, "order": "unknown", "trial_type": r.trial_type,
            "violation_type": r.vtype, "slide_num_of_viol": _none(r.vslide), "outcome": _none(r.outcome),
            "valid_answer": r.valid_answer, "release_rt_s": _none(r.release_rt_s), "is_outlier": _none(r.is_outlier),
            "table_line": int(r.line), "table_trial_num": int(r.trial_num),
        }
        rows.append({
            "subject_id": subject_id(r.subject), "subject_kind": "human", "session": None,
            "experiment": EXPERIMENT, "block": "main", "structure": r.structure, "condition": r.condition,
            "dependency": position if position in ("inner", "outer") else None, "violation_position": position,
            "grammatical": r.trial_type == "Acceptable", "correct_response": truth, "feedback": True,
            "response": (truth if c else flip) if c is not None else "none", "correct": c,
            "response_mode": "panel", "context_mode": "human", "feedback_shown": True,
            "extra": json.dumps(extra, separators=(",", ":"), ensure_ascii=False),
            "_subject": int(r.subject), "_session": None, "_file": None,
        })
    return pd.DataFrame(rows)
