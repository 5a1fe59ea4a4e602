"""Load trial tables (twinlab sessions, or a study's released table, e.g. the Lakretz et al. 2021 results CSV,
read by the study's frame reader: analysis/load/formats.py) into one tidy frame.

Why a checked loader: a misnamed column or a stray value would otherwise vanish into NaN and bias
an error rate silently. Every problem is a `LoadError` naming the file, the column and, for bad
values, the line.
"""
from __future__ import annotations

import csv
import difflib
import io
import json
from pathlib import Path
from typing import Iterable

import pandas as pd

from analysis.load.base import LoadError, LoadInfo
from analysis.load.base import read_raw_csv as _read_raw
from analysis.load.formats import frame_formats, frame_reader, sniff_study_format
from analysis.load.spec_versions import check_versions, session_version
from analysis.load.subjects import session_identity
from experiments.schema import (
    COLUMN_NAMES,
    DTYPES,
    GENERAL_COLUMN_NAMES,
    GENERIC_COLUMN_NAMES,
    column_names,
    required_columns,
)
from experiments.session import SessionError, scan_table, verified_session_problem
from stimuli.input_rules import raise_csv_field_limit
from stimuli.textfile import regular_file_problem

Format = str  # auto | twinlab | a study's format name (analysis/load/formats.py)
EXTRA_COLUMNS = ("source_file", "session_status", "model", "order_known", "in_results_table", "task_settings",
                 "model_identity", "deterministic")
ALLOWED_VALUES: dict[str, set[str]] = {
    "subject_kind": {"human", "model"},
    "violation_position": {"none", "inner", "outer", "other"},  # other: a filler
    "dependency": {"inner", "outer"},
    "correct_response": {"violation", "no_violation"},
    "response_mode": {"key", "panel"},
}
_TRUE = {"true", "1", "yes", "t"}
_FALSE = {"false", "0", "no", "f"}


# ---- finding files ---------------------------------------------------------------------------
def find_data_files(paths: Iterable[str | Path]) -> list[Path]:
    """Session CSVs from files and folders (`<root>/data/*_data.csv`, or any `*_data.csv` below).

    A folder without session files is an error (a typo in a path should not give an empty report).
    """
    found: list[Path] = []
    for p in paths:
        p = Path(p)
        if not p.exists():
            raise LoadError(f"{p}: no such file or folder")
        if not p.is_dir():
            problem = regular_file_problem(p, "trial table")  # a FIFO would hang, /dev/zero never end
            if problem:
                raise LoadError(f"{p}: {problem}")
            found.append(p)
            continue
        files = sorted((p / "data").glob("*_data.csv")) if (p / "data").is_dir() else []
        files = files or sorted(p.glob("*_data.csv")) or sorted(p.rglob("*_data.csv"))
        if not files:
            files = sorted(p.glob("*.csv"))
        if not files:
            raise LoadError(f"{p}: folder holds no trial tables (expected {p}/data/*_data.csv)")
        found += files
    unique: dict[Path, Path] = {}
    for f in found:
        unique.setdefault(f.resolve(), f)
    return list(unique.values())


def _empty_session(path: Path) -> str | None:
    """Why a file holds no table at all (empty, or a header cut off mid-write), else None."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(65536)
    except OSError as exc:
        raise LoadError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not head.strip():
        return "the file is empty (no header line: the session was stopped before it started)"
    if b"\n" not in head and len(head) < 65536 and head.startswith(b"subject_id,"):
        return "its header line is cut off (the session was stopped while the file was being created)"
    return None


def _read_session_csv(path: Path, info: LoadInfo) -> pd.DataFrame:
    """A twinlab session CSV without its torn last row, if a kill left one (noted, never counted)."""
    try:
        scan = scan_table(path)
    except SessionError as exc:
        raise LoadError(str(exc)) from None
    if not scan.torn or not scan.keep_bytes:  # intact, or not even a header (reported as empty)
        return _read_raw(path)
    info.notes.append(scan.note())
    return _read_raw(io.BytesIO(path.read_bytes()[: scan.keep_bytes]), name=path)


def _check_header_names(path: Path) -> None:
    """A column named twice in the header is refused naming it (pandas would rename the second `x.1`,
    and the loader would then call it an unknown column or read the wrong one)."""
    if str(path).endswith(".gz"):
        return  # read by pandas; a compressed release's header is checked by its importer
    try:
        with open(path, encoding="utf-8-sig", errors="replace", newline="") as fh:
            first = fh.readline(1_000_000)
    except OSError:
        return  # the reader says why
    names = next(csv.reader([first]), [])
    seen: set[str] = set()
    for n in (x.strip() for x in names):
        if n and n in seen:
            raise LoadError(f"{path}: column {n!r} appears more than once in the header line; each column is "
                            "named once (which one would be read?)")
        seen.add(n)


def _header_columns(path: Path) -> list[str]:
    """The column names (the header line only: a torn last row, which the session reader sets aside, is not
    read here, and a large table is not parsed twice); a file pandas cannot read says why as the loader does."""
    try:
        return list(pd.read_csv(path, nrows=0, dtype=str, encoding="utf-8", index_col=False).columns)
    except Exception:  # noqa: BLE001 (any failure: the full reader gives the one message for it)
        return list(_read_raw(path).columns)


def sniff_format(path: Path, columns: Iterable[str]) -> str:
    """A study's format recognised by its columns (e.g. the Lakretz results CSV), else a twinlab session."""
    return sniff_study_format(columns) or "twinlab"


