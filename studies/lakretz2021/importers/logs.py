"""Read the raw session logs of Lakretz et al. (2021) into one row per trial (see lakretz_format).

Why vectorised: the full release is ~120 logs of ~6,000 event lines each. Each file is checked
line by line with pandas (the C parser), every problem naming the file and line; then all events
of all files are assembled into trials at once with group-bys, not per-line Python.
"""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from analysis.importers import ImportDataError
from stimuli.textfile import read_bytes_bounded
from studies.lakretz2021.importers.format import (
    CONDITIONS_OF_TYPE,
    KNOWN_EVENTS,
    LOG_FIELDS,
    LOG_GLOB,
    LOG_HEADER,
    LOG_NAME,
    SESSION_EVENTS,
    SINGLE_EVENTS,
    TABLE_TYPE_OF_LOG,
    TRIAL_EVENTS,
    VIOLATION_TYPES,
    WIDE_EVENTS,
)


@dataclass(frozen=True)
class LogFile:
    """One session log, with what its name says (subject, session, training or main, start time)."""

    path: Path
    subject: int
    session: int
    training: bool
    started: datetime  # local time of the lab, from the file name

    @property
    def kind(self) -> str:
        return "training_log" if self.training else "session_log"


@dataclass
class LogNotes:
    """What was read and what was set aside, for the summary (never dropped silently)."""

    notes: list[str] = field(default_factory=list)
    ignored_files: list[str] = field(default_factory=list)
    truncated_lines: int = 0
    unknown_events: dict[str, int] = field(default_factory=dict)
    blank_lines: int = 0
    event_lines: int = 0
    empty_logs: int = 0
    no_trials: dict[str, str] = field(default_factory=dict)  # log file name -> why it gave no session


_USED = [f for f in LOG_FIELDS if f not in ("StimNum", "_trailing")]  # the rest is never read


def _parse_name(path: Path) -> LogFile | None:
    m = LOG_NAME.match(path.name)
    if not m:
        return None
    try:
        started = datetime.strptime(m["date"] + m["time"], "%Y%b%d%H%M%S")
    except ValueError:
        return None
    return LogFile(path=path, subject=int(m["subject"]), session=int(m["session"]), training=bool(m["train"]),
                   started=started)


def scan_logs(folder: str | Path, notes: LogNotes) -> list[LogFile]:
    """The session logs in `folder` and its sub-folders, in a stable order; other files are noted, not read.

    Two logs of the same subject, session and kind cannot both be right: that is an error naming both.
    """
    folder = Path(folder)
    if not folder.exists():
        raise ImportDataError(f"{folder}: no such folder (--logs)")
    if not folder.is_dir():
        raise ImportDataError(f"{folder}: --logs must be a folder of session logs")
    logs: list[LogFile] = []
    for p in sorted(folder.rglob("*")):  # a release may keep its logs in sub-folders (per subject)
        if p.is_dir() or any(part.startswith(".") for part in p.relative_to(folder).parts):
            continue
        if not p.is_file():  # a FIFO, socket or device: reading it would block or never end
            if _parse_name(p) is not None:
                raise ImportDataError(f"{p}: is named like a session log but is not a regular file")
            notes.ignored_files.append(str(p.relative_to(folder)))
            continue
        lf = _parse_name(p)
        if lf is None:
            notes.ignored_files.append(str(p.relative_to(folder)))
        else:
            logs.append(lf)
    if not logs:
        what = f"; it holds {len(notes.ignored_files)} other file(s)" if notes.ignored_files else " (it is empty)"
        raise ImportDataError(f"{folder}: no session logs named like {LOG_GLOB} "
                              f"(logLocalGlobalParadigm_<date>_<time>_Subj_<n>_sess_<k>.csv){what}")
    if notes.ignored_files:
        notes.notes.append(f"{folder}: {len(notes.ignored_files)} file(s) not named like a session log were not "
                           f"read: {', '.join(notes.ignored_files[:5])}"
                           + (" ..." if len(notes.ignored_files) > 5 else ""))
    seen: dict[tuple, LogFile] = {}
    for lf in logs:
        key = (lf.subject, lf.session, lf.training)
        if key in seen:
            raise ImportDataError(
                f"two {'training ' if lf.training else ''}logs for subject {lf.subject}, session {lf.session}: "
                f"{seen[key].path} and {lf.path}; keep the right one and move the other out of {folder}")
        seen[key] = lf
    return sorted(logs, key=lambda f: (f.subject, f.session, not f.training, f.started))


