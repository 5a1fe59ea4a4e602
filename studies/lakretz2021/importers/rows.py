"""Turn log trials and results-table rows into trial-table rows (experiments/schema.py).

Log trials give everything (order, words, timings, answers); a results-table row matched to a trial
adds the subject's outlier flag and its line number. Table rows that match no log trial become rows
whose order is unknown (session `unknown`, `extra.order = "unknown"`).

`extra` (JSON) of every imported row holds:
  source        "log+table" | "log" | "table"
  match         exact (table row matched to its log trial) | answer_mismatch (matched on the stimulus,
                answers differ) | log_only (no table row; subject in the table) | subject_not_in_table |
                no_table (no --results given) | training (train_ log) | unfinished (log ends inside
                it) | table_only (table row without a log trial) | no_logs (no --logs given)
  order         "log" (chronological, from the session log) | "unknown" (table only)
  trial_type    Acceptable | Violation | Filler (the release's; Filler rows have violation_position other)
  violation_type, slide_num_of_viol, outcome (END_TRIAL / correct_wrong code), valid_answer,
  release_rt_s  the release's RT: first key press minus the onset of slide |Viol_on_slide| (0: none)
  is_outlier    the table's flag for the subject (null when the subject is not in the table)
  log_file, log_line (FIX_ON), log_block, log_trial; table_line (when matched)
  key_presses   early key presses before the panel (key_presses_total: all); early_response_phase:
                sentence (during the RSVP) or panel_delay (the fixation between sentence and panel)
  sentence_end_ms (last unit's offset), panel_fixation_onset_ms (FIX2PANEL_ON), panel_onset_ms,
                feedback_onset_ms, feedback_offset_ms: ms from the trial's FIX_ON (the names the
                PsychoPy runner uses in its own `extra`)
  table_outcome, table_release_rt_s   (answer_mismatch only: the table's values)
"""
from __future__ import annotations

import json
from typing import NamedTuple

import numpy as np
import pandas as pd

from studies.lakretz2021.importers.format import (
    CRITICAL_UNIT,
    PANEL_RESPONSE,
    STRUCTURE_OF_TYPE,
    VALID_ANSWER_OF_OUTCOME,
    dependency_of,
    trial_type_of_slide,
)
from studies.lakretz2021.importers.logs import LogFile

EXPERIMENT = "lakretz2021"


class RowKey(NamedTuple):
    """What the writer needs to know of a row besides its columns: where it goes and how to count it."""

    subject: int
    session: int | None  # None: order unknown
    file: int | None  # index of its log
    match: str
    outlier: bool | None
    unfinished: bool


def subject_id(number: int) -> str:
    """The twinlab id of a release subject (letters and digits, as Psych-DS file names need): 21 -> L21."""
    return f"L{int(number)}"


def _none(x):
    if x is None or x is pd.NA:
        return None
    if isinstance(x, float) and np.isnan(x):
        return None
    return x


def _plain(x):
    """numpy/pandas scalars -> Python ones (for JSON)."""
    x = _none(x)
    return x.item() if hasattr(x, "item") else x


def _positions(stype: pd.Series, trial_type: pd.Series, vtype: pd.Series) -> pd.Series:
    dep = pd.Series([dependency_of(s, v) for s, v in zip(stype, vtype, strict=False)], index=stype.index, dtype=object)
    return pd.Series(np.where(trial_type == "Acceptable", "none", np.where(trial_type == "Violation", dep, "other")),
                     index=stype.index)


def _correct_of_outcome(outcome: pd.Series) -> list:
    va = outcome.map(VALID_ANSWER_OF_OUTCOME)
    return [True if a == "CORRECT" else (False if a == "WRONG" else None) for a in va]


def _ms(x: float) -> float | None:
    """Seconds -> ms, None when missing (rounded to 1e-6 ms: float noise only, the release's digits kept)."""
    return None if x is None or x != x else round(float(x) * 1000.0, 6)


def _ms3(x: float) -> float | None:
    """ms -> ms (3 decimals), None when missing."""
    return None if x is None or x != x else round(float(x), 3)


def _json_floats(values: list[float]) -> str:
    """A JSON list of floats (NaN -> null), as json.dumps writes it, without the encoder's overhead."""
    return "[" + ", ".join("null" if v != v else repr(v) for v in values) + "]"


def _array(frame: pd.DataFrame, column: str) -> np.ndarray:
    """A column as a numpy object array with None for missing values (fast to index in a loop)."""
    s = frame[column]
    out = np.array(s.astype(object).to_numpy(), dtype=object)  # a writable copy
    out[s.isna().to_numpy()] = None
    return out


def _local_iso(started: pd.Series, seconds: pd.Series) -> np.ndarray:
    """Local ISO times (ms) = the log's start time (from its name) + seconds on the PsychoPy clock."""
    t = pd.to_datetime(started) + pd.to_timedelta(seconds, unit="s")
    return _array(pd.DataFrame({"t": t.dt.strftime("%Y-%m-%dT%H:%M:%S.%f").str[:-3]}), "t")


