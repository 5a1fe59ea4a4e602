"""Twins: how well each model group predicts each person's answers.

For every model group and context, every person's trial gets log P(the person's answer), the model's
option scores renormalised over the task's options (softmax of `option_logprobs`: the labels of a
judgment, the options of a choice, the points of a scale). Where the scores come from:

  none / fewshot:<set>   the model group's own sessions, the same item in the same condition (`item_id`);
                         several subjects of the group on one item: the mean of their probabilities
                         (one subject: exactly the probabilities its session recorded)
  replay                 the model's replay of this very person (model_subjects/replay.py): its scores on
                         the person's trial with the person's own answers and feedback in its history
  running                not used: a running model's scores follow its own answers, not the person's
                         (a sentence says so; run --replay)

Chance is 1/n options, so pseudo-R² = 1 - LL_model / LL_chance (McFadden against the uniform guess).
A person's answer that is not among the model's options, or an item the model never ran, is counted
and named, never dropped silently. Typed answers (completion): log P(the person's word) itself (no option
set, so no chance and no pseudo-R²): in a replay, the word as typed; from none / few-shot sessions, which
hold log P(target) only, a word that is the target (by the task's normaliser), others counted as not scored.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis.kind_sections import kinds_where, value_option_protocols
from analysis.load.prepare import is_human_group
from experiments.tasks.scoring import normalize_answer

REPLAY = "replay"
SPLITS = ("all", "training", "test")


@dataclass
class TwinLikelihood:
    """Per-trial log-likelihoods and their summaries; `notes` say what was not computed and why."""

    trials: pd.DataFrame
    summary: pd.DataFrame
    by_item: pd.DataFrame
    by_condition: pd.DataFrame
    missing: pd.DataFrame
    notes: list[str] = field(default_factory=list)


def _floats(cell) -> list[float] | None:
    if cell is None or (isinstance(cell, float) and math.isnan(cell)) or cell is pd.NA or cell == "":
        return None
    try:
        xs = json.loads(cell) if isinstance(cell, str) else list(cell)
    except (TypeError, ValueError):
        return None
    if not xs or any(x is None for x in xs):
        return None
    xs = [float(x) for x in xs]
    return None if any(math.isnan(x) for x in xs) else xs


def _labels(cell) -> list[str] | None:
    try:
        xs = json.loads(cell) if isinstance(cell, str) else None
    except ValueError:
        return None
    return [str(x) for x in xs] if isinstance(xs, list) and xs else None


def renormalised(logprobs: list[float]) -> np.ndarray:
    """log softmax: the options' log-probabilities renormalised to sum to one."""
    a = np.asarray(logprobs, dtype=float)
    m = a.max()
    return a - (m + math.log(np.exp(a - m).sum()))


def answer_index(labels: list[str], answer, protocol: str = "", settings: str | None = None) -> int | None:
    """Which of the model's options the person's answer is (None: not among them).

    The options are named in `option_labels` (a label's value, an option's text, a scale point); a
    judgment's `direct` protocol scores the sentence (first label: accept) against its pair (second)."""
    if answer is None or (isinstance(answer, float) and math.isnan(answer)) or answer is pd.NA:
        return None
    a = str(answer).strip()
    if a in labels:
        return labels.index(a)
    try:  # a rating recorded as 3.0
        f = float(a)
        if f.is_integer() and str(int(f)) in labels:
            return labels.index(str(int(f)))
    except ValueError:
        pass
    if settings and protocol in value_option_protocols():  # (sentence, pair) read as (accepting, rejecting) values
        values = [str(lab.get("value")) for lab in (json.loads(settings).get("labels") or [])]
        if a in values[:2]:
            return values.index(a)
    return None


def person_answer(row: pd.Series):
    """The person's answer as the table records it (`response`; a rating's point where response is empty)."""
    r = row.get("response")
    if (r is None or r is pd.NA or (isinstance(r, float) and math.isnan(r)) or str(r) == "") \
            and pd.notna(row.get("rating", np.nan)):
        return row.get("rating")
    return r


def context_of(group_rows: pd.DataFrame) -> str:
    """The group's context_mode (a replay whose weights learn keeps its own label: `replay+weights:...`)."""
    return str(group_rows["context_mode"].dropna().iloc[0]) if group_rows["context_mode"].notna().any() else "none"