def _decode(path: Path) -> str:
    data = read_bytes_bounded(path, ImportDataError, "session log", 500_000_000)  # FIFOs and devices refused
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise ImportDataError(f"{path}: line {line}: byte 0x{data[exc.start]:02x} is not UTF-8 text "
                              "(the release's logs are plain ASCII; is this file damaged?)") from None


def _first_bad(paths: list[Path], frame: pd.DataFrame, bad: pd.Series, what: str, column: str) -> ImportDataError:
    i = bad[bad].index[0]
    return ImportDataError(f"{paths[int(frame.at[i, 'file'])]}: line {int(frame.at[i, 'line'])}: {column} "
                           f"{frame.at[i, column]!r} {what}")


def _to_int(paths: list[Path], frame: pd.DataFrame, column: str, rows: pd.Series) -> pd.Series:
    out = pd.Series(pd.NA, index=frame.index, dtype="Int64")
    sub = frame.loc[rows, column]
    try:  # fast path: clean integers
        out[rows] = sub.to_numpy().astype(np.int64)
        return out
    except (ValueError, TypeError):
        pass
    num = pd.to_numeric(sub, errors="coerce")
    bad = num.isna() | (num != num.round())
    if bad.any():
        raise _first_bad(paths, frame, bad.reindex(frame.index, fill_value=False), "is not a whole number", column)
    out[rows] = num.astype("int64").to_numpy()
    return out


def read_log(lf: LogFile, notes: LogNotes) -> pd.DataFrame:
    """The event lines of one log as strings, with their line numbers (typed by `check_events`).

    A last line cut short (the file ends inside it, as when a session is killed) is set aside with a
    note; any other malformed line is an error naming the file and line.
    """
    path = lf.path
    text = _decode(path)
    if not text.strip():  # a session that never started: nothing to import, said so
        notes.notes.append(f"{path.name}: empty log (0 events), nothing imported from it")
        notes.empty_logs += 1
        notes.no_trials[path.name] = "empty file"
        return pd.DataFrame(columns=_USED + ["line"], dtype=object)
    first_end = text.find("\n")
    header = (text if first_end < 0 else text[:first_end]).rstrip("\r").rstrip("\t").split("\t")
    if tuple(h.strip() for h in header) != LOG_HEADER:
        raise ImportDataError(f"{path}: line 1: header {header!r} is not the session-log header "
                              f"({', '.join(LOG_HEADER)})")
    n_lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if not text.endswith("\n"):
        cut = text.rfind("\n") + 1
        last = text[cut:]
        if _complete_record(last):
            text += "\n"  # a complete record that only lacks its line end
        else:
            notes.truncated_lines += 1
            notes.notes.append(f"{path.name}: line {n_lines} is truncated (the file ends inside it: {last[:40]!r}); "
                               "set aside, its trial is imported as unfinished")
            text = text[:cut]
    try:
        raw = _read_events(text)
    except pd.errors.ParserError as exc:
        m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
        if m:
            raise ImportDataError(f"{path}: line {m[2]}: {m[3]} tab-separated fields, at most {m[1]} "
                                  "expected") from None
        raise ImportDataError(f"{path}: not a readable session log ({str(exc).strip()})") from None
    except pd.errors.EmptyDataError:  # the header and nothing else: a session that was never started
        raw = pd.DataFrame(columns=_USED, dtype=object)
    raw["line"] = np.arange(2, len(raw) + 2)
    known = raw["Event"].isin(KNOWN_EVENTS)
    if not known.all():
        no_event = ~known & (raw["Event"] == "")
        # a blank line (every field empty) is skipped; anything else is an unknown event
        blank = no_event & (raw[_USED] == "").all(axis=1)
        notes.blank_lines += int(blank.sum())
        raw = raw[~blank]
        unknown = ~raw["Event"].isin(KNOWN_EVENTS)
        if unknown.any():
            counts = raw.loc[unknown, "Event"].value_counts()
            for ev, n in counts.items():
                notes.unknown_events[ev] = notes.unknown_events.get(ev, 0) + int(n)
            first = raw.loc[unknown].iloc[0]
            notes.notes.append(f"{path.name}: {int(unknown.sum())} line(s) with unknown event name(s) "
                               f"{', '.join(repr(e) for e in counts.index)} set aside (first at line "
                               f"{int(first['line'])})")
            raw = raw[~unknown]
        raw = raw.reset_index(drop=True)
    notes.event_lines += len(raw)
    return raw


