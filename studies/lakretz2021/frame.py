"""Import the public results table of Lakretz et al. (2021) onto the twinlab trial-table schema.

The CSV (one row per trial, both sessions of the main experiment) is sorted by design cells, not by
time, so the trial order is rebuilt from `block` and `trial_num`. The mapping and its ambiguities are
documented in docs/analysis.md; the short version:

- sentence_type -> structure: objrel -> short_nested, objrel_nounpp -> long_nested,
  embedding_mental_SR -> short_successive, embedding_mental_LR -> long_successive.
- violation_type V1/V2 is the first/second verb in linear order: in the nested structures V1 is the
  inner (embedded) verb and V2 the outer (main) verb; in the successive ones V1 is the main verb
  ("says") = outer and V2 the embedded verb = inner (the CSV's own `violation_position` calls the
  successive V1 'other'; we map it to 'outer').
- trial_type Acceptable -> violation_position 'none'; Filler -> 'other' (kept for trial counts and
  order, never scored).
- valid_answer CORRECT/WRONG -> correct True/False; REJECTED -> correct missing (excluded, counted).
- is_outlier subjects are excluded unless keep_outliers=True (as in Lakretz et al. 2021).
- The public CSV holds no training trials (those went to separate `train_` logs), so every imported
  trial is post-training unless `training_blocks` names blocks to treat as training.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from analysis.load.base import LoadError, LoadInfo
from analysis.load.base import read_raw_csv as _read_raw
from experiments.schema import COLUMN_NAMES, DTYPES

LAKRETZ_COLUMNS = (
    "subject", "sentence_type", "trial_type", "violation_type", "violation_position", "congruent_subjects",
    "congruent_attractor", "congruent_subjects_attractor", "condition", "correct_wrong", "valid_answer",
    "block", "trial_num", "slide_num_of_viol", "RT", "is_outlier",
)
LAKRETZ_REQUIRED = ("subject", "sentence_type", "trial_type", "violation_type", "condition", "valid_answer",
                    "block", "trial_num")
STRUCTURE_OF = {
    "objrel": "short_nested",
    "objrel_that": "short_nested",
    "objrel_nounpp": "long_nested",
    "embedding_mental_SR": "short_successive",
    "embedding_mental_LR": "long_successive",
    "embedding_mental": "long_successive",
}
NESTED = {"short_nested", "long_nested"}
EXPERIMENT = "lakretz2021"


def subject_id(subject: str) -> str:
    """The release's subject number as a twinlab subject id (21 -> 'L21')."""
    return "L" + re.sub(r"[^A-Za-z0-9]", "", str(subject).strip())


def _require_values(path, raw: pd.DataFrame, column: str, normalised: pd.Series, allowed: list[str],
                    shown: str) -> None:
    """The first value outside `allowed` is an error naming the file, column and line."""
    bad = ~normalised.isin(allowed)
    if bad.any():
        i = bad[bad].index[0]
        raise LoadError(f"{path}: column {column!r}, line {raw['_line'][i]}: {raw[column][i]!r} is not {shown}")


def _position(structure: str, trial_type: str, violation_type: str) -> str:
    if trial_type == "acceptable":
        return "none"
    if trial_type == "filler":
        return "other"
    v = violation_type.upper()
    if v not in ("V1", "V2"):
        return "other"
    if structure in NESTED:
        return "inner" if v == "V1" else "outer"
    return "outer" if v == "V1" else "inner"


def _num(path: Path, col: str, s: pd.Series) -> pd.Series:
    out = pd.to_numeric(s.str.strip(), errors="coerce")
    bad = out.isna()
    if bad.any():
        i = bad[bad].index[0]
        raise LoadError(f"{path}: column {col!r}, line {int(i) + 2}: {s[i]!r} is not a number "
                        "(the trial order is rebuilt from block and trial_num)")
    return out


def _bool(s: pd.Series) -> pd.Series:
    return s.str.strip().str.lower().isin(["true", "1", "yes"])