def is_replay_context(context: str) -> bool:
    """A replay's context_mode: `replay`, or with weights that learn (model_subjects/weights.py
    `replay_label`) `replay+weights:<update-on>` and `replay:none+weights:<update-on>`."""
    c = str(context)
    return c == REPLAY or c.startswith(REPLAY + "+weights:") or c.startswith(REPLAY + ":none+weights:")


def _model_table(m: pd.DataFrame) -> dict[str, tuple[list[str], np.ndarray, int, str, str | None]]:
    """item_id -> (labels, mean renormalised probabilities over the group's subjects, subjects, protocol, settings)."""
    out: dict = {}
    for item_id, x in m.groupby("item_id", sort=False):
        labs, probs, proto, sett = None, [], "", None
        for lab_cell, lp_cell, p, s in zip(x["option_labels"], x["option_logprobs"], x["protocol"],
                                           x.get("task_settings", pd.Series([None] * len(x))), strict=False):
            lab, lp = _labels(lab_cell), _floats(lp_cell)
            if lab is None or lp is None or len(lab) != len(lp) or len(lp) < 2:
                continue
            if labs is None:
                labs, proto, sett = lab, str(p), (None if pd.isna(s) else str(s))
            if lab != labs:
                continue
            probs.append(np.exp(renormalised(lp)))
        if labs is not None and probs:
            out[str(item_id)] = (labs, np.mean(probs, axis=0), len(probs), proto, sett)
    return out


def _trial_row(p: pd.Series, group: str, context: str, labels, probs, proto, sett, missing: list) -> dict | None:
    ans = person_answer(p)
    k = answer_index(labels, ans, proto, sett)
    if k is None:
        missing.append({"group": group, "person": p["subject_key"], "item_id": p["item_id"], "answer": str(ans),
                        "why": f"not among the model's options ({', '.join(labels)})"})
        return None
    n = len(labels)
    return {"group": group, "context": context, "person": p["subject_key"], "item": p.get("item"),
            "item_id": p["item_id"], "condition": p.get("condition"), "training": bool(p.get("training", False)),
            "answer": str(ans), "n_options": n, "p_answer": float(probs[k]),
            "loglik": float(math.log(probs[k])) if probs[k] > 0 else -math.inf, "loglik_chance": -math.log(n)}


def _static_trials(people: pd.DataFrame, group: str, context: str, m: pd.DataFrame, missing: list) -> list[dict]:
    table = _model_table(m)
    rows = []
    for _, p in people.iterrows():
        hit = table.get(str(p["item_id"]))
        if hit is None:
            missing.append({"group": group, "person": p["subject_key"], "item_id": p["item_id"],
                            "answer": str(person_answer(p)), "why": "the model group never ran this item in this "
                                                                    "condition"})
            continue
        labels, probs, _, proto, sett = hit
        r = _trial_row(p, group, context, labels, probs, proto, sett, missing)
        if r:
            rows.append(r)
    return rows


def replay_person(row: pd.Series) -> tuple[str | None, object]:
    """(the person's subject id, the person's answer) of a replay row (extra.replay_of / person_response)."""
    try:
        extra = json.loads(row.get("extra") or "{}")
    except (TypeError, ValueError):
        return None, None
    return extra.get("replay_of"), extra.get("person_response")


def _replay_trials(m: pd.DataFrame, group: str, missing: list, context: str = REPLAY) -> list[dict]:
    rows = []
    for _, r in m.iterrows():
        pid, ans = replay_person(r)
        labels, lp = _labels(r.get("option_labels")), _floats(r.get("option_logprobs"))
        if pid is None or labels is None or lp is None or len(labels) != len(lp) or len(lp) < 2:
            missing.append({"group": group, "person": str(pid), "item_id": r["item_id"], "answer": str(ans),
                            "why": "the replay row has no option scores (unscorable or one option)"})
            continue
        p = pd.Series({"subject_key": f"human:human:{pid}", "item_id": r["item_id"], "item": r.get("item"),
                       "condition": r.get("condition"), "training": r.get("training", False), "response": ans})
        out = _trial_row(p, group, context, labels, np.exp(renormalised(lp)), str(r.get("protocol") or ""),
                         None if pd.isna(r.get("task_settings", np.nan)) else str(r.get("task_settings")), missing)
        if out:
            rows.append(out)
    return rows


