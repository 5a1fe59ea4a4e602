"""`twinlab web build SPEC --out SITE` and `twinlab web serve SPEC --out DATA`: the browser runner.

Imports nothing heavy at module level (the server stack is imported when `serve` runs).
"""
from __future__ import annotations

import ipaddress
import re
import socket
from pathlib import Path
from typing import Optional

import typer

from experiments import options as o
from experiments.cli_common import checked_spec_or_exit, fail
from experiments.commands import HELP_LAYOUT, ListingGroup
from experiments.options import OptionError
from experiments.outputs import check_dataset_folder, check_target, inside_or_same
from experiments.tasks import refuse_runner, runner_kinds
from participants.web.site import MAX_SLOTS, SiteError, build_site

app = typer.Typer(no_args_is_help=True, cls=ListingGroup, **HELP_LAYOUT,
                  help="Browser sessions (jsPsych): a static site, or a local server saving every trial.")


def _spec(spec: str, list_number: Optional[int] = None):
    """The checked spec (experiments/run_prep.py: load, sizes), a task kind the page presents, then --list."""

    exp = checked_spec_or_exit(spec)

    presentable = runner_kinds("browser")  # the task page's kinds and violation detection's RSVP page
    if exp.task.kind not in presentable:
        fail(f"the browser runner cannot present task.kind {exp.task.kind!r} ({exp.name}); it presents "
             f"{', '.join(presentable)}. " + (refuse_runner(exp.task.kind, "browser") or ""))
    return checked_spec_or_exit(exp, list_number) if list_number is not None else exp


@app.command("build")
def build(
    spec: str = typer.Argument(..., help="experiment spec (YAML) or the name of a bundled spec"),
    out: Path = typer.Option(..., "--out", "-o", help="folder to write the site into (must not exist)"),
    slots: int = typer.Option(20, "--slots", help="participant slots: precompiled sequences web001..webNNN"),
    seed: Optional[int] = typer.Option(None, "--seed", help="override the spec's seed"),
    force: bool = typer.Option(False, "--force", help="replace an existing --out folder"),
    list_number: Optional[int] = typer.Option(None, "--list", help="every slot reads the design's list N (1..L); "
                                              "without it slots rotate through the lists and ?list=N picks one"),
) -> None:
    """Write a self-contained static site (any static host, JATOS, Pavlovia); runs with no network."""

    if not 1 <= slots <= MAX_SLOTS:
        fail(f"--slots must be from 1 to {MAX_SLOTS}, got {slots}")

    try:  # --force replaces the folder: never a link, a device or a folder holding the spec
        if out.exists() and not out.is_dir():
            raise OptionError(f"--out {out} is a file; give a folder")
        check_target("--out", out, folder=True)
        if Path(spec).is_file() and inside_or_same(Path(spec), out):
            raise OptionError(f"--out {out} holds the spec {spec} (this command's input); it is never replaced, "
                              "even with --force: choose another --out")
    except OptionError as exc:
        fail(str(exc))
    exp = _spec(spec, list_number)
    try:
        summary = build_site(exp, out, slots=slots, seed=seed, force=force, list_number=list_number)
    except SiteError as exc:
        fail(str(exc))
    typer.echo(f"wrote {out}/index.html: {exp.name} spec_hash={exp.spec_hash}, {slots} slot(s) x "
               f"{exp.sessions} session(s), trials per session {summary['trials_per_slot']}")
    typer.echo(f"open it as {out}/index.html?participant=P01&session=1 (or with PROLIFIC_PID=...); "
               "slot = the `slot` URL parameter, else a stable hash of the participant id")


@app.command("serve")
def serve(
    spec: str = typer.Argument(..., help="experiment spec (YAML) or the name of a bundled spec"),
    out: Path = typer.Option(Path("sessions"), "--out", "-o", help="data folder (Psych-DS dataset root)"),
    host: str = typer.Option("127.0.0.1", "--host", help="address to listen on (default: this machine only)"),
    port: int = typer.Option(8000, "--port", help="port to listen on"),
    seed: Optional[int] = typer.Option(None, "--seed", help="override the spec's seed"),
    trials: Optional[int] = typer.Option(None, "--trials", help="run only the first N trials of each session"),
    allow_host: list[str] = typer.Option(
        [], "--allow-host", help="a host name the server answers for besides IP addresses and localhost (repeat; "
                                 "e.g. the name of the lab machine; '*' for any). Other names are refused "
                                 "(DNS rebinding)"),
    read_timeout: float = typer.Option(10.0, "--read-timeout", help="seconds a request body may take to arrive"),
    abandon_after: float = typer.Option(
        60.0, "--abandon-after", help="minutes after which an unfinished session with no new row no longer counts "
                                      "when a new participant gets the least-filled list (experiments/lists.py)"),
) -> None:
    """Serve the experiment and write each trial as it arrives (fsync'ed, one writer per session)."""

    try:
        check_dataset_folder("--out", out)  # data/ a real folder, no link or device in it
        o.trials_limit(trials)
        o.at_least("--port", port, 1, 65535)
        if not 0.5 <= abandon_after <= 60 * 24 * 365:
            raise o.OptionError(f"--abandon-after must be from 0.5 minutes to a year (525600), got {abandon_after:g}")
        if not 0.1 <= read_timeout <= 600:
            raise o.OptionError(f"--read-timeout must be from 0.1 to 600 seconds, got {read_timeout:g}")
        for name in allow_host:
            if name != "*" and not re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,252})", name):
                raise o.OptionError(f"--allow-host {name!r}: a host name such as lab-pc.example.org (or '*')")
    except o.OptionError as exc:
        fail(str(exc))
    exp = _spec(spec)
    import uvicorn  # the server stack loads only when it serves

    from participants.web.server import create_app  # participants.web.server loads starlette

    try:
        hosts = tuple(allow_host) + ((host,) if not _is_address(host) else ())  # --host NAME answers for NAME
        application = create_app(exp, out, seed=seed, trials=trials, read_timeout=read_timeout, allowed_hosts=hosts,
                                 abandon_after_min=abandon_after)
    except (SiteError, o.OptionError) as exc:  # OptionError: ListLockError (a link or folder at the list lock)
        fail(str(exc))

    try:  # a busy port or a wrong address is one clear line, before uvicorn starts
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    typer.echo(f"serving {exp.name} (spec_hash={exp.spec_hash}) at http://{shown}:{port}/?participant=P01&session=1 "
               f"(or ?PROLIFIC_PID=...&STUDY_ID=...&SESSION_ID=...); data in {out}", err=True)
    if host not in ("127.0.0.1", "localhost", "::1"):
        typer.echo(f"WARNING: listening on {host}: other machines can reach this server; put it behind HTTPS", err=True)
    try:
        uvicorn.run(application, host=host, port=port, log_level="warning", access_log=False)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return False
