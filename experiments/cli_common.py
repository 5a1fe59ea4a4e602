"""The helpers every command-line module shares (one error line and exit 2, loading a spec).

Kept apart from `experiments.cli` (which builds the typer app and registers every package's
commands) so the runner, analysis and import CLIs reach for these without importing the app.
"""
from __future__ import annotations

import sys
import time
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from experiments.options import OptionError
from experiments.run_prep import prepare_run
from experiments.spec import SpecError, load_spec


def writes_to_terminal(stream: Any = None) -> bool:
    """Whether `stream` (stderr by default) is a terminal; a file, a pipe or a closed stream is not."""
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def stderr_console() -> Console:
    """rich's console on stderr, a terminal only when stderr is one: a log file or a pipe gets plain text, never
    colour codes, cursor moves or carriage returns (FORCE_COLOR and TTY_COMPATIBLE would make rich write them)."""
    return Console(stderr=True, force_terminal=None if writes_to_terminal() else False)


console = stderr_console()


def fail(message: str, code: int = 2) -> NoReturn:
    """One red line on stderr and exit `code` (2: bad input), no traceback."""
    console.print(f"[bold red]error:[/bold red] {escape(message)}", highlight=False, soft_wrap=True)  # [f, j] is text
    raise typer.Exit(code)


def load_spec_or_exit(spec: str):
    """The spec at `spec` (a path or a bundled name), or one line naming what is wrong and exit 2."""
    try:
        return load_spec(spec)
    except SpecError as exc:
        fail(str(exc))


def checked_spec_or_exit(spec: Any, list_number: int | None = None):
    """`experiments.run_prep.checked_spec` for a command: the experiment, or one line and exit 2."""
    return prepare_run_or_exit(spec, list_number=list_number).exp


def prepare_run_or_exit(spec: Any, **settings: Any):
    """`experiments.run_prep.prepare_run` for a command (load, sizes, --list; `settings`: session, seed,
    trials, list_number): the run's plan, or one line naming what is wrong and exit 2."""

    try:
        return prepare_run(spec, **settings)
    except (SpecError, OptionError) as exc:
        fail(str(exc))


class PlainProgress:
    """A progress display for a log: one plain line per task when it starts, at most every `every` seconds while
    it runs, and when it ends (no bar, no control characters). The subset of rich's Progress the commands use."""

    def __init__(self, unit: str = "", every: float = 10.0, disable: bool = False, stream: Any = None):
        self.unit = f" {unit}" if unit else ""
        self.every = every
        self.disable = disable
        self.stream = stream
        self.tasks: dict[int, dict[str, Any]] = {}

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def start(self) -> None:
        """Nothing to set up: lines are written as tasks advance."""

    def stop(self) -> None:
        for task_id, t in self.tasks.items():
            if not t["ended"]:
                self._line(task_id, final=True)

    def add_task(self, description: str, total: float | None = None, **_: Any) -> int:
        task_id = len(self.tasks)
        self.tasks[task_id] = {"description": description, "total": total, "completed": 0, "ended": False,
                               "start": time.monotonic(), "last": time.monotonic()}
        return task_id

    def update(self, task_id: int, total: float | None = None, completed: float | None = None,
               advance: float | None = None, description: str | None = None, **_: Any) -> None:
        t = self.tasks[task_id]
        if total is not None:
            t["total"] = total
        if description is not None:
            t["description"] = description
        if completed is not None:
            t["completed"] = completed
        if advance:
            t["completed"] += advance
        self._maybe(task_id)

    def advance(self, task_id: int, advance: float = 1) -> None:
        self.update(task_id, advance=advance)

    def _maybe(self, task_id: int) -> None:
        t = self.tasks[task_id]
        finished = t["total"] is not None and t["completed"] >= t["total"]
        if finished or time.monotonic() - t["last"] >= self.every:
            self._line(task_id, final=finished)

    def _line(self, task_id: int, final: bool) -> None:
        t = self.tasks[task_id]
        t["last"] = time.monotonic()
        t["ended"] = t["ended"] or final
        if self.disable:
            return
        of = f"/{t['total']:g}" if t["total"] is not None else ""
        took = time.monotonic() - t["start"]
        stream = self.stream if self.stream is not None else sys.stderr
        print(f"{t['description']}: {t['completed']:g}{of}{self.unit}, {took:.0f} s{' (done)' if final else ''}",
              file=stream, flush=True)


def progress_bar(unit: str = "", eta: bool = False, disable: bool = False, transient: bool = False) -> Any:
    """The progress display of a long command on stderr: rich's bar on a terminal, plain lines in a log
    (`PlainProgress`), so a log never holds the bar's carriage returns and escape codes."""
    if not writes_to_terminal():
        return PlainProgress(unit, disable=disable)

    columns: list[Any] = [TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn()]
    columns += [TextColumn(unit)] if unit else []
    columns += [TimeElapsedColumn()] + ([TextColumn("eta"), TimeRemainingColumn()] if eta else [])
    return Progress(*columns, console=stderr_console(), disable=disable, transient=transient)
