"""Every format `twinlab import` reads, in one registry behind one contract (`Importer`).

Two shapes of one contract:
- a `ToolImporter` (PsychoPy, jsPsych, PCIbex/Ibex, a plain table) reads another tool's files into
  `SourceTrial` records (`read(paths, mapping) -> ReadResult`, over its `default_mapping()`); the shared
  pipeline (pipeline.py) maps, checks and writes them, and its command is the shared one (cli.tool_command,
  which also mounts every format: cli.register_imports);
- a `CommandImporter` (the browser sessions of a `twinlab web build` site, a study's released data such as
  the Lakretz et al. 2021 release) writes sessions itself, with a command of its own options.
Both are named, described, and `sniff(path)` says how much a file looks like theirs (0 to 1, from the columns
or fields only that format writes), so a file given to the wrong command is named as what it is.

Adding a tool touches this file only (one `ToolImporter` entry; its reader module keeps `read_<tool>(paths,
mapping)` and `default_mapping()`); a study adds its released formats by declaring `IMPORTERS` in its package
(experiments/studies.py), found here. Modules are named as text and imported when used: listing the formats
imports nothing.
"""
from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from experiments.studies import declared, study_module
from participants.imports.records import ImportInputError, Mapping, ReadResult
from participants.imports.text_input import ReadingOptions, check_encoding, deepest_json_file, input_problem, reading

SNIFF_BYTES = 64 * 1024   # what `sniff` reads of a file's head: enough for a header or the first records

__all__ = ["Importer", "ToolImporter", "CommandImporter", "importers", "get_importer", "tool_importer",
           "tool_names", "sniff_file"]


@dataclass(frozen=True)
class Importer:
    """One format `twinlab import NAME` reads: its name, a one-line description, and the columns or fields only
    its files hold (`signs`, for `sniff`)."""
    name: str
    description: str
    signs: tuple[str, ...] = ()

    def sniff(self, path: Path) -> float:
        """How much `path` looks like this format's file: the share of `signs` its head holds (0: none, or
        the file cannot be read; never raises)."""
        if not self.signs:
            return 0.0
        have = head_fields(Path(path))
        return sum(s in have for s in self.signs) / len(self.signs)

    @property
    def help(self) -> str:
        """The line `twinlab import --help` lists."""
        return self.description

    @property
    def module(self) -> str:
        """The module that holds the format's code."""
        return ""


@dataclass(frozen=True)
class ToolImporter(Importer):
    """Another tool's results files, read into SourceTrial records (the module's `read_<name>` and
    `default_mapping`), mapped and written by the shared pipeline. `files_help`: what FILES are, for --help."""
    reader_module: str = ""
    files_help: str = ""

    @property
    def module(self) -> str:
        return self.reader_module or f"participants.imports.{self.name}"

    def _module(self) -> Any:
        try:
            return importlib.import_module(self.module)
        except ModuleNotFoundError as exc:
            if exc.name == self.module:
                raise ImportInputError(f"the {self.name} reader is not available in this installation "
                                       f"({self.module} is missing)") from None
            raise

    def read(self, paths: list[Path], mapping: Optional[Mapping], *, encoding: Optional[str] = None) -> ReadResult:
        """The files' trials and excluded rows, as the tool wrote them (`mapping` None: the tool's defaults,
        as the reader applies them to each file). Every file is read by text_input.read_text, in `encoding`
        (--encoding; None: UTF-8 with each other line read as cp1252), its notes put first in the result's."""

        read = getattr(self._module(), f"read_{self.name}")
        with reading(ReadingOptions(encoding=check_encoding(encoding))) as options:
            try:
                result = read(list(paths), mapping)
            except RecursionError:   # a hostile file nested thousands deep: named, never a traceback
                raise ImportInputError(f"{deepest_json_file(paths)}: nested too deeply to read (arrays or objects "
                                       "within each other thousands deep); no tool writes its results so") from None
        result.notes[:0] = options.notes
        return result

    def default_mapping(self) -> Mapping:
        """The tool's defaults: which of its columns or fields mean what in an unedited study."""
        return self._module().default_mapping()

    def effective_mapping(self, header: list[str], mapping: Optional[Mapping]) -> Optional[Mapping]:
        """The mapping as the reader applies it to a file of this header, where the reader says (else None)."""
        fn = getattr(self._module(), "effective_mapping", None)
        return fn(header, mapping) if fn is not None else None

    @property
    def help(self) -> str:
        return f"{self.description} -> twinlab sessions and the spec read from them"


