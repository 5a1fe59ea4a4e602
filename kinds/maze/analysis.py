"""Maze: word RTs by region and condition, errors by word position, RT against surprisal.

Rules (stated in the section with their counts): a word's RT is its first answer's (`word_rts_ms`, the Ibex
"reading time to first answer"); the RT tables keep the words whose first pick was right (the `word_correct`
column, read by the kind's one reader `task.word_correct_of`: a session written before it, `extra.word_correct`)
and drop the first word of each sentence (shown beside x-x-x: it measures the start of the trial, not reading);
the words after an error in `end` mode were never shown (no RT). Errors by position: per word position (1-based),
the sentences that reached it and how many were first picked wrong (the first word, beside x-x-x, included).
RT against surprisal: each word kept for the RT tables beside the mean surprisal (bits) the model rows give the
same word of the same sentence (`word_surprisal_bits`), an ordinary least-squares line and Pearson's r.
"""
from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from analysis.kind_sections import AnalysisKind, SectionArgs
from kinds.maze.task import region_words, word_correct_of

KIND = "maze"
WORD_COLUMNS = ["group", "subject_kind", "subject_id", "item_id", "condition", "sentence", "position", "word",
                "region", "rt_ms", "first_right", "surprisal_bits"]


def _json(v: Any, default: Any) -> Any:
    if not isinstance(v, str) or not v:
        return default
    try:
        return json.loads(v)
    except json.JSONDecodeError:
        return default


def condition_of(row: pd.Series, factors: list[str]) -> str:
    """The design cell of a row: its factors' levels joined (empty without factors)."""
    return " × ".join(str(row.get(f)) for f in factors if f in row.index and pd.notna(row.get(f)))


def word_rows(df: pd.DataFrame, factors: list[str]) -> pd.DataFrame:
    """One row per word shown (people) or scored (models) of every maze trial."""

    if "task" not in df.columns:
        return pd.DataFrame(columns=WORD_COLUMNS)
    out = []
    for _, r in df[df["task"] == KIND].iterrows():
        mat = _json(r.get("materials"), {})
        words = str(mat.get("sentence", "")).split()
        region = {i: k + 1 for k, reg in enumerate(region_words(mat)) for i in reg}
        rts = _json(r.get("word_rts_ms"), [None] * len(words))
        bits = _json(r.get("word_surprisal_bits"), None) or [None] * len(words)
        right = word_correct_of(r) or [None] * len(words)
        for i, w in enumerate(words):
            out.append({"group": r.get("group", r.get("subject_kind")), "subject_kind": r.get("subject_kind"),
                        "subject_id": r.get("subject_id"), "item_id": r.get("item_id"),
                        "condition": condition_of(r, factors), "sentence": " ".join(words), "position": i + 1,
                        "word": w, "region": region.get(i), "rt_ms": rts[i] if i < len(rts) else None,
                        "first_right": right[i] if i < len(right) else None,
                        "surprisal_bits": bits[i] if i < len(bits) else None})
    return pd.DataFrame(out, columns=WORD_COLUMNS)


def kept_rts(words: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """The words whose RTs are analysed (people's, first pick right, not the first word) and the counts dropped."""
    shown = words[words["rt_ms"].notna()]
    first = shown["position"] == 1
    wrong = shown["first_right"] != True  # noqa: E712 (None: not known, also dropped)
    kept = shown[~first & ~wrong].assign(rt_ms=lambda d: d["rt_ms"].astype(float))
    return kept, {"words_with_rt": len(shown), "first_words_dropped": int(first.sum()),
                  "wrong_first_picks_dropped": int((~first & wrong).sum()), "kept": len(kept)}


def region_rts(kept: pd.DataFrame) -> pd.DataFrame:
    """Mean word RT (ms) per group, condition and region (over words)."""
    cols = ["group", "condition", "region", "n_words", "mean_rt_ms"]
    if kept.empty:
        return pd.DataFrame(columns=cols)
    t = kept.groupby(["group", "condition", "region"], sort=True)["rt_ms"].agg(n_words="size", mean_rt_ms="mean")
    return t.reset_index()[cols]


def errors_by_position(words: pd.DataFrame) -> pd.DataFrame:
    """Per group and word position: the sentences that reached it, the wrong first picks, the error rate."""
    cols = ["group", "position", "n_reached", "n_errors", "error_rate"]
    x = words[words["first_right"].notna()]
    if x.empty:
        return pd.DataFrame(columns=cols)
    # elementwise on a pandas column (`~` would differ on an object column)
    wrong = (x["first_right"] == False).astype(int)  # noqa: E712
    t = x.assign(_e=wrong).groupby(["group", "position"], sort=True)["_e"]
    t = t.agg(n_reached="size", n_errors="sum").reset_index()
    t["error_rate"] = t["n_errors"] / t["n_reached"]
    return t[cols]


def rt_by_surprisal(kept: pd.DataFrame, words: pd.DataFrame) -> pd.DataFrame:
    """People's kept word RTs against the model rows' mean surprisal of the same word: per people's group and
    model group, n, OLS intercept and slope (ms per bit), Pearson's r."""
    cols = ["group", "model_group", "n_words", "intercept_ms", "slope_ms_per_bit", "pearson_r"]
    people = kept[kept["subject_kind"] == "human"]
    models = words[(words["subject_kind"] == "model") & words["surprisal_bits"].notna()]
    out = []
    for (mg,), m in models.groupby(["group"], sort=True):
        s = m.assign(s=m["surprisal_bits"].astype(float)).groupby(["sentence", "position"])["s"].mean()
        for (g,), p in people.groupby(["group"], sort=True):
            j = p.join(s, on=["sentence", "position"], how="inner")
            if len(j) < 3 or j["s"].nunique() < 2:
                continue
            slope, intercept = np.polyfit(j["s"], j["rt_ms"], 1)
            out.append({"group": g, "model_group": mg, "n_words": len(j), "intercept_ms": float(intercept),
                        "slope_ms_per_bit": float(slope), "pearson_r": float(np.corrcoef(j["s"], j["rt_ms"])[0, 1])})
    return pd.DataFrame(out, columns=cols)


def maze_section(a: SectionArgs) -> None:
    """The report's maze section: region RTs by condition, errors by position, RT against surprisal."""
    words = word_rows(a.rows, list(a.factors))
    kept, n = kept_rts(words)
    res = a.res
    text = ("Word RTs are first-answer times (from the previous correct answer). Kept: words whose first pick was "
            f"right, not a sentence's first word ({n['kept']} of {n['words_with_rt']} words with an RT; "
            f"{n['first_words_dropped']} first words and {n['wrong_first_picks_dropped']} wrong first picks dropped). "
            "Errors: per word position (1 = the first word, beside x-x-x), the sentences that reached it and the "
            "wrong first picks. RT against surprisal: the kept words of people against the model rows' mean "
            "surprisal of the same word (least squares).")
    tables = [res.table("maze_region_rts", region_rts(kept), "Maze: mean word RT by region and condition"),
              res.table("maze_errors_by_position", errors_by_position(words), "Maze: errors by word position")]
    rs = rt_by_surprisal(kept, words)
    if len(rs):
        tables.append(res.table("maze_rt_by_surprisal", rs, "Maze: word RT against surprisal"))
    res.section("task_maze", "Maze: word RTs, errors, surprisal", text, tables)


# the kind on the analysis side: its section (people's trial RTs are whole sentences: not the shared RT rules)
ANALYSIS = AnalysisKind(KIND, section=maze_section)
