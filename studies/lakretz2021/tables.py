"""The Lakretz report's shown tables in the papers' layouts (conditions as columns, 'rate [CI]' cells, k/n:
Figure 2, Table C1 beside the paper, the Figure C2 slopes, Figure C4, signal detection), built from the long
analysis tables, and what the choice of the REJECTED rule changes (moved from analysis/report/tables.py and
analysis/measures/scoring.py: the core holds no cell of the study)."""
from __future__ import annotations

import pandas as pd

from analysis.load.prepare import condition_order, scored_rows, structure_order
from analysis.measures.detection import bias_label
from analysis.measures.scoring import apply_rule
from analysis.report.tables import ordered_groups
from analysis.stats.mixed import significance_mark
from studies.lakretz2021 import appendix_c as ac


def _rate_ci(r: pd.Series) -> str:
    if pd.isna(r["error_rate"]):
        return ""
    ci = "" if pd.isna(r["ci_low"]) else f" [{r['ci_low']:.2f}, {r['ci_high']:.2f}]"
    return f"{r['error_rate']:.3f}{ci}"



def wide_error_rates(er: pd.DataFrame, structure: str) -> pd.DataFrame:
    """Paper layout: rows group x dependency, columns the conditions; cells 'rate [CI]'."""
    t = er[er["structure"] == structure]
    conds = condition_order(t["condition"])
    rows = []
    for g in ordered_groups(t):
        for dep in ("inner", "outer"):
            x = t[(t["group"] == g) & (t["dependency"] == dep)].set_index("condition")
            if x.empty:
                continue
            row = {"group": g, "dependency": dep}
            for c in conds:
                row[c] = _rate_ci(x.loc[c]) if c in x.index else ""
            row["trials"] = int(x["n_trials"].sum())
            rows.append(row)
    return pd.DataFrame(rows)



def wide_table_c1(beside: pd.DataFrame, rule: str = "paper", other_rule: str = "strict") -> pd.DataFrame:
    """Table C1 as printed (rows violation_type, conditions as columns): this data under the chosen
    rule, its difference from the paper, the other rule's values, and the paper's printed row."""
    def kn(rate, k, n) -> str:
        return "" if n == 0 else f"{rate:.3f} ({int(k)}/{int(n)})"

    rows = []
    for pos in ("inner", "outer"):
        x = beside[beside["violation_type"] == pos].set_index("condition")
        ours = {"violation_type": pos, "source": f"this data, {rule} rule (k/n)"}
        diff = {"violation_type": pos, "source": "difference (this data - paper)"}
        other = {"violation_type": pos, "source": f"this data, {other_rule} rule (k/n)"}
        paper = {"violation_type": pos, "source": "seeds/000 Table C1"}
        for c in ac.LONG_NESTED_ORDER:
            r = x.loc[c]
            ours[c] = kn(r["error_rate"], r["n_errors"], r["n_subjects"])
            diff[c] = "" if r["n_subjects"] == 0 else f"{r['difference']:+.3f}"
            if "other_error_rate" in r:
                other[c] = kn(r["other_error_rate"], r["other_n_errors"], r["other_n_subjects"])
            paper[c] = f"{r['paper_error_rate']:.3f}"
        rows += [ours, diff] + ([other] if "other_error_rate" in x.columns else []) + [paper]
    return pd.DataFrame(rows)



def rule_text(diff: dict | None, rule: str, other_rule: str) -> str:
    """One sentence: how many trials and Table C1 cells the choice of rule changes."""
    if diff is None:
        return ""
    cells = ", ".join(f"{c['group']} {c['structure']} {c['violation_position']} {c['condition']}"
                      for c in diff["cells"]) or "none"
    return (f"The rules differ on {diff['trials_scored_from_code']} post-training violation trial(s) without an "
            f"answer that carry a release code ({diff['first_encounter_trials_scored_from_code']} of them first "
            f"encounters); first-encounter cells whose k/n differ between the {rule} and the {other_rule} rule: "
            f"{diff['first_encounter_cells_that_differ']} ({cells}), {diff['table_c1_cells_that_differ']} of them "
            "in Table C1 (humans, long-nested).")



def _drawable(slopes: pd.DataFrame) -> pd.DataFrame:
    """Slopes as figure curves; a fit that is not interpretable (not converged, singular, degenerate)
    gets no curve and carries its status, which the figure writes into the panel instead."""
    c = slopes.rename(columns={"estimate": "slope", "violation_type": "violation_position"}).copy()
    bad = c["status"].fillna("").ne("ok")
    c.loc[bad, ["slope", "intercept"]] = float("nan")
    return c



def wide_training(c4: pd.DataFrame) -> pd.DataFrame:
    """Figure C4 as a table: rows structure, columns the violation position, cells 'rate (k/n)'."""
    rows = []
    for st, x in c4.groupby("structure", sort=False):
        row = {"group": x["group"].iloc[0], "structure": st}
        x = x.set_index("violation_type")
        for v in ("none", "inner", "outer", "other"):
            row[v] = (f"{x.loc[v, 'error_rate']:.3f} ({x.loc[v, 'n_errors']}/{x.loc[v, 'n_trials']})"
                      if v in x.index else "")
        rows.append(row)
    return pd.DataFrame(rows)



