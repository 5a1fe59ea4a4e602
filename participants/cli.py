"""`twinlab run-human`: run (or resume) a human session of a spec in PsychoPy.

Imports nothing heavy at module level: PsychoPy is imported when a session starts.
"""
from __future__ import annotations

import math
import os
import re
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from experiments import options as o
from experiments.cli_common import checked_spec_or_exit, fail
from experiments.outputs import check_dataset_folder
from experiments.session import session_paths
from experiments.spec import SpecError
from experiments.tasks import refuse_runner
from participants.dialog import DialogUnavailable, ask_participant_info
from participants.runner import HumanRunConfig, RunError, info_problem, run
from participants.tasks import PSYCHOPY


def _parse_info(pairs: list[str]) -> dict[str, str]:
    info: dict[str, str] = {}
    for p in pairs:
        if "=" not in p:
            fail(f"--info expects FIELD=VALUE, got {p!r}")
        k, v = p.split("=", 1)
        k = k.strip()
        if not k:
            fail(f"--info expects FIELD=VALUE, got {p!r} (no field name)")
        if k in info:
            # keeping either value silently would record a wrong age or handedness
            fail(f"--info {k} is given twice ({k}={info[k]} and {k}={v.strip()}); give each field once")
        info[k] = v.strip()
    return info


def _window_size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(x) for x in text.lower().split("x"))
        assert 0 < w <= 16384 and 0 < h <= 16384
        return w, h
    except (ValueError, AssertionError):
        fail(f"--window-size expects WIDTHxHEIGHT such as 1024x768, got {text!r}")
        raise  # unreachable


def display_problem() -> str | None:
    """Why no window can open here (no X/Wayland display, or an X display nobody serves), or None.

    Checked before anything else so a missing display is one line and never leaves a session behind."""

    if not sys.platform.startswith("linux"):
        return None
    x, wayland = os.environ.get("DISPLAY", ""), os.environ.get("WAYLAND_DISPLAY", "")
    if not x and not wayland:
        return ("no display: DISPLAY is not set (run it on the lab computer's desktop, or for a test under "
                "xvfb-run -a -s \"-screen 0 1280x1024x24\")")
    m = re.fullmatch(r":(\d+)(\.\d+)?", x)
    if x and not wayland and m and not Path(f"/tmp/.X11-unix/X{m.group(1)}").exists():
        return f"no display: nothing serves DISPLAY={x} (no X server socket /tmp/.X11-unix/X{m.group(1)})"
    return None


def _stamp(path: Path) -> tuple[int, int] | None:
    """(size, mtime) of a sidecar, None if absent: did the run touch the session at all?"""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def _check_who(participant: str | None, session: int) -> None:
    """--participant and --session (as given, or as the dialog answered), by run-model's rules; exit 2."""

    try:
        o.session_number(session)
        if participant is not None:
            o.subject_id("--participant", participant)
    except o.OptionError as exc:
        fail(str(exc))


def _check_options(session: int, trials: int | None, out: Path, screen: int, accuracy: float,
                   refresh_hz: float | None, participant: str | None, screenshots: Path | None = None) -> None:
    """The options, with the rules `run-model` uses for the ones they share; exit 2 before a window opens."""


    try:
        o.session_number(session)
        o.trials_limit(trials)

        check_dataset_folder("--out", out)  # data/ a real folder, no link or device in it
        if screenshots is not None:
            o.output_folder("--screenshots", screenshots)
        o.at_least("--screen", screen, 0, 64)
        if participant is not None:
            o.subject_id("--participant", participant)
        if not (0.0 <= accuracy <= 1.0):
            raise o.OptionError(f"--autopilot-accuracy must be from 0 to 1, got {accuracy}")
        if refresh_hz is not None and not (0 < refresh_hz <= 1000 and math.isfinite(refresh_hz)):
            raise o.OptionError(f"--expected-refresh-hz must be above 0 and at most 1000, got {refresh_hz}")
    except o.OptionError as exc:
        fail(str(exc))


