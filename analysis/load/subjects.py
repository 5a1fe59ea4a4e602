"""Who is a subject: deterministic model copies are one subject, not many.

Why: a model run without sampling and without a running history answers an item the same way every
time it is asked. Eight such "subjects" given different lists of a Latin square are one model answering
each item x condition twice; CIs over them and subject random effects would treat copies as independent
participants. The rule (docs/analysis/general-designs.md, "Subjects"):

- a model session is a **deterministic copy** when its sidecar shows no sampling (no temperature > 0,
  no `do_sample`, greedy or no decoding) and a context that carries no history of the session (context
  kind `none` or a fixed few-shot prompt, not `running`);
- sessions of one group with the same **identity** (the sidecar's `identity`: model, weights, dtype,
  protocol and its settings, exact context label, BOS, chat; else those fields as recorded) that were
  given **the same trials** (the same list: the same presentations, in any order) are copies of each
  other, and are merged into one subject when their answers agree (a disagreement means they are not
  copies, and they stay subjects, said in the notes); sessions on different lists answered different
  trials, so they stay subjects, each with its own order columns;
- a merged subject's repeated trials are counted once (the count is in the subjects table); items are
  then its unit: rates resample items (analysis/measures/design_rates.py), d' resamples items, and a model fit
  has no subject random effect to give it;
- humans, sampled models and models with a running context stay one subject per session's subject id.
"""
from __future__ import annotations

import hashlib
import json

import pandas as pd

RULE = ("model sessions with no sampling and no running context, identical in model, protocol (with its "
        "settings) and context and given the same trials (one list), are deterministic copies: merged "
        "into one subject whose repeated trials count once, items the unit of its CIs; sessions on other lists, "
        "sampled or running-context subjects stay subjects")
PRESENTATION = ("item_id", "materials", "option_order", "words")


def _sampled(meta: dict) -> bool:
    """True when anything in the sidecar says answers were sampled."""
    def walk(x) -> bool:
        if isinstance(x, dict):
            for k, v in x.items():
                key = str(k).lower()
                if key in ("temperature",) and isinstance(v, (int, float)) and v > 0:
                    return True
                if key in ("do_sample", "sample", "sampling") and v not in (None, False, "greedy", "none", 0):
                    return True
                if key == "decoding" and isinstance(v, str) and v.lower() not in ("greedy", "none", ""):
                    return True
                if walk(v):
                    return True
        elif isinstance(x, list):
            return any(walk(v) for v in x)
        return False

    return walk({k: meta.get(k) for k in ("model", "protocol_settings", "sampling", "generation", "decoding")})


def _context_kind(meta: dict) -> str:
    ctx = meta.get("context")
    if isinstance(ctx, dict) and ctx.get("kind"):
        return str(ctx["kind"])
    label = str(meta.get("context_mode") or "")
    return "running" if label.startswith("running") else (label.split(":", 1)[0] or "none")


