"""The one record every reader of another tool's files produces: a person's trial as that tool wrote it.

Readers (psychopy.py, jspsych.py, pcibex.py, table.py) only parse their format and apply a `Mapping`;
everything after (checks against labels, sessions, the spec read from the data) works on these records, so
a rule lives in one place whatever the tool.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

PHASES = ("practice", "test")
# The one size limit on a results file, for every reader (checked before a byte is read; docs/import.md). A
# PsychoPy, jsPsych or PCIbex file of a long study is a few MB; a 200 MB file is refused.
MAX_FILE_BYTES = 100 * 1024 * 1024


class ImportInputError(ValueError):
    """Bad input to an import: the message names the file, line and column (the CLI exits 2, nothing written)."""


class ImportArgumentError(ImportInputError, TypeError):
    """An API argument of the wrong type (`import_study(force="no")`): the message names the argument."""


class BadTrialValue(ImportInputError):
    """A trial's own value is broken (a negative RT, an unreadable number or flag): the reader records the trial
    as `Excluded(file, line, reason, bad=True)` (`--bad-trials exclude`, the default) and the import refuses it
    under `--bad-trials refuse`. `reason` is the message without the file and line."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message


def check_file_size(path: Path) -> None:
    """Refuse a results file over MAX_FILE_BYTES before a byte of it is read (every reader calls this)."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ImportInputError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if size > MAX_FILE_BYTES:
        raise ImportInputError(f"{path}: {size:,} bytes, larger than the {MAX_FILE_BYTES // 2**20} MiB limit "
                               f"({MAX_FILE_BYTES:,} bytes) on one results file; split it (one file per participant "
                               "or per export)")


@dataclass(frozen=True)
class Mapping:
    """Which source field means what (a `--map MAP.yaml`, or a tool's defaults).

    Each value is a column / data-field name of the source, or None (absent). `factors` maps a twinlab
    factor name to a source column; `labels` maps a raw response (a key, a button index) to the answer's
    words; `practice` names a column and `practice_values` the values of it that mark practice trials.
    """
    participant: Optional[str] = None
    session: Optional[str] = None
    item: Optional[str] = None
    condition: Optional[str] = None
    factors: dict[str, str] = field(default_factory=dict)
    task: Optional[str] = None            # the study's kind: a registered kind with an importer part
                                          # (kinds/<kind>/importer.py), fixed for the study
    stimulus: Optional[str] = None
    response: Optional[str] = None
    labels: dict[str, str] = field(default_factory=dict)
    expected: Optional[str] = None        # the correct answer's column
    correct: Optional[str] = None         # the tool's own correctness column (1/0, true/false)
    rt: Optional[str] = None
    rt_unit: str = "ms"                   # "ms" or "s" (PsychoPy writes seconds)
    order: Optional[str] = None
    practice: Optional[str] = None
    practice_values: tuple[str, ...] = ()
    feedback: Optional[str] = None
    loops: tuple[str, ...] = ()           # PsychoPy: the loops whose iterations are the trials (empty: the loops
                                          # whose rows hold the response, found from the data)
    # where the values came from (not part of what the mapping means; `--show-map` says it): the fields a
    # --map file or dict set, and that file
    given: tuple[str, ...] = field(default=(), compare=False, repr=False)
    source: str = field(default="", compare=False, repr=False)


MAPPING_ORIGIN = ("given", "source")   # Mapping's fields that say where it came from, not what it maps


@dataclass(frozen=True)
class SourceTrial:
    """One trial of one person, as the tool recorded it, with every original field kept in `extra`."""
    tool: str                       # "psychopy" | "jspsych" | "pcibex" | "table"
    source_file: str                # the file's name as given on the command line
    line: int                       # 1-based line (CSV/TSV) or record number (JSON) of the trial's main row
    participant: str
    session: str                    # the tool's session label ("" when the file has none)
    order: int                      # 0-based position in the person's session, as the person got them
    phase: str                      # one of PHASES
    item: Optional[str] = None
    condition: Optional[str] = None
    factors: dict[str, str] = field(default_factory=dict)
    task: Optional[str] = None
    stimulus: Optional[str] = None
    words: Optional[tuple[str, ...]] = None       # word-by-word tasks: the words as shown
    response: Optional[str] = None                # the raw response (key, button, rating, typed text)
    expected: Optional[str] = None                # the correct answer, where the file states it
    correct: Optional[bool] = None                # the tool's own scoring, where the file states it
    rt_ms: Optional[float] = None
    word_rts: Optional[tuple[float, ...]] = None  # word-by-word tasks: per-word RTs in ms
    feedback: Optional[str] = None
    extra: dict[str, str] = field(default_factory=dict)  # every original field of the trial's row(s), verbatim
    rows: tuple[int, ...] = ()    # the lines of every source row the trial is made of (PCIbex: an item's rows);
                                  # empty: the one row at `line`

    @property
    def n_rows(self) -> int:
        """How many source rows this trial accounts for."""
        return len(self.rows) or 1


@dataclass(frozen=True)
class Excluded:
    """A source row that is not a trial or cannot be one, with the reason: every row is accounted for."""
    source_file: str
    line: int
    reason: str
    bad: bool = False  # a trial whose own value is broken (a negative RT, an unreadable number): excluded or the
                       # import refused, as the import's `--bad-trials exclude|refuse` says; never silently


@dataclass
class ReadResult:
    """What a reader returns for a set of files: trials, excluded rows, and what the files state of themselves."""
    trials: list[SourceTrial] = field(default_factory=list)
    excluded: list[Excluded] = field(default_factory=list)
    rows_read: dict[str, int] = field(default_factory=dict)     # file -> data rows/records read
    tool_version: dict[str, str] = field(default_factory=dict)  # file -> version the file states ("" unknown)
    # what the import states about the files (e.g. "f.csv: line 4, column 2 (stimulus): markup kept as text")
    notes: list[str] = field(default_factory=list)
    mappings: dict[str, Mapping] = field(default_factory=dict)  # file -> the mapping as the reader applied it to
                                                                # that file (defaults made concrete), where it says
