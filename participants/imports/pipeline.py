"""`twinlab import psychopy|jspsych|pcibex|table`: read, map, check, read the design, write sessions.

Order of work, so that bad input writes nothing: every file is read and checked by its tool's reader, the
mapping applied, the people, labels and factors read (study.py), the spec and items file written to a
temporary folder and loaded by the project's own loader, each person's sequence compiled and compared with
the person's trials, every row built and scored, and what already lies in --out compared; only then are
the spec (OUT/spec/, and --spec-out) and the sessions written (each staged and renamed). A re-import of the
same files changes nothing; new files add sessions (--add: the earlier ones left as they are, earlier.py).
"""
from __future__ import annotations

import dataclasses
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from participants.imports.cells import check_cells
from participants.imports.earlier import Earlier, read_earlier
from participants.imports.kinds import decide_task
from participants.imports.mapping import load_mapping
from participants.imports.outputs import check_outputs
from participants.imports.records import MAPPING_ORIGIN, Excluded, ImportInputError, Mapping, ReadResult
from participants.imports.registry import tool_importer
from participants.imports.study import derive_study
from participants.imports.text_input import input_problem
from participants.imports.writing import write_all

MAX_FILES = 10_000
DATA_SUFFIXES = (".csv", ".tsv", ".txt", ".json", ".jsonl")
BAD_TRIALS = ("exclude", "refuse")


@dataclass
class ImportReport:
    """What an import read, kept and wrote; every source row is counted as a trial or an exclusion."""
    tool: str
    out: str = ""
    spec: str = ""
    spec_out: str = ""
    spec_hash: str = ""
    files: dict[str, int] = field(default_factory=dict)          # file -> data rows read
    trials: int = 0
    trial_rows: int = 0                                          # source rows the trials are made of
    task: str = ""
    practice_trials: int = 0
    no_response: int = 0
    excluded: dict[str, int] = field(default_factory=dict)       # reason -> rows
    excluded_rows: list[str] = field(default_factory=list)       # "file: line N: reason" (first 50)
    notes: list[str] = field(default_factory=list)
    people: int = 0
    sessions: dict[str, int] = field(default_factory=dict)       # new / unchanged / replaced / kept (--add)
    rows_written: int = 0
    mapping: dict[str, Any] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    factors: dict[str, list[str]] = field(default_factory=dict)
    feedback: dict[str, list[int]] = field(default_factory=dict)  # phase -> [trials with feedback, trials]
    tool_versions: list[str] = field(default_factory=list)
    bad_trials: int = 0                                          # trials excluded for a broken own value
    bad_trial_rows: list[str] = field(default_factory=list)      # "file: line N: reason" (first 50)
    bad_trials_policy: str = "exclude"                           # --bad-trials
    encoding: str = ""                                           # --encoding ("": UTF-8, other lines counted)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @property
    def accounted(self) -> bool:
        """Every data row read is a trial or an excluded row (the readers' promise, checked)."""
        return sum(self.files.values()) == self.trial_rows + sum(self.excluded.values())


def reader_for(tool: str) -> tuple[Callable[[list[Path], Optional[Mapping]], ReadResult], Callable[[], Mapping]]:
    """The tool's reader and defaults, from the one registry (registry.py)."""

    imp = tool_importer(tool)
    return imp.read, imp.default_mapping


