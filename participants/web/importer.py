"""`twinlab import web RESULTS --spec SPEC --out DIR`: what JATOS or Pavlovia saved -> verified Psych-DS sessions.

Reads the browser runner's trial records wherever a host put them:
  - JSON lines (one record per trial: what the built page appends to JATOS result data, or its
    own download on a plain static host),
  - a jsPsych data export as JSON (an array of trials) or CSV (Pavlovia's jsPsych plugin, JATOS's
    `jsPsych.data.get().csv()`), whose twinlab trials carry the page's `twinlab_*` properties.
Every record is checked as the server checks a posted trial (participants/web/results.py) against
the sequence twinlab compiles for its slot, and becomes a row through the same row builder.
All input is read and checked before anything is written; each session is written under
temporary names with its lock held, verified and renamed into place (`SessionWriter(staged=True)`);
an existing session is never overwritten.
"""
from __future__ import annotations

import csv
import io
import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator

from experiments.design_compiler import compile_sequence
from experiments.session import SessionError, SessionWriter, check_subject_id, session_paths, write_dataset_description
from experiments.spec import Experiment
from experiments.trials import TrialSequence
from participants.imports.records import ImportInputError
from participants.imports.text_input import read_text
from participants.web.payload import BROWSER_KINDS
from participants.web.results import ResultError, web_row, web_task_row

RUNNER = "twinlab import web"
MAX_FILE_BYTES = 512 * 1024 * 1024


class WebImportError(ValueError):
    """Input that cannot be imported; the message names the file and record."""


@dataclass
class WebImportSummary:
    out: str = ""
    files_read: dict[str, int] = field(default_factory=dict)  # file -> twinlab records found
    records: int = 0
    other_rows: int = 0  # jsPsych rows that are not twinlab trials (instructions, pages)
    duplicates_dropped: int = 0  # the same trial of the same session again (identical record)
    sessions_written: int = 0
    rows_written: int = 0
    sessions: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Record:
    where: str
    participant: str
    session: int
    slot: str
    spec_hash: str
    sequence_hash: str
    result: dict[str, Any]
    info: dict[str, Any]
    client: dict[str, Any]
    asked_list: Any = None  # the link's ?list=N (experiments/lists.py), checked against the slot's list


