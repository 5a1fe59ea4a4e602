"""What a formula asks of the table, checked before any fit: something to estimate, a numeric response
with finite values, arithmetic (log, scale, poly, I) only on numeric columns.

Why here and not in R: lme4 given `correct ~ 0 + (1 | subject)`, a text response or `log(condition)` either
fails deep inside R (a note, the asked result missing) or returns a fit with nothing to show. The
API's fit(), `twinlab analyze --formula` and the pipeline call this one function (FormulaError, exit 2).
"""
from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd

from analysis.stats import formula as fm


def _estimates_something(f: fm.Formula) -> bool:
    """An intercept or a fixed term is left after `0 +` / `- 1` (the random part estimates variances only)."""
    parts = fm.summands(f.fixed_tree)
    no_intercept = any((s == "+" and isinstance(n, fm.Num) and float(n.text) == 0)
                       or (s == "-" and isinstance(n, fm.Num) and float(n.text) == 1) for s, n in parts)
    terms = [n for s, n in parts if s == "+" and not isinstance(n, fm.Num)]
    return bool(terms) or not no_intercept


def _numeric(s: pd.Series) -> pd.Series | None:
    """The column as numbers (booleans 0/1), or None when it holds text."""
    s = s.dropna()
    if pd.api.types.is_bool_dtype(s) or str(s.dtype) == "boolean":
        return s.astype(float)
    if isinstance(s.dtype, pd.CategoricalDtype):
        return None
    num = pd.to_numeric(s, errors="coerce") if not pd.api.types.is_numeric_dtype(s) else s
    return None if num.isna().any() else num.astype(float)


def check_fit_request(f: fm.Formula, df: pd.DataFrame, family: str = "auto", factors: Iterable[str] = ()) -> None:
    """Refuse (FormulaError) a formula that cannot give the result asked for on this table. Columns the
    table does not hold yet (a reading target's region_rt_ms) are checked when their rows are built."""
    if not _estimates_something(f):
        raise fm.FormulaError(f"--formula {f.text!r} estimates no fixed effect (no intercept and no term: `0 +` or "
                              "`- 1` with nothing else); the report shows fixed effects, so add 1 or a term "
                              "(e.g. correct ~ 1 + (1 | subject))")
    declared = set(factors) | set((df.attrs.get("factors") or {}))
    resp = f.response_var
    if resp in df.columns:
        _check_response(f, df[resp], family)
    for tree in [f.lhs, f.fixed_tree] + [r.expr for r in f.random]:
        for node in fm.walk(tree) if tree is not None else ():
            if isinstance(node, fm.Call):
                for name in fm.node_names(node):
                    if name in df.columns and (name in declared or _numeric(df[name]) is None):
                        raise fm.FormulaError(
                            f"--formula {f.text!r}: {node.fn}() of {name!r}, which is "
                            + ("a design factor" if name in declared else "a text column")
                            + f"; {node.fn}() needs a numeric column (a factor enters the formula as itself)")


def _check_response(f: fm.Formula, col: pd.Series, family: str) -> None:
    num = _numeric(col)
    if num is None:
        bad = col.dropna()
        bad = bad[pd.to_numeric(bad, errors="coerce").isna()] if not isinstance(bad.dtype, pd.CategoricalDtype) else bad
        raise fm.FormulaError(f"--formula {f.text!r}: the response {f.response_var!r} is text (e.g. "
                              f"{bad.iloc[0]!r}), not numeric or 0/1; fit correct, accepted, a rating or a time")
    inf = ~np.isfinite(num)
    if inf.any():
        raise fm.FormulaError(f"--formula {f.text!r}: the response {f.response_var!r} holds {int(inf.sum())} infinite "
                              f"value(s) (e.g. {num[inf].iloc[0]!r}); a fit of an infinite value means nothing")
