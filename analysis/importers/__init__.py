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


register(Importer(
    name="lakretz2021",
    description="Lakretz et al. (2021) public release: results table and raw session logs -> twinlab sessions",
    module="analysis.importers.lakretz_cli",
    command="import_lakretz2021",
))
