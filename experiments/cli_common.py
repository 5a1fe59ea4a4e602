"""The helpers every command-line module shares (one error line and exit 2, loading a spec).

Kept apart from `experiments.cli` (which builds the typer app and registers every package's
commands) so the runner, analysis and import CLIs reach for these without importing the app.
"""
from __future__ import annotations

from typing import Any, NoReturn

import typer
from rich.console import Console

from experiments.spec import SpecError, load_spec

console = Console(stderr=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """One red line on stderr and exit `code` (2: bad input), no traceback."""
    console.print(f"[bold red]error:[/bold red] {message}", highlight=False, soft_wrap=True)
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
    from experiments.options import OptionError
    from experiments.run_prep import prepare_run

    try:
        return prepare_run(spec, **settings)
    except (SpecError, OptionError) as exc:
        fail(str(exc))
