"""The items file of a design read from the data (CSV, the design reader's columns: experiments/design.py)."""
from __future__ import annotations

import csv
import io
from typing import Any


def items_csv(study: Any) -> str:
    """item, the factors, role, list, sentence and the kind's columns (answer, option_N, prefix, target, ...):
    one row per person's trial, lists in people's order."""
    cols = ["item", *study.factors, "role", "list", "sentence"]
    cols += list(dict.fromkeys(k for row in study.items for k in row if k not in cols))
    buf = io.StringIO()
    w = csv.DictWriter(buf, cols, lineterminator="\n")
    w.writeheader()
    w.writerows(study.items)
    return buf.getvalue()