def run_human(
    spec: str = typer.Argument(..., help="experiment spec (YAML) or the name of a bundled spec"),
    participant: Optional[str] = typer.Option(
        None, "--participant", "-p", help="participant id (letters and digits); without it a dialog asks"),
    session: int = typer.Option(1, "--session", "-n", help="session number"),
    fullscreen: bool = typer.Option(False, "--fullscreen", help="full-screen window (use this for real data)"),
    screen: int = typer.Option(0, "--screen", help="screen index for the window"),
    resume: bool = typer.Option(False, "--resume", help="continue an interrupted session from its next trial"),
    trials: Optional[int] = typer.Option(None, "--trials", help="run only the first N trials (set-up check)"),
    out: Path = typer.Option(Path("sessions"), "--out", "-o", help="data folder (Psych-DS dataset root)"),
    allow_refresh_mismatch: bool = typer.Option(
        False, "--allow-refresh-mismatch",
        help="start even when the measured refresh rate (or missing vsync) disagrees with the expected rate"),
    expected_refresh_hz: Optional[float] = typer.Option(
        None, "--expected-refresh-hz", help="the monitor's refresh rate (overrides timing.expected_refresh_hz)"),
    info: list[str] = typer.Option(
        [], "--info", help="participant field FIELD=VALUE (repeat; e.g. --info age=31); stored in the sidecar"),
    seed: Optional[int] = typer.Option(None, "--seed", help="override the spec's seed"),
    window_size: str = typer.Option("1024x768", "--window-size", help="window size when not full screen"),
    autopilot: bool = typer.Option(
        False, "--autopilot",
        help="smoke demo: the runner presses the keys itself (data marked SIMULATED; id must start with 'autopilot')"),
    autopilot_accuracy: float = typer.Option(0.8, "--autopilot-accuracy", help="share of autopilot answers that are "
                                                                               "right"),
    screenshots: Optional[Path] = typer.Option(
        None, "--screenshots", help="save a PNG of each kind of screen (instructions, fixation, word, ...) here"),
    list_number: Optional[int] = typer.Option(
        None, "--list", help="the design's list N (1..L) instead of the id rotation; --resume keeps the session's own "
                             "list"),
) -> None:
    """Run a human session in PsychoPy: instructions, training with feedback, test block(s); crash-safe."""


    console = Console(stderr=True)
    _check_options(session, trials, out, screen, autopilot_accuracy, expected_refresh_hz, participant, screenshots)
    exp = checked_spec_or_exit(spec, list_number)  # load, sizes, --list (experiments/run_prep.py)
    fields = _parse_info(info)

    if info_problem(exp, fields):
        fail(info_problem(exp, fields) or "")

    if exp.task.kind not in PSYCHOPY:  # a spec matter: said before the display's
        fail(f"{spec}: " + (refuse_runner(exp.task.kind, "psychopy") or f"task.kind {exp.task.kind!r}"))
    problem = display_problem()
    if problem:
        fail(f"{problem}; nothing was written")
    participant, session, fields = _who(exp, participant, session, autopilot, fields)
    if not participant:
        fail("a participant id is required")
    _check_who(participant, session)  # the dialog's answers; the other options were checked above
    cfg = HumanRunConfig(
        list_number=list_number,  # None: the id rotation, or on --resume the session's own list (run_prep)
        spec=exp, participant=participant, session=session, out=out, info=fields, fullscreen=fullscreen,
        screen=screen, window_size=_window_size(window_size), resume=resume, trials=trials, seed=seed,
        expected_refresh_hz=expected_refresh_hz, allow_refresh_mismatch=allow_refresh_mismatch,
        autopilot=autopilot, autopilot_accuracy=autopilot_accuracy, screenshots=screenshots)
    _run_and_report(cfg, spec, console)


def _who(exp, participant: str | None, session: int, autopilot: bool,
         fields: dict[str, str]) -> tuple[str | None, int, dict[str, str]]:
    """The participant, session and --info fields: as given, 'autopilot' for a smoke run, else from the dialog."""

    if participant is None and autopilot:
        participant = "autopilot"
    if participant is None:
        try:
            answers = ask_participant_info(exp, session=session)
        except DialogUnavailable as exc:
            fail(str(exc))
        if answers is None:
            fail("cancelled in the participant dialog; nothing was written")
        participant = str(answers.pop("participant")).strip()
        try:
            session = int(answers.pop("session"))
        except (TypeError, ValueError):
            fail("the session in the dialog must be a whole number")
        fields = {k: str(v) for k, v in answers.items()}
    return participant, session, fields


def _run_and_report(cfg, spec: str, console) -> None:
    """Run the session; say how it ended (and how to continue), or why it could not start, in one line each."""

    exp, participant, session, out = cfg.spec, cfg.participant, cfg.session, cfg.out

    def log(msg: str) -> None:
        style = "bold yellow" if msg.startswith("WARNING") else "dim"
        console.print(msg, style=style, highlight=False, markup=False)

    csv_path, json_path = session_paths(out, exp.name, participant, session)
    before = _stamp(json_path)
    try:
        outcome = run(cfg, log)
    except (RunError, SpecError) as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        fail("interrupted (Ctrl-C); every finished trial is saved; continue with --resume", code=130)
    except Exception as exc:  # a bug or a broken display: the rows written so far are safe
        if _stamp(json_path) == before:  # failed before the session was opened (e.g. the window)
            fail(f"could not start the session ({type(exc).__name__}: {exc}); nothing was written", code=1)
        console.print_exception(max_frames=8)
        fail(f"the session crashed ({type(exc).__name__}: {exc}); every finished trial is in {csv_path} and the "
             f"sidecar {json_path.name} says 'crashed'; continue with --resume", code=1)
    colour = "green" if outcome.status == "completed" else "yellow"
    console.print(f"[{colour}]{outcome.status}[/{colour}]: {outcome.n_written} of {outcome.n_planned} trials in "
                  f"{outcome.csv_path}", highlight=False)
    if outcome.status == "aborted":
        console.print(f"continue later with: twinlab run-human {spec} --participant {participant} "
                      f"--session {session} --resume", highlight=False)
    for p in outcome.screenshots:
        console.print(f"screenshot: {p}", highlight=False)
    typer.echo(f"{outcome.status} {outcome.csv_path}")
