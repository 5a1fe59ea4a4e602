"""What report sections share: a progress bar around a long fit, the model protocols' methods in words.
(A study's sections -- e.g. the Lakretz exposure models and training figures -- live in the study:
studies/<name>/sections.py.)"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import pandas as pd

from analysis.measures import model_measures as mm
from analysis.stats.bootstrap import make_progress

if TYPE_CHECKING:
    from analysis.options import Options

MAX_GROUP_FIGURES = 8  # kept for imports; per-group figures are no longer capped (no figure drops a group)


def with_progress(opt: Options, label: str, total: int, work: Callable[[Callable[[], None]], object]):
    prog = make_progress() if opt.show_progress else None
    task = prog.add_task(label, total=total) if prog else None
    if prog:
        prog.start()
    try:
        return work((lambda: prog.advance(task)) if prog else (lambda: None))
    finally:
        if prog:
            prog.stop()


def method_summary(d: pd.DataFrame) -> str:
    m = d[d["subject_kind"] == "model"]
    protos = sorted(set(m["protocol"].dropna()))
    return ", ".join(f"{p} = {mm.evaluation_method(p)}" for p in protos) or "(no protocol recorded)"