def _typed_trials(people: pd.DataFrame, group: str, context: str, m: pd.DataFrame, missing: list) -> list[dict]:
    """Typed answers (completion): log P(the person's word) itself, not renormalised (no option set, so no
    chance and no pseudo-R²). Replay: the word as the person typed it, scored in the person's history
    (`extra.person_word_logprob`); none / few-shot: the sessions hold log P(target) only, so a person's word
    is scored when it is the target (by the task's normaliser) and counted as not scored otherwise."""
    rows = []
    if is_replay_context(context):
        for _, r in m.iterrows():
            extra = json.loads(r.get("extra") or "{}")
            pid, lp = extra.get("replay_of"), extra.get("person_word_logprob")
            if lp is None:
                missing.append({"group": group, "person": str(pid), "item_id": r["item_id"],
                                "answer": str(extra.get("person_response")), "why": "no typed word to score (empty)"})
                continue
            rows.append(_typed_row(group, context, f"human:human:{pid}", r, extra.get("person_word"), float(lp)))
        return rows
    target = {}
    for iid, x in m.groupby("item_id", sort=False):
        lp = [v for v in (_floats(c) for c in x["option_logprobs"]) if v]
        labs = _labels(x["option_labels"].iloc[0])
        if lp and labs:
            target[str(iid)] = (normalize_answer(labs[0]), float(np.mean([v[0] for v in lp])))
    for _, p in people.iterrows():
        hit = target.get(str(p["item_id"]))
        ans = person_answer(p)
        if hit is None or normalize_answer(ans) != hit[0]:
            missing.append({"group": group, "person": p["subject_key"], "item_id": p["item_id"], "answer": str(ans),
                            "why": "the model's sessions scored only the target (replay the people to score every "
                                   "typed word)" if hit else "the model group never ran this item in this condition"})
            continue
        rows.append(_typed_row(group, context, p["subject_key"], p, str(ans), hit[1]))
    return rows


def _typed_row(group: str, context: str, person: str, r, answer, lp: float) -> dict:
    return {"group": group, "context": context, "person": person, "item": r.get("item"), "item_id": r["item_id"],
            "condition": r.get("condition"), "training": bool(r.get("training", False)), "answer": str(answer),
            "n_options": 0, "p_answer": math.exp(lp), "loglik": lp, "loglik_chance": math.nan}


def is_replay(d: pd.DataFrame) -> pd.Series:
    """Rows of replay sessions (model_subjects/replay.py): `context_mode` replay (`is_replay_context`)."""
    if "context_mode" not in d.columns or "subject_kind" not in d.columns:
        return pd.Series(False, index=d.index)
    return (d["subject_kind"] == "model") & d["context_mode"].astype("string").map(
        lambda c: c is not pd.NA and is_replay_context(c)).astype(bool)


def _group_trials(g: str, m: pd.DataFrame, people: pd.DataFrame, missing: list, notes: list) -> list[dict]:
    """One model group's per-trial rows (or a note saying why it gives none)."""
    ctx = context_of(m)
    if ctx.startswith("running"):
        notes.append(f"{g}: a running model's scores follow its own answers and feedback, not the person's; "
                     "use `twinlab run-model --replay PEOPLE_DIR` to score the people's answers in their own "
                     "histories.")
        return []
    if "task" in m.columns and m["task"].astype("string").isin(kinds_where("typed")).fillna(False).any():
        return _typed_trials(people, g, ctx, m, missing)
    if not m["option_logprobs"].map(_floats).map(lambda x: x is not None and len(x) >= 2).any():
        notes.append(f"{g}: its protocol records no scores of two or more options (e.g. a sentence's "
                     "log-probability, a production, surprisal), so it gives no probability of a person's "
                     "answer; nothing computed.")
        return []
    if is_replay_context(ctx):
        return _replay_trials(m, g, missing, ctx)
    return _static_trials(people, g, ctx, m, missing) if not people.empty else []


