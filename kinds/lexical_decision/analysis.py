"""Lexical decision on the analysis side: acceptance and d′ from its labels (word accepts, non-word is the
signal), people's response times, and, for a model's `direct` protocol that leaves the decision to the
analysis, the decision from log-probabilities (AUC and d′ at a stated criterion)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.kind_sections import AnalysisKind, KindTable
from analysis.measures.detection import dprime_c

KIND = "lexical_decision"


def auc(pos: np.ndarray, neg: np.ndarray) -> float:
    """P(score of a positive > score of a negative) + 0.5 P(tie): the Mann-Whitney AUC."""
    pos, neg = np.asarray(pos, float), np.asarray(neg, float)
    if not len(pos) or not len(neg):
        return float("nan")
    gt = (pos[:, None] > neg[None, :]).sum()
    eq = (pos[:, None] == neg[None, :]).sum()
    return float((gt + 0.5 * eq) / (len(pos) * len(neg)))


CRITERION = ("a string is called a word when its log-probability per character is at or above the median of "
             "the group's strings (half called words)")


def lexical_logprob_decision(d: pd.DataFrame) -> pd.DataFrame:
    """Lexical decision from log-probabilities per group: AUC (words above non-words) on the per-character
    log-probability, and hits, false alarms, d', c at the median criterion (signal = a non-word, a hit
    calls it a non-word, as in the acceptance section)."""
    d = d[d["task"] == KIND] if "task" in d.columns else d.iloc[0:0]
    if d.empty or "signal" not in d.columns:
        return pd.DataFrame()
    out = []
    for g, x in d[d["signal"].notna()].groupby("group", sort=True):
        words, nonwords = x[~x["signal"].astype(bool)], x[x["signal"].astype(bool)]
        if words.empty or nonwords.empty:
            continue
        crit = float(np.median(x["logprob_per_char"]))
        called_non = x["logprob_per_char"] < crit
        hits = int(called_non[nonwords.index].sum())
        fas = int(called_non[words.index].sum())
        dp, c = dprime_c(hits, len(nonwords), fas, len(words))
        out.append({"group": g, "words": len(words), "nonwords": len(nonwords),
                    "auc": auc(words["logprob_per_char"].to_numpy(), nonwords["logprob_per_char"].to_numpy()),
                    "criterion_logprob_per_char": crit, "hits": hits, "false_alarms": fas,
                    "hit_rate": hits / len(nonwords), "false_alarm_rate": fas / len(words), "dprime": float(dp),
                    "criterion_c": float(c), "criterion_rule": CRITERION})
    return pd.DataFrame(out)


def logprob_table(d: pd.DataFrame) -> KindTable:
    """The decision from log-probabilities as the log-probability section shows it (analysis/measures/sections.py)."""
    return KindTable("lexical_logprob_decision", "Lexical decision from log-probabilities", lexical_logprob_decision(d),
                     "Lexical decision without a decision rule: the AUC (the probability that a word's log-probability "
                     "per character is above a non-word's; 0.5 = chance) and hits, false alarms, d' and c at a stated "
                     f"criterion: {CRITERION} (signal = a non-word; a hit calls it a non-word).")


# the kind on the analysis side: acceptance and d′ (a word accepts, a non-word is the signal), people's RTs; the
# decision from a model's log-probabilities, in the log-probability section (`logprob_table`)
ANALYSIS = AnalysisKind(KIND, detection=True, rt=True, logprob_table=logprob_table)
