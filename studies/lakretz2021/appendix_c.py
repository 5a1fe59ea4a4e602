"""seeds/000 (Lampinen) Appendix C on human data: the paper's printed numbers, its definitions,
and the tables that put this data's results beside them.

The printed numbers are copied from the paper's text, not tuned to: Table C1 (first-encounter
error rates, 55 subjects, the outlier kept: .618 = 34/55) and the Table C2 / Figure 6c exposure
slope on the long-nested PSP inner violation (beta -0.23, z -1.86, p .063).

Table C1's header in the paper reads `SSS SSP SPP SPS PPP PPS PSS PSP` (the printed text is the
concatenation `SSSSSPSPPSPSPPPPPSPSSPSP`, which splits into three-letter conditions one way only),
so its inner row is PSS .618 and PSP .537. The tables here use that column order.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.learning import general as ln
from analysis.learning.exposures import BASE_FORMULA, usable
from analysis.load.prepare import condition_order
from analysis.load.rows import select_blocks
from analysis.stats.bootstrap import error_rate_ci
from analysis.stats.mixed import MixedModelError, fit_glmer, significance_mark
from studies.lakretz2021.learning import LAKRETZ

LONG_NESTED_ORDER = ("SSS", "SSP", "SPP", "SPS", "PPP", "PPS", "PSS", "PSP")
TABLE_C1_PAPER = {
    "inner": dict(zip(LONG_NESTED_ORDER, (0.145, 0.327, 0.400, 0.273, 0.109, 0.200, 0.618, 0.537), strict=False)),
    "outer": dict(zip(LONG_NESTED_ORDER, (0.236, 0.327, 0.291, 0.255, 0.255, 0.345, 0.182, 0.345), strict=False)),
}
TABLE_C1_PAPER_N = 55
PSP_SLOPE_PAPER = {"estimate": -0.23, "z": -1.86, "p": 0.063}
PSP_FOCUS = {"structure": "long_nested", "condition": "PSP", "violation_position": "inner"}  # the slope's cell
PAPER = "seeds/000 (Lampinen)"

DEFINITIONS = {
    "error": "error = WRONG / (CORRECT + WRONG) over violation trials: a missed violation (the subject "
             "answered 'acceptable'). REJECTED answers (no usable response) are left out; grammatical "
             "trials (false alarms) and fillers are not scored, as in Lakretz et al. (2021).",
    "first_encounter": "first encounter: for each subject, the first trial after training (counting across "
                       "session 1 then session 2) with a violation at that position (inner = the embedded verb, "
                       "outer = the main verb) in that long-nested condition. The cell's error rate is the share of "
                       "subjects who missed that violation; k/n = errors / subjects. A first trial without a usable "
                       "answer "
                       "(REJECTED) is scored by the chosen rule: the paper rule scores it by the prefix of its release "
                       "code (WRONG_DDC an error, CORRECT_DDC correct), the strict rule leaves the subject out of that "
                       "cell; under either rule the next trial is never promoted to 'first'. Fillers are left out.",
    "trial_number": "trial number: the trials the subject had completed before it, training included where "
                    "the training log exists, across session 1 then session 2 (0 = the first trial).",
    "exposures": "exposures: the number of times the subject had previously encountered that violation of "
                 "that structure after training: earlier post-training trials with the same structure, "
                 "condition and violation position, across session 1 then session 2 (0 at the first encounter). "
                 "A trial without a usable answer still counts as an exposure.",
    "exposures_structure": "encounters with the structure (Figure C3): earlier trials with the same structure and "
                           "condition, with any violation or none, training included.",
}


def table_c1_beside_paper(fe: pd.DataFrame, group: str = "human", other: pd.DataFrame | None = None,
                          rule: str = "paper", other_rule: str = "strict") -> pd.DataFrame:
    """Long table: for inner/outer x the 8 long-nested conditions, this data's first-encounter
    rate with k/n under `rule`, the paper's printed rate, the difference, and (with `other`) the
    same cell under the other scoring rule (analysis/measures/scoring.py)."""
    def cell(t: pd.DataFrame, pos: str, cond: str) -> tuple[float, int, int]:
        if t is None:
            return float("nan"), 0, 0
        t = t[(t["group"] == group) & (t["structure"] == "long_nested") & (t["violation_position"] == pos)
              & (t["condition"] == cond)]
        if t.empty:
            return float("nan"), 0, 0
        return float(t["error_rate"].iloc[0]), int(t["n_errors"].iloc[0]), int(t["n_subjects"].iloc[0])

    rows = []
    for pos in ("inner", "outer"):
        for cond in LONG_NESTED_ORDER:
            rate, k, n = cell(fe, pos, cond)
            paper = TABLE_C1_PAPER[pos][cond]
            row = {"violation_type": pos, "condition": cond, "rule": rule, "error_rate": rate, "n_errors": k,
                   "n_subjects": n, "paper_error_rate": paper,
                   "paper_n_errors_if_55": round(paper * TABLE_C1_PAPER_N),
                   "difference": rate - paper, "equal_to_paper_3dp": bool(n) and round(rate, 3) == paper}
            if other is not None:
                o_rate, o_k, o_n = cell(other, pos, cond)
                row |= {"other_rule": other_rule, "other_error_rate": o_rate, "other_n_errors": o_k,
                        "other_n_subjects": o_n, "other_difference": o_rate - paper}
            rows.append(row)
    return pd.DataFrame(rows)


def table_c1(long: pd.DataFrame, group: str = "human", structure: str = "long_nested") -> pd.DataFrame:
    """Table C1 layout of a first-encounter table (analysis/learning/general.py): rows violation position (inner,
    outer), columns the conditions in the seeds' order, cells the error rate."""
    t = long[(long["group"] == group) & (long["structure"] == structure)]
    if t.empty:
        return pd.DataFrame()
    wide = t.pivot(index="violation_position", columns="condition", values="error_rate")
    wide = wide.reindex(index=[v for v in ("inner", "outer") if v in wide.index],
                        columns=condition_order(wide.columns))
    wide.index.name = "violation_type"
    wide.columns.name = None
    return wide


