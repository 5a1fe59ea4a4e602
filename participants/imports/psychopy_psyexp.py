"""A Builder study's `.psyexp` given beside its data files: what the study itself says of its loops and answers.

Why: the data files show which loops ran and what was pressed; the `.psyexp` (Builder's XML) names every loop of
the study with its conditions file, and each keyboard's correct answer (`correctAns` `$corr_ans`: the conditions
column it is scored against). Given with the data, it checks that the data files are this study's (their loops
are its loops), names the correct-answer column of the answer component, and tells the conditions files given
alongside (a folder holding the whole experiment) from results files. Read as data: XML parsed by the standard
library's expat (no external entities, no code), size-limited like every input.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET  # noqa: N817 (the standard library's usual name)
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath

from participants.imports.records import ImportInputError, check_file_size

SUFFIX = ".psyexp"


@dataclass(frozen=True)
class BuilderStudy:
    """A `.psyexp`: its loops (name -> conditions file name, "" none) and scored components (name -> column)."""
    path: Path
    loops: dict[str, str] = field(default_factory=dict)
    scored: dict[str, str] = field(default_factory=dict)

    @property
    def conditions_files(self) -> set[str]:
        return {name for name in self.loops.values() if name}


def read_psyexp(path: Path) -> BuilderStudy:
    """The study's loops and scored components (ImportInputError naming the file when it is not Builder's XML)."""
    check_file_size(path)
    try:
        root = ET.fromstring(path.read_bytes())
    except ET.ParseError as exc:
        raise ImportInputError(f"{path}: line {exc.position[0]}: not a Builder .psyexp (XML: {exc})") from None
    if root.tag != "PsychoPy2experiment":
        raise ImportInputError(f"{path}: not a Builder .psyexp (its root element is <{root.tag[:40]}>, Builder "
                               "writes <PsychoPy2experiment>)")
    loops: dict[str, str] = {}
    for init in root.iter("LoopInitiator"):
        name = init.get("name", "")
        cond = next((p.get("val", "") for p in init.iter("Param") if p.get("name") == "conditionsFile"), "")
        loops[name] = _file_name(cond)
    scored: dict[str, str] = {}
    for comp in root.iter():
        params = {p.get("name"): p.get("val", "") for p in comp.findall("Param")}
        answer = params.get("correctAns", "").strip()
        if params.get("storeCorrect", "") == "True" and answer.startswith("$") and comp.get("name"):
            scored[comp.get("name", "")] = answer[1:].strip()
    return BuilderStudy(Path(path), loops, scored)


def _file_name(value: str) -> str:
    """`stimuli/practice_stim_long.csv` or `stimuli\\\\x.csv` -> its file name; an expression ($file) -> ""."""
    value = value.strip()
    if not value or value.startswith("$"):
        return ""
    return PureWindowsPath(value).name if "\\" in value else PurePosixPath(value).name
