"""A human session from start to end: checks, window, refresh, instructions, blocks, data files.

Order matters for safety: everything that can refuse (existing files, nothing to resume, a wrong
refresh rate) is checked before a single data file is written; then each trial's row is appended
and fsync'ed as the trial ends; escape, a crash or a kill never lose a finished trial.
"""
from __future__ import annotations

import json
import traceback
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from experiments.lists import check_list, read_sidecar
from experiments.options import OptionError
from experiments.run_prep import RunPlan, hash_differences, session_problem
from experiments.screen_texts import base_language, block_intro, block_sizes, fill, screen_texts, untranslated
from experiments.session import (
    SessionError,
    SessionExistsError,
    SessionLock,
    SessionWriter,
    acquire_session_lock,
    check_rows_follow,
    read_rows,
    scan_table,
)
from experiments.spec import Experiment
from experiments.tasks import refuse_runner
from experiments.tasks.detection import detection_for
from experiments.trials import TrialSequence
from participants.autopilot import AUTOPILOT_PREFIX, Autopilot
from participants.display import open_display
from participants.eventlog import EventLog
from participants.fonts import missing_font
from participants.keys import make_injector
from participants.rows import PsychopyCsv, table_columns, trial_row
from participants.rsvp import Presenter, QuitRequested, TrialInterrupted
from participants.screens import Screens, Screenshots
from participants.tasks import PSYCHOPY, run_task_trial
from participants.timing import duration_errors, frame_quantisation_warnings

RUNNER = "twinlab.participants"
DEFAULT_WINDOW = (1024, 768)


class RunError(RuntimeError):
    """A session that cannot start or continue; the message says why and what to do."""


@dataclass
class HumanRunConfig:
    spec: Experiment
    participant: str
    session: int = 1
    out: Path = Path("sessions")
    info: dict[str, str] = field(default_factory=dict)  # participant fields (sidecar only)
    fullscreen: bool = False
    screen: int = 0
    window_size: tuple[int, int] = DEFAULT_WINDOW
    resume: bool = False
    trials: int | None = None  # run only the first N trials
    seed: int | None = None
    expected_refresh_hz: float | None = None  # overrides spec.timing.expected_refresh_hz
    allow_refresh_mismatch: bool = False
    autopilot: bool = False
    autopilot_accuracy: float = 0.8
    screenshots: Path | None = None
    # the compiled sequence to run instead of compile_sequence's (tests and demos of general designs
    # until the design compiler serves them) and task settings on top of the spec's task section
    sequence: TrialSequence | None = None
    task_settings: dict[str, Any] | None = None
    # --list: the design's list N instead of the id rotation (None: the rotation, or on --resume the
    # list the session's sidecar records; experiments/run_prep.py RunPlan.list_for)
    list_number: int | None = None


@dataclass
class RunOutcome:
    status: str  # completed / aborted / refused
    csv_path: Path
    json_path: Path
    n_written: int
    n_planned: int
    warnings: list[str]
    screenshots: list[Path] = field(default_factory=list)


@dataclass
class Prepared:
    """What is known before any window opens."""

    seq: TrialSequence
    n_planned: int
    csv_path: Path
    json_path: Path
    start: int  # first trial to run (0, or the resume point)
    plan: RunPlan | None = None  # the run's plan (experiments/run_prep.py): its sequence compiled once


def plan_for(cfg: HumanRunConfig) -> RunPlan:
    """The run's plan (experiments/run_prep.py): the checks before and under the lock share its sequence."""
    return RunPlan(cfg.spec, session=cfg.session, seed=cfg.seed, trials=cfg.trials, list_number=cfg.list_number)