def expand_files(paths: list[Path]) -> list[Path]:
    """The files given, folders read for .csv/.tsv/.txt/.json/.jsonl files (sorted); each must exist."""

    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if not p.exists():
            raise ImportInputError(f"{p}: does not exist")
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if not f.name.startswith(".") and f.suffix.lower() in DATA_SUFFIXES
                           and not f.is_dir())
            bad = next((f for f in found if input_problem(f)), None)
            if bad is not None:   # a FIFO or a link to a device among the data files: never opened, never skipped
                raise ImportInputError(f"{bad}: {input_problem(bad)}; a folder given to an import holds results files")
            out += found
        else:
            problem = input_problem(p)
            if problem:
                raise ImportInputError(f"{p}: {problem}; give a results file or a folder of them")
            out.append(p)
    if not out:
        raise ImportInputError(f"no data files in {', '.join(map(str, paths))}")
    if len(out) > MAX_FILES:
        raise ImportInputError(f"{len(out)} files; at most {MAX_FILES} in one import")
    if len({f.resolve() for f in out}) < len(out):
        twice = next(f for f in out if sum(g.resolve() == f.resolve() for g in out) > 1)
        raise ImportInputError(f"{twice}: given twice")
    return out


def resolve_mapping(tool: str, map_path: Optional[Path]) -> Optional[Mapping]:
    """None (the tool's defaults, as the reader infers them per file) or the --map over the defaults."""
    if map_path is None:
        return None

    _, defaults = reader_for(tool)
    return load_mapping(map_path, defaults())


def study_name(tool: str, spec_out: Optional[Path], result: ReadResult) -> str:
    """The spec's name: --spec-out's file name, else the study's own name (PsychoPy's expName), else the tool's."""
    if spec_out is not None:
        raw = spec_out.stem
    else:
        names = {t.extra.get("expName", "") for t in result.trials} - {""}
        raw = sorted(names)[0] if len(names) == 1 else f"imported_{tool}"
    name = re.sub(r"[^A-Za-z0-9_]", "_", raw)[:60].strip("_")
    return name or f"imported_{tool}"


def read_all(tool: str, paths: list[Path], mapping: Optional[Mapping],
             encoding: Optional[str] = None) -> tuple[list[Path], ReadResult]:
    """Every file of `paths` (folders expanded) read by the tool's importer (`encoding`: --encoding)."""

    imp = tool_importer(tool)
    files = expand_files(paths)
    return files, imp.read(files, mapping, encoding=encoding)


def apply_bad_trials(result: ReadResult, policy: str) -> list[Excluded]:
    """The trials excluded for a broken own value (`Excluded.bad`); under `--bad-trials refuse` the first one
    refuses the import, naming its line and the fix."""
    bad = [e for e in result.excluded if e.bad]
    if policy == "refuse" and bad:
        e = bad[0]
        raise ImportInputError(f"{e.source_file}: line {e.line}: {e.reason}; --bad-trials refuse stops at the first "
                               f"of {len(bad)} trial(s) with a broken value: fix the file, or give --bad-trials "
                               "exclude to import without these trials (each counted with its line in the report)")
    return bad


def count_read(report: ImportReport, result: ReadResult) -> None:
    report.files = {Path(f).name if list(result.rows_read).count(f) == 1 else f: n for f, n in result.rows_read.items()}
    report.trials = len(result.trials)
    report.trial_rows = sum(t.n_rows for t in result.trials)
    report.practice_trials = sum(t.phase == "practice" for t in result.trials)
    report.no_response = sum(t.response is None for t in result.trials)
    report.excluded = dict(Counter(e.reason for e in result.excluded))
    report.excluded_rows = [f"{Path(e.source_file).name}: line {e.line}: {e.reason}" for e in result.excluded[:50]]
    report.tool_versions = sorted(set(result.tool_version.values()) - {""})
    report.notes = list(result.notes[:50])
    bad = [e for e in result.excluded if e.bad]
    report.bad_trials = len(bad)
    report.bad_trial_rows = [f"{Path(e.source_file).name}: line {e.line}: {e.reason}" for e in bad[:50]]
    if not report.accounted:
        raise ImportInputError(f"internal error: {sum(report.files.values())} rows read but {report.trial_rows} in "
                               f"trials and {sum(report.excluded.values())} excluded: a reader lost rows")