def _files(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        if not p.exists():
            raise WebImportError(f"{p}: does not exist")
        if p.is_dir():
            out += sorted(f for f in p.rglob("*")
                          if f.is_file() and f.suffix.lower() in (".jsonl", ".json", ".txt", ".csv"))
        else:
            out.append(p)
    if not out:
        raise WebImportError(f"no .jsonl, .json, .txt or .csv files in {', '.join(map(str, paths))}")
    return out


def _from_record(d: dict[str, Any], where: str) -> _Record:
    try:
        return _Record(where, str(d["participant"]), int(d["session"]), str(d["slot_subject_id"]), str(d["spec_hash"]),
                       str(d["sequence_hash"]), d["result"], d.get("info") or {}, d.get("client") or {}, d.get("list"))
    except (KeyError, TypeError, ValueError) as exc:
        raise WebImportError(f"{where}: not a twinlab trial record ({exc})") from None


def _from_jspsych_row(d: dict[str, Any], where: str) -> _Record | None:
    result = d.get("twinlab")
    if result is None or result == "":
        return None
    if isinstance(result, str):
        try:
            result = json.loads(result)
        except json.JSONDecodeError:
            raise WebImportError(f"{where}: column twinlab is not JSON") from None
    try:
        return _Record(where, str(d["twinlab_participant"]), int(d["twinlab_session"]), str(d["twinlab_subject_id"]),
                       str(d["twinlab_spec_hash"]), str(d["twinlab_sequence_hash"]), result, {}, {})
    except (KeyError, TypeError, ValueError) as exc:
        raise WebImportError(f"{where}: a twinlab trial without its twinlab_* properties ({exc})") from None


def read_records(path: Path, summary: WebImportSummary) -> Iterator[_Record]:
    try:
        text = read_text(path, what="browser results", max_bytes=MAX_FILE_BYTES, fallback=False)
    except ImportInputError as exc:
        raise WebImportError(str(exc)) from None
    stripped = text.lstrip()
    if path.suffix.lower() == ".csv":
        for k, row in enumerate(csv.DictReader(io.StringIO(text)), start=2):
            rec = _from_jspsych_row(row, f"{path}, line {k}")
            if rec is None:
                summary.other_rows += 1
            else:
                yield rec
    elif stripped.startswith("["):
        try:
            rows = json.loads(text)
        except RecursionError:
            raise WebImportError(f"{path}: JSON nested too deeply to read; no browser session is saved so") from None
        except json.JSONDecodeError as exc:
            raise WebImportError(f"{path}: not valid JSON ({exc})") from None
        for k, row in enumerate(rows):
            rec = _from_jspsych_row(row, f"{path}, trial {k}") if isinstance(row, dict) else None
            if rec is None:
                summary.other_rows += 1
            else:
                yield rec
    else:  # JSON lines (JATOS result data appended per trial, or the page's own download)
        for k, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
            except RecursionError:
                raise WebImportError(f"{path}, line {k}: JSON nested too deeply to read") from None
            except json.JSONDecodeError as exc:
                raise WebImportError(f"{path}, line {k}: not valid JSON ({exc})") from None
            if not isinstance(d, dict) or d.get("twinlab_web") != 1:
                summary.other_rows += 1
                continue
            yield _from_record(d, f"{path}, line {k}")


def import_web(paths: list[Path], exp: Experiment, out: Path, *, seed: int | None = None) -> WebImportSummary:
    """Check every record, then write one session per participant and session (see the module docstring)."""
    summary = WebImportSummary(out=str(out))
    by_session: dict[tuple[str, int], list[_Record]] = {}
    for f in _files(paths):
        n = 0
        for rec in read_records(f, summary):
            by_session.setdefault((rec.participant, rec.session), []).append(rec)
            n += 1
        summary.files_read[str(f)] = n
        summary.records += n
    if not by_session:
        raise WebImportError("no twinlab trial records found (were these files saved by a `twinlab web build` site?)")
    planned: list[tuple[tuple[str, int], TrialSequence, list[dict[str, Any]], _Record]] = []
    sequences: dict[tuple[str, int], TrialSequence] = {}
    for (pid, session), recs in sorted(by_session.items()):
        first = recs[0]
        try:
            check_subject_id(pid)
        except SessionError as exc:
            raise WebImportError(f"{first.where}: {exc}") from None
        if not 1 <= session <= exp.sessions:
            raise WebImportError(f"{first.where}: session {session}, but {exp.name} has {exp.sessions}")
        if first.spec_hash != exp.spec_hash:
            raise WebImportError(f"{first.where}: spec_hash {first.spec_hash} is not {exp.name}'s ({exp.spec_hash}); "
                                 "import with the spec the site was built from")
        key = (first.slot, session)
        if key not in sequences:
            sequences[key] = compile_sequence(exp, first.slot, seed, session=session)
        seq = sequences[key]
        rows: list[dict[str, Any]] = []
        seen: dict[int, dict[str, Any]] = {}
        for rec in recs:
            if (rec.slot, rec.spec_hash, rec.sequence_hash) != (first.slot, first.spec_hash, first.sequence_hash):
                raise WebImportError(f"{rec.where}: participant {pid} session {session} ran two different sequences")
            if rec.sequence_hash != seq.sequence_hash:
                raise WebImportError(f"{rec.where}: sequence_hash {rec.sequence_hash} is not the one twinlab compiles "
                                     f"for slot {rec.slot} ({seq.sequence_hash}); check --seed and the spec")
            if rec.asked_list is not None and rec.asked_list != (seq.design or {}).get("list"):
                raise WebImportError(f"{rec.where}: the link asked for list {str(rec.asked_list)[:20]} but slot "
                                     f"{rec.slot} "
                                     f"reads list {(seq.design or {}).get('list')}")
            i = rec.result.get("trial_index") if isinstance(rec.result, dict) else None
            if i in seen:
                if seen[i] != rec.result:
                    raise WebImportError(f"{rec.where}: trial {i} of {pid} session {session} twice, with different "
                                         "data")
                summary.duplicates_dropped += 1
                continue
            if not isinstance(i, int) or i != len(rows) or i >= len(seq):
                raise WebImportError(f"{rec.where}: trial {i} of {pid} session {session} is out of order "
                                     f"(expected trial {len(rows)})")
            try:
                build = web_task_row if seq[i].task in BROWSER_KINDS else web_row
                row = build(rec.result, seq[i], seq, exp, subject_id=pid, session=session,
                            extra={"slot_subject_id": rec.slot, "imported": "twinlab import web"})
            except ResultError as exc:
                raise WebImportError(f"{rec.where}: {exc}") from None
            seen[i] = rec.result
            rows.append(row)
        for target in session_paths(out, exp.name, pid, session):
            if target.exists():
                raise WebImportError(f"{target} already exists; nothing was written (import into another --out)")
        planned.append(((pid, session), seq, rows, first))
    write_dataset_description(out)
    for (pid, session), seq, rows, first in planned:
        complete = len(rows) == len(seq)
        meta = {"runner": RUNNER, "participant_info": {"participant": pid, "session": session, **first.info},
                "slot_subject_id": first.slot, "seed": seq.seed, "n_trials_in_sequence": len(seq),
                "data_kind": "human participant (browser)", "autopilot": False, "timing_mode": "frames",
                **({"list_assignment": {"method": "given", "list": first.asked_list,
                                        "by": "the page's list URL parameter (?list=N), slot " + first.slot}}
                   if first.asked_list is not None else {}),
                "client": first.client,
                "imported_from": sorted({r.where.rsplit(",", 1)[0] for r in by_session[(pid, session)]})}
        _write_session(out, exp, pid, session, seq, rows, meta, complete)
        summary.sessions_written += 1
        summary.rows_written += len(rows)
        summary.sessions.append({"participant": pid, "session": session, "slot": first.slot, "rows": len(rows),
                                 "planned": len(seq), "complete": complete})
    return summary


def _write_session(out: Path, exp: Experiment, pid: str, session: int, seq: TrialSequence,
                   rows: list[dict[str, Any]], meta: dict[str, Any], complete: bool) -> None:
    """Staged: written under temporary names with the session's lock held, verified, then renamed."""
    try:
        w = SessionWriter.create(out, experiment=exp.name, subject_id=pid, session=session, subject_kind="human",
                                 spec_hash=seq.spec_hash, sequence_hash=seq.sequence_hash, n_trials=len(seq),
                                 metadata=meta, staged=True, sequence=seq)
        try:
            w.append_rows(rows)
        except BaseException:
            w.close("crashed")
            raise
        w.close("completed" if complete else "incomplete")
    except SessionError as exc:
        raise WebImportError(str(exc)) from None


def count_table(summary: WebImportSummary) -> Counter:
    return Counter(complete=sum(s["complete"] for s in summary.sessions),
                   incomplete=sum(not s["complete"] for s in summary.sessions))
