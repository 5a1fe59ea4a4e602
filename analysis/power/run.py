"""The loop over study sizes: each size's design built, its simulations run in batches, stopped early when clear.

Why per-size seeds from (seed, subjects, items): a size's numbers then depend on nothing but the seed and the
size itself, so adding a size to --subjects, or changing --cores or --batch, leaves the others unchanged.
"""
from __future__ import annotations

import time
from typing import Callable

import numpy as np
import pandas as pd

from analysis.power.analytic import analytic_power
from analysis.power.design import DesignError, balance_notes, extend
from analysis.power.settings import Pilot, PowerInputError, PowerSettings
from analysis.power.sim import SizeModel
from analysis.power.stats import boundary_by_size, reference_se, stop_decision, summarize
from analysis.stats import formula as fm
from analysis.stats.mixed import MixedModelError


def size_seed(seed: int, subjects: int, items: int) -> int:
    """The R seed of one study size (module docstring)."""
    return int(np.random.SeedSequence([int(seed), int(subjects), int(items)]).generate_state(1)[0] % (2**31 - 1))


def coded_design(pilot: Pilot, n_subjects: int, n_items: int | None) -> tuple[pd.DataFrame, list[str]]:
    """The extended design with the factors coded as the pilot's (the columns R needs), and its notes."""
    try:
        design = extend(pilot.template, n_subjects, n_items)
        d, _, _ = fm.sum_code(design, pilot.formula, pilot.declared)
    except (DesignError, fm.FormulaError) as exc:
        raise PowerInputError(f"{n_subjects} subjects x {n_items} items: {exc}") from None
    cols = ["subject_id", "item"] + [v for v in pilot.coded.variables
                                     if v in d.columns and v not in ("subject_id", "item")
                                     and v != pilot.coded.response_var]
    notes = balance_notes(pilot.template, design, list(pilot.declared), n_subjects)
    return d[cols], notes


def run_sizes(s: PowerSettings, pilot: Pilot, log: Callable[[str], None]):
    """(power table rows, every simulation's row, analytic results) over subjects x items."""

    items = s.items or [len(pilot.template.items)]
    sizes = [(n_subj, n_items) for n_items in items for n_subj in s.subjects]
    designs = {size: coded_design(pilot, *size) for size in sizes}  # every size's design checked before any simulation
    rows, sims, analytic = [], [], {}
    for n_subj, n_items in sizes:
        design, notes = designs[(n_subj, n_items)]
        a = analytic_power(design, pilot, s.alpha)
        analytic[(n_subj, n_items)] = a
        row, sim = run_size(s, pilot, design, n_subj, n_items, log)
        row |= {"analytic_power": a.get("power", float("nan")), "analytic_note": a.get("note", ""),
                "notes": "; ".join([f"pilot: {z}" for z in pilot.zero_sds] + notes)}
        rows.append(row)
        sims.append(sim)
    boundary_by_size(rows)
    return rows, pd.concat(sims, ignore_index=True), analytic


def run_size(s: PowerSettings, pilot: Pilot, design: pd.DataFrame, n_subj: int, n_items: int,
             log: Callable[[str], None]) -> tuple[dict, pd.DataFrame]:
    """Batches of simulations of one size until done or stopped early (analysis/power/stats.py)."""

    t0 = time.time()
    random_text = " + ".join(r.text() for r in pilot.coded.random)
    model = SizeModel(design, pilot.coded.fixed or "1", random_text, pilot.truth)
    missing = [c for c in pilot.coefficients if c not in model.columns]
    if missing:
        raise MixedModelError(f"the simulated design has no column for {', '.join(missing)} (its columns: "
                              f"{', '.join(model.columns)})")
    cols = [model.columns.index(c) for c in pilot.coefficients]
    ref = reference_ses(pilot, len(design))
    cause = "; ".join(pilot.zero_sds)
    seed = size_seed(s.seed, n_subj, n_items)
    parts, done, stopped = [], 0, ""
    while done < s.sims:
        n = min(s.batch, s.sims - done)
        parts.append(model.batch(seed, done, n, cols, ref, s.test, s.cores))
        done += n
        sims = pd.concat(parts, ignore_index=True)
        row = summarize(sims, s.alpha, s.interval, cause)
        log(f"subjects {n_subj}, items {n_items}: {done}/{s.sims} sims, power {_pct(row['power'])} "
            f"[{_pct(row['ci_low'])}, {_pct(row['ci_high'])}], failed {row['failed']}, unconverged "
            f"{row['unconverged']}, implausible SE {row['implausible_se']}, boundary {row['boundary']} "
            f"({time.time() - t0:.0f} s)")
        if s.early_stop and done < s.sims:  # after the last batch nothing is stopped early
            stopped = stop_decision(sims, s.alpha, s.target, s.min_sims)
            if stopped:
                log(f"subjects {n_subj}, items {n_items}: {stopped}")
                break
    sims = pd.concat(parts, ignore_index=True)
    row = summarize(sims, s.alpha, s.interval, cause)
    trials = design.groupby("subject_id").size()
    row = {"subjects": n_subj, "items": n_items, "lists": len(pilot.template.lists),
           "trials_per_subject": int(trials.max()), "sims_asked": s.sims, **row,
           "stopped_early": stopped, "seed": seed, "seconds": round(time.time() - t0, 1)}
    return row, sims.assign(subjects=n_subj, items=n_items)


def reference_ses(pilot: Pilot, simulated_trials: int) -> list[float]:
    """Per tested coefficient, the smallest SE the simulated design allows (analysis/power/stats.reference_se),
    from the pilot's SE (the Hessian-free one where lme4 gave it: steadier at a boundary)."""

    by_term = {c["term"]: c for c in pilot.fit.coefficients}
    out = []
    for name in pilot.coefficients:
        c = by_term[name]
        se = c.get("se_hessian_free")
        se = se if se is not None and np.isfinite(se) and se > 0 else c["se"]
        out.append(reference_se(se, pilot.fit.n_obs, simulated_trials))
    return out


def _pct(x: float) -> str:
    return "n/a" if x != x else f"{x:.3f}"
