"""How a trial without a usable answer is scored in the first-encounter and exposure analyses.

Two named rules (`twinlab analyze --rejected-rule`); they differ only on REJECTED trials (the
Lakretz et al. 2021 panel timed out: no answer), and only where the data carry the release's
outcome code (`correct_wrong` in the results table, the END_TRIAL code in the session logs;
imported rows keep it in `extra.outcome`, rows read from the table in `extra.correct_wrong`):

- `paper` (default; seeds/000's rule, reproduces its Table C1): a REJECTED violation trial is scored
  by the prefix of its code -- `WRONG_DDC` an error, `CORRECT_DDC` correct. Fillers stay out.
- `strict`: a REJECTED trial has no answer and leaves the analysis; in the first-encounter table
  the subject leaves that cell (the next trial is not promoted to "first").

The error rates by condition (Figure 2; WRONG / (CORRECT + WRONG), as Lakretz et al.) always leave
REJECTED trials out, under either rule. Rows without a code (twinlab's own sessions: a timeout has
no code) are scored the same way by both rules.
"""
from __future__ import annotations

import json

import pandas as pd

from analysis.load.prepare import SCORED_POSITIONS

RULES = ("paper", "strict")
DEFAULT_RULE = "paper"
RULE_TEXT = {
    "paper": "paper rule: a REJECTED (no answer) violation trial is scored by the prefix of its release code "
             "(`WRONG_DDC` an error, `CORRECT_DDC` correct), as seeds/000 did; fillers are left out",
    "strict": "strict rule: a REJECTED (no answer) trial leaves the analysis; a subject whose first trial in a "
              "cell is REJECTED leaves that cell (the next trial is not promoted)",
}


def code_error(df: pd.DataFrame) -> pd.Series:
    """1.0 / 0.0 from the prefix (WRONG / CORRECT) of the release's outcome code of a trial without an
    answer; missing where there is an answer or no code."""
    out = pd.Series(pd.NA, index=df.index, dtype="Float64")
    if "extra" not in df.columns:
        return out
    todo = df["correct"].isna() & df["extra"].notna()
    for i, text in df.loc[todo, "extra"].items():
        try:
            extra = json.loads(text)
        except (TypeError, ValueError):
            continue
        code = (extra.get("outcome") or extra.get("correct_wrong")) if isinstance(extra, dict) else None
        if isinstance(code, str):
            code = code.strip().upper()
            if code.startswith("WRONG"):
                out[i] = 1.0
            elif code.startswith("CORRECT"):
                out[i] = 0.0
    return out


def apply_rule(d: pd.DataFrame, rule: str) -> pd.DataFrame:
    """A prepared frame with `error` and `scored` set by the rule; `rescored` marks the trials the
    paper rule scores from their code (always False under the strict rule)."""
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r}: one of {', '.join(RULES)}")
    d = d.copy()
    d["rescored"] = False
    if rule == "paper":
        code = code_error(d)
        m = code.notna() & d["violation_position"].isin(SCORED_POSITIONS)
        d.loc[m, "error"] = code[m]
        d.loc[m, "scored"] = True
        d["rescored"] = m.astype(bool)
    return d