def _outlier_flags(table: pd.DataFrame | None) -> dict:
    """Subject -> the table's outlier flag (None when the table says nothing for the subject)."""
    outlier_of: dict = {}
    if table is not None and len(table):
        flags = table.groupby("subject")["is_outlier"]
        outlier_of = {k: (bool(v.fillna(False).any()) if v.notna().any() else None) for k, v in flags}
    return outlier_of


def _trial_columns(trials: pd.DataFrame, logs: list[LogFile], table: pd.DataFrame | None) -> dict[str, list]:
    """Every per-trial value the rows need, computed at once and kept as plain Python lists: indexing
    them in the per-row loop is much cheaper than indexing numpy arrays or frames."""
    n = len(trials)
    tt = trials["vslide"].astype(int).map(trial_type_of_slide)
    vpos = _positions(trials["stype"], tt, trials["vtype"].fillna("None")).to_numpy(dtype=object)
    tt = tt.to_numpy(dtype=object)
    correct = _correct_of_outcome(trials["outcome"])
    tidx = trials["table_idx"]
    table_line = np.full(n, None, dtype=object)
    if table is not None and tidx.notna().any():
        has = tidx.notna().to_numpy()
        table_line[has] = table["line"].to_numpy()[tidx[has].astype("int64").to_numpy()]
    started = trials["file"].map(lambda f: logs[f].started)
    t_end = (trials["t_feedback_off"].fillna(trials["t_feedback_on"]).fillna(trials["t_panel_on"])
             .fillna(trials["t_last_off"]))
    started_at = _local_iso(started, trials["t_fix"] - trials["t_grand_start"])
    ended_at = _local_iso(started, t_end - trials["t_grand_start"])
    rel = {"rel_" + c: ((trials[c] - trials["t_fix"]).to_numpy(dtype="float64") * 1000.0).tolist()
           for c in ("t_last_off", "t_fix2panel", "t_panel_on", "t_feedback_on", "t_feedback_off")}
    rt_end = ((trials["t_panel_on"] + trials["panel_rt_s"] - trials["t_last_off"]) * 1000.0
              ).to_numpy(dtype="float64").tolist()
    c = {name: _array(trials, name).tolist() for name in (
        "file", "units", "onsets", "offs", "panel_word", "finished", "stype", "vtype", "table_idx", "match",
        "vslide", "outcome", "release_rt_s", "line", "block", "trial", "n_keys", "n_keys_total", "key_phase",
        "key_word", "key_slide", "key_time", "panel_rt_s", "t_fix", "t_feedback_on", "condition")}
    c.update(rel)
    c.update(started_at=started_at.tolist(), ended_at=ended_at.tolist(), table_line=table_line.tolist(),
             vpos=vpos.tolist(), tt=tt.tolist(), correct=correct, rt_end=rt_end)
    return c


def _log_extra(c: dict[str, list], i: int, lf: LogFile, outlier_of: dict, table: pd.DataFrame | None) -> dict:
    """Trial i's `extra` (the module docstring lists its keys, in this order)."""
    finished = bool(c["finished"][i])
    outcome = c["outcome"][i]
    table_idx = c["table_idx"][i]
    table_line = c["table_line"][i]
    extra = {
        "source": "log+table" if table_idx is not None else "log",
        "match": c["match"][i],
        "order": "log",
        "trial_type": c["tt"][i],
        "violation_type": c["vtype"][i],
        "slide_num_of_viol": int(c["vslide"][i]),
        "outcome": outcome,
        "valid_answer": VALID_ANSWER_OF_OUTCOME.get(outcome) if finished else None,
        "release_rt_s": c["release_rt_s"][i],
        "is_outlier": outlier_of.get(lf.subject),
        "log_file": lf.path.name,
        "log_line": int(c["line"][i]),
        "log_block": int(c["block"][i]),
        "log_trial": int(c["trial"][i]),
        "table_line": None if table_line is None else int(table_line),
        "key_presses": int(c["n_keys"][i]),
        "key_presses_total": int(c["n_keys_total"][i]),
        "early_response_phase": c["key_phase"][i],
        "sentence_end_ms": _ms3(c["rel_t_last_off"][i]),
        "panel_fixation_onset_ms": _ms3(c["rel_t_fix2panel"][i]),
        "panel_onset_ms": _ms3(c["rel_t_panel_on"][i]),
        "feedback_onset_ms": _ms3(c["rel_t_feedback_on"][i]),
        "feedback_offset_ms": _ms3(c["rel_t_feedback_off"][i]),
    }
    if extra["match"] == "answer_mismatch":
        extra["table_outcome"] = _plain(table.at[table_idx, "outcome"])
        extra["table_release_rt_s"] = _plain(table.at[table_idx, "release_rt_s"])
    if not finished:
        extra["unfinished"] = True
    return extra


