"""`twinlab import psychopy|jspsych|pcibex|table FILES... --out DIR [--map MAP.yaml] [--spec-out SPEC.yaml]
[--show-map] [--add | --force]`: another tool's results as twinlab sessions (only typer at module level)."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, List, Optional

import typer

HELP = {"psychopy": "PsychoPy Builder trial-by-trial CSV files (one per participant)",
        "jspsych": "jsPsych data (CSV or JSON; JATOS result files)",
        "pcibex": "PCIbex / Ibex Farm results files",
        "table": "a plain CSV/TSV table, one row per trial (--map names the columns)"}


def _command(tool: str) -> Callable[..., None]:
    def command(
        files: List[Path] = typer.Argument(..., help=f"{HELP[tool]}, or folders of them"),
        out: Optional[Path] = typer.Option(None, "--out", "-o", help="output folder (a Psych-DS dataset; the spec "
                                                                     "read from the data goes to OUT/spec/)"),
        map_file: Optional[Path] = typer.Option(None, "--map", help="MAP.yaml: which column means what (default: "
                                                                    "the tool's defaults; see --show-map)"),
        spec_out: Optional[Path] = typer.Option(None, "--spec-out", help="also write the spec read from the data "
                                                                         "(and its items file beside it) here"),
        show_map: bool = typer.Option(False, "--show-map", help="print what the mapping makes of the files, with "
                                                                "counts, and write nothing"),
        force: bool = typer.Option(False, "--force", help="replace sessions and spec files an earlier import of "
                                                          "other files wrote"),
        add: bool = typer.Option(False, "--add", help="new files add people: write their sessions under the extended "
                                                      "spec and leave earlier sessions byte for byte (they keep "
                                                      "their spec hash; OUT/spec/versions/ keeps their spec)"),
    ) -> None:
        run(tool, files, out, map_file, spec_out, show_map, force, add)
    command.__doc__ = f"Import {HELP[tool]} as twinlab sessions, with the design read from the data."
    return command


def run(tool: str, files: list[Path], out: Optional[Path], map_file: Optional[Path], spec_out: Optional[Path],
        show_map: bool, force: bool, add: bool = False) -> None:
    from experiments.cli_common import fail
    from participants.imports.api import show_map as show
    from participants.imports.pipeline import resolve_mapping, run_import
    from participants.imports.records import ImportInputError

    try:
        if show_map:
            typer.echo(show(tool, list(files), map_file))
            return
        if out is None:
            fail("--out is required (the folder the sessions go to)")
        if spec_out is not None and spec_out.suffix.lower() not in (".yaml", ".yml"):
            fail(f"--spec-out {spec_out}: a .yaml file")
        report = run_import(tool, list(files), resolve_mapping(tool, map_file), out, spec_out=spec_out, force=force,
                            add=add)
    except ImportInputError as exc:
        fail(str(exc))
    _print(report)


def _print(report) -> None:
    import json
    from datetime import datetime, timezone

    from experiments.atomic import atomic_write_text

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    path = Path(report.out) / f"import_{report.tool}_{stamp}.json"
    atomic_write_text(path, json.dumps(report.to_dict(), indent=2) + "\n")
    excluded = sum(report.excluded.values())
    typer.echo(f"read {sum(report.files.values())} rows from {len(report.files)} file(s): {report.trials} trials "
               f"({report.practice_trials} practice, {report.no_response} without a response), {excluded} excluded")
    for reason, n in report.excluded.items():
        typer.echo(f"  excluded {n}: {reason}")
    for note in report.notes[:10]:
        typer.echo(f"  note: {note}")
    s = report.sessions
    typer.echo(f"{report.people} people: {s.get('new', 0)} new session(s), {s.get('unchanged', 0)} unchanged, "
               f"{s.get('replaced', 0)} replaced, {s.get('kept', 0)} earlier kept as they are (another spec hash); "
               f"{report.rows_written} rows written to {report.out}")
    typer.echo(f"spec {report.spec} (spec_hash {report.spec_hash})" + (f", also {report.spec_out}" if report.spec_out else "")
               + f"; report {path}")


def register_imports(data_import_app: typer.Typer) -> None:
    for tool in HELP:
        data_import_app.command(tool, help=f"{HELP[tool]} -> twinlab sessions and the spec read from them")(_command(tool))