def prepare(cfg: HumanRunConfig, log: Callable[[str], None] = print, plan: RunPlan | None = None) -> Prepared:
    """Compile the sequence and check the data files; raises RunError before anything is written."""

    exp, plan = cfg.spec, plan or plan_for(cfg)
    presentable = tuple(PSYCHOPY)  # every kind with a PsychoPy unit (violation detection's is the RSVP one)
    if exp.task.kind not in presentable:
        raise RunError(f"run-human (PsychoPy) cannot present task.kind {exp.task.kind!r}; it presents "
                       f"{', '.join(presentable)}. " + (refuse_runner(exp.task.kind, "psychopy") or ""))
    if cfg.autopilot and not cfg.participant.lower().startswith(AUTOPILOT_PREFIX):
        raise RunError(
            f"--autopilot sessions need a participant id starting with '{AUTOPILOT_PREFIX}' (e.g. autopilot1), "
            f"so that simulated data can never pass for a participant's; got {cfg.participant!r}"
        )
    if cfg.session < 1:
        raise RunError(f"--session must be 1 or more, got {cfg.session}")
    if info_problem(exp, cfg.info):
        raise RunError(info_problem(exp, cfg.info) or "")
    try:
        csv_path, json_path = plan.paths(cfg.out, cfg.participant)
        check_list(exp, cfg.list_number)
    except (SessionError, OptionError) as exc:
        raise RunError(str(exc)) from None
    if cfg.session > exp.sessions:
        raise RunError(session_problem(exp, cfg.session, "participant") or "")
    seq = cfg.sequence if cfg.sequence is not None else plan.sequence(
        cfg.participant, list_number=plan.list_for(cfg.out, cfg.participant, cfg.resume))
    unknown = sorted({t.task for t in seq if t.task and t.task not in PSYCHOPY})
    if unknown:
        raise RunError(f"run-human (PsychoPy) cannot present task kind(s) {', '.join(unknown)}")
    n = len(seq) if cfg.trials is None else min(cfg.trials, len(seq))
    if cfg.trials is not None and cfg.trials < 1:
        raise RunError(f"--trials must be 1 or more, got {cfg.trials}")
    exists = csv_path.exists() or json_path.exists()
    if exists and not cfg.resume:
        existing = csv_path if csv_path.exists() else json_path
        diffs = hash_differences(read_sidecar(json_path) or {}, seq)
        raise RunError(str(SessionExistsError(
            f"session file {existing} already exists" + (f" (written with other settings: {'; '.join(diffs)})"
                                                         if diffs else "")
            + "; use --resume to continue it or choose another session number (--session)")))
    start = _resume_point(seq, n, csv_path, json_path, exists, log) if cfg.resume else 0
    return Prepared(seq=seq, n_planned=n, csv_path=csv_path, json_path=json_path, start=start, plan=plan)


