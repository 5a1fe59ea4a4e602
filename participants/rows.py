"""Trial rows: the shared trial-table row, and the PsychoPy-style CSV labs are used to.

The PsychoPy-style file is a *view* of the trial table (one row per trial, PsychoPy column names,
times in seconds). It is appended and fsync'ed like the main table, and rebuilt from the main table
when a session is resumed, so the two can never disagree about which trials happened.
"""
from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any, Mapping

from experiments import schema
from experiments.schema import GENERAL_COLUMN_NAMES
from experiments.trials import Trial, TrialSequence
from participants.rsvp import TrialResult

PSYCHOPY_COLUMNS = [
    "participant", "session", "date", "expName", "psychopyVersion", "frameRate",
    "block", "trials.thisN", "trials.thisTrialN", "item_id", "structure", "condition", "dependency",
    "violation_position", "sentence", "critical_word", "correct_response",
    "key_resp.keys", "key_resp.rt", "key_resp.corr", "response", "rt_sentence_end",
    "feedback_text", "word_onsets", "word_durations",
]


def table_columns(seq: TrialSequence) -> list[str] | None:
    """The session table's header: None (the Lakretz schema, byte for byte) unless the sequence holds
    general-model trials; then the general layout, its kinds' added columns and the design's factors
    (experiments.schema.table_columns; docs/general_model.md)."""
    if not any(t.is_generic for t in seq):
        return None
    factors: list[str] = []
    for t in seq:
        for name, _ in t.factors:
            if name not in factors and name not in GENERAL_COLUMN_NAMES:
                factors.append(name)
    return schema.table_columns(factors, generic=True, kinds={t.task for t in seq})


def trial_row(trial: Trial, result: TrialResult, seq: TrialSequence, *, subject_id: str, session: int,
              extra: Mapping[str, Any] | None = None, detection: tuple[str, str] | None = None) -> dict[str, Any]:
    """The trial-table row for one finished human trial (`detection`: the task's accepting and rejecting
    values, experiments.tasks.detection_values, for the `grammatical` column of a generic trial)."""
    row = trial.to_row(detection)
    row.update(
        subject_id=subject_id,
        subject_kind="human",
        session=session,
        spec_hash=seq.spec_hash,
        sequence_hash=seq.sequence_hash,
        response=result.response,
        correct=result.correct,
        response_mode=result.response_mode,
        early_response=result.early_response,
        early_response_unit=result.early_response_unit,
        early_response_ms=result.early_response_ms,
        rt_ms=result.rt_ms,
        rt_sentence_end_ms=result.rt_sentence_end_ms,
        word_onsets_ms=json.dumps(result.word_onsets_ms),
        word_durations_ms=json.dumps(result.word_durations_ms),
        context_mode="human",
        feedback_shown=result.feedback_shown,
        feedback_text=result.feedback_text,
        started_at=result.started_at,
        ended_at=result.ended_at,
        extra=json.dumps({**result.extra, **(extra or {})}, separators=(",", ":")),
    )
    row.update(result.generic)
    return row


def _float(x: Any) -> float | None:
    if x is None or x == "":
        return None
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def _truthy(x: Any) -> bool:
    return x is True or str(x).strip().lower() in ("true", "1")


def _key_of(row: Mapping[str, Any], info: Mapping[str, Any]) -> str:
    """The key that gave the answer, as PsychoPy's key_resp.keys would show it ('None' without one)."""
    if row.get("response_mode") == "task":
        extra = row.get("extra")
        try:
            by = (json.loads(extra) if isinstance(extra, str) and extra else extra or {}).get("answered_by") or ""
        except json.JSONDecodeError:
            by = ""
        return by[4:] if by.startswith("key:") else by or "None"
    if row.get("response_mode") == "panel":
        keys = info.get("panel_keys") or {}
        extra = row.get("extra")
        try:
            by = (json.loads(extra) if isinstance(extra, str) and extra else extra or {}).get("answered_by") or ""
        except json.JSONDecodeError:
            by = ""
        if by == "mouse":
            return "mouse"
        return keys.get(row.get("response"), "None")
    return info.get("response_key", "") if row.get("response") == "violation" else "None"


def psychopy_row(row: Mapping[str, Any], info: Mapping[str, Any]) -> dict[str, Any]:
    """A trial-table row (typed, or as read back from CSV) in PsychoPy's naming, seconds for times."""
    rt = _float(row.get("rt_ms"))
    rt_end = _float(row.get("rt_sentence_end_ms"))

    def seconds(js: Any) -> str:
        vals = json.loads(js) if isinstance(js, str) and js else (js or [])
        return json.dumps([round(v / 1000.0, 6) for v in vals])

    return {
        **{k: info.get(k, "") for k in ("participant", "session", "date", "expName", "psychopyVersion", "frameRate")},
        "block": row.get("block"),
        "trials.thisN": row.get("trial_index"),
        "trials.thisTrialN": row.get("block_trial_index"),
        "item_id": row.get("item_id"),
        "structure": row.get("structure"),
        "condition": row.get("condition"),
        "dependency": row.get("dependency"),
        "violation_position": row.get("violation_position"),
        "sentence": row.get("words"),
        "critical_word": row.get("critical_word"),
        "correct_response": row.get("correct_response"),
        "key_resp.keys": _key_of(row, info),
        "key_resp.rt": "" if rt is None else round(rt / 1000.0, 6),
        "key_resp.corr": 1 if _truthy(row.get("correct")) else 0,
        "response": row.get("response"),
        "rt_sentence_end": "" if rt_end is None else round(rt_end / 1000.0, 6),
        "feedback_text": row.get("feedback_text") or "",
        "word_onsets": seconds(row.get("word_onsets_ms")),
        "word_durations": seconds(row.get("word_durations_ms")),
    }


class PsychopyCsv:
    """Append-only PsychoPy-style CSV, one fsync'ed line per trial."""

    def __init__(self, path: Path, info: Mapping[str, Any], rows: list[Mapping[str, Any]] | None = None):
        """Create (or, with `rows` from the main table, rebuild) the file, then keep it open."""
        self.path = path
        self.info = dict(info)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=PSYCHOPY_COLUMNS, lineterminator="\n")
            w.writeheader()
            for r in rows or []:
                w.writerow(psychopy_row(r, self.info))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        self._fh = open(path, "a", encoding="utf-8", newline="")

    def append(self, row: Mapping[str, Any]) -> None:
        buf = io.StringIO()
        csv.DictWriter(buf, fieldnames=PSYCHOPY_COLUMNS, lineterminator="\n").writerow(psychopy_row(row, self.info))
        self._fh.write(buf.getvalue())
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()
