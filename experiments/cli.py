"""The `twinlab` command line (typer): the app and its groups, every command mounted lazily.

Every command is declared as data (experiments/commands.py): the ground floor's in experiments/__init__.py,
each vertical's in its package's `COMMANDS` (found through pyproject.toml's `twinlab.commands` entry points),
the kinds' and studies' in theirs. This module names none of them and imports no command module: `twinlab
--help` lists them from their declarations, and a command's module is imported when it runs.
"""
from __future__ import annotations

import sys

import typer

from experiments.commands import HELP_LAYOUT, lazy_group
from stimuli.input_rules import raise_csv_field_limit

raise_csv_field_limit()  # the CLI's start: every command reads and writes long CSV fields
app = typer.Typer(add_completion=False, no_args_is_help=True, cls=lazy_group(""), **HELP_LAYOUT,
                  help="twinlab: one experiment spec, human and model subjects, one analysis.")
stimuli_app = typer.Typer(no_args_is_help=True, cls=lazy_group("stimuli"), help="Stimulus sets.", **HELP_LAYOUT)
app.add_typer(stimuli_app, name="stimuli")
stimuli_import_app = typer.Typer(no_args_is_help=True, cls=lazy_group("stimuli import"), **HELP_LAYOUT,
                                 help="Import stimulus sets in published formats.")
stimuli_app.add_typer(stimuli_import_app, name="import")


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
