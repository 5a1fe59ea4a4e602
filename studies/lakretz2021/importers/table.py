"""Read the release's results table (`dataframe_results_all_trials.csv`) into checked, typed columns.

Every value the importer relies on is checked against the release's vocabulary; the first bad one
is an error naming the file, the line and the column (a typo would otherwise become a silent NaN).
"""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.importers import ImportDataError
from stimuli.textfile import read_bytes_bounded
from studies.lakretz2021.importers.format import (
    CONDITIONS_OF_TYPE,
    OUTCOMES,
    STRUCTURE_OF_TYPE,
    TABLE_REQUIRED,
    TABLE_TYPE_OF_LOG,
    TRIAL_TYPES,
    VIOLATION_TYPES,
)

_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no", ""}


def _decode(path: Path) -> str:
    # a FIFO or a device (/dev/zero) is refused before it is opened; a table over 2 GB is not the release's
    data = read_bytes_bounded(path, ImportDataError, "results table", 2_000_000_000)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise ImportDataError(f"{path}: line {line}: byte 0x{data[exc.start]:02x} is not UTF-8 text") from None


def _bad(path: Path, raw: pd.DataFrame, bad: pd.Series, column: str, what: str) -> ImportDataError:
    i = bad[bad].index[0]
    return ImportDataError(f"{path}: line {int(raw.at[i, '_line'])}: column {column!r}: {raw.at[i, column]!r} {what}")


def _int(path: Path, raw: pd.DataFrame, column: str) -> pd.Series:
    s = raw[column].str.strip()
    num = pd.to_numeric(s, errors="coerce")
    bad = num.isna() | (num != num.round())
    if bad.any():
        raise _bad(path, raw, bad, column, "is not a whole number")
    return num.astype("int64")


def _read_raw(path: Path) -> pd.DataFrame:
    """The table's non-blank rows as stripped-header strings with their line numbers (`_line`).

    Why apart: the file-level refusals (missing, a folder, empty, unreadable, columns missing, header
    only) all come before any value is looked at.
    """
    if not path.exists():
        raise ImportDataError(f"{path}: no such file (--results)")
    if path.is_dir():
        raise ImportDataError(f"{path}: --results must be the results CSV, not a folder")
    text = _decode(path)
    if not text.strip():
        raise ImportDataError(f"{path}: file is empty (expected the header line of the results table)")
    try:
        raw = pd.read_csv(io.StringIO(text), dtype=object, keep_default_na=False, skip_blank_lines=False)
    except pd.errors.ParserError as exc:
        raise ImportDataError(f"{path}: not a readable CSV ({str(exc).strip()})") from None
    raw.columns = [c.strip() for c in raw.columns]
    missing = [c for c in TABLE_REQUIRED if c not in raw.columns]
    if missing:
        raise ImportDataError(f"{path}: line 1: results column {missing[0]!r} is missing"
                              + (f" (also: {', '.join(missing[1:])})" if len(missing) > 1 else "")
                              + "; is this the release's dataframe_results_all_trials.csv?")
    raw["_line"] = np.arange(2, len(raw) + 2)
    blank = (raw.drop(columns="_line") == "").all(axis=1)
    raw = raw[~blank].reset_index(drop=True)
    if raw.empty:
        raise ImportDataError(f"{path}: the results table holds only its header line (no trial rows): "
                              "nothing to import; is the file complete?")
    return raw