# ---- twinlab sessions ------------------------------------------------------------------------
def is_generic_table(columns: Iterable[str]) -> bool:
    """A table of a general design (docs/general_model.md) carries the generic columns after the schema's."""
    return "item" in set(columns) and "task" in set(columns)


def sidecar_factors(meta: dict) -> dict[str, list[str]] | None:
    """The sidecar's `design.factors` as name -> levels (a mapping, a list of names, or a list of
    {name, levels}); None when the sidecar declares no design."""
    design = meta.get("design")
    if not isinstance(design, dict) or "factors" not in design:
        return None
    f = design["factors"]
    if isinstance(f, dict):
        return {str(k): [str(v) for v in (lv or [])] if isinstance(lv, (list, tuple)) else [] for k, lv in f.items()}
    out: dict[str, list[str]] = {}
    for e in f or []:
        if isinstance(e, dict) and "name" in e:
            out[str(e["name"])] = [str(v) for v in e.get("levels") or []]
        elif isinstance(e, (list, tuple)) and e:
            out[str(e[0])] = [str(v) for v in (e[1] if len(e) > 1 else [])]
        else:
            out[str(e)] = []
    return out


def _check_columns(path: Path, columns: list[str], info: LoadInfo, factors: Iterable[str] = ()) -> None:
    # a general design's table: also the columns a kind declares beyond the layout (a third party's kind)
    known = set(COLUMN_NAMES) | (set(column_names()) | set(factors) if is_generic_table(columns) else set())
    unknown = [c for c in columns if c not in known]
    # a general design's table holds the core's columns, its kinds' and its factors' (no study's)
    missing = [c for c in (GENERAL_COLUMN_NAMES if is_generic_table(columns) else COLUMN_NAMES) if c not in columns]
    if unknown:
        c = unknown[0]
        guess = difflib.get_close_matches(c, missing or COLUMN_NAMES, n=1)
        hint = f" (did you mean {guess[0]!r}?)" if guess else ""
        raise LoadError(f"{path}: unknown column {c!r}{hint}; a trial table has only the schema's columns")
    missing_req = [c for c in required_columns(is_generic_table(columns)) if c not in columns]
    if missing_req:
        raise LoadError(f"{path}: required column {missing_req[0]!r} is missing"
                        + (f" (also: {', '.join(missing_req[1:])})" if len(missing_req) > 1 else ""))
    if missing:
        info.notes.append(f"{path.name}: optional column(s) {', '.join(missing)} missing, left empty")


def _bad_value(path: Path, col: str, series: pd.Series, bad: pd.Series, expected: str) -> LoadError:
    i = bad[bad].index[0]
    return LoadError(f"{path}: column {col!r}, line {int(i) + 2}: {series[i]!r} is not {expected}")


def convert_column(path: Path, col: str, raw: pd.Series) -> pd.Series:
    """Raw strings -> the schema dtype of `col` ('' is missing); bad values raise LoadError."""
    dtype = DTYPES.get(col, "string")
    s = raw.astype("string").str.strip()
    empty = s.isna() | (s == "")
    if dtype == "string":
        out = s.mask(empty)
    elif dtype in ("Int64", "Float64"):
        num = pd.to_numeric(s.mask(empty), errors="coerce")
        bad = num.isna() & ~empty
        if bad.any():
            raise _bad_value(path, col, s, bad, "a number")
        if dtype == "Int64":
            frac = num.notna() & (num != num.round())
            if frac.any():
                raise _bad_value(path, col, s, frac, "a whole number")
        out = num.astype(dtype)
    elif dtype == "boolean":
        low = s.str.lower()
        bad = ~empty & ~low.isin(_TRUE | _FALSE)
        if bad.any():
            raise _bad_value(path, col, s, bad, "True or False")
        out = pd.Series(pd.NA, index=s.index, dtype="boolean")
        out[low.isin(_TRUE).fillna(False)] = True
        out[low.isin(_FALSE).fillna(False)] = False
    else:  # pragma: no cover - the schema only uses the dtypes above
        raise LoadError(f"schema dtype {dtype!r} of column {col!r} is not supported")
    if col in ALLOWED_VALUES:
        allowed = ALLOWED_VALUES[col]
        bad = out.notna() & ~out.isin(list(allowed))
        if bad.any():
            raise _bad_value(path, col, s, bad.fillna(False), "one of " + ", ".join(sorted(allowed)))
    return out


