"""`twinlab import psychopy|jspsych|pcibex|table FILES... --out DIR [--map MAP.yaml] [--spec-out SPEC.yaml]
[--show-map] [--add | --force] [--encoding NAME] [--bad-trials exclude|refuse]`: another tool's results as
twinlab sessions (only typer at module level). The commands are made here for every `ToolImporter` of the one
registry (registry.py), which also mounts the formats with commands of their own (web, a study's release)."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, List, Optional

import typer

from experiments.atomic import atomic_write_text
from experiments.cli_common import fail
from experiments.commands import HELP_LAYOUT, lazy_group
from participants.imports.pipeline import BAD_TRIALS, prepare, resolve_mapping, run_import
from participants.imports.records import ImportInputError
from participants.imports.registry import ToolImporter, importers
from participants.imports.show_map import show_map_text
from participants.imports.text_input import check_encoding


def tool_command(imp: Any) -> Callable[..., None]:
    """The typer command of a ToolImporter (`imp.name`, `imp.description`)."""
    tool, what = imp.name, imp.description

    def command(
        files: List[Path] = typer.Argument(..., help=f"{imp.files_help or what}, or folders of them"),
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
        encoding: Optional[str] = typer.Option(None, "--encoding", help="the files' encoding (e.g. cp1252, latin-1, "
                                                                        "utf-16); default: UTF-8, each line that is "
                                                                        "not read as cp1252 and counted in a note"),
        bad_trials: str = typer.Option("exclude", "--bad-trials", help="a trial with a broken value (a negative or "
                                                                       "unreadable RT): exclude it, counted with its "
                                                                       "line in the report (default), or refuse the "
                                                                       "import naming it"),
    ) -> None:
        run(tool, files, out, map_file, spec_out, show_map, force, add, encoding=encoding, bad_trials=bad_trials)
    command.__doc__ = f"Import {what} as twinlab sessions, with the design read from the data."
    return command


def run(tool: str, files: list[Path], out: Optional[Path], map_file: Optional[Path], spec_out: Optional[Path],
        show_map: bool, force: bool, add: bool = False, *, encoding: Optional[str] = None,
        bad_trials: str = "exclude") -> None:

    try:
        if bad_trials not in BAD_TRIALS:
            fail(f"--bad-trials {bad_trials!r}: one of {', '.join(BAD_TRIALS)}")
        check_encoding(encoding)
        mapping = resolve_mapping(tool, map_file)
        if show_map:
            prep = prepare(tool, list(files), mapping, encoding=encoding, bad_trials=bad_trials, keep_refusal=True)
            typer.echo(show_map_text(tool, mapping, prep))
            if prep.refusal:
                raise typer.Exit(2)
            return
        if out is None:
            fail("--out is required (the folder the sessions go to)")
        if spec_out is not None and spec_out.suffix.lower() not in (".yaml", ".yml"):
            fail(f"--spec-out {spec_out}: a .yaml file")
        report = run_import(tool, list(files), mapping, out, spec_out=spec_out, force=force, add=add,
                            encoding=encoding, bad_trials=bad_trials)
    except ImportInputError as exc:
        fail(str(exc))
    _print(report)


def _print(report) -> None:


    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    path = Path(report.out) / f"import_{report.tool}_{stamp}.json"
    atomic_write_text(path, json.dumps(report.to_dict(), indent=2) + "\n")
    excluded = sum(report.excluded.values())
    typer.echo(f"read {sum(report.files.values())} rows from {len(report.files)} file(s): {report.trials} trials "
               f"({report.practice_trials} practice, {report.no_response} without a response), {excluded} excluded")
    for reason, n in report.excluded.items():
        typer.echo(f"  excluded {n}: {reason}")
    if report.bad_trials:
        typer.echo(f"  {report.bad_trials} trial(s) with a broken value excluded (--bad-trials exclude; "
                   "--bad-trials refuse stops at the first):")
        for row in report.bad_trial_rows[:10]:
            typer.echo(f"    {row}")
    for note in report.notes[:10]:
        typer.echo(f"  note: {note}")
    s = report.sessions
    typer.echo(f"{report.people} people: {s.get('new', 0)} new session(s), {s.get('unchanged', 0)} unchanged, "
               f"{s.get('replaced', 0)} replaced, {s.get('kept', 0)} earlier kept as they are (another spec hash); "
               f"{report.rows_written} rows written to {report.out}")
    typer.echo(f"spec {report.spec} (spec_hash "
               f"{report.spec_hash})" + (f", also {report.spec_out}" if report.spec_out else "")
               + f"; report {path}")


def register_imports(import_app: typer.Typer) -> None:
    """`twinlab import NAME` for every format of the one registry (registry.py): the shared command for each
    tool read into source trials, the format's own command for the others (the one registration)."""
    for imp in importers().values():
        cmd = tool_command(imp) if isinstance(imp, ToolImporter) else imp.command()
        import_app.command(imp.name, help=imp.help)(cmd)


# `twinlab import <format>` (declared in participants/__init__.py's `COMMANDS`): every format of the one registry,
# and the commands kinds and studies declare in the group "import"
import_app = typer.Typer(no_args_is_help=True, cls=lazy_group("import"), **HELP_LAYOUT,
                         help="Import people's results into twinlab sessions: files from PsychoPy, jsPsych, "
                              "PCIbex/Ibex or a plain table, twinlab's own browser sessions, and released datasets.")
register_imports(import_app)