@dataclass(frozen=True)
class CommandImporter(Importer):
    """A format that writes its sessions itself: its command is `function` of `command_module`."""
    command_module: str = ""
    function: str = ""

    @property
    def module(self) -> str:
        return self.command_module

    def command(self) -> Callable[..., None]:
        """The typer command function `twinlab import NAME` runs."""
        return getattr(importlib.import_module(self.command_module), self.function)


BUILT_IN: tuple[Importer, ...] = (
    ToolImporter("psychopy", "PsychoPy Builder trial-by-trial CSV files (one per participant)",
                 signs=("psychopyVersion", "frameRate", "expName")),
    ToolImporter("jspsych", "jsPsych data (CSV or JSON; JATOS result files)",
                 signs=("trial_type", "trial_index", "time_elapsed", "internal_node_id")),
    ToolImporter("pcibex", "PCIbex / Ibex Farm results files",
                 signs=("PennElementType", "PennElementName", "MD5 hash of participant's IP address",
                        "Controller name")),
    ToolImporter("table", "a plain CSV/TSV table, one row per trial (--map names the columns)"),
    CommandImporter("web", "browser sessions saved by a `twinlab web build` site (JATOS, Pavlovia, a download) -> "
                           "twinlab sessions", signs=("twinlab_web", "twinlab_participant", "twinlab_spec_hash"),
                    command_module="participants.web.import_cli", function="import_web"),
)


def _declared() -> list[Importer]:
    """The released formats the registered studies declare (their `IMPORTERS`, experiments/studies.py: each
    {"name", "description", "module", "command"} and optionally "signs", the columns only that format has)."""

    found: list[Importer] = []
    for study, entries in declared("IMPORTERS").items():
        package = study_module(study).__name__
        for e in entries:
            found.append(CommandImporter(e["name"], e["description"], signs=tuple(e.get("signs", ())),
                                         command_module=f"{package}.{e['module']}", function=e["command"]))
    return found


def importers() -> dict[str, Importer]:
    """name -> importer: the built-in formats, then the studies' (a name given twice is refused, naming it)."""
    out: dict[str, Importer] = {}
    for imp in (*BUILT_IN, *_declared()):
        if imp.name in out:
            raise ValueError(f"importer {imp.name!r} is registered twice")
        out[imp.name] = imp
    return out


def get_importer(name: str) -> Importer:
    found = importers()
    if name not in found:
        raise ImportInputError(f"unknown import format {name!r}; known: {', '.join(sorted(found))}")
    return found[name]


def tool_names() -> tuple[str, ...]:
    """The formats read through the shared pipeline (`twinlab import psychopy|jspsych|pcibex|table`)."""
    return tuple(n for n, imp in importers().items() if isinstance(imp, ToolImporter))


def tool_importer(name: Any) -> ToolImporter:
    """The ToolImporter `name` (refused, naming the tools, when it is none)."""
    imp = importers().get(name) if isinstance(name, str) else None
    if not isinstance(imp, ToolImporter):
        raise ImportInputError(f"unknown tool {str(name)[:40]!r}; one of {', '.join(tool_names())}")
    return imp


def sniff_file(path: Path) -> list[tuple[str, float]]:
    """(name, score) of every format whose signs `path` holds, best first."""
    scores = [(n, imp.sniff(path)) for n, imp in importers().items()]
    return sorted(((n, s) for n, s in scores if s > 0), key=lambda x: -x[1])


def head_fields(path: Path) -> set[str]:
    """The column or field names in the first SNIFF_BYTES of a file: a CSV/TSV header's cells, JSON keys, and
    the comment lines' phrases of an Ibex results file. Empty when the file is not a readable regular file."""

    if input_problem(path):
        return set()
    try:
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES).decode("utf-8", errors="replace").lstrip("\ufeff")
    except OSError:
        return set()
    found = set(re.findall(r'"([^"\\]{1,80})"\s*:', head))    # JSON keys
    for line in head.splitlines()[:80]:
        cells = re.split(r"[,\t]", line.lstrip("# ").strip())
        found.update(c.strip().strip('"') for c in cells if c.strip())
        found.update(re.findall(r"\d+\.\s*([^.]+?)\.?\s*$", line))   # Ibex: "# 4. Controller name."
    try:
        first = json.loads(head.splitlines()[0]) if head.lstrip().startswith("{") else None
        if isinstance(first, dict):
            found.update(first)
    except (ValueError, IndexError, RecursionError):
        pass
    return found
