"""Derived columns every analysis shares: error, order, training flag, exposures, groups.

Definitions (seeds/000, appendix C), per subject, in the order (session, trial_index):

- `trials_before`: trials the subject completed before this one, all sessions and blocks
  (training included) -- the "total trials" predictor of Table C3 and the x axis of Figure C1.
- `exposures`: earlier *post-training* trials with the same structure, condition and
  violation position (Figure 6c, Figure C2, Table C2: "the number of times they had previously
  encountered that violation of that structure"); 0 at the first encounter; missing on
  training trials.
- `exposures_structure`: earlier trials with the same structure and condition, any violation
  or none, training included (Figure C3).
- `first_encounter`: the trial is the subject's first post-training trial of its
  structure x condition x violation position (exposures == 0).

None of these exist for rows whose order is unknown (`order_known` False).
"""
from __future__ import annotations

import re

import pandas as pd

from experiments.studies import declared
from stimuli.prompts import PROMPT_GROUPS

TRAINING_PATTERN = re.compile(r"train|practi", re.IGNORECASE)
SCORED_POSITIONS = ("inner", "outer")


def is_training_block(block: pd.Series) -> pd.Series:
    """Blocks named like 'training' or 'practice' are training (the spec's convention)."""
    return block.fillna("").astype(str).str.contains(TRAINING_PATTERN).astype(bool)


def context_family(context: str) -> str:
    """Pool the prompts of one prompt group, as seeds/000 pools its three prompts per condition.

    The model runner gives a group's prompts to subjects in turn and records the prompt used
    (`fewshot:eightshot_b`); subjects of one group are one condition of the study
    (`fewshot:eightshot`), each prompt a different subject.
    """
    if context.startswith("fewshot:"):
        name = context.split(":", 1)[1]
        for group, members in PROMPT_GROUPS.items():
            if name in members:
                return f"fewshot:{group}"
    return context


WEIGHTS_MARK = "+weights"  # model_subjects/weights.py `context_label`: `<context>+weights:<update-on>`


def learning_mode(context: str) -> str:
    """How a model group learns, from its `context_mode`: `weights` (its weights change after trials, its context
    shows no history), `both` (weights and a running context), `context` (frozen weights; a running context
    learns in context, `none`/few-shot not at all). People's rows have no context_mode: `context`."""
    c = str(context or "")
    if WEIGHTS_MARK not in c:
        return "context"
    return "both" if c.startswith("running") or c.startswith("replay+") else "weights"  # a replay: its history


SIMULATED_HUMANS = "human (simulated)"


def is_human_group(group: str) -> bool:
    """Real or simulated humans (figures draw them as the reference line, not as bars)."""
    return group == "human" or group == SIMULATED_HUMANS


def group_label(df: pd.DataFrame) -> pd.Series:
    """Who a row belongs to in tables and figures: 'human', 'human (simulated)' (generated answers, never
    pooled with real participants), or 'model · context · protocol'."""
    def col(c: str) -> list:
        return df[c].astype("string").fillna("").tolist() if c in df.columns else [""] * len(df)

    simulated = (df["simulated"].fillna(False).astype(bool).tolist() if "simulated" in df.columns
                 else [False] * len(df))
    labels = []
    for kind, model, context, protocol, sim in zip(df["subject_kind"].tolist(), col("model"), col("context_mode"),
                                                   col("protocol"), simulated, strict=False):
        if kind != "model":
            labels.append(SIMULATED_HUMANS if sim else "human")
        else:
            labels.append(" · ".join(p for p in (model or "model", context_family(context), protocol) if p))
    return pd.Series(labels, index=df.index, dtype="string")


def prepare(df: pd.DataFrame) -> pd.DataFrame:
    """Return a copy with error, order and exposure columns added (input rows unchanged).

    Rows whose time order is unknown (`order_known` False: a results table without its session
    logs) get no order columns (trials_before, exposures, exposures_structure: missing;
    first_encounter: False) and keep their session missing; everything else applies to them.
    """
    df = df.copy()
    if "order_known" not in df.columns:
        df["order_known"] = True
    df["order_known"] = df["order_known"].fillna(True).astype(bool)
    known = df["order_known"]
    df["session"] = df["session"].astype("Int64").mask(known & df["session"].isna(), 1)
    df["group"] = group_label(df)
    df["subject_key"] = (df["subject_kind"] + ":" + df["group"] + ":" + df["subject_id"]).astype("string")
    df["error"] = (1 - df["correct"].astype("Float64")).astype("Float64")
    df["training"] = is_training_block(df["block"])
    df["scored"] = df["correct"].notna() & df["violation_position"].isin(SCORED_POSITIONS)
    df = df.sort_values(["subject_key", "session", "trial_index"], kind="stable").reset_index(drop=True)
    known = df["order_known"]
    for c in ("trials_before", "exposures", "exposures_structure"):
        df[c] = pd.Series(pd.NA, index=df.index, dtype="Int64")
    k = df[known]
    df.loc[k.index, "trials_before"] = k.groupby("subject_key", sort=False).cumcount().astype("Int64")
    post = k[~k["training"]]
    cell = ["subject_key", "structure", "condition", "violation_position"]
    exp = post.groupby(cell, sort=False, dropna=False).cumcount()
    df.loc[exp.index, "exposures"] = exp.astype("Int64")
    exs = k.groupby(["subject_key", "structure", "condition"], sort=False, dropna=False).cumcount()
    df.loc[exs.index, "exposures_structure"] = exs.astype("Int64")
    df["first_encounter"] = (df["exposures"] == 0).fillna(False).astype(bool)
    return df


def order_known_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Rows whose chronological order is known (what the first-encounter and exposure analyses need)."""
    return df[df["order_known"]] if "order_known" in df.columns else df


def scored_rows(df: pd.DataFrame, post_training: bool = True) -> pd.DataFrame:
    """Violation trials with an answer (the unit of the error analyses), optionally post-training only."""
    keep = df["scored"]
    if post_training:
        keep &= ~df["training"]
    return df[keep]


def _declared_order(attribute: str) -> tuple[str, ...]:
    """The display order the registered studies declare (`STRUCTURE_ORDER`, `CONDITION_ORDER`: data in their
    `__init__`), in listing order, each name once."""
    return tuple(dict.fromkeys(n for names in declared(attribute).values() for n in names))


def structure_order(structures) -> list[str]:
    """Structures in the studies' display order; unknown ones after, alphabetically."""
    present = list(dict.fromkeys(structures))
    known = [s for s in _declared_order("STRUCTURE_ORDER") if s in present]
    return known + sorted(s for s in present if s not in known)


def condition_order(conditions) -> list[str]:
    """Conditions in the studies' display order (e.g. Table C1's); unknown ones after, alphabetically."""
    conds = [c for c in dict.fromkeys(conditions) if isinstance(c, str)]
    known = [c for c in _declared_order("CONDITION_ORDER") if c in conds]
    return known + sorted(c for c in conds if c not in known)
