"""The results folder an analysis writes: tables/*.csv, figures/*.png, and results.json (what
report.html is rendered from). `Results` collects them while the analysis runs."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from experiments.atomic import atomic_write_text
from stimuli.input_rules import spreadsheet_safe_frame


class Results:
    """Collects tables, figures and sections while the analysis runs, then writes results.json."""

    def __init__(self, out: Path):
        self.out = out
        self.tables: dict[str, dict] = {}
        self.figures: dict[str, dict] = {}
        self.sections: list[dict] = []
        (out / "tables").mkdir(parents=True, exist_ok=True)
        (out / "figures").mkdir(parents=True, exist_ok=True)

    def table(self, name: str, df: pd.DataFrame, title: str, index: bool = False, show: bool = True,
              transpose: bool = False) -> str:
        """Write tables/NAME.csv; `show` False lists it as a CSV link only (long tables); `transpose`
        shows the CSV's rows as columns (a few groups with many measures)."""
        f = f"tables/{name}.csv"
        atomic_write_text(self.out / f, spreadsheet_safe_frame(df).to_csv(index=index))  # no cell runs as a formula
        self.tables[name] = {"file": f, "title": title, "rows": int(len(df)), "index": index, "show": show,
                             "transpose": transpose}
        return name

    def figure(self, name: str, path: Path | None, caption: str) -> str | None:
        if path is None:
            return None
        self.figures[name] = {"file": str(path.relative_to(self.out)), "caption": caption}
        return name

    def section(self, sid: str, title: str, text: str, tables: Iterable[str | None] = (),
                figures: Iterable[str | None] = (), items: list[dict] | None = None) -> None:
        self.sections.append({"id": sid, "title": title, "text": text,
                              "tables": [t for t in tables if t], "figures": [f for f in figures if f],
                              "items": items or []})


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