def _p(v: float) -> str:
    return "" if pd.isna(v) else ("<0.001" if v < 0.001 else f"{v:.3f}")



def wide_slopes(sl: pd.DataFrame) -> pd.DataFrame:
    """Figure C2 slopes: rows violation_type x statistic, columns the conditions (and 'all' pooled);
    the paper's PSP inner values in a column beside PSP."""
    conds = [c for c in dict.fromkeys(sl["condition"])]
    pp = ac.PSP_SLOPE_PAPER
    paper_col = "PSP, seeds/000"
    rows = []
    for pos in ("inner", "outer"):
        x = sl[sl["violation_type"] == pos].set_index("condition")
        if x.empty:
            continue
        for stat, col in (("beta (exposures)", "estimate"), ("SE", "se"), ("z", "z"), ("p", "p"),
                          ("trials / subjects", None), ("fit", "status")):
            row = {"violation_type": pos, "statistic": stat}
            for c in conds:
                r = x.loc[c]
                if col is None:
                    row[c] = f"{r['n_trials']} / {r['n_subjects']}"
                elif col == "status":
                    row[c] = "" if pd.isna(r.get("status")) else str(r.get("status"))
                elif pd.isna(r["estimate"]) and str(r["note"]).startswith("not fitted"):
                    row[c] = "not fitted" if col == "estimate" else ""
                elif r.get("status") not in ("ok", None, "") and col == "estimate":
                    row[c] = f"{r[col]:.2f} ({r['status']})"
                elif col == "p":
                    row[c] = _p(r[col]) + significance_mark(r[col], r.get("status", "ok"))
                else:
                    row[c] = "" if pd.isna(r[col]) else f"{r[col]:.2f}"
                if c == "PSP":
                    paper = {"estimate": f"{pp['estimate']:.2f}", "z": f"{pp['z']:.2f}", "p": f"{pp['p']:.3f}",
                             None: "- / 55", "status": "as printed"}.get(col, "")
                    row[paper_col] = paper if pos == "inner" else ""
            rows.append(row)
    return pd.DataFrame(rows)



def wide_detection(pooled: pd.DataFrame) -> pd.DataFrame:
    """The shown signal-detection table: per group x structure x dependency (conditions pooled), the
    counts, the miss rate (the error rate) beside d' and c with their CIs, and the bias in words."""

    rows = []
    for r in pooled.itertuples():
        rows.append({"group": r.group, "structure": r.structure, "dependency": r.dependency,
                     "subjects": r.n_subjects, "hits / signal": f"{r.hits}/{r.signal_trials}",
                     "false alarms / noise": f"{r.false_alarms}/{r.noise_trials}",
                     "miss rate (= error rate)": f"{r.miss_rate:.3f}",
                     "false-alarm rate": f"{r.false_alarm_rate:.3f}",
                     "d'": f"{r.dprime:.2f} [{r.dprime_ci_low:.2f}, {r.dprime_ci_high:.2f}]",
                     "c": f"{r.criterion_c:.2f} [{r.c_ci_low:.2f}, {r.c_ci_high:.2f}]",
                     "bias": bias_label(r.criterion_c, r.c_ci_low, r.c_ci_high)})
    return pd.DataFrame(rows)



def ordered_structures(d: pd.DataFrame) -> list[str]:
    """The structures of the scored rows, in the study's display order (STRUCTURE_ORDER)."""
    return structure_order(scored_rows(d)["structure"].dropna())


def rule_differences(d: pd.DataFrame, fe_by_rule: dict[str, pd.DataFrame]) -> dict:
    """What the choice of rule changes: trials scored from their code, first-encounter trials among
    them, and the first-encounter cells whose k/n differ between the rules."""
    paper = apply_rule(d, "paper")
    r = paper[paper["rescored"] & ~paper["training"]]
    keys = ["group", "structure", "condition", "violation_position"]
    a, b = (fe_by_rule[k][keys + ["n_errors", "n_subjects"]] for k in ("paper", "strict"))
    both = a.merge(b, on=keys, how="outer", suffixes=("_paper", "_strict")).fillna(0).set_index(keys)
    diff = both[(both["n_errors_paper"] != both["n_errors_strict"])
                | (both["n_subjects_paper"] != both["n_subjects_strict"])]
    return {"trials_scored_from_code": int(len(r)),
            "first_encounter_trials_scored_from_code": int(r["first_encounter"].sum()),
            "first_encounter_cells_that_differ": int(len(diff)),
            "table_c1_cells_that_differ": int(sum(1 for k in diff.index if k[0] == "human" and k[1] == "long_nested")),
            "cells": [dict(zip(keys, k, strict=False)) | {c: int(v) for c, v in row.items()}
                      for k, row in diff.iterrows()]}