def import_lakretz_frame(
    path: str | Path,
    training_blocks: Iterable[str] | None = None,
    keep_outliers: bool = False,
) -> tuple[pd.DataFrame, LoadInfo]:
    """Read one Lakretz et al. (2021) results CSV; return schema-typed rows and what was excluded."""
    path = Path(path)
    info = LoadInfo()
    raw = _checked_rows(path, _read_raw(path))
    if "is_outlier" in raw.columns:
        out = _bool(raw["is_outlier"])
        ids = sorted(set(raw.loc[out, "_subject"].map(subject_id)))
        info.outlier(ids, keep_outliers, int(out.sum()), path.name)
        if not keep_outliers:
            raw = raw[~out]
    raw, order_known = _ordered_rows(path, raw, info)
    train = {str(b) for b in (training_blocks or [])}
    is_train = raw["block"].str.strip().isin(train)
    if train and not is_train.any():
        info.notes.append(f"{path.name}: none of the training blocks {sorted(train)} occur in the file")
    df = _schema_frame(path, raw, _answers(path, raw, info), is_train, order_known)
    if order_known:
        info.notes.append(
            f"{path.name}: Lakretz et al. (2021) format, {raw['_subject'].nunique()} subject(s), {len(df)} trial(s); "
            "order rebuilt from (session, block, trial_num)"
            + ("" if train else "; no training trials in this table (all trials are post-training)")
        )
    else:
        info.notes.append(f"{path.name}: Lakretz et al. (2021) format, {raw['_subject'].nunique()} subject(s), "
                          f"{len(df)} trial(s); trial_index is the row's rank in the file, not its time order")
    return df, info


def _checked_rows(path: Path, raw: pd.DataFrame) -> pd.DataFrame:
    """The required columns, known sentence types and subjects, checked; `_line` and `_subject` added."""
    missing = [c for c in LAKRETZ_REQUIRED if c not in raw.columns]
    if missing:
        raise LoadError(f"{path}: Lakretz results column {missing[0]!r} is missing"
                        + (f" (also: {', '.join(missing[1:])})" if len(missing) > 1 else ""))
    unknown_types = set(raw["sentence_type"].str.strip()) - set(STRUCTURE_OF)
    if unknown_types:
        raise LoadError(f"{path}: column 'sentence_type' has unknown value(s) {sorted(unknown_types)}; "
                        f"known: {', '.join(STRUCTURE_OF)}")
    raw = raw.copy()
    raw["_line"] = raw.index + 2  # the CSV line, for messages after sorting
    raw["_subject"] = raw["subject"].str.strip()
    bad_subj = raw["_subject"] == ""
    if bad_subj.any():
        raise LoadError(f"{path}: column 'subject', line {int(bad_subj[bad_subj].index[0]) + 2}: empty subject")
    return raw


def _ordered_rows(path: Path, raw: pd.DataFrame, info: LoadInfo) -> tuple[pd.DataFrame, bool]:
    """Rows sorted by (subject, session, block, trial_num), and whether that order is the time order."""
    has_session = "session" in raw.columns
    session = _num(path, "session", raw["session"]) if has_session else pd.Series(1, index=raw.index)
    block = _num(path, "block", raw["block"])
    trial_num = _num(path, "trial_num", raw["trial_num"])
    raw = raw.assign(_session=session.astype(int), _block=block, _trial=trial_num)
    dup = raw.duplicated(["_subject", "_session", "_block", "_trial"], keep=False)
    order_known = True
    if dup.any():
        r = raw[dup].iloc[0]
        if has_session:
            raise LoadError(
                f"{path}: subject {r['_subject']}, session {r['session']} has more than one trial at block "
                f"{r['block']}, trial_num {r['trial_num']}; the trial order cannot be rebuilt"
            )
        # The public release merges two sessions per subject without saying which row belongs to
        # which, and trial_num restarts in each: the order is unknown for the whole file. Keep the
        # rows (everything that needs no order still runs) and mark them.
        order_known = False
        n_dup = raw.loc[dup, "_subject"].nunique()
        info.notes.append(
            f"{path.name}: no session column, and trial_num repeats within {n_dup} subject(s) (e.g. subject "
            f"{r['_subject']}, block {r['block']}, trial_num {r['trial_num']}): the file merges sessions, so the "
            "trial order of this file is unknown")
    return (raw.sort_values(["_subject", "_session", "_block", "_trial"], kind="stable").reset_index(drop=True),
            order_known)