def trial_likelihoods(d: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """(per-trial table, missing answers, notes) over every model group, people = the human rows."""
    notes: list[str] = []
    people = d[d["group"].astype(str).map(is_human_group) & ~is_replay(d)]
    if "role" in people.columns:
        people = people[people["role"].astype("string").fillna("") != "filler"]
    models = d[d["subject_kind"] == "model"]
    rows: list[dict] = []
    missing: list[dict] = []
    if people.empty:
        notes.append("No people in the data: nothing to predict (load the people's sessions with the models').")
    for g, m in models.groupby("group", sort=True):
        rows += _group_trials(str(g), m, people, missing, notes)
    cols = ["group", "context", "person", "item", "item_id", "condition", "training", "answer", "n_options",
            "p_answer", "loglik", "loglik_chance"]
    return (pd.DataFrame(rows, columns=cols),
            pd.DataFrame(missing, columns=["group", "person", "item_id", "answer", "why"]), notes)


def _sum_or_nan(x: pd.Series) -> float:
    """A sum that stays NaN when any term is (a typed answer has no chance level)."""
    return float(x.sum(min_count=len(x))) if len(x) else math.nan


def _boot_people(x: pd.DataFrame, rng: np.random.Generator, n_boot: int) -> tuple[float, float, float, float]:
    """CIs over people (resampling people with all their trials): mean LL per trial and pseudo-R²."""
    per = x.groupby("person").agg(ll=("loglik", "sum"), lc=("loglik_chance", _sum_or_nan), n=("loglik", "size"))
    ll, lc, n = per["ll"].to_numpy(), per["lc"].to_numpy(), per["n"].to_numpy()
    if len(per) < 2 or not np.isfinite(ll).all():
        return (math.nan,) * 4
    idx = rng.integers(0, len(per), size=(n_boot, len(per)))
    mean = ll[idx].sum(1) / n[idx].sum(1)
    if not (np.isfinite(lc).all() and (lc < 0).all()):  # typed answers: no chance, no pseudo-R²
        return (*np.percentile(mean, [2.5, 97.5]), math.nan, math.nan)
    r2 = 1 - ll[idx].sum(1) / lc[idx].sum(1)
    return (*np.percentile(mean, [2.5, 97.5]), *np.percentile(r2, [2.5, 97.5]))


def summarise(trials: pd.DataFrame, seed: int = 1, n_boot: int = 2000) -> pd.DataFrame:
    """Per group and split (all, training, test): people, trials, items, LL total and per trial, pseudo-R²."""
    rng = np.random.default_rng(seed)
    rows = []
    for (g, ctx), x in trials.groupby(["group", "context"], sort=True):
        for split in SPLITS:
            s = x if split == "all" else x[x["training"] == (split == "training")]
            if s.empty:
                continue
            ll, lc = float(s["loglik"].sum()), _sum_or_nan(s["loglik_chance"])
            lo, hi, r2lo, r2hi = _boot_people(s, rng, n_boot)
            rows.append({"group": g, "context": ctx, "trials_used": split, "people": s["person"].nunique(),
                         "trials": len(s), "items": s["item"].nunique(), "loglik": ll,
                         "loglik_per_trial": ll / len(s), "ci_low": lo, "ci_high": hi, "loglik_chance": lc,
                         "pseudo_r2": 1 - ll / lc if lc < 0 else math.nan, "r2_ci_low": r2lo, "r2_ci_high": r2hi,
                         "mean_p_answer": float(s["p_answer"].mean())})
    return pd.DataFrame(rows)


def by_unit(trials: pd.DataFrame, unit: str) -> pd.DataFrame:
    """Per item (or condition): people, trials, mean LL per trial, chance, pseudo-R²."""
    if trials.empty or trials[unit].isna().all():
        return pd.DataFrame()
    t = (trials.groupby(["group", unit], sort=True, dropna=False)
         .agg(people=("person", "nunique"), trials=("loglik", "size"), loglik=("loglik", "sum"),
              loglik_chance=("loglik_chance", _sum_or_nan), mean_p_answer=("p_answer", "mean")).reset_index())
    t["loglik_per_trial"] = t["loglik"] / t["trials"]
    t["pseudo_r2"] = 1 - t["loglik"] / t["loglik_chance"]
    return t


def likelihood(d: pd.DataFrame, seed: int = 1, n_boot: int = 2000) -> TwinLikelihood:
    """Everything of the likelihood part, from a design frame (analysis.load.frames.design_frame)."""
    trials, missing, notes = trial_likelihoods(d)
    if not missing.empty:
        for (g, why), x in missing.groupby(["group", "why"]):
            shown = ", ".join(sorted(set(x["answer"].astype(str)))[:8])
            notes.append(f"{g}: {len(x)} person trial(s) not scored: {why} (answers: {shown}); see the table.")
    return TwinLikelihood(trials, summarise(trials, seed, n_boot), by_unit(trials, "item"),
                          by_unit(trials, "condition"), missing, notes)
