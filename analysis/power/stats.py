"""Power from simulated studies: the share that rejects, its Monte Carlo interval, and the fits that failed.

Why failures are kept apart: simr folds a failed refit into "not significant" and reports 0% power when every
fit fails (simr issues 91, 110, 267). Here each simulation is one of
- **failed**: R raised an error or the simulated response had one value (no test);
- **unconverged**: the fit ran but lme4's convergence checks failed (no test is read from it);
- **implausible SE**: converged, but a tested coefficient's SE is below a fifth (IMPLAUSIBLE_SE) of the smallest
  SE the design allows: the pilot's SE scaled by sqrt(pilot trials / simulated trials) (`reference_se`; an SE
  falls no faster than that as trials are added). lme4 can call such a fit converged (SE 0.002 where
  the others were 0.18, p about 0); it is a broken fit, never a rejection, so no test is read from it;
  `power_incl_implausible` shows the share had they been counted;
- a **test**: converged, with a plausible SE; it **rejects** when p < alpha. Boundary (singular) fits are tests too,
  counted (`boundary`), and `power_no_boundary` repeats the share without them; so are degenerate binomial fits
  (quasi-separation, `degenerate`: the tested coefficient's |estimate| or SE above 8), counted and named in the
  status when more than a tenth.
Power is rejections / tests, with its 95% Wilson interval (Clopper-Pearson on request). A size where fewer
than half of the simulations gave a test has no power: its status says the fits mostly failed.

Early stopping: after each batch (from `min_sims` on) a size stops once a stricter 99% Wilson interval of its
power lies wholly above or below the target (0.8): the reported 95% interval is of the simulations run.
"""
from __future__ import annotations

import math

import pandas as pd
from scipy import stats

STOP_LEVEL = 0.99
MOSTLY_FAILED = 0.5
IMPLAUSIBLE_SE = 0.2  # a fit whose SE is below this fraction of reference_se's is broken


def reference_se(pilot_se: float, pilot_trials: int, simulated_trials: int) -> float:
    """The smallest SE a coefficient can have in a simulated study (module docstring)."""
    return float(pilot_se) * math.sqrt(pilot_trials / simulated_trials)


def wilson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of k successes in n trials (NaNs when n is 0)."""
    if n <= 0:
        return float("nan"), float("nan")
    z = stats.norm.ppf(0.5 + level / 2)
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, mid - half), min(1.0, mid + half)


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper-Pearson) interval of k successes in n trials."""
    if n <= 0:
        return float("nan"), float("nan")
    a = 1 - level
    lo = 0.0 if k == 0 else stats.beta.ppf(a / 2, k, n - k + 1)
    hi = 1.0 if k == n else stats.beta.ppf(1 - a / 2, k + 1, n - k)
    return float(lo), float(hi)


INTERVALS = {"wilson": wilson, "clopper-pearson": clopper_pearson}


def counts(sims: pd.DataFrame, alpha: float) -> dict:
    """Failed, unconverged, tests, boundary and rejections of a size's simulations."""
    failed = sims["failed"]
    unconv = ~failed & ~sims["converged"]
    converged = ~failed & sims["converged"]
    implausible = converged & sims["implausible_se"] if "implausible_se" in sims.columns else converged & False
    test = converged & ~implausible
    reject = test & (sims["p"] < alpha)
    boundary = test & sims["boundary"]
    degenerate = test & sims["degenerate"] if "degenerate" in sims.columns else test & False
    return {"sims_run": int(len(sims)), "failed": int(failed.sum()), "unconverged": int(unconv.sum()),
            "implausible_se": int(implausible.sum()),
            "rejected_implausible": int((implausible & (sims["p"] < alpha)).sum()),
            "tests": int(test.sum()), "rejected": int(reject.sum()), "boundary": int(boundary.sum()),
            "degenerate": int(degenerate.sum()),
            "tests_no_boundary": int((test & ~sims["boundary"]).sum()),
            "rejected_no_boundary": int((reject & ~sims["boundary"]).sum())}