def _resume_point(seq: TrialSequence, n: int, csv_path: Path, json_path: Path, exists: bool,
                  log: Callable[[str], None]) -> int:
    """The first trial a --resume runs: the session's rows checked against this run's sequence (its sidecar's
    seed and hashes, its rows this sequence's first trials); RunError naming what does not fit."""
    if not exists:
        raise RunError(f"nothing to resume: {csv_path} does not exist (check --participant, --session, --out)")
    try:
        meta = json.loads(json_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise RunError(f"cannot resume: sidecar {json_path} is unreadable ({exc})") from None
    diffs = hash_differences(meta, seq)
    if diffs:
        raise RunError(f"cannot resume {csv_path.name}: it was written with other settings ({'; '.join(diffs)}): "
                       "the spec, participant or seed changed")
    try:
        scan = scan_table(csv_path) if csv_path.exists() else None
    except SessionError as exc:  # a damaged row before the end: named by line, never taken for a torn tail
        raise RunError(f"cannot resume: {exc}") from None
    if scan is not None and scan.torn:  # the writer drops it when it reopens (same scan rule)
        log(f"WARNING: {scan.note()}")
    if scan is not None:
        try:
            check_rows_follow(scan, seq)
        except SessionError as exc:
            raise RunError(str(exc)) from None
    start = scan.n_rows if scan is not None else 0
    if start >= n:
        raise RunError(f"nothing to resume: {csv_path} already holds {start} of {n} planned trials")
    return start


def info_problem(exp: Experiment, fields: dict[str, str]) -> str | None:
    """Why participant fields (--info, the dialog's) do not fit the spec's `participant_fields` (None: they do)."""
    unknown = sorted(set(fields) - set(exp.participant_fields))
    if not unknown:
        return None
    return (f"--info field(s) {', '.join(unknown)} are not participant fields of {exp.name} "
            f"(known: {', '.join(exp.participant_fields) or 'none'})")


def participant_info(cfg: HumanRunConfig) -> dict[str, Any]:
    return {"participant": cfg.participant, "session": cfg.session, **cfg.info}


def run(cfg: HumanRunConfig, log: Callable[[str], None] = print) -> RunOutcome:
    """Run (or resume) one session. Raises RunError for refusals; marks crashes in the sidecar.

    The session's one-writer lock is taken after the first checks and before the window opens (a
    second `run-human` on the same participant and session is refused at once, naming the holder);
    the checks are then made again under the lock, which the session writer keeps until it closes.
    """
    plan = plan_for(cfg)
    prep = prepare(cfg, log, plan)
    try:
        lock = acquire_session_lock(prep.csv_path)
    except SessionError as exc:
        raise RunError(str(exc)) from None
    try:
        prep = prepare(cfg, lambda msg: None, plan)  # again (the same sequence), now that no one else can write

        display = open_display(cfg, log)
        try:
            if display.policy.refuse:
                raise RunError(f"refusing to start: {display.policy.refuse}")
            return _run_open(cfg, prep, display, log, lock)
        finally:
            display.close()
    finally:
        lock.release()  # a no-op once the writer has closed (it releases the lock it was given)


def _run_open(cfg: HumanRunConfig, prep: Prepared, display: Any, log: Callable[[str], None],
              lock: SessionLock) -> RunOutcome:

    exp, seq, policy = cfg.spec, prep.seq, display.policy
    warnings, texts = _run_warnings(exp, display, log)
    autopilot = None
    if cfg.autopilot:
        injector = make_injector(display.keys)
        autopilot = Autopilot(injector, accuracy=cfg.autopilot_accuracy, seed=cfg.participant,
                              response_key=exp.task.response_key)
    run_info, timing_summary, metadata = _session_metadata(cfg, seq, display, autopilot, warnings, texts)
    writer = _open_writer(cfg, prep, lock, run_info, timing_summary, metadata)
    psy_csv, events = _open_side_files(cfg, display, writer)

    screens = Screens(display.win, exp)
    shots = Screenshots(display.win, cfg.screenshots)
    pres = Presenter(display.win, display.keys, policy, screens, shots, exp, autopilot)
    pres.event_log = events
    status, reason = "completed", None
    try:
        _run_trials(cfg, prep, pres, writer, psy_csv, texts, policy)
    except QuitRequested:
        status, reason = "aborted", f"quit key '{exp.task.quit_key}' pressed and confirmed"
    except KeyboardInterrupt:
        writer.close("aborted", abort_reason="interrupted (Ctrl-C in the terminal)", quit_prompts=pres.quit_prompts)
        psy_csv.close()
        raise
    except BaseException as exc:
        writer.close("crashed", error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc(),
                     quit_prompts=pres.quit_prompts)
        psy_csv.close()
        raise
    writer.close(status, **({"abort_reason": reason} if reason else {}), quit_prompts=pres.quit_prompts)
    psy_csv.close()
    events.close()
    _last_page(cfg, pres, texts, status)
    if autopilot is not None:  # a key still down on the X server would auto-repeat into the next session
        autopilot.cancel()
    saved = shots.save()
    return RunOutcome(status=status, csv_path=writer.csv_path, json_path=writer.json_path, n_written=writer.n_rows,
                      n_planned=prep.n_planned, warnings=warnings, screenshots=saved)


def _run_warnings(exp: Experiment, display: Any, log: Callable[[str], None]) -> tuple[list[str], dict[str, str]]:
    """The run's warnings (timing policy, frame quantisation, untranslated texts), logged, and its screen texts."""

    policy, tm = display.policy, exp.timing
    warnings = list(policy.warnings) + frame_quantisation_warnings(
        policy, {"fixation_ms": tm.fixation_ms, "word_ms": tm.word_ms, "gap_ms": tm.gap_ms,
                 "response_ms": tm.response_ms, "feedback_ms": tm.feedback_ms})

    if missing_font(exp.language):  # e.g. Chinese screens without a CJK font: boxes, said before the session
        warnings.append(missing_font(exp.language))
    texts = screen_texts(exp)
    missing_texts = untranslated(exp)
    if missing_texts:
        warnings.append(f"language {exp.language!r} has no built-in screen texts: {len(missing_texts)} text(s) are "
                        f"shown in English ({', '.join(missing_texts)}); give them under texts: / feedback: in the "
                        "spec")
    for w in warnings:
        log(f"WARNING: {w}")
    return warnings, texts


def _session_metadata(cfg: HumanRunConfig, seq: TrialSequence, display: Any, autopilot: Any, warnings: list[str],
                      texts: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """This run's record (run_info), the timing summary and the sidecar metadata of a new session."""

    exp, policy = cfg.spec, display.policy
    run_info = {
        "started_at": datetime.now().astimezone().isoformat(timespec="seconds"),
        "display": display.info,
        "refresh": display.measurement.summary(),
        "timing_policy": policy.to_dict(),
        "warnings": warnings,
        "trials_limit": cfg.trials,
        # what this run shows (the spec's texts, else its language's built-in set)
        "screen_texts": {"language": exp.language, "set": base_language(exp.language), "texts": texts},
        "autopilot": None if autopilot is None else {
            "accuracy": cfg.autopilot_accuracy, "injection": autopilot.injector.kind},
    }
    timing_summary = {
        "refresh_rate_hz": policy.refresh_hz if policy.vsync else display.measurement.psychopy_rate_hz,
        "vsync": policy.vsync,
        "timing_mode": policy.mode,
        "no_vsync_warning": None if policy.vsync else policy.warnings[0],
    }
    metadata = {
        "runner": RUNNER,
        "participant_info": participant_info(cfg),
        "seed": seq.seed,
        "n_trials_in_sequence": len(seq),
        "data_kind": ("SIMULATED (autopilot key presses) - not human data" if autopilot else "human participant"),
        "autopilot": autopilot is not None,
        **timing_summary,
        "dropped_frames": 0 if policy.mode == "frames" else None,
        "dropped_frames_note": (None if policy.mode == "frames" else
                                "not counted: without vsync there are no frames to drop; see word_timing"),
        "runs": [run_info],
    }
    return run_info, timing_summary, metadata


def _open_writer(cfg: HumanRunConfig, prep: Prepared, lock: SessionLock, run_info: dict[str, Any],
                 timing_summary: dict[str, Any], metadata: dict[str, Any]) -> SessionWriter:
    """The session's writer: a new file, or the checked one reopened for a resume (this run added to its sidecar)."""

    seq = prep.seq
    try:
        writer = (prep.plan or plan_for(cfg)).open_writer(
            cfg.out, cfg.participant, seq, "human", prep.n_planned, metadata=metadata, resume=cfg.resume, lock=lock,
            columns=table_columns(seq))
    except SessionError as exc:
        raise RunError(str(exc)) from None
    if cfg.resume and writer.n_rows != prep.start:  # the file changed between the check and the reopen
        writer.close("aborted", abort_reason="rows on disk changed before the resume started")
        raise RunError(f"cannot resume {writer.csv_path}: it held {prep.start} complete trial(s) when checked but "
                       f"{writer.n_rows} when reopened; nothing was run, try again")
    if cfg.resume:  # the sidecar kept its first run's metadata; add this run's
        writer.meta["resumes"][-1].update(run_info)
        writer.meta.setdefault("runs", []).append(run_info)
        writer.meta.update(n_trials_planned=prep.n_planned, **timing_summary)
        if cfg.autopilot:
            writer.meta.update(autopilot=True, data_kind=metadata["data_kind"])
        writer.save_sidecar()
    return writer


def _open_side_files(cfg: HumanRunConfig, display: Any, writer: SessionWriter) -> tuple[Any, Any]:
    """The PsychoPy-style CSV and the event log beside the session (named in its sidecar)."""

    exp = cfg.spec
    psy_info = {
        "participant": cfg.participant, "session": cfg.session, "expName": exp.name,
        "date": _psychopy_date(writer.meta.get("started_at")), "psychopyVersion": display.info.get("psychopy"),
        "frameRate": round(display.measurement.psychopy_rate_hz or 0, 3) or "", "response_key": exp.task.response_key,
        "panel_keys": dict(exp.task.panel.keys) if exp.task.panel is not None else {},
    }
    psy_path = Path(cfg.out) / "psychopy" / f"{cfg.participant}_{exp.name}_session-{cfg.session}.csv"
    psy_csv = PsychopyCsv(psy_path, psy_info, read_rows(writer.csv_path) if cfg.resume else None)
    events = EventLog(Path(cfg.out) / "events" / writer.csv_path.name.replace("_data.csv", "_events.tsv"))
    writer.update(psychopy_csv=str(psy_path), event_log=str(events.path), response_mode=exp.task.response)
    return psy_csv, events


def _run_trials(cfg: HumanRunConfig, prep: Prepared, pres: Any, writer: SessionWriter, psy_csv: Any,
                texts: dict[str, str], policy: Any) -> None:
    """The opening page(s), then trials `prep.start`..`prep.n_planned`, each row written as it ends."""

    exp, seq, tm = cfg.spec, prep.seq, cfg.spec.timing
    word_durations: list[float] = []  # all words of the session (a resumed run starts with the saved ones)
    if cfg.resume:
        for r in read_rows(writer.csv_path):
            word_durations += json.loads(r.get("word_durations_ms") or "[]")
    dropped_total = writer.meta.get("dropped_frames") or 0
    start, n = prep.start, prep.n_planned
    if start == 0:
        for k, text in enumerate(exp.texts.instructions):
            pres.page(text, name="instructions" if k == 0 else None)
    else:
        pres.page(fill(texts["resume_text"], trial=start + 1, total=n), name="resume")
    for i in range(start, n):
        trial = seq[i]
        block = exp.block(trial.block)
        if trial.block_trial_index == 0 and block.intro_text:
            intro = block_intro(block.intro_text, block_sizes(seq.trials[:n]).get(block.name))
            pres.page(intro, name="block_intro", hint=texts["block_start_hint"])
        restarts = 0
        while True:
            try:
                result = (run_task_trial(pres, trial, seq, exp, cfg.task_settings) if trial.task in PSYCHOPY
                          else pres.run_trial(trial))
                break
            except TrialInterrupted:
                restarts += 1
        extra = {"restarts": restarts} if restarts else {}
        if pres.autopilot is not None:
            extra["data_kind"] = "autopilot"
        row = trial_row(trial, result, seq, subject_id=cfg.participant, session=cfg.session, extra=extra,
                        detection=detection_for(trial.task, exp.task, cfg.task_settings))
        writer.append(row)
        psy_csv.append(row)
        word_durations += result.word_durations_ms
        if policy.mode == "frames":
            dropped_total += result.extra.get("dropped_frames", 0)
        writer.meta["dropped_frames"] = dropped_total if policy.mode == "frames" else None
        writer.meta["word_timing"] = {"target_ms": round(policy.planned_ms(tm.word_ms), 3),
                                      **duration_errors(word_durations, policy.planned_ms(tm.word_ms))}
        writer.save_sidecar()
        pres.hold(None, result.iti_onset, tm.iti_ms)
        last_of_block = i + 1 >= len(seq) or seq[i + 1].block != trial.block
        if last_of_block and block.break_after and i + 1 < n:
            pres.page(texts["break_text"], name="break", hint="")


def _last_page(cfg: HumanRunConfig, pres: Any, texts: dict[str, str], status: str) -> None:
    """The end page (with the next session's hint) or the aborted page; a quit key here ends nothing more."""

    exp = cfg.spec
    try:
        if status == "completed":
            following = (fill(texts["next_session_text"], next=cfg.session + 1, sessions=exp.sessions)
                         if cfg.session < exp.sessions else "")
            pres.page(texts["end_text"], name="end", hint=following, timeout_s=3.0 if cfg.autopilot else 30.0)
        else:
            pres.page(texts["aborted_text"], name="aborted", hint="", timeout_s=1.5)
    except QuitRequested:
        pass


def _psychopy_date(iso: str | None) -> str:
    """PsychoPy's date format (2026-11-23_03h41.12.345) in local time."""
    try:
        dt = datetime.fromisoformat(iso).astimezone() if iso else datetime.now()
    except ValueError:
        dt = datetime.now()
    return dt.strftime("%Y-%m-%d_%Hh%M.%S.") + f"{dt.microsecond // 1000:03d}"
