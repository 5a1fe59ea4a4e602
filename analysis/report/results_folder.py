"""The results folder an analysis writes: tables/*.csv, figures/*.png, and results.json (what
report.html is rendered from). `Results` collects them while the analysis runs."""
from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Iterable
from urllib.parse import quote

import numpy as np
import pandas as pd

from analysis.measures.levels import shown_levels
from experiments.atomic import atomic_write_text
from stimuli.input_rules import spreadsheet_safe_frame


class Results:
    """Collects tables, figures and sections while the analysis runs, then writes results.json."""

    def __init__(self, out: Path):
        self.out = out
        self.tables: dict[str, dict] = {}
        self.figures: dict[str, dict] = {}
        self.sections: list[dict] = []
        self.failures: list[str] = []  # results asked for that could not be computed (report top, exit 1)
        (out / "tables").mkdir(parents=True, exist_ok=True)
        (out / "figures").mkdir(parents=True, exist_ok=True)

    def table(self, name: str, df: pd.DataFrame, title: str, index: bool = False, show: bool = True,
              transpose: bool = False) -> str:
        """Write tables/NAME.csv; `show` False lists it as a CSV link only (long tables); `transpose`
        shows the CSV's rows as columns (a few groups with many measures)."""
        f = f"tables/{name}.csv"
        atomic_write_text(inside(self.out, f, f"table {name!r}"),  # no cell runs as a formula in a spreadsheet
                          spreadsheet_safe_frame(shown_levels(df)).to_csv(index=index))
        self.tables[name] = {"file": f, "title": title, "rows": int(len(df)), "index": index, "show": show,
                             "transpose": transpose}
        return name

    def figure(self, name: str, path: Path | None, caption: str) -> str | None:
        if path is None:
            return None
        rel = Path(path).relative_to(self.out).as_posix()
        inside(self.out, rel, f"figure {name!r}")
        self.figures[name] = {"file": rel, "caption": caption}
        return name

    def section(self, sid: str, title: str, text: str, tables: Iterable[str | None] = (),
                figures: Iterable[str | None] = (), items: list[dict] | None = None) -> None:
        self.sections.append({"id": sid, "title": title, "text": text,
                              "tables": [t for t in tables if t], "figures": [f for f in figures if f],
                              "items": items or []})


class FolderPathError(ValueError):
    """A file named by a results folder that lies (or would lie) outside it."""


KINDS = ("tables", "figures")  # the only sub-folders whose files a results folder names
_PART = re.compile(r"^[^\x00-\x1f\x7f/\\:]+$")  # no control characters, separators or scheme colons


def inside(out: Path, rel, what: str) -> Path:
    """The path of `rel` (a file a results folder names, as results.json stores it) inside `out`, or
    FolderPathError naming it: a relative `tables/...` or `figures/...` path without `..`, `:` or
    control characters, that stays in `out` once symlinks are followed. The one rule both the writer
    (Results) and the reader (`twinlab report`) apply, so a results.json cannot make the report read
    or link anything outside its folder (`../secret`, `/etc/passwd`, `javascript:`, a symlink out)."""
    out = Path(out)
    parts = rel.split("/") if isinstance(rel, str) else []
    if (len(parts) < 2 or parts[0] not in KINDS or any(p in ("", ".", "..") or not _PART.match(p) for p in parts)):
        raise FolderPathError(f"{what}: {rel!r} is not a file of the results folder (a relative path under "
                              f"{' or '.join(k + '/' for k in KINDS)}, without '..', ':' or '\\')")
    path = out.joinpath(*parts)
    try:
        real, root = path.resolve(), out.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop
        raise FolderPathError(f"{what}: {rel!r} cannot be resolved ({exc})") from None
    if root not in real.parents:
        raise FolderPathError(f"{what}: {rel!r} leads outside the results folder {out} (to {real}); "
                              "a results folder's files stay inside it")
    return path


def href(rel: str) -> str:
    """A link to a file `inside()` accepted, written as a relative URL (every character outside
    letters, digits and `/._-~` percent-encoded, so no name becomes markup or a URL scheme)."""
    return quote(rel, safe="/")


def json_default(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, (np.bool_,)):
        return bool(o)
    if o is pd.NA:
        return None
    return str(o)


def clean_json(o):
    """JSON has no NaN/inf: write them as strings a reader recognises."""
    if isinstance(o, float):
        if math.isnan(o):
            return None
        if math.isinf(o):
            return "inf" if o > 0 else "-inf"
    if isinstance(o, dict):
        return {k: clean_json(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [clean_json(v) for v in o]
    return o
