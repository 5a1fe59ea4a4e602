"""One power run after its checks: the pilot built (analysis/power/pilot.py), every size simulated
(analysis/power/run.py), the results returned and written (analysis/power/report.py). Its own module so that
the settings (analysis/power/settings.py), which every step reads, import none of the steps."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

import pandas as pd

from analysis.power.pilot import build_pilot
from analysis.power.report import results_dict, write_outputs
from analysis.power.run import run_sizes
from analysis.power.settings import PowerSettings
from analysis.stats import formula as fm


def run_power(s: PowerSettings, f: fm.Formula, df: pd.DataFrame, declared: dict, out: str | Path | None = None,
              log: Callable[[str], None] | None = None) -> dict:
    """The run after the checks (api.power calls check_settings, the --out rules and the loader first): the
    pilot built, every size simulated, the results returned and written to `out` when given."""
    log = log or (lambda m: None)
    t0 = time.time()
    pilot = build_pilot(s, f, df, declared, log)
    for w in pilot.warnings:
        log(f"warning: {w}")
    rows, sims, analytic = run_sizes(s, pilot, log)
    res = results_dict(s, pilot, rows, analytic, time.time() - t0)
    if out is not None:
        write_outputs(Path(out), res, sims)
    res["sims"] = sims
    return res
