"""`twinlab import web`: the command and its summary (only typer at module level)."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import List, Optional

import typer
from rich.table import Table

from experiments.atomic import atomic_write_text
from experiments.cli_common import console, fail, load_spec_or_exit
from experiments.options import OptionError
from experiments.outputs import check_dataset_folder
from participants.web.importer import WebImportError, count_table
from participants.web.importer import import_web as run


def import_web(
    results: List[Path] = typer.Argument(..., help="what JATOS or Pavlovia saved: .jsonl/.txt records, jsPsych "
                                                   ".json or .csv exports, or folders of them"),
    spec: str = typer.Option(..., "--spec", "-s", help="the spec the site was built from (file or bundled name)"),
    out: Path = typer.Option(..., "--out", "-o", help="output folder (a Psych-DS dataset: data/*_data.csv + .json)"),
    seed: Optional[int] = typer.Option(None, "--seed", help="the --seed the site was built with, if any"),
) -> None:
    """Import browser sessions saved by a `twinlab web build` site (JATOS, Pavlovia, a download) as twinlab sessions."""



    try:  # data/ a real folder without links or devices, and not among the files read
        check_dataset_folder("--out", out, [("the results", p) for p in results])
    except OptionError as exc:
        fail(str(exc))
    exp = load_spec_or_exit(spec)
    try:
        summary = run(list(results), exp, out, seed=seed)
    except WebImportError as exc:
        fail(str(exc))
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    path = out / f"import_web_{stamp}.json"
    atomic_write_text(path, json.dumps(summary.to_dict(), indent=2) + "\n")
    table = Table(title=f"web import -> {out}", header_style="bold")
    table.add_column("what")
    table.add_column("count", justify="right")
    for f, n in summary.files_read.items():
        table.add_row(f"records in {f}", str(n))
    table.add_row("other jsPsych rows (pages)", str(summary.other_rows))
    table.add_row("identical repeats dropped", str(summary.duplicates_dropped))
    counts = count_table(summary)
    table.add_row("sessions written (complete / incomplete)", f"{counts['complete']} / {counts['incomplete']}")
    table.add_row("rows written", str(summary.rows_written))
    console.print(table)
    typer.echo(f"wrote {summary.rows_written} rows in {summary.sessions_written} session(s) to {out}; summary {path}")