def _read_events(text: str) -> pd.DataFrame:
    """The event lines (after the header) as strings, the unused columns dropped.

    A log whose lines all have fewer fields than the header names (a session started and never run:
    one GrandStart line of 8 fields) makes pandas refuse `usecols`; it is read whole and cut then.
    """
    kw = dict(sep="\t", header=None, skiprows=1, names=list(LOG_FIELDS), dtype=object, keep_default_na=False,
              quoting=csv.QUOTE_NONE, skip_blank_lines=False, engine="c")
    try:
        return pd.read_csv(io.StringIO(text), usecols=_USED, **kw)
    except ValueError as exc:
        if "Too many columns specified" not in str(exc):
            raise
    raw = pd.read_csv(io.StringIO(text), **kw)
    return raw[_USED].fillna("")


def _complete_record(line: str) -> bool:
    """A last line without its line end is a whole record when it ends with the trailing tab and has
    every field its event writes (a line cut right after an inner tab does not)."""
    line = line.rstrip("\r")
    event = line.split("\t", 1)[0]
    if not line.endswith("\t") or event not in KNOWN_EVENTS:
        return False
    n_fields = len(line.split("\t")) - 1  # the last split part is the empty one after the trailing tab
    return n_fields >= _FIELDS_OF_EVENT.get(event, len(LOG_HEADER) - 1)


# fields (before the trailing tab) each event writes, as checked on the release's logs
_FIELDS_OF_EVENT = {**{e: 7 for e in SESSION_EVENTS}, **{e: 11 for e in WIDE_EVENTS}}


def _stripped(s: pd.Series, known: list[str]) -> pd.Series:
    """Strip surrounding spaces, only on the values that are not already known ones (fast on clean logs)."""
    odd = ~s.isin(known)
    if odd.any():
        s = s.copy()
        s[odd] = s[odd].str.strip()
    return s


_VALID_CELLS = [f"{t}|{c}" for t, conds in CONDITIONS_OF_TYPE.items() for c in conds]


def check_events(logs: list[LogFile], raw: pd.DataFrame) -> pd.DataFrame:
    """Type and check the events of all logs at once (`raw` has a `file` column indexing `logs`)."""
    paths = [lf.path for lf in logs]
    raw = raw.reset_index(drop=True)
    everything = pd.Series(True, index=raw.index)
    block = _to_int(paths, raw, "Block", everything)
    trial = _to_int(paths, raw, "Trial", everything)
    try:  # fast path: every Time a number
        time = pd.Series(raw["Time"].to_numpy().astype(np.float64), index=raw.index)
    except (ValueError, TypeError):
        time = pd.to_numeric(raw["Time"], errors="coerce")
    bad = time.isna()
    if bad.any():
        raise _first_bad(paths, raw, bad, "is not a time in seconds (a line cut short?)", "Time")
    # the trial's cell is read from its FIX_ON line (the other lines repeat it and are not used)
    fix = raw["Event"] == "FIX_ON"
    stype_log = _stripped(raw["Sentence_type"].where(fix, ""), list(TABLE_TYPE_OF_LOG) + [""])
    bad = fix & ~stype_log.isin(list(TABLE_TYPE_OF_LOG))
    if bad.any():
        raise _first_bad(paths, raw, bad, f"is not a known sentence type ({', '.join(TABLE_TYPE_OF_LOG)})",
                         "Sentence_type")
    stype = stype_log.map(TABLE_TYPE_OF_LOG)
    cond = _stripped(raw["Condition"].where(fix, ""),
                     sorted({c for cs in CONDITIONS_OF_TYPE.values() for c in cs}) + [""])
    bad = (~(stype[fix].fillna("") + "|" + cond[fix]).isin(_VALID_CELLS)).reindex(raw.index, fill_value=False)
    if bad.any():
        raise _first_bad(paths, raw, bad, "is not a condition of its sentence type", "Condition")
    vslide = _to_int(paths, raw, "Viol_on_slide", fix)
    slide = _to_int(paths, raw, "SlideNum", raw["Event"].isin(["WORD_ON", "WORD_OFF", "KEY_PRESS"]))
    vtype = _stripped(raw["Violation_type"], list(VIOLATION_TYPES) + ["NaN", ""]).replace({"NaN": "None"})
    bad = raw["Event"].isin(["WORD_ON", "END_TRIAL"]) & ~vtype.isin(list(VIOLATION_TYPES))
    if bad.any():
        raise _first_bad(paths, raw, bad, f"is not a violation type ({', '.join(VIOLATION_TYPES)}, NaN)",
                         "Violation_type")
    return pd.DataFrame({
        "file": raw["file"].astype("int64"),
        "line": raw["line"].astype("int64"), "event": raw["Event"], "block": block, "trial": trial, "slide": slide,
        "word": raw["WordStr"], "time": time.astype("float64"), "stype": stype, "condition": cond,
        "vslide": vslide, "vtype": vtype,
    })