def _log_row(c: dict[str, list], i: int, lf: LogFile, extra: dict) -> dict:
    """Trial i as a trial-table row (the schema's column order), `extra` written as compact JSON."""
    units = c["units"][i] or []
    onsets = c["onsets"][i] if c["onsets"][i] is not None else np.empty(0)
    offs = c["offs"][i] if c["offs"][i] is not None else np.empty(0)
    t0 = c["t_fix"][i]
    panel = c["panel_word"][i]
    answered = bool(panel)
    finished = bool(c["finished"][i])
    ttype = c["tt"][i]
    position = c["vpos"][i]
    stype, vtype = c["stype"][i], c["vtype"][i]
    crit_unit = CRITICAL_UNIT.get((stype, vtype)) if ttype != "Acceptable" else None
    if crit_unit is not None and crit_unit >= len(units):
        crit_unit = None
    n_keys = int(c["n_keys"][i])
    key_slide = c["key_slide"][i]
    return {
        "subject_id": subject_id(lf.subject),
        "subject_kind": "human",
        "session": lf.session,
        "experiment": EXPERIMENT,
        "block": "training" if lf.training else "main",
        "structure": STRUCTURE_OF_TYPE[stype],
        "condition": c["condition"][i],
        "dependency": position if position in ("inner", "outer") else None,
        "violation_position": position,
        "grammatical": ttype == "Acceptable",
        "words": " ".join(units) if units else None,
        "rsvp_units": json.dumps(units, ensure_ascii=False) if any(" " in u for u in units) else None,
        "critical_index": (sum(len(u.split()) for u in units[:crit_unit]) if crit_unit is not None else None),
        "critical_word": units[crit_unit] if crit_unit is not None else None,
        "correct_response": "no_violation" if ttype == "Acceptable" else "violation",
        "feedback": True,
        "response": (PANEL_RESPONSE.get(panel or "", "none") if finished else None),
        "correct": c["correct"][i] if finished else None,
        "response_mode": "panel",
        "rt_ms": _ms(c["panel_rt_s"][i]) if answered else None,
        "rt_sentence_end_ms": _ms3(c["rt_end"][i]) if answered else None,
        "early_response": (PANEL_RESPONSE.get(c["key_word"][i], str(c["key_word"][i]).lower()) if n_keys else None),
        "early_response_unit": int(key_slide) - 1 if n_keys and key_slide is not None else None,
        "early_response_ms": _ms(c["key_time"][i] - onsets[0]) if n_keys and len(onsets) else None,
        "word_onsets_ms": _json_floats(np.round((onsets - t0) * 1000.0, 1).tolist()),
        "word_durations_ms": _json_floats(np.round((offs - onsets) * 1000.0, 1).tolist()),
        "context_mode": "human",
        "feedback_shown": c["t_feedback_on"][i] is not None,
        "started_at": c["started_at"][i],
        "ended_at": c["ended_at"][i],
        "extra": json.dumps(extra, separators=(",", ":"), ensure_ascii=False),
    }


def log_rows(trials: pd.DataFrame, logs: list[LogFile],
             table: pd.DataFrame | None) -> tuple[list[dict], list[RowKey]]:
    """Trial-table rows (dicts) for every log trial, with `extra`, and each row's RowKey.

    `trials` carries `table_idx` and `match` (lakretz2021._label_trials).
    """
    outlier_of = _outlier_flags(table)
    c = _trial_columns(trials, logs, table)
    rows: list[dict] = []
    keys: list[RowKey] = []
    for i in range(len(trials)):
        lf = logs[c["file"][i]]
        extra = _log_extra(c, i, lf, outlier_of, table)
        rows.append(_log_row(c, i, lf, extra))
        keys.append(RowKey(lf.subject, lf.session, c["file"][i], extra["match"], extra["is_outlier"],
                           not bool(c["finished"][i])))
    return rows, keys


def table_rows(table: pd.DataFrame, match: str = "table_only") -> tuple[list[dict], list[RowKey]]:
    """Rows from results-table rows alone: no words or timings, order unknown (session `unknown`)."""
    tt = table["trial_type"]
    vpos = _positions(table["stype"], tt, table["vtype"])
    correct = table["valid_answer"].map({"CORRECT": True, "WRONG": False})
    rows: list[dict] = []
    keys: list[RowKey] = []
    for i, r in enumerate(table.itertuples(index=False)):
        position = vpos.iat[i]
        c = _none(correct.iat[i])
        truth = "no_violation" if r.trial_type == "Acceptable" else "violation"
        flip = "violation" if truth == "no_violation" else "no_violation"
        extra = {
            "source": "table", "match": match, "order": "unknown", "trial_type": r.trial_type,
            "violation_type": r.vtype, "slide_num_of_viol": _plain(r.vslide), "outcome": _plain(r.outcome),
            "valid_answer": r.valid_answer, "release_rt_s": _plain(r.release_rt_s), "is_outlier": _plain(r.is_outlier),
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
        })
        keys.append(RowKey(int(r.subject), None, None, match, extra["is_outlier"], False))
    return rows, keys
