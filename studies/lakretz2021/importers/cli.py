"""`twinlab import lakretz2021`: the command, its progress bar and its summary table.

Only typer is imported at module level (the `import` sub-app registers this command at start-up).
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from analysis.importers import ImportDataError
from experiments.cli_common import console, fail, progress_bar
from experiments.options import OptionError
from experiments.outputs import check_dataset_folder
from studies.lakretz2021.importers.release import import_lakretz2021 as run


def import_lakretz2021(
    results: Optional[Path] = typer.Option(None, "--results", "-r",
                                           help="the release's results CSV (dataframe_results_all_trials.csv)"),
    logs: Optional[Path] = typer.Option(None, "--logs", "-l",
                                        help="folder of session logs (logLocalGlobalParadigm_*.csv, train_* too)"),
    out: Path = typer.Option(..., "--out", "-o", help="output folder (a Psych-DS dataset: data/*_data.csv + .json)"),
    skip_existing: bool = typer.Option(False, "--skip-existing",
                                       help="leave sessions already in --out as they are and write the others"),
) -> None:
    """Import the Lakretz et al. (2021) release as twinlab sessions: the logs give the order, the table is matched
    to them."""

    try:  # data/ a real folder without links or devices, and not among the files read
        check_dataset_folder("--out", out, [(f"--{k}", p) for k, p in (("results", results), ("logs", logs)) if p])
    except OptionError as exc:
        fail(str(exc))
    t0 = time.time()
    tasks: dict[str, int] = {}
    with progress_bar(transient=True) as progress:
        def tick(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = progress.add_task(stage, total=None if total < 0 else total)
            progress.update(tasks[stage], completed=done, total=None if total < 0 else total)

        try:
            summary = run(results, logs, out, skip_existing=skip_existing, tick=tick)
        except ImportDataError as exc:
            progress.stop()
            fail(str(exc))
    print_summary(summary, time.time() - t0)


def print_summary(summary, seconds: float) -> None:


    table = Table(title=f"lakretz2021 import -> {summary.out}", show_header=True, header_style="bold")
    table.add_column("what")
    table.add_column("count", justify="right")

    def section(name: str) -> None:
        table.add_row(f"[bold]{name}[/bold]", "")

    section("files read")
    for k, v in summary.files_read.items():
        table.add_row(f"  {k}", str(v))
    section("rows in")
    if summary.files_read.get("results_table"):
        table.add_row(f"  results-table rows ({summary.table_subjects} subjects)", str(summary.table_rows))
    if summary.files_read.get("session_logs") or summary.files_read.get("training_logs"):
        table.add_row("  log trials (main sessions)", str(summary.log_trials))
        table.add_row("  log trials (training)", str(summary.training_trials))
        table.add_row("  of which unfinished (log ends inside)", str(summary.unfinished_trials))
    if summary.logs_without_trials:
        section("logs that gave no session (counted, not fatal)")
        reasons: dict[str, int] = {}
        for why in summary.logs_without_trials.values():
            key = why.split(":")[0].split(",")[0]
            reasons[key] = reasons.get(key, 0) + 1
        for k, v in reasons.items():
            table.add_row(f"  {k}", str(v))
    if any(summary.rows_set_aside.values()):
        section("log lines set aside (not imported), by reason")
        for k, v in summary.rows_set_aside.items():
            if v:
                table.add_row(f"  {k}", str(v))
    section("written")
    table.add_row("  sessions written (verified, then renamed into place)", str(summary.sessions_written))
    if summary.sessions_skipped:
        table.add_row("  sessions skipped (already in --out, verified)", str(summary.sessions_skipped))
    if summary.sessions_reimported:
        table.add_row("  partial sessions moved aside and imported again", str(summary.sessions_reimported))
    table.add_row("  rows written", str(summary.rows_written))
    if summary.matched:
        section("table rows matched to log trials")
        for k, v in summary.matched.items():
            table.add_row(f"  {k}", str(v))
    if summary.unmatched:
        section("unmatched (kept and flagged in extra.match)")
        for k, v in summary.unmatched.items():
            table.add_row(f"  {k}", str(v))
    section("written but not scored, by reason (a row may have several)")
    for k, v in summary.not_scored.items():
        table.add_row(f"  {k}", str(v))
    console.print(table)
    for n in summary.notes:
        console.print(f"[yellow]note:[/yellow] {n}", highlight=False)
    typer.echo(f"wrote {summary.sessions_written} session(s), {summary.rows_written} rows to {summary.out} "
               f"in {seconds:.1f} s")
