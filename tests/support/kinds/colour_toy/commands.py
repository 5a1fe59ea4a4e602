"""The toy kind's own `twinlab stimuli colour-words` (declared in its `COMMANDS`): a design file of colour
words, written as every command writes (refused without --force when it exists, replaced atomically)."""
from __future__ import annotations

from pathlib import Path

import typer

from experiments.cli_common import fail

WORDS = (("red", "colour"), ("table", "other"), ("blue", "colour"), ("chair", "other"))


def colour_words(
    out: Path = typer.Option(..., "--out", "-o", help="the design file to write (CSV)"),
    force: bool = typer.Option(False, "--force", help="replace an existing --out file"),
) -> None:
    """Write the toy's colour words as a design file."""
    from experiments.atomic import write_atomically
    from experiments.options import OptionError
    from experiments.outputs import check_output_file

    try:
        check_output_file("--out", out, force)
    except OptionError as exc:
        fail(str(exc))
    rows = ["item,colourness,sentence,answer"] + [f"{k // 2 + 1},{'c' if a == 'colour' else 'o'},{w},{a}"
                                                  for k, (w, a) in enumerate(WORDS)]
    write_atomically(out, lambda tmp: tmp.write_text("\n".join(rows) + "\n", encoding="utf-8"))
    typer.echo(f"wrote {len(WORDS)} words to {out}")