def session_identity(meta: dict) -> tuple[str | None, bool]:
    """(identity digest, deterministic) of a model session's sidecar; (None, False) for a person."""
    if meta.get("subject_kind") not in (None, "model") or not (meta.get("model") or meta.get("identity")):
        return None, False
    ident = meta.get("identity")
    if not isinstance(ident, dict):
        ident = {k: meta.get(k) for k in ("model", "protocol", "protocol_settings", "context_mode", "add_bos")}
    digest = hashlib.sha256(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[:12]
    # a replay reads a person's history: each is its own subject, never a copy of another; a subject
    # whose weights learn (sidecar `learning`) answers from its own updates: never a copy either
    learns = isinstance(meta.get("learning"), dict) and meta["learning"].get("mode") in ("weights", "both")
    deterministic = not _sampled(meta) and not learns and _context_kind(meta) not in ("running", "replay")
    return digest, deterministic


def _agree(rows: pd.DataFrame) -> bool:
    """Repeated presentations of the same trial got the same answer (what a deterministic copy gives)."""
    keys = [c for c in PRESENTATION if c in rows.columns]
    if not keys:
        return False
    answers = rows[keys + ["response"]].astype("string").fillna("")
    return bool((answers.groupby(keys, sort=False)["response"].nunique() <= 1).all())


def _same_trials(model: pd.DataFrame) -> pd.DataFrame:
    """`model` with `_trials`: a digest of the set of trials each session was given (its presentations, in any
    order: a deterministic model without a history answers a trial the same way wherever it comes), so that only
    sessions given the same trials (one list) are taken for copies of each other."""
    keys = [c for c in PRESENTATION if c in model.columns]
    digest: dict[object, str] = {}
    for key, x in model.groupby("subject_key", sort=False):
        shown = x[keys].astype("string").fillna("") if keys else x.iloc[0:0]
        rows = sorted(map(tuple, shown.itertuples(index=False, name=None)))
        digest[key] = hashlib.sha256(repr(rows).encode()).hexdigest()[:12]
    return model.assign(_trials=model["subject_key"].map(digest))


def merge_copies(d: pd.DataFrame, enabled: bool = True) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """Merge deterministic copies (see the module's rule): returns (rows, subjects table, notes).

    The subjects table has one row per merged set: group, sessions, trials before and after, duplicates
    counted once. With `enabled` False nothing changes and the table says the copies were kept apart."""
    cols = ["group", "identity", "sessions", "trials", "distinct_trials", "duplicates_dropped", "treated_as"]
    if "model_identity" not in d.columns or "deterministic" not in d.columns:
        return d, pd.DataFrame(columns=cols), []
    model = d[(d["subject_kind"] == "model") & d["deterministic"].fillna(False).astype(bool)
              & d["model_identity"].notna()]
    rows, notes, drop, rekey = [], [], [], {}
    apart: dict[tuple[str, str], int] = {}
    for (g, ident, trials), x in _same_trials(model).groupby(["group", "model_identity", "_trials"], sort=True):
        n = x["subject_key"].nunique()
        if n < 2:
            apart[(g, ident)] = apart.get((g, ident), 0) + 1
            continue
        x = x.drop(columns="_trials")
        if not _agree(x):
            notes.append(f"{g}: {n} sessions look like deterministic copies (same identity, no sampling, no running "
                         "context) but answer repeated trials differently; they are kept as separate subjects")
            continue
        keys = [c for c in PRESENTATION if c in x.columns]
        dup = x.astype({k: "string" for k in keys})[keys].fillna("").duplicated(keep="first")
        drop += list(dup[dup].index)
        new_key = f"model:{g}:copies:{ident}:{trials}"
        for k in set(x["subject_key"]):
            rekey[k] = (new_key, f"copies:{ident}:{trials}")
        rows.append({"group": g, "identity": ident, "sessions": n, "trials": len(x),
                     "distinct_trials": int((~dup).sum()), "duplicates_dropped": int(dup.sum()),
                     "treated_as": "one subject (items the "
                                   "unit)" if enabled else f"{n} subjects (--model-copies subjects)"})
    for (g, _ident), n in sorted(apart.items()):
        if n > 1:
            notes.append(f"{g}: {n} sessions of one deterministic model were given different trials (other lists); "
                         "each stays a subject (only sessions given the same trials are merged as copies)")
    table = pd.DataFrame(rows, columns=cols)
    if not enabled or not rows:
        return d, table, notes
    out = d.drop(index=drop).copy()
    sk = out["subject_key"].astype("string")
    hit = sk.isin(list(rekey))
    out["subject_key"] = sk.where(~hit, sk.map({k: v[0] for k, v in rekey.items()})).astype("string")
    out.loc[hit, "subject_id"] = sk[hit].map({k: v[1] for k, v in rekey.items()})
    for r in rows:
        notes.append(f"{r['group']}: {r['sessions']} sessions are deterministic copies of one model (same identity, "
                     "no sampling, no running context); analysed as one subject, items the unit, "
                     f"{r['duplicates_dropped']} "
                     "repeated trial(s) counted once")
    return out.reset_index(drop=True), table, notes
