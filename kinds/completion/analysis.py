"""Completion (cloze): typed or generated answers scored against the item's target and its accepted variants.

Why both scores: a strict match (the target only) and a lenient one (the target or an accepted variant,
e.g. a synonym or a spelling variant the item lists) can differ a lot for humans; the report shows both,
with the rule named. Normalisation before matching: surrounding white space and punctuation removed,
lower case (experiments.tasks.scoring), inner white space collapsed. Models (`direct`): log P(target | prefix) and
its rank.
"""
from __future__ import annotations

import pandas as pd

from analysis.kind_sections import AnalysisKind, SectionArgs
from analysis.measures.cells import materials
from analysis.measures.design_rates import rates
from analysis.report.design import F1F2, fmt_ci
from kinds.api import normalize_answer
from kinds.completion.task import accepted_answers

KIND = "completion"

NORMALISATION = ("answers and targets are compared by the task's one rule (experiments.tasks.scoring, the same "
                 "for every runner): Unicode NFC, lower case, leading and trailing white space and punctuation "
                 "removed, inner white space collapsed")


def normalise(text) -> str:
    """The completion kind's own normaliser (experiments.tasks.scoring.normalize_answer); "" for no text."""
    return normalize_answer(text) if isinstance(text, str) else ""


def completion_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Completion trials with `match_target` and `match_accepted` (1/0; missing without an answer)."""
    if "task" not in df.columns:
        return df.iloc[0:0]
    d = df[df["task"] == KIND].copy()
    strict, lenient = [], []
    for text, mat in zip(d["response_text"].tolist(), materials(d), strict=False):
        target = normalise(mat.get("target"))
        if not isinstance(text, str) or not target:
            strict.append(float("nan"))
            lenient.append(float("nan"))
            continue
        ans = normalise(text)
        strict.append(float(ans == target))
        # lenient: the kind's own score (the target or an accepted variant, read and normalised by the kind)
        lenient.append(float(ans in accepted_answers(mat)))
    d["match_target"] = strict
    d["match_accepted"] = lenient
    return d


def model_target_scores(d: pd.DataFrame) -> pd.DataFrame:
    """Models, direct protocol: mean log P(target | prefix), median rank, share ranked first, per group."""
    cols = ["group", "protocol", "n_trials", "mean_target_logprob", "median_target_rank", "share_rank_1"]
    x = d[d["target_logprob"].notna()] if "target_logprob" in d.columns else d.iloc[0:0]
    out = []
    for (g, p), gg in x.groupby(["group", x["protocol"].fillna("")], sort=True):
        ranks = gg["target_rank"].dropna().astype(float)
        out.append({"group": g, "protocol": p, "n_trials": len(gg),
                    "mean_target_logprob": float(gg["target_logprob"].astype(float).mean()),
                    "median_target_rank": float(ranks.median()) if len(ranks) else float("nan"),
                    "share_rank_1": float((ranks == 1).mean()) if len(ranks) else float("nan")})
    return pd.DataFrame(out, columns=cols)


def completion_rates(c: pd.DataFrame, by: list[str], seed: int, n_boot: int) -> pd.DataFrame:
    """Strict (target) and lenient (accepted variants) match rates of completion rows per cell of `by` (long:
    `score` names which)."""

    parts = [rates(c, by, "match_target", seed, n_boot).assign(score="target"),
             rates(c, by, "match_accepted", seed, n_boot).assign(score="target or accepted")]
    return pd.concat(parts, ignore_index=True)


def completion_section(a: SectionArgs) -> None:
    """The report's completion section: accuracy against the target and its accepted variants; models' scores."""

    by, res = a.by, a.res
    c = completion_rows(a.rows)
    r = completion_rates(c, by, a.opt.seed, a.opt.n_boot)
    mt = model_target_scores(c)
    res.section("task_completion", "Completion (cloze): accuracy against the target and its accepted variants",
                "Strict: the answer is the target; lenient: the target or one of the item's accepted variants; "
                + NORMALISATION + ". " + F1F2 + ". Models (direct): mean log P(target | prefix), median rank of the "
                "target's first token, share ranked first.",
                [res.table("completion_rates", r.assign(**{"rate [CI subjects]": [
                    fmt_ci(*x) for x in zip(r["rate"], r["rate_ci_low"], r["rate_ci_high"], strict=False)]})
                    [["score", "group"] + by + ["n_subjects", "n_items", "n_trials", "rate [CI subjects]",
                                                "by_item_mean"]], "Completion accuracy"),
                 res.table("completion_rates_long", r, "Completion accuracy (long format)", show=False),
                 res.table("completion_model_scores", mt, "Models: target log-probability") if len(mt) else None])


def completion(d: pd.DataFrame, by: list[str], seed: int, n_boot: int) -> pd.DataFrame:
    """analysis.api.completion on the design's frame: the match rates of its completion trials."""
    return completion_rates(completion_rows(d), by, seed, n_boot)


# the kind on the analysis side: typed answers (a twin's likelihood is log P(the person's word)); its section:
# accuracy against the target and its accepted variants
ANALYSIS = AnalysisKind(KIND, typed=True, section=completion_section, api={"completion": completion})