@dataclass
class Prepared:
    """What an import makes of the files before anything is written: the same for `--show-map` and the import."""
    files: list[Path]
    result: ReadResult
    mapping: Mapping
    report: ImportReport
    study: Any = None
    stated_kinds: dict[str, int] = field(default_factory=dict)   # kind -> trials, as the reader stated them
    refusal: str = ""      # why the import would stop after reading (`--show-map` says it; the import raises it)


def prepare(tool: str, paths: list[Path], mapping: Optional[Mapping], out: Optional[Path] = None, *,
            spec_out: Optional[Path] = None, encoding: Optional[str] = None, bad_trials: str = "exclude",
            keep_refusal: bool = False) -> Prepared:
    """Read, check every cell, apply --bad-trials, decide the task and read the design: the one set of rules
    `--show-map` shows and the import writes (`keep_refusal`: a refusal after the reading is kept in
    `Prepared.refusal` instead of raised, so that `--show-map` shows the counts with it)."""

    if bad_trials not in BAD_TRIALS:
        raise ImportInputError(f"--bad-trials {str(bad_trials)[:20]!r}: one of {', '.join(BAD_TRIALS)}")
    report = ImportReport(tool=tool, out=str(out or ""), bad_trials_policy=bad_trials, encoding=encoding or "")
    files, result = read_all(tool, paths, mapping, encoding)
    _, defaults = reader_for(tool)
    m = mapping or _mapping_seen(result, defaults())
    prepared = Prepared(files, result, m, report)
    try:
        check_cells(result)
        apply_bad_trials(result, bad_trials)
        if not result.trials:
            count_read(report, result)
            raise ImportInputError(f"no trials in {len(files)} file(s) ({sum(report.excluded.values())} rows excluded: "
                                   + "; ".join(f"{n} {r}" for r, n in report.excluded.items()) + ")")
        prepared.stated_kinds = dict(Counter(t.task or "" for t in result.trials))
        report.task = decide_task(result, m)
        count_read(report, result)
        name = study_name(tool, spec_out, result)
        earlier = read_earlier(out, name) if out is not None else Earlier(Path("."), name)
        prepared.study = derive_study(result.trials, m, name, report.task, earlier)
        report.notes += prepared.study.notes
    except ImportInputError as exc:
        if not keep_refusal:
            raise
        prepared.refusal = str(exc)
        if not report.files:
            count_read(report, result)
    return prepared


def run_import(tool: str, paths: list[Path], mapping: Optional[Mapping], out: Path, *,
               spec_out: Optional[Path] = None, force: bool = False, add: bool = False,
               encoding: Optional[str] = None, bad_trials: str = "exclude") -> ImportReport:
    """Import `paths` (see the module docstring); ImportInputError before anything is written."""

    if force and add:
        raise ImportInputError("--add and --force: give one (--add leaves earlier sessions as they are, --force "
                               "rewrites them)")
    check_outputs(paths, mapping, out, spec_out)
    prep = prepare(tool, paths, mapping, out, spec_out=spec_out, encoding=encoding, bad_trials=bad_trials)
    report, study, m = prep.report, prep.study, prep.mapping
    check_outputs(prep.files, mapping, out, spec_out, study_name=study.name)
    report.mapping = {k: v for k, v in dataclasses.asdict(m).items()
                      if v not in (None, {}, ()) and k not in MAPPING_ORIGIN}
    report.labels, report.factors = dict(study.labels), study.factors
    report.feedback = {ph: list(c) for ph, c in study.feedback_counts.items()}
    report.people = len(study.people)

    write_all(report, study, tool, prep.result, out, spec_out, force, add, read_earlier(out, study.name))
    return report


def _mapping_seen(result: ReadResult, defaults: Mapping) -> Mapping:
    """Without --map the readers applied their defaults to each file's columns (`ReadResult.mappings`); the study
    reads labels and factors with that mapping where every file got the same one, else with the defaults."""
    applied = list(result.mappings.values())
    if applied and all(a == applied[0] for a in applied):
        return applied[0]
    return defaults