def _answers(path: Path, raw: pd.DataFrame, info: LoadInfo) -> dict[str, pd.Series]:
    """Structure, violation position, correctness and the violation / no_violation response of each row."""
    structure = raw["sentence_type"].str.strip().map(STRUCTURE_OF)
    ttype = raw["trial_type"].str.strip().str.lower()
    _require_values(path, raw, "trial_type", ttype, ["acceptable", "violation", "filler"],
                    "Acceptable, Violation or Filler")
    vpos = [_position(s, t, v) for s, t, v in zip(structure, ttype, raw["violation_type"].str.strip(), strict=False)]
    vpos = pd.Series(vpos, index=raw.index)
    answer = raw["valid_answer"].str.strip().str.upper()
    _require_values(path, raw, "valid_answer", answer, ["CORRECT", "WRONG", "REJECTED"], "CORRECT, WRONG or REJECTED")
    correct = pd.Series(pd.NA, index=raw.index, dtype="boolean")
    correct[answer == "CORRECT"] = True
    correct[answer == "WRONG"] = False
    info.exclude(f"REJECTED answers in {path.name}", int((answer == "REJECTED").sum()),
                 "valid_answer=REJECTED (response not usable); correct left empty")
    info.exclude(f"filler trials in {path.name}", int((vpos == "other").sum()),
                 "Filler (or a violation at a non-target word): kept for trial order, never scored")
    said_violation = (correct.fillna(False) & (vpos != "none")) | (~correct.fillna(True) & (vpos == "none"))
    response = pd.Series(np.where(said_violation, "violation", "no_violation"), index=raw.index).where(correct.notna())
    return {"structure": structure, "vpos": vpos, "correct": correct, "response": response}


def _schema_frame(path: Path, raw: pd.DataFrame, ans: dict[str, pd.Series], is_train: pd.Series,
                  order_known: bool) -> pd.DataFrame:
    """The rows in the trial-table schema (plus the loader's extra columns)."""
    vpos = ans["vpos"]
    rt = (pd.to_numeric(raw["RT"].str.strip(), errors="coerce") if "RT" in raw.columns
          else pd.Series(np.nan, index=raw.index))
    trial_index = raw.groupby(["_subject", "_session"]).cumcount()
    block_trial_index = raw.groupby(["_subject", "_session", "_block"]).cumcount()
    block_name = np.where(is_train, "training", "block" + raw["block"].str.strip())
    extra_cols = [c for c in ("violation_type", "violation_position", "correct_wrong", "block", "trial_num",
                              "slide_num_of_viol", "trial_type", "RT") if c in raw.columns]
    extra = raw[extra_cols].apply(lambda r: r.to_json(), axis=1) if len(raw) else pd.Series(dtype="string")
    data = {
        "subject_id": raw["_subject"].map(subject_id),
        "subject_kind": "human",
        "session": raw["_session"] if order_known else pd.Series(pd.NA, index=raw.index, dtype="Int64"),
        "experiment": EXPERIMENT,
        "block": block_name,
        "trial_index": trial_index,
        "block_trial_index": block_trial_index,
        "structure": ans["structure"],
        "condition": raw["condition"].str.strip(),
        "dependency": vpos.where(vpos.isin(["inner", "outer"])),
        "violation_position": vpos,
        "grammatical": vpos == "none",
        "correct_response": np.where(vpos == "none", "no_violation", "violation"),
        "feedback": True,
        "response": ans["response"],
        "correct": ans["correct"],
        # the release's RT is the early key press minus the onset of slide |slide_num_of_viol| (0 without a
        # press), not the panel answer's response time: kept in extra, rt_ms left empty (the logs have it)
        "rt_ms": pd.Series(np.nan, index=raw.index) if len(rt) else rt,
        "response_mode": "panel",
        "context_mode": "human",
        "extra": extra,
    }
    df = pd.DataFrame(index=raw.index)
    for c in COLUMN_NAMES:
        v = data.get(c, pd.NA)
        df[c] = pd.Series(v, index=raw.index) if not isinstance(v, pd.Series) else v
        df[c] = df[c].astype(DTYPES[c]) if DTYPES[c] != "string" else df[c].astype("string")
    df["source_file"] = pd.Series(str(path), index=df.index, dtype="string")
    df["session_status"] = pd.Series("completed", index=df.index, dtype="string")
    df["model"] = pd.Series(pd.NA, index=df.index, dtype="string")
    df["order_known"] = pd.Series(order_known, index=df.index, dtype="boolean")
    df["in_results_table"] = pd.Series(True, index=df.index, dtype="boolean")
    return df