def _trial_code(file: np.ndarray, block: np.ndarray, trial: np.ndarray) -> np.ndarray:
    """One integer per (file, block, trial), for hash look-ups instead of merges."""
    return (file.astype(np.int64) << 42) + (block.astype(np.int64) << 21) + trial.astype(np.int64)


def _error_at(logs: list[LogFile], r: pd.Series, what: str) -> ImportDataError:
    """The refusal of event row `r`: the message names its log file and line."""
    return ImportDataError(f"{logs[int(r['file'])].path}: line {int(r['line'])}: {what}")


def _trial_codes(logs: list[LogFile], fix: pd.DataFrame) -> np.ndarray:
    """The code of each FIX_ON's trial; a block or trial number out of the code's range, or a trial that
    starts twice in one log, is refused at its line."""
    bad_num = (fix["block"] < 0) | (fix["block"] >= 2 ** 20) | (fix["trial"] < 0) | (fix["trial"] >= 2 ** 20)
    if bad_num.any():
        r = fix[bad_num].iloc[0]
        raise _error_at(logs, r, f"block {r['block']} / trial {r['trial']} out of range")
    code = _trial_code(fix["file"].to_numpy(), fix["block"].to_numpy(), fix["trial"].to_numpy())
    dup = pd.Series(code).duplicated().to_numpy()
    if dup.any():
        r = fix.iloc[int(np.flatnonzero(dup)[0])]
        raise _error_at(logs, r, f"trial {int(r['trial'])} of block {int(r['block'])} starts a second time (FIX_ON)")
    return code


@dataclass
class _TrialEvents:
    """The trial events after FIX_ON as plain arrays, each with `tid`, the row of its trial in `trials`."""

    tev: pd.DataFrame
    tid: np.ndarray
    event: np.ndarray
    time: np.ndarray
    line: np.ndarray
    word: np.ndarray
    vtype: np.ndarray
    slide: np.ndarray


def _trial_events(logs: list[LogFile], ev: pd.DataFrame, code: np.ndarray, fix_line: np.ndarray) -> _TrialEvents:
    """Each trial event matched to its trial; one before its trial's FIX_ON (or of no trial) is refused."""
    index = pd.Index(code)
    tev = ev[ev["event"].isin(TRIAL_EVENTS) & (ev["event"] != "FIX_ON")]
    tid = index.get_indexer(_trial_code(tev["file"].to_numpy(), tev["block"].to_numpy().astype(np.int64),
                                        tev["trial"].to_numpy().astype(np.int64)))
    line = tev["line"].to_numpy()
    orphan = (tid < 0) | (line < fix_line[np.maximum(tid, 0)])
    if orphan.any():
        r = tev.iloc[int(np.flatnonzero(orphan)[0])]
        raise _error_at(logs, r, f"{r['event']} of trial {int(r['trial'])} comes before that trial's FIX_ON")
    return _TrialEvents(tev=tev, tid=tid, event=tev["event"].to_numpy(), time=tev["time"].to_numpy(dtype="float64"),
                        line=line, word=tev["word"].to_numpy(dtype=object), vtype=tev["vtype"].to_numpy(dtype=object),
                        slide=tev["slide"].astype("Float64").to_numpy(dtype="float64", na_value=np.nan))


def _column(n: int, values: np.ndarray, at: np.ndarray, fill) -> np.ndarray:
    """A trial column of length n: `values` at rows `at`, `fill` elsewhere (object dtype when fill is None)."""
    out = np.full(n, fill, dtype=values.dtype if fill is not None else object)
    out[at] = values
    return out


