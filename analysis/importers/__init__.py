"""Importers of released data formats, found by name in a small registry (as lm-eval registers tasks).

Each importer turns files as released into ordinary twinlab sessions (the Psych-DS layout and the
trial-table schema of `experiments/`), so everything downstream reads one format. An importer is
registered by its format name with the module and the typer command that runs it; `twinlab import
<name>` lists and runs them (analysis/cli.py adds them to the `import` sub-app of experiments/cli.py;
the browser runner adds its own `import web` there, from participants/web/cli.py).

Nothing heavy is imported here: a module is imported only when its command is registered or run.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable
from experiments.studies import declared, study_module


class ImportDataError(ValueError):
    """Input that cannot be imported; the message names the file and, where it can, the line."""


@dataclass(frozen=True)
class Importer:
    """One released format: its name, a one-line description, and where its command lives."""

    name: str
    description: str
    module: str
    command: str  # name of the typer command function in `module`

    def load_command(self) -> Callable:
        return getattr(importlib.import_module(self.module), self.command)


REGISTRY: dict[str, Importer] = {}


def register(importer: Importer) -> Importer:
    if importer.name in REGISTRY:
        raise ValueError(f"importer {importer.name!r} is registered twice")
    REGISTRY[importer.name] = importer
    return importer


def get_importer(name: str) -> Importer:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ImportDataError(f"unknown import format {name!r}; known: {', '.join(sorted(REGISTRY))}") from None


def _register_studies() -> None:
    """The importers the registered studies declare (their `IMPORTERS`, experiments/studies.py), each
    command in a module of its study (imported only when its command is registered or run)."""

    for study, importers in declared("IMPORTERS").items():
        package = study_module(study).__name__
        for imp in importers:
            register(Importer(name=imp["name"], description=imp["description"],
                              module=f"{package}.{imp['module']}", command=imp["command"]))


_register_studies()
