"""The ground floor's commands: `twinlab validate`, `plan`, `doctor` and `stimuli prompts` (declared in
experiments/__init__.py's `COMMANDS`; this module is imported when one of them runs)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import pandas as pd
import typer

from experiments.atomic import write_atomically
from experiments.cli_common import console, fail, load_spec_or_exit
from experiments.design_compiler import check_sizes, compile_sequence
from experiments.doctor import run_doctor
from experiments.lists import check_list
from experiments.options import OptionError, session_number, subject_id
from experiments.outputs import check_output_file
from experiments.screen_texts import base_language, untranslated
from experiments.sources.design_rows import load_design
from experiments.spec import SpecError
from experiments.tasks import get_task, runner_problems, runs_on
from stimuli.prompts import PROMPT_GROUPS, PROMPT_SETS


def validate(spec: str = typer.Argument(..., help="experiment spec (YAML) or the name of a bundled spec")) -> None:
    """Validate a spec; print its blocks, trial counts and hash."""

    exp = load_spec_or_exit(spec)

    problems = runner_problems(exp.task.kind)  # a runner that cannot present the task: said, not refused
    if not get_task(exp.task.kind).runners:
        fail(f"{spec}: " + "; ".join(problems))  # no runner at all
    try:
        sizes = dict(check_sizes(exp))  # the design and the stimulus pool can supply every block
        check_sequence = get_task(exp.task.kind).check_sequence
        try:
            if check_sequence is not None:  # a runner would refuse an item: said here, before anyone runs it
                check_sequence(exp, compile_sequence(exp, "validate1", exp.seed))
        except ValueError as exc:
            fail(f"{spec}: {exc}")
        for b in exp.blocks:
            sessions = exp.block_sessions(b)
            n = sizes[b.name]
            per = (f"{n} trials over sessions {', '.join(map(str, sessions))} (dealt out)"
                   if b.across_sessions and len(sessions) > 1 and not b.trials
                   else f"{n} trials" + (f" in session(s) {', '.join(map(str, sessions))}" if exp.sessions > 1 else ""))
            if b.role is not None:  # a block of a design spec
                console.print(f"  block [bold]{b.name}[/bold]: {per}, role={b.role}"
                              + (" + fillers" if b.fillers else "") + f", feedback={b.feedback}"
                              + (f", max_run={dict(b.max_run)}" if b.max_run else ""), highlight=False,
                              soft_wrap=True)
                continue
            console.print(f"  block [bold]{b.name}[/bold]: {per}, lexicon={b.lexicon}, feedback={b.feedback}, "
                          f"structures={', '.join(b.structure_names())}", highlight=False)
        if exp.design is not None:
            df = load_design(exp)
            factors = " x ".join(f"{k} ({', '.join(v)})" for k, v in exp.design.factors.items())
            console.print(f"  design: {factors}; {df.summary()}", highlight=False, soft_wrap=True)
            if df.unknown_columns:  # kept, never dropped: say so
                console.print(f"  columns kept in materials under their own names (no role in the task): "
                              f"{', '.join(df.unknown_columns)}", highlight=False, soft_wrap=True)
    except SpecError as exc:
        fail(str(exc))

    missing = untranslated(exp)
    if missing:  # valid, but participants would read English: say which texts the spec should give
        console.print(f"  WARNING: language {exp.language!r} has no built-in screen texts; {len(missing)} are English "
                      f"unless given under texts:/feedback: {', '.join(missing)}", highlight=False)
    else:
        console.print(f"  screen texts: the spec's, else the built-in {base_language(exp.language)!r} set",
                      highlight=False)
    console.print(f"  runners: {runs_on(exp.task.kind)}", highlight=False, soft_wrap=True)
    # the kind's own words (violation detection: `response`, key or panel), else its name
    summary = get_task(exp.task.kind).summary
    how = summary(exp.task) if summary is not None else f"task={exp.task.kind}"
    typer.echo(f"OK {exp.name} spec_hash={exp.spec_hash} sessions={exp.sessions} {how} language={exp.language}")


def plan(
    spec: str = typer.Argument(..., help="experiment spec (YAML) or bundled spec name"),
    subject: str = typer.Option(..., "--subject", "-s", help="subject id (letters and digits)"),
    seed: Optional[int] = typer.Option(None, help="override the spec's seed"),
    session: int = typer.Option(1, "--session", "-n", help="session number (multi-session specs)"),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="write the sequence here (.csv or .json); default: "
                                                                 "print"),
    force: bool = typer.Option(False, "--force", help="replace an existing --out file (never a session's data or the "
                                                      "spec itself)"),
    list_number: Optional[int] = typer.Option(None, "--list", help="the design's list N (1..L) instead of the id "
                                                                   "rotation (experiments/lists.py)"),
) -> None:
    """Compile the trial sequence of one subject and print or save it with its hash."""


    try:
        subject_id("--subject", subject)
        session_number(session)
    except OptionError as exc:
        fail(str(exc))
    if out is not None and out.is_dir():
        fail(f"--out {out} is a folder; give a file name ending in .csv or .json")
    exp = load_spec_or_exit(spec)

    try:
        check_list(exp, list_number)
    except (OptionError, SpecError) as exc:
        fail(str(exc))
    if out is not None:
        inputs = [("the spec", Path(exp.source_path or spec))]
        if exp.stimuli.file:
            inputs.append(("the stimulus file", Path(exp.stimuli.file)))
        if exp.design is not None:
            inputs.append(("the design file", Path(exp.design.file)))
        try:
            check_output_file("--out", out, force, inputs)
        except OptionError as exc:
            fail(str(exc))
    try:
        seq = compile_sequence(exp, subject, seed, session=session, list_number=list_number)
    except SpecError as exc:
        fail(str(exc))
    if out is None:
        df = pd.DataFrame([t.to_row() for t in seq])
        cols = ["trial_index", "block", "structure", "condition", "violation_position", "dependency", "words"]
        if seq.design:  # a design of items: its item, list and factors instead of the Lakretz cells
            cols = ["trial_index", "block", "role", "item", "list", *[f for f in seq.design["factors"]
                                                                       if f not in ("condition",)], "words"]
            df = df.reindex(columns=list(dict.fromkeys([*cols, *df.columns])))
        with pd.option_context("display.max_rows", 60, "display.width", 200, "display.max_colwidth", 90):
            typer.echo(df[cols].to_string(index=False))
    else:
        try:
            if out.suffix.lower() == ".json":
                write_atomically(out, lambda tmp: tmp.write_text(seq.to_json(), encoding="utf-8"))
            else:
                df = pd.DataFrame([t.to_row() for t in seq])
                df.insert(0, "sequence_hash", seq.sequence_hash)
                df.insert(0, "spec_hash", seq.spec_hash)
                df.insert(0, "subject_id", seq.subject_id)
                write_atomically(out, lambda tmp: df.to_csv(tmp, index=False))
        except OSError as exc:
            fail(f"--out {out}: cannot write ({exc.strerror or exc})")
        console.print(f"wrote {len(seq)} trials to {out}")
    listed = f" list={seq.design['list']}/{seq.design['lists']}" if seq.design else ""
    typer.echo(f"subject={seq.subject_id} session={seq.session} seed={seq.seed} trials={len(seq)}{listed} "
               f"spec_hash={seq.spec_hash} sequence_hash={seq.sequence_hash}")


STIMULUS_TABLE_SUFFIXES = (".csv", ".tsv", ".tab")  # what stimuli.files.load_items reads


def stimulus_table_name(name: str, path: Path) -> Path:
    """A stimulus file is written as CSV or TSV, chosen by its suffix: anything else (items.json) would be a
    CSV under a misleading name, so it is refused before anything is written."""

    if path.suffix.lower() not in STIMULUS_TABLE_SUFFIXES:
        raise OptionError(f"{name} {path}: a stimulus file is written as CSV or TSV; give a name ending in "
                          f"{', '.join(STIMULUS_TABLE_SUFFIXES)} (got {path.suffix or 'no suffix'!r})")
    return path


def stimuli_prompts(name: Optional[str] = typer.Argument(None, help="a prompt set to print")) -> None:
    """List the bundled prompt sets (seeds/000), or print one."""

    if name is None:
        for p in PROMPT_SETS.values():
            typer.echo(f"{p.name:24s} {p.kind:12s} {p.source:8s} {len(p.lines)} line(s)")
        typer.echo("groups: " + ", ".join(f"{g} ({', '.join(m)})" for g, m in PROMPT_GROUPS.items()))
        return
    if name not in PROMPT_SETS:
        fail(f"unknown prompt set {name!r}")
    typer.echo(PROMPT_SETS[name].text)




def doctor() -> None:
    """Report what is installed and working (Python, torch, model, PsychoPy window, R, lme4, pymer4)."""

    ok = run_doctor()
    raise typer.Exit(0 if ok else 1)