def _add_single_events(logs: list[LogFile], trials: pd.DataFrame, te: _TrialEvents) -> None:
    """t_/l_/w_/v_<event> (time, line, word, violation type) of the events a trial has at most once."""
    n = len(trials)
    for name in SINGLE_EVENTS[1:]:
        sel = np.flatnonzero(te.event == name)
        t_sel = te.tid[sel]
        dup = pd.Series(t_sel).duplicated().to_numpy()
        if dup.any():
            r = te.tev.iloc[int(sel[np.flatnonzero(dup)[0]])]
            raise _error_at(logs, r, f"a second {name} in trial {int(r['trial'])}")
        trials[f"t_{name}"] = _column(n, te.time[sel], t_sel, np.nan)
        trials[f"l_{name}"] = _column(n, te.line[sel].astype("float64"), t_sel, np.nan)
        trials[f"w_{name}"] = _column(n, te.word[sel], t_sel, None)
        trials[f"v_{name}"] = _column(n, te.vtype[sel], t_sel, None)


def _add_units(logs: list[LogFile], trials: pd.DataFrame, te: _TrialEvents) -> None:
    """The RSVP units of each trial (WORD_ON in line order, WORD_OFF paired by slide): units, onsets,
    offs, vtype_word (the first unit's) and t_last_off; a trial whose units are interleaved with another
    trial's is refused."""
    n = len(trials)
    tid, time, word = te.tid, te.time, te.word
    on = np.flatnonzero(te.event == "WORD_ON")
    off = np.flatnonzero(te.event == "WORD_OFF")
    off_code = pd.Series(tid[off] * 4096 + np.nan_to_num(te.slide[off], nan=-1).astype(np.int64))
    keep = ~off_code.duplicated().to_numpy()
    on_code = tid[on] * 4096 + np.nan_to_num(te.slide[on], nan=-1).astype(np.int64)
    pos = pd.Index(off_code[keep].to_numpy()).get_indexer(on_code)
    t_off = np.where(pos >= 0, time[off[keep]][np.maximum(pos, 0)] if keep.any() else np.nan, np.nan)
    t_on = tid[on]
    cut = np.flatnonzero(np.r_[True, t_on[1:] != t_on[:-1]]) if len(on) else np.array([], dtype=int)
    if len(np.unique(t_on[cut])) != len(cut):
        dup = pd.Series(t_on[cut]).duplicated().to_numpy()
        r = te.tev.iloc[int(on[cut[int(np.flatnonzero(dup)[0])]])]
        raise _error_at(logs, r, f"WORD_ON of trial {int(r['trial'])} after another trial's events "
                              "(the trials' lines are interleaved)")
    owners = t_on[cut]
    for name, vals in (("units", [list(a) for a in np.split(word[on], cut[1:])] if len(on) else []),
                       ("onsets", np.split(time[on], cut[1:]) if len(on) else []),
                       ("offs", np.split(t_off, cut[1:]) if len(on) else [])):
        col = np.empty(n, dtype=object)
        col[:] = None
        for t, v in zip(owners, vals, strict=False):
            col[t] = v
        trials[name] = col
    last = np.r_[cut[1:] - 1, len(on) - 1] if len(on) else cut
    trials["vtype_word"] = _column(n, te.vtype[on][cut], owners, None) if len(on) else None
    trials["t_last_off"] = _column(n, t_off[last], owners, np.nan) if len(on) else np.nan


def _add_keys(trials: pd.DataFrame, te: _TrialEvents) -> None:
    """Key presses before the panel: n_keys, n_keys_total, and the early answer (the first one: its
    time, unit, word and phase)."""
    n = len(trials)
    tid, line = te.tid, te.line
    kp = np.flatnonzero(te.event == "KEY_PRESS")
    t_kp = tid[kp]
    panel_line = trials["l_PanelOn"].to_numpy()[t_kp]
    early = kp[np.isnan(panel_line) | (line[kp] < panel_line)]
    t_early = tid[early]
    first_of, first_at = np.unique(t_early, return_index=True)
    k1 = early[first_at]
    trials["n_keys"] = np.bincount(t_early, minlength=n)[:n] if len(t_early) else 0
    trials["n_keys_total"] = np.bincount(t_kp, minlength=n)[:n] if len(t_kp) else 0
    trials["key_time"] = _column(n, te.time[k1], first_of, np.nan)
    trials["key_slide"] = pd.array(_column(n, te.slide[k1], first_of, np.nan), dtype="Float64").astype("Int64")
    trials["key_word"] = _column(n, te.word[k1], first_of, None)
    f2p = trials["l_FIX2PANEL_ON"].to_numpy()[first_of]
    phase = np.where(~np.isnan(f2p) & (line[k1] > f2p), "panel_delay", "sentence").astype(object)
    trials["key_phase"] = _column(n, phase, first_of, None)