def cell_rows(df: pd.DataFrame, group: str, structure: str, condition: str | None, position: str) -> pd.DataFrame:
    """Model rows (analysis/learning/general.py `focus_data`) of one post-training cell (condition None = all
    conditions of the structure pooled), exposures known."""
    cell = {"structure": structure, "violation_position": position} | ({"condition": condition} if condition else {})
    r = ln.focus_data(select_blocks(df, "test"), LAKRETZ, cell, [group])
    return r[r["exposures"].notna()].reset_index(drop=True)


def fit_cell_slopes(df: pd.DataFrame, group: str = "human", structure: str = "long_nested",
                    progress=None) -> tuple[pd.DataFrame, list[str]]:
    """Figure C2 slopes: `error ~ exposures + (1|subject)` per condition x violation position, and
    pooled over the conditions of each position (condition 'all'). Returns the table and notes."""
    conds = [c for c in LONG_NESTED_ORDER if c in set(df.loc[df["structure"] == structure, "condition"])] \
        if structure == "long_nested" else sorted(set(df.loc[df["structure"] == structure, "condition"].dropna()))
    rows, notes = [], []
    for pos in ("inner", "outer"):
        for cond in conds + ["all"]:
            data = cell_rows(df, group, structure, None if cond == "all" else cond, pos)
            row = {"group": group, "structure": structure, "violation_type": pos, "condition": cond,
                   "formula": BASE_FORMULA, "n_trials": len(data), "n_subjects": data["subject"].nunique(),
                   "estimate": float("nan"), "se": float("nan"), "z": float("nan"), "p": float("nan"),
                   "ci_low": float("nan"), "ci_high": float("nan"), "intercept": float("nan"), "status": "",
                   "signif": "", "converged": None, "singular": None, "optimizer": "", "fallback": "",
                   "optimizer_warnings": "", "note": ""}
            why = usable(data)
            if why:
                row["note"] = f"not fitted: {why}"
            else:
                try:
                    fit = fit_glmer(data, BASE_FORMULA)
                    c = fit.coef("exposures")
                    row.update(estimate=c["estimate"], se=c["se"], z=c["z"], p=c["p"], ci_low=c["ci_low"],
                               ci_high=c["ci_high"], intercept=fit.coef("(Intercept)")["estimate"],
                               status=fit.status, signif=significance_mark(c["p"], fit.status),
                               converged=fit.converged, singular=fit.singular, optimizer=fit.optimizer,
                               fallback=fit.fallback, optimizer_warnings="; ".join(fit.optimizer_warnings),
                               note="; ".join(fit.messages))
                except MixedModelError as exc:
                    row["status"] = "failed"
                    row["note"] = str(exc)
            rows.append(row)
            if progress:
                progress()
    return pd.DataFrame(rows), notes


def training_error_rates(df: pd.DataFrame, seed: int = 0, n_boot: int = 2000) -> pd.DataFrame:
    """Figure C4: error rates on the training trials of the first session, by structure and violation
    (none = grammatical: an error is a false alarm), errors / trials with bootstrap CIs."""
    t = df[df["training"] & df["correct"].notna() & (df["session"] == 1)]
    if "order_known" in t.columns:
        t = t[t["order_known"]]
    rng = np.random.default_rng(seed)
    out = []
    for (g, s, v), x in t.groupby(["group", "structure", "violation_position"], sort=True, observed=True):
        ci = error_rate_ci(x, rng, n_boot)
        out.append({"group": g, "structure": s, "violation_type": v, "n_subjects": x["subject_key"].nunique(),
                    "n_trials": len(x), "n_errors": int(x["error"].sum()), "error_rate": ci.estimate,
                    "ci_low": ci.low, "ci_high": ci.high, "ci_unit": ci.unit})
    return pd.DataFrame(out, columns=["group", "structure", "violation_type", "n_subjects", "n_trials", "n_errors",
                                      "error_rate", "ci_low", "ci_high", "ci_unit"])
