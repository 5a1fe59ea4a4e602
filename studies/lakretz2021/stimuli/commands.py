"""The study's `twinlab stimuli` commands: `stimuli generate` (the nested-agreement generator) and `stimuli
import lakretz-text` (the released English stimuli). Declared in the study's `COMMANDS` (its __init__);
experiments/commands.py mounts them and imports this module only when one of them runs."""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Optional

import typer

from experiments.atomic import write_atomically
from experiments.cli_common import console, fail
from experiments.options import OptionError, at_least
from experiments.outputs import check_output_file
from experiments.spec_commands import stimulus_table_name
from experiments.spec_model import MAX_ITEMS_PER_CONDITION
from stimuli.files import StimulusFileError, load_items, save_items
from studies.lakretz2021.stimuli.generate import generate_items
from studies.lakretz2021.stimuli.structures import STRUCTURES
from studies.lakretz2021.texts import import_lakretz_text


def generate(
    out: Path = typer.Option(..., "--out", "-o", help="output CSV or TSV"),
    structure: list[str] = typer.Option(["long_nested"], "--structure", help="structure(s); repeat the option"),
    lexicon: str = typer.Option("test", help="test or training"),
    per_condition: int = typer.Option(512, help="items per condition"),
    seed: int = typer.Option(1),
    force: bool = typer.Option(False, "--force", help="replace an existing --out file"),
) -> None:
    """Generate an agreement stimulus set and write it as CSV/TSV (the format `stimuli.file` reads)."""

    unknown = [s for s in structure if s not in STRUCTURES]
    if unknown:
        fail(f"unknown structure {unknown[0]!r}; known: {', '.join(STRUCTURES)}")
    try:
        at_least("--per-condition", per_condition, 1, MAX_ITEMS_PER_CONDITION)  # the spec's bound
        check_output_file("--out", out, force)
        stimulus_table_name("--out", out)
    except OptionError as exc:
        fail(str(exc))
    items = []
    for s in structure:
        try:
            items += generate_items(s, lexicon, per_condition, seed)
        except KeyError as exc:
            fail(str(exc.args[0]))
    try:
        write_atomically(out, lambda tmp: save_items(items, tmp))
    except OSError as exc:
        fail(f"--out {out}: cannot write ({exc.strerror or exc})")
    typer.echo(f"wrote {len(items)} items to {out}")


def import_text(
    text: Path = typer.Argument(..., help="the .text file: one sentence per line, words separated by single spaces"),
    gold: Path = typer.Option(..., "--gold", help="the line-aligned .gold file: verb index, correct form, flipped "
                                                  "form, (ignored)"),
    out: Path = typer.Option(..., "--out", "-o", help="output stimulus file (CSV or TSV), as `stimuli.file` reads it"),
    id_prefix: Optional[str] = typer.Option(None, "--id-prefix", help="item id prefix (default: the .text file's "
                                                                      "name)"),
    force: bool = typer.Option(False, "--force", help="overwrite an existing output file"),
) -> None:
    """Import Lakretz et al.'s released English nested-agreement stimuli (.text + .gold) as a stimulus file."""


    try:
        check_output_file("--out", out, force, [("the .text file", text), ("the --gold file", gold)])
        stimulus_table_name("--out", out)
    except OptionError as exc:
        fail(str(exc))
    try:
        items = import_lakretz_text(text, gold, id_prefix=id_prefix)
    except StimulusFileError as exc:
        fail(str(exc))

    def write(tmp: Path) -> None:
        save_items(items, tmp)
        load_items(tmp)  # what specs and run-model will read

    try:
        write_atomically(out, write)
    except OSError as exc:
        fail(f"--out {out}: cannot write ({exc.strerror or exc})")
    cells = Counter((i.structure, next(iter(i.verbs)), i.condition) for i in items)
    for (structure, dep, cond), n in sorted(cells.items()):
        console.print(f"  {structure} {dep} {cond}: {n}", highlight=False)
    typer.echo(f"wrote {len(items)} items to {out}")