def _required_columns(path: Path, raw: pd.DataFrame) -> pd.DataFrame:
    """The checked required columns, in the order they are checked (the first bad value is the one named)."""
    subject = _int(path, raw, "subject")
    stype = raw["sentence_type"].str.strip().replace({k: v for k, v in TABLE_TYPE_OF_LOG.items() if k != v})
    bad = ~stype.isin(list(STRUCTURE_OF_TYPE))
    if bad.any():
        raise _bad(path, raw, bad, "sentence_type", f"is not a sentence type of the release "
                   f"({', '.join(STRUCTURE_OF_TYPE)})")
    cond = raw["condition"].str.strip()
    ok = np.array([c in CONDITIONS_OF_TYPE[t] for t, c in zip(stype, cond, strict=False)], dtype=bool)
    bad = pd.Series(~ok, index=raw.index)
    if bad.any():
        i = bad[bad].index[0]
        raise ImportDataError(f"{path}: line {int(raw.at[i, '_line'])}: column 'condition': {cond[i]!r} is not a "
                              f"condition of {stype[i]} ({', '.join(CONDITIONS_OF_TYPE[stype[i]])})")
    ttype = raw["trial_type"].str.strip()
    bad = ~ttype.isin(list(TRIAL_TYPES))
    if bad.any():
        raise _bad(path, raw, bad, "trial_type", f"is not one of {', '.join(TRIAL_TYPES)}")
    vtype = raw["violation_type"].str.strip().replace({"NaN": "None", "": "None"})
    bad = ~vtype.isin(list(VIOLATION_TYPES))
    if bad.any():
        raise _bad(path, raw, bad, "violation_type", f"is not one of {', '.join(VIOLATION_TYPES)}")
    answer = raw["valid_answer"].str.strip().str.upper()
    bad = ~answer.isin(["CORRECT", "WRONG", "REJECTED"])
    if bad.any():
        raise _bad(path, raw, bad, "valid_answer", "is not CORRECT, WRONG or REJECTED")
    trial_num = _int(path, raw, "trial_num")
    return pd.DataFrame({
        "line": raw["_line"].astype("int64"), "subject": subject, "stype": stype, "condition": cond,
        "trial_type": ttype, "vtype": vtype, "trial_num": trial_num, "valid_answer": answer,
        "structure": stype.map(STRUCTURE_OF_TYPE),
    })


def _add_optional_columns(path: Path, raw: pd.DataFrame, out: pd.DataFrame) -> None:
    """The columns a release may lack, checked when present and missing (typed) when absent."""
    if "slide_num_of_viol" in raw.columns:
        out["vslide"] = _int(path, raw, "slide_num_of_viol").astype("Int64")
    else:
        out["vslide"] = pd.Series(pd.NA, index=raw.index, dtype="Int64")
    if "correct_wrong" in raw.columns:
        outcome = raw["correct_wrong"].str.strip().str.upper()
        bad = ~outcome.isin(list(OUTCOMES))
        if bad.any():
            raise _bad(path, raw, bad, "correct_wrong", f"is not one of {', '.join(OUTCOMES)}")
        out["outcome"] = outcome
    else:
        out["outcome"] = pd.Series(pd.NA, index=raw.index, dtype="string")
    if "RT" in raw.columns:
        rt = pd.to_numeric(raw["RT"].str.strip(), errors="coerce")
        bad = rt.isna() & (raw["RT"].str.strip() != "")
        if bad.any():
            raise _bad(path, raw, bad, "RT", "is not a number")
        out["release_rt_s"] = rt
    else:
        out["release_rt_s"] = np.nan
    if "is_outlier" in raw.columns:
        low = raw["is_outlier"].str.strip().str.lower()
        bad = ~low.isin(list(_TRUE | _FALSE))
        if bad.any():
            raise _bad(path, raw, bad, "is_outlier", "is not True or False")
        out["is_outlier"] = pd.array(low.isin(list(_TRUE)), dtype="boolean")
    else:
        out["is_outlier"] = pd.Series(pd.NA, index=raw.index, dtype="boolean")
    for c in ("congruent_subjects", "congruent_attractor", "congruent_subjects_attractor", "violation_position",
              "block"):
        if c in raw.columns:
            out["raw_" + c] = raw[c].str.strip()


def read_table(path: str | Path) -> pd.DataFrame:
    """The table's rows with canonical columns for matching and the raw ones for provenance.

    Columns: line, subject (int), stype (the table's sentence type), condition, trial_type, vtype,
    trial_num, vslide (Int64, missing if the column is absent), outcome (correct_wrong or missing),
    release_rt_s (RT), valid_answer, is_outlier (boolean), structure, plus the raw `congruent_*`.
    """
    path = Path(path)
    raw = _read_raw(path)
    out = _required_columns(path, raw)
    _add_optional_columns(path, raw, out)
    return out
