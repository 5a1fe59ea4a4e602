"""Twins, part 3: the same formula's effects for the people and for each model group, side by side.

The fits are the per-group fits of `--formula` (analysis/stats/formula_fit.fit_groups: one fit per group, the
boundary rule, the random-effects fallback); this module only lines them up. A term's sign "agrees" when
the model group's estimate has the people's sign; "differs from 0" when its 95% CI excludes 0. Neither is
claimed from a fit whose status is not ok (unconverged, singular, boundary): the cell names the status.
"""
from __future__ import annotations

import math

import pandas as pd

from analysis.load.prepare import is_human_group


def default_formula(d: pd.DataFrame, factors: dict[str, list[str]]) -> str | None:
    """The design's default: accuracy by the crossed factors with people and items as random intercepts
    (None when no factor varies or no trial was scored)."""
    fs = [f for f in factors if f in d.columns and d[f].dropna().astype(str).nunique() > 1]
    if not fs or "correct" not in d.columns or d["correct"].notna().sum() == 0:
        return None
    return f"correct ~ {' * '.join(fs)} + (1 | subject) + (1 | item)"


def _ok(fit) -> bool:
    return getattr(fit, "status", "") == "ok"


def _yn(v) -> str:
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return "—"
    return "yes" if bool(v) else "no"


def _fmt(c: dict) -> str:
    return f"{c['estimate']:.3f} [{c['ci_low']:.3f}, {c['ci_high']:.3f}]"


def twin_long(fits) -> pd.DataFrame:
    """One row per term and group: estimate, CI, status, differs from 0, sign agrees with the people."""
    people = next((f for g, f in fits if is_human_group(str(g))), None)
    ref = {c["term"]: c for c in people.coefficients} if people is not None else {}
    rows = []
    for g, f in fits:
        human = is_human_group(str(g))
        for c in f.coefficients:
            finite = all(isinstance(c.get(k), float) and math.isfinite(c[k]) for k in ("estimate", "ci_low", "ci_high"))
            differs = (c["ci_low"] > 0 or c["ci_high"] < 0) if _ok(f) and finite else None
            p = ref.get(c["term"])
            agrees = None
            if not human and p is not None and _ok(f) and people is not None and _ok(people) and finite:
                agrees = math.copysign(1, c["estimate"]) == math.copysign(1, p["estimate"])
            rows.append({"term": c["term"], "group": g, "who": "people" if human else "model",
                         "estimate": c["estimate"], "ci_low": c["ci_low"], "ci_high": c["ci_high"],
                         "status": f.status, "differs_from_0": differs, "sign_agrees_with_people": agrees,
                         "n_obs": f.n_obs})
    return pd.DataFrame(rows)


def twin_wide(long: pd.DataFrame) -> pd.DataFrame:
    """The shown table: a row per term; per group 'estimate [CI]' (a fit not ok: its status), and per
    model group whether its sign agrees with the people's and whether it differs from 0."""
    if long.empty:
        return long
    groups = list(dict.fromkeys(long.sort_values("who", key=lambda s: s != "people")["group"]))
    out = []
    for term, x in long.groupby("term", sort=False):
        row: dict = {"term": term}
        for g in groups:
            r = x[x["group"] == g]
            if r.empty:
                continue
            r = r.iloc[0]
            shown = _fmt(r) if r["status"] == "ok" else f"({r['status']}: not shown as a finding)"
            row[f"{g}: estimate [95% CI]"] = shown
            row[f"{g}: differs from 0"] = _yn(r["differs_from_0"])
            if r["who"] == "model":
                row[f"{g}: sign as people's"] = _yn(r["sign_agrees_with_people"])
        out.append(row)
    return pd.DataFrame(out)