def typed_frame(path: Path, raw: pd.DataFrame, factors: Iterable[str] = ()) -> pd.DataFrame:
    """All schema columns with their schema dtypes (absent optional columns are left empty); a general
    design's table also keeps its generic columns (typed) and its factor columns (as text)."""
    generic = is_generic_table(raw.columns)
    cols = {}
    added = [c for c in raw.columns if generic and c in DTYPES and c not in COLUMN_NAMES + GENERIC_COLUMN_NAMES]
    for c in COLUMN_NAMES + (GENERIC_COLUMN_NAMES + added if generic else []):
        if c in raw.columns:
            cols[c] = (_generic_convert(path, c, raw[c]) if generic else convert_column(path, c, raw[c]))
        else:
            cols[c] = pd.Series(pd.NA, index=raw.index, dtype=DTYPES[c])
    for c in factors if generic else ():
        if c in raw.columns and c not in cols:
            s = raw[c].astype("string").str.strip()
            cols[c] = s.mask(s.isna() | (s == ""))
    df = pd.DataFrame(cols)
    for c in required_columns(generic):
        if c == "correct" or c == "dependency":
            continue  # a missing answer (no response recorded) or a filler trial is allowed
        empty = df[c].isna()
        if empty.any():
            raise LoadError(f"{path}: column {c!r}, line {int(empty[empty].index[0]) + 2}: value is empty "
                            "but the column is required")
    return df


# a general design's answers are its task's (yes/no, an option's text, a rating, ...), not the Lakretz
# violation / no_violation; its response modes are the task's (keys, clicks, typed text, a scale)
_GENERIC_FREE = ("correct_response", "response_mode", "dependency")


def _generic_convert(path: Path, col: str, raw: pd.Series) -> pd.Series:
    if col in _GENERIC_FREE:
        s = raw.astype("string").str.strip()
        return s.mask(s.isna() | (s == ""))
    return convert_column(path, col, raw)


def table_factors(raw_columns: list[str], meta: dict) -> dict[str, list[str]]:
    """Factor columns of a general design's table: the sidecar's `design.factors`, else every column that
    is neither a schema nor a generic column (a table without its sidecar); {} for a Lakretz table.
    A factor named like a Lakretz column (grammatical, condition, ...) lives in that column."""
    if not is_generic_table(raw_columns):
        return {}
    declared = sidecar_factors(meta)
    if declared is not None:
        return declared
    known = set(COLUMN_NAMES) | set(column_names())
    return {c: [] for c in raw_columns if c not in known}