def summarize(sims: pd.DataFrame, alpha: float, interval: str = "wilson", boundary_cause: str = "") -> dict:
    """One row of the power table (module docstring): power, its 95% MC interval, the counts, the status.
    `boundary_cause`: the pilot's own zero variance when there is one (analysis/power/pilot.zero_sd_sentences):
    then boundary fits are what the pilot implies, not a sign of the study's size."""
    c = counts(sims, alpha)
    ci = INTERVALS[interval]
    row = dict(c)
    if c["sims_run"] == 0 or c["tests"] < MOSTLY_FAILED * c["sims_run"]:
        nan = float("nan")
        row |= {"power": nan, "ci_low": nan, "ci_high": nan, "power_no_boundary": nan, "power_incl_implausible": nan,
                "status": (f"fits mostly failed: {c['tests']} of {c['sims_run']} simulations gave a test "
                           f"({c['failed']} failed, {c['unconverged']} did not converge, {c['implausible_se']} with "
                           "an implausible SE); no power is reported")}
        return row
    lo, hi = ci(c["rejected"], c["tests"])
    nb = c["tests_no_boundary"]
    row |= {"power": c["rejected"] / c["tests"], "ci_low": lo, "ci_high": hi,
            "power_no_boundary": c["rejected_no_boundary"] / nb if nb else float("nan"),
            "power_incl_implausible": (c["rejected"] + c["rejected_implausible"]) / (c["tests"] + c["implausible_se"]),
            "status": "ok"}
    if c["degenerate"] > 0.1 * c["tests"]:
        row["status"] = (f"{c['degenerate']} of {c['tests']} fits are degenerate (quasi-separation: |estimate| or SE "
                         "above 8); their Wald tests barely reject: use --test lrt or a smaller effect")
    elif c["boundary"] > 0.5 * c["tests"] and boundary_cause:
        row["status"] = (f"most fits are boundary (singular): {c['boundary']} of {c['tests']}; the cause is the pilot, "
                         f"not the study's size: {boundary_cause}")
    elif c["boundary"] > 0.5 * c["tests"]:
        row["status"] = f"most fits are boundary (singular): {c['boundary']} of {c['tests']}; {AT_THIS_SIZE}"
    if c["implausible_se"]:
        row["status"] += (f"; {c['implausible_se']} converged fit(s) with an SE below {IMPLAUSIBLE_SE:g} of what the "
                          "design allows are broken fits, not tests (power_incl_implausible counts them)")
    return row


AT_THIS_SIZE = "the random effects cannot be estimated at this size"


def boundary_by_size(rows: list[dict]) -> None:
    """Say "at this size" only where a larger size simulated changes it: a size whose fits are mostly boundary
    (without a cause in the pilot) is compared with the larger sizes run (more subjects and no fewer items, or
    more items and no fewer subjects); its status says whether they have fewer boundary fits, the same, or that
    none was run to tell. Rewrites the rows' status in place."""
    for r in rows:
        if AT_THIS_SIZE not in str(r.get("status", "")):
            continue
        larger = sorted((o for o in rows if o is not r and o["subjects"] >= r["subjects"] and o["items"] >= r["items"]
                         and (o["subjects"], o["items"]) != (r["subjects"], r["items"])),
                        key=lambda o: (o["subjects"], o["items"]))
        fewer = [o for o in larger if o.get("tests") and o["boundary"] <= 0.5 * o["tests"]]
        if fewer:
            said = (f"{AT_THIS_SIZE} (at {fewer[0]['subjects']} subjects x {fewer[0]['items']} items at most half of "
                    "the fits are boundary)")
        elif larger:
            top = larger[-1]
            said = (f"the same at every larger size simulated (up to {top['subjects']} subjects x {top['items']} "
                    "items): a larger study may not help; look at the pilot's SDs (power.json) or state them with "
                    "--sd GROUP=SD")
        else:
            said = ("the random effects cannot be estimated here, and no larger size was simulated to tell whether "
                    "the size is the cause")
        r["status"] = r["status"].replace(AT_THIS_SIZE, said)


def stop_decision(sims: pd.DataFrame, alpha: float, target: float, min_sims: int) -> str:
    """'' to go on; else why this size stops early (module docstring)."""
    c = counts(sims, alpha)
    n = c["sims_run"]
    if n < min_sims:
        return ""
    ok_lo, ok_hi = wilson(c["tests"], n, STOP_LEVEL)
    if ok_hi < MOSTLY_FAILED:
        return f"stopped early: fewer than half of the fits gave a test ({c['tests']} of {n})"
    if c["tests"] == 0:
        return ""
    lo, hi = wilson(c["rejected"], c["tests"], STOP_LEVEL)
    if lo > target:
        return f"stopped early: the 99% interval of power ({lo:.3f}-{hi:.3f}) lies above the target {target:g}"
    if hi < target:
        return f"stopped early: the 99% interval of power ({lo:.3f}-{hi:.3f}) lies below the target {target:g}"
    return ""