def assemble_trials(logs: list[LogFile], ev: pd.DataFrame) -> pd.DataFrame:
    """One row per trial (FIX_ON) of every log, in file then line order, with its timings and answers.

    `ev` is in file then line order (as read). Columns: file (index into `logs`), block, trial, line
    (of FIX_ON), stype, condition, vslide, vtype, units/onsets/offs (per trial: list of units, arrays
    of seconds), t_fix, t_fix2panel, t_panel_on, t_last_off, panel_word, panel_rt_s, t_feedback_on,
    t_feedback_off, outcome, release_rt_s, finished, n_keys (before the panel), n_keys_total,
    key_time, key_slide, key_word, key_phase (sentence or panel_delay), t_grand_start (the log's
    first GrandStart/BlockStart time).
    """
    starts = ev[ev["event"].isin(SESSION_EVENTS)].groupby("file")["time"].min()
    fix = ev[ev["event"] == "FIX_ON"]
    code = _trial_codes(logs, fix)
    trials = fix[["file", "block", "trial", "line", "stype", "condition", "vslide", "time"]].rename(
        columns={"time": "t_fix"}).reset_index(drop=True)
    te = _trial_events(logs, ev, code, trials["line"].to_numpy())
    _add_single_events(logs, trials, te)
    _add_units(logs, trials, te)
    _add_keys(trials, te)
    trials["vtype"] = trials["v_END_TRIAL"].fillna(trials["vtype_word"]).fillna(trials["v_FIX2PANEL_ON"])
    trials["finished"] = trials["t_END_TRIAL"].notna()
    trials["t_grand_start"] = trials["file"].map(starts)
    return trials.rename(columns={
        "t_FIX2PANEL_ON": "t_fix2panel", "t_PanelOn": "t_panel_on", "w_PanelResp": "panel_word",
        "t_PanelResp": "panel_rt_s", "t_FeedbackOn": "t_feedback_on", "t_FeedbackOff": "t_feedback_off",
        "w_END_TRIAL": "outcome", "t_END_TRIAL": "release_rt_s"})


def read_logs(folder: str | Path, notes: LogNotes,
              progress: Callable[[int, int], None] | None = None) -> tuple[list[LogFile], pd.DataFrame]:
    """Scan, read and check every log of `folder`; return the files and their trials."""
    logs = scan_logs(folder, notes)
    raws = []
    for i, lf in enumerate(logs):
        raws.append(read_log(lf, notes).assign(file=i))
        if progress is not None:
            progress(i + 1, len(logs))
    events = check_events(logs, pd.concat(raws, ignore_index=True))
    trials = assemble_trials(logs, events)
    with_trials = set(trials["file"].tolist())
    for i, (lf, raw) in enumerate(zip(logs, raws, strict=False)):
        if i in with_trials or lf.path.name in notes.no_trials:
            continue
        why = ("header only, no events (a session that was never started)" if raw.empty else
               f"no trials: {len(raw)} event line(s) ({', '.join(sorted(set(raw['Event'])))}), no FIX_ON "
               "(a session started and never run)")
        notes.no_trials[lf.path.name] = why
        notes.notes.append(f"{lf.path.name}: {why}; no session imported from it")
    bad = trials["outcome"].notna() & ~trials["outcome"].isin(
        ["CORRECT", "CORRECT_INC", "CORRECT_DDC", "WRONG", "WRONG_INC", "WRONG_DDC"])
    if bad.any():
        r = trials[bad].iloc[0]
        raise ImportDataError(f"{logs[int(r['file'])].path}: line {int(r['l_END_TRIAL'])}: END_TRIAL outcome "
                              f"{r['outcome']!r} is not one of CORRECT, WRONG (with _INC/_DDC)")
    return logs, trials