def _sidecar(csv_path: Path) -> dict:
    side = csv_path.with_suffix(".json")
    if not side.exists():
        return {}
    try:
        return json.loads(side.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise LoadError(f"{side}: sidecar is not valid JSON ({exc})") from None


def model_name(meta: dict) -> str | None:
    """The model's name from a sidecar (`model` as a string or a dict with name/path)."""
    m = meta.get("model") or meta.get("model_name")
    if isinstance(m, dict):
        m = m.get("name") or m.get("path") or m.get("id")
    return str(m) if m else None


def sidecar_order_known(meta: dict) -> bool:
    """False when the writer says the rows' time order is unknown (e.g. `twinlab import lakretz2021`
    given the results table without the session logs)."""
    for key in ("order_known", "trial_order_known"):
        if key in meta:
            return bool(meta[key])
    for key in ("order", "trial_order"):
        v = meta.get(key)
        if isinstance(v, str) and v.strip().lower() in ("unknown", "none", "lost"):
            return False
        if isinstance(v, dict) and "known" in v:
            return bool(v["known"])
    return True


def sidecar_simulated(meta: dict) -> bool:
    """Sessions whose answers were generated, not given by a person (analysis/simulate.py writes
    `participant.simulated: true`): analysed as their own group, "human (simulated)", never pooled
    with real participants."""
    part = meta.get("participant")
    return bool(meta.get("simulated") or (isinstance(part, dict) and part.get("simulated")))


def sidecar_outlier(meta: dict) -> bool:
    """True when the data's authors flagged the participant as an outlier (sidecar or its participant info)."""
    for d in (meta, meta.get("participant") or {}, meta.get("source") or {}):
        if isinstance(d, dict):
            for key in ("is_outlier", "outlier"):
                v = d.get(key)
                if isinstance(v, str):
                    v = v.strip().lower() in _TRUE
                if v:
                    return True
    return False


def sidecar_in_results_table(meta: dict) -> bool:
    """An imported release: is this subject among those the release analysed (its results table)?

    `twinlab import lakretz2021` writes `in_results_table`, and `is_outlier` as the table's flag for
    the subject, null when the subject has no row in the table; a null flag in a session imported
    together with the table therefore also means "not in the table" (e.g. a training-only pilot)."""
    if meta.get("in_results_table", True) is False:
        return False
    with_table = any(isinstance(s, dict) and s.get("kind") == "results_table" for s in meta.get("source_files") or [])
    return not (with_table and "is_outlier" in meta and meta["is_outlier"] is None)


def sidecar_task_settings(meta: dict) -> dict | None:
    """The task's settings as the session recorded them (labels, scale, ...): `task_settings`, `task`
    (a dict with `settings` or the fields), or a model protocol's `protocol_settings.task_settings`."""
    for v in (meta.get("task_settings"), (meta.get("task") or {}).get("settings") if isinstance(meta.get("task"), dict)
              else None, meta.get("task") if isinstance(meta.get("task"), dict) else None,
              (meta.get("protocol_settings") or {}).get("task_settings")
              if isinstance(meta.get("protocol_settings"), dict) else None):
        if isinstance(v, dict) and v:
            return v
    return None


def altered_since_verified(path: Path, meta: dict) -> str | None:
    """Why the table is not the one its sidecar verified when it was written (imports and other staged writers
    record `verified`: rows, bytes, SHA-256), or None (whole, or no record to check against)."""
    if not isinstance(meta.get("verified"), dict):
        return None
    return verified_session_problem(path, path.with_suffix(".json"))


def load_twinlab_file(path: Path, info: LoadInfo, include_simulated: bool = False,
                      keep_outliers: bool = False) -> pd.DataFrame:
    raw = _read_session_csv(path, info)
    meta = _sidecar(path)
    factors = table_factors(list(raw.columns), meta)
    _check_columns(path, list(raw.columns), info, factors)
    df = typed_frame(path, raw, factors)
    info.add_factors(factors)
    info.versions.append(session_version(path, meta, df, sidecar_factors(meta)))
    if meta.get("autopilot") and not include_simulated:
        # the PsychoPy runner answering itself: real timing, simulated responses, never human data
        info.exclude(path.name, len(df), "autopilot session (simulated responses, not human data)")
        df = df.iloc[0:0]
    excluded = bool(meta.get("autopilot") and not include_simulated)
    if sidecar_outlier(meta):
        ids = sorted(set(df["subject_id"].dropna()))
        info.outlier(ids, keep_outliers, len(df), path.name)
        if not keep_outliers:
            df = df.iloc[0:0]
            excluded = True
    status = meta.get("status")
    altered = altered_since_verified(path, meta)
    if altered:   # a session whose table lost (or gained) rows after it was verified is never taken for a whole one
        info.notes.append(f"{path.name}: {altered}; analysed as a partial session (status 'altered', "
                          f"{len(df)} trial(s) kept)")
        status = "altered"
    elif status and status != "completed":
        info.notes.append(f"{path.name}: session status is {status!r} ({len(df)} trial(s) kept)")
    df["source_file"] = pd.Series(str(path), index=df.index, dtype="string")
    df["session_status"] = pd.Series(status, index=df.index, dtype="string")
    df["model"] = pd.Series(model_name(meta), index=df.index, dtype="string")
    df["order_known"] = pd.Series(sidecar_order_known(meta), index=df.index, dtype="boolean")
    df["in_results_table"] = pd.Series(sidecar_in_results_table(meta), index=df.index, dtype="boolean")
    df["simulated"] = pd.Series(sidecar_simulated(meta), index=df.index, dtype="boolean")
    settings = sidecar_task_settings(meta)
    df["task_settings"] = pd.Series(json.dumps(settings, sort_keys=True) if settings else pd.NA, index=df.index,
                                    dtype="string")
    ident, deterministic = session_identity(meta)
    df["model_identity"] = pd.Series(ident, index=df.index, dtype="string")
    df["deterministic"] = pd.Series(deterministic, index=df.index, dtype="boolean")
    names = (meta.get("design") or {}).get("region_names") if isinstance(meta.get("design"), dict) else None
    df["region_names"] = pd.Series(json.dumps([str(x) for x in names]) if isinstance(names, list) and names else None,
                                   # task.region_names (kinds/self_paced_reading/analysis.py)
                                   index=df.index, dtype="string")
    df.attrs["excluded"] = excluded  # emptied on purpose (outlier, autopilot): not a header-only file
    return df


# ---- everything together ---------------------------------------------------------------------
def load(paths: Iterable[str | Path], fmt: Format = "auto", include_simulated: bool = False,
         keep_outliers: bool = False, training_blocks: Iterable[str] | None = None,
         allow_spec_versions: bool = False) -> tuple[pd.DataFrame, LoadInfo]:
    """Read files/folders into one frame (schema columns + source_file, session_status, model).

    `fmt` 'auto' recognises a study's released table (the Lakretz CSV) by its columns; `training_blocks`
    applies to it.
    Subjects flagged as outliers (the Lakretz `is_outlier` column, or `is_outlier` in a session
    sidecar) are excluded unless `keep_outliers`. Autopilot sessions of the human runner (sidecar
    `"autopilot": true`) are excluded unless `include_simulated`.
    """
    raise_csv_field_limit()  # an API entry: sessions with long kept columns
    files = find_data_files(paths)
    info = LoadInfo()
    info.outliers["policy"] = "keep" if keep_outliers else "exclude"
    frames = []
    for f in files:
        empty = _empty_session(f)
        if empty:
            info.notes.append(f"{f.name}: skipped, {empty}")
            info.exclude(f.name, 0, f"skipped: {empty}")
            continue
        _check_header_names(f)
        raw_cols = _header_columns(f)
        kind = sniff_format(f, raw_cols) if fmt == "auto" else fmt
        info.files.append(str(f))
        info.formats[str(f)] = kind
        if kind in frame_formats():  # a study's released table, read by the study's reader
            df, sub = frame_reader(kind)(f, training_blocks=training_blocks, keep_outliers=keep_outliers)
            info.merge(sub)
        else:
            df = load_twinlab_file(f, info, include_simulated, keep_outliers)
            if df.empty and not df.attrs.get("excluded") and not any(e["what"] == f.name for e in info.exclusions):
                reason = "holds no complete trial (header only: the session ended before its first trial ended, " \
                         "e.g. during the instructions)"
                info.notes.append(f"{f.name}: skipped, {reason}")
                continue
        frames.append(df)
    if not frames:
        why = "; ".join(info.notes) or "no data files given"
        raise LoadError(f"no trials to analyse: {why}")
    check_versions(info.versions, info, allow_spec_versions)
    df = pd.concat(frames, ignore_index=True)
    _check_duplicate_sessions(df)
    return df, info


def _check_duplicate_sessions(df: pd.DataFrame) -> None:
    """Two files holding the same session of the same subject would double-count trials.

    A session is identified by subject kind and id, experiment, session number, and for models the
    model, context mode and protocol (one model subject run with two protocols is two sessions).
    """
    first = df.groupby(["source_file", "subject_id", "session"], sort=False, dropna=False).agg(
        subject_kind=("subject_kind", "first"), experiment=("experiment", "first"), model=("model", "first"),
        context_mode=("context_mode", "first"), protocol=("protocol", "first")).reset_index()
    keys = ["subject_kind", "subject_id", "experiment", "session", "model", "context_mode", "protocol"]
    seen: dict[tuple, str] = {}
    for row in first.to_dict("records"):
        key = tuple(None if pd.isna(row[k]) else row[k] for k in keys)
        if key in seen and seen[key] != row["source_file"]:
            raise LoadError(
                f"subject {key[1]} ({key[0]}), experiment {key[2]}, session {key[3]} appears in two files: "
                f"{seen[key]} and {row['source_file']}; pass only one of them"
            )
        seen[key] = row["source_file"]
    dup = df.duplicated(["source_file", "subject_id", "session", "trial_index"], keep=False) & df["trial_index"].notna()
    if dup.any():
        row = df[dup].iloc[0]
        raise LoadError(f"{row['source_file']}: subject {row['subject_id']}, session {row['session']}: trial_index "
                        f"{row['trial_index']} appears twice")
