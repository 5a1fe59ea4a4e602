"""A small pilot for the power tests: one two-level factor `cond` (a, b) in a Latin square over 2 lists, crossed
subjects x items, answers drawn from a known binomial GLMM (and log-normal RTs), in the trial-table format.

    logit P(correct) = intercept + effect * x + u_subject + w_item,   x = +1 for a, -1 for b (sum coding)
    log rt_ms       = 6.5 + (rt_effect + v_subject) * x + 0.3 u_subject + 0.2 w_item + N(0, 0.25)
(v_subject ~ N(0, rt_slope_sd): people differ in the condition's effect on their times). Model subjects are
named M00, M01, ... and people P00, P01, ...
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.support.design_synthetic import base_row, write_session


def pilot(root: Path, n_subjects: int = 8, n_items: int = 12, seed: int = 0, intercept: float = 0.5,
          effect: float = 0.4, subject_sd: float = 0.6, item_sd: float = 0.4, kind: str = "human",
          model: str | None = None, rt_effect: float = 0.05, rt_slope_sd: float = 0.15,
          levels: tuple[str, ...] = ("a", "b")) -> list[Path]:
    """Sessions of `n_subjects` (list = subject mod L + 1 for L levels; item i is in condition
    levels[(i + list) mod L]); x is the first sum-coded column (+1 first level, -1 last, else 0)."""
    rng = np.random.default_rng(seed)
    who = "M" if kind == "model" else "P"
    w = rng.normal(0, item_sd, n_items)
    paths = []
    for s in range(n_subjects):
        u = rng.normal(0, subject_sd)
        v = rng.normal(0, rt_slope_sd)
        lst = s % len(levels) + 1
        rows = []
        for t, item in enumerate(rng.permutation(n_items)):
            k = (item + lst) % len(levels)
            cond = levels[k]
            x = 1.0 if k == 0 else -1.0 if k == len(levels) - 1 else 0.0
            ok = rng.random() < 1 / (1 + np.exp(-(intercept + effect * x + u + w[item])))
            rt = float(np.exp(6.5 + (rt_effect + v) * x + 0.3 * u + 0.2 * w[item] + rng.normal(0, 0.25)))
            r = base_row("power_pilot", f"{who}{s:02d}", kind, t, int(item), {"cond": cond}, "judgment",
                         {"sentence": f"sentence {item} {cond} .", "answer": "yes"}, lst)
            r |= {"correct_response": "yes", "response": "yes" if ok else "no", "correct": str(bool(ok)),
                  "response_mode": "key", "rt_ms": round(rt, 1), "protocol": "direct" if kind == "model" else "",
                  "context_mode": "running" if kind == "model" else ""}
            rows.append(r)
        meta = {"model": model, "sampling": {"temperature": 1.0}} if model else {}
        paths.append(write_session(root, "power_pilot", f"{who}{s:02d}", rows, {"cond": list(levels)}, meta, lst))
    return paths
