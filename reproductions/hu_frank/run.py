"""The four domains of seeds/002 run on a user's models through the model_subjects backend contract
(`loglikelihood` for forced choice and direct measurement, `generate_until` for production), each item scored
as the authors score it (scoring.py), written per model and domain as a per-item table (OUT/items/...) and as
long rows in released.py's columns (source "twinlab") that the authors' analysis reads beside their models.

Generation is greedy. Production lengths are the authors' (digit matrices 10 new tokens, CRT 100); the
generation stops at what the authors' parser would cut at anyway ("]" for the digit matrices, the first
newline for the CRT), which leaves every parsed answer unchanged and saves most of the tokens.
"""
from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from experiments.atomic import atomic_write_text
from model_subjects.requests import GenerationRequest, LoglikelihoodRequest
from reproductions.common import ReproError, slug
from reproductions.hu_frank import scoring as S
from reproductions.hu_frank.released import COLUMNS
from reproductions.hu_frank.stimuli import Item

DIGIT_TOKENS, CRT_TOKENS = 10, 100


def _ll(backend, pairs: list[tuple[str, str]]):
    return backend.loglikelihood([LoglikelihoodRequest(c, x) for c, x in pairs])


def _gen(backend, contexts: list[str], until: tuple[str, ...], n: int) -> list[str]:
    return backend.generate_until([GenerationRequest(c, until, n) for c in contexts])


def _merges(backend, context: str, continuation: str) -> bool:
    """Whether the continuation's first token would merge with the context's last one (e.g. the empty set's
    "]" after "[" is the single token "[]"), so it has no tokens of its own after the context."""
    enc = getattr(backend, "encode_pair", None)
    if enc is None:
        return False
    try:
        enc(context, continuation)
    except ValueError:
        return True
    return False


def _choice_requests(backend, it: Item) -> tuple[list[tuple[str, str]], list[bool]]:
    """Per choice one request, or for a choice that merges with the final "[" two: log P("[" + choice) and
    log P("[") from the context before the bracket (their difference is the choice's score)."""
    reqs, merged = [], []
    for a in range(len(it.options)):
        text = it.options[str(a)]
        if _merges(backend, it.prompt, text):
            reqs += [(it.prompt[:-1], "[" + text), (it.prompt[:-1], "[")]
            merged.append(True)
        else:
            reqs.append((it.prompt, text))
            merged.append(False)
    return reqs, merged


def run_digit(backend, items: list[Item]) -> pd.DataFrame:
    gens = _gen(backend, [it.prompt for it in items], ("]",), DIGIT_TOKENS)
    plans = [_choice_requests(backend, it) for it in items]
    res = _ll(backend, [r for reqs, _ in plans for r in reqs])
    rows, k = [], 0
    for it, g, (_, merged) in zip(items, gens, plans, strict=False):
        lps = []
        for m in merged:
            if m:
                lps.append(res[k].logprob - res[k + 1].logprob)
                k += 2
            else:
                lps.append(res[k].logprob)
                k += 1
        pred, valid = S.digit_answer_set(g)
        choice = S.argmax_choice(lps)
        rows.append({"item": it.item, "problem_type": it.extra["problem_type"],
                     "correct_answer": it.extra["correct_answer"],
                     "generated_response": g, "generated_response_pred_set": pred, "generated_response_valid": valid,
                     "generated_response_correct": S.digit_correct(g, it.extra["correct_answer"],
                                                                   it.extra["perm_invariant"]),
                     "mc_answer_logprobs": lps, "mc_response_index": choice, "mc_response": it.options[str(choice)],
                     "mc_response_correct": choice == int(it.correct),
                     "mc_choices_merging_with_bracket": sum(merged)})
    return pd.DataFrame(rows)


def run_crt(backend, items: list[Item]) -> pd.DataFrame:
    gens = _gen(backend, [it.prompt for it in items], ("\n",), CRT_TOKENS)
    res = _ll(backend, [(it.prompt + " ", it.options[lab]) for it in items for lab in ("correct", "intuitive")])
    rows = []
    for i, (it, g) in enumerate(zip(items, gens, strict=False)):
        c, n = res[2 * i], res[2 * i + 1]
        label, cleaned = S.crt_label(g, it.options, it.condition)
        code = S.crt_code(label)
        rows.append({"item": it.item, "condition": it.condition, "generated_response_raw": g,
                     "generated_response": cleaned, "generated_response_naive_label": label,
                     "generated_response_code": code, "generated_correct_strict": code == "correct",
                     "generated_correct_lenient": S.crt_lenient(g, it.options, it.condition),
                     "mc_correct_logprob": c.logprob / c.n_tokens, "mc_intuitive_logprob": n.logprob / n.n_tokens,
                     "mc_correct_gt_intuitive": c.logprob / c.n_tokens > n.logprob / n.n_tokens})
    return pd.DataFrame(rows)


def run_lambada(backend, items: list[Item]) -> pd.DataFrame:
    res = _ll(backend, [p for it in items
                        for p in ((it.prompt + " ", it.correct), (it.extra["meta_prompt"] + " ", it.correct))])
    return pd.DataFrame([{"item": it.item, "final_word": it.correct, "direct_logprob": res[2 * i].logprob,
                          "meta_logprob": res[2 * i + 1].logprob} for i, it in enumerate(items)])


def run_syntax(backend, items: list[Item]) -> pd.DataFrame:
    pairs = []
    for it in items:
        pairs += [("", it.options["good"]), ("", it.options["bad"])]
        pairs += [(it.extra["good_first"] + " ", "1"), (it.extra["good_first"] + " ", "2"),
                  (it.extra["bad_first"] + " ", "1"), (it.extra["bad_first"] + " ", "2")]
    res = _ll(backend, pairs)
    rows = []
    for i, it in enumerate(items):
        good, bad, g1, g2, b1, b2 = (r.logprob for r in res[6 * i:6 * i + 6])
        rows.append({"item": it.item, "task": it.task, "good_sentence": it.options["good"],
                     "bad_sentence": it.options["bad"],
                     "direct_sum_logprob_good_sentence": good, "direct_sum_logprob_bad_sentence": bad,
                     "direct_correct": good > bad, "meta_sum_logprob_good_first_1": g1,
                     "meta_sum_logprob_good_first_2": g2,
                     "meta_sum_logprob_bad_first_1": b1, "meta_sum_logprob_bad_first_2": b2,
                     "meta_good_correct": g1 > g2, "meta_bad_correct": b2 > b1})
    return pd.DataFrame(rows)


RUNNERS = {"digit_mat": run_digit, "crt": run_crt, "lambada": run_lambada, "syntax": run_syntax}


def long_rows(domain: str, wide: pd.DataFrame, model: dict) -> pd.DataFrame:
    """released.py's long rows (the authors' coding) from a per-item table of twinlab's run."""
    parts = []

    def part(method, correct=None, logprob=None, order="", task=None):
        n = len(wide)
        parts.append(pd.DataFrame({"_row": np.arange(n), "_part": len(parts), "item": wide["item"].to_numpy(),
                                   "task": wide["task"].to_numpy() if "task" in wide else np.full(n, task or domain),
                                   "condition": wide["condition"].to_numpy() if "condition" in wide else "",
                                   "method": method, "order": order,
                                   "correct": np.full(n, np.nan) if correct is None else np.asarray(correct, float),
                                   "logprob": np.full(n, np.nan) if logprob is None else np.asarray(logprob, float)}))

    if domain == "digit_mat":
        part("generated", wide["generated_response_correct"])
        part("mc", wide["mc_response_correct"])
    elif domain == "crt":
        part("generated", wide["generated_correct_strict"])
        part("mc", wide["mc_correct_gt_intuitive"])
    elif domain == "lambada":
        part("direct", logprob=wide["direct_logprob"])
        part("meta", logprob=wide["meta_logprob"])
    else:
        for order in ("good", "bad"):
            part("direct", wide["direct_correct"], order=order)
        for order in ("good", "bad"):
            part("meta", wide[f"meta_{order}_correct"], order=order)
    out = (pd.concat(parts, ignore_index=True).sort_values(["_row", "_part"], kind="stable")
           .drop(columns=["_row", "_part"]))
    name = f"{model.get('label') or model['name']} (twinlab)"
    step = model.get("training_step")
    out = out.assign(domain=domain, model=name, model_id=model["name"], family=model.get("family") or "twinlab",
                     n_params_b=float(model.get("size") or model["n_parameters"]) / 1e9, training_tokens_b=np.nan,
                     revision=model.get("revision") or "", training_step=np.nan if step is None else float(step),
                     source="twinlab")
    return out[COLUMNS].reset_index(drop=True)


def items_hash(items: list[Item]) -> str:
    return hashlib.sha256(json.dumps([[i.item, i.prompt, i.options, i.correct] for i in items]).encode()).hexdigest()


def model_key(desc: dict) -> str:
    """What makes a finished domain reusable: the same backend, model, revision, dtype and BOS choice (a run
    with another backend or checkpoint under the same label is run again, never reused)."""
    keys = ("backend", "name", "path", "revision", "dtype", "add_bos", "path_given", "training_step")
    return hashlib.sha256(json.dumps([str(desc.get(k)) for k in keys]).encode()).hexdigest()


def run_model(backend, items: dict[str, list[Item]], out: Path, say=print,
              entry=None) -> tuple[pd.DataFrame, dict, list[dict]]:
    """All domains on one loaded backend; a domain finished earlier with the same items is reused.

    `entry` (models_file.ModelEntry): the family, size, training step and label the user gave the model."""

    desc = dict(backend.describe())
    desc.setdefault("backend", getattr(backend, "backend_name", ""))
    if entry is not None:
        desc.update({"label": entry.label, "family": entry.family, "size": entry.size, "training_step": entry.step,
                     "path_given": entry.path})
    if not (desc.get("n_parameters") or desc.get("size")):
        raise ReproError(f"model {desc.get('name')}: its parameter count is unknown (needed for the size axis; give "
                         "its size in a --models file)")
    folder = out / "items" / slug(desc.get("label") or desc.get("name") or "model")
    folder.mkdir(parents=True, exist_ok=True)
    longs, timings = [], []
    for domain, its in items.items():
        path, meta = folder / f"{domain}.csv", folder / f"{domain}.json"
        h = items_hash(its)
        stored = json.loads(meta.read_text()) if path.exists() and meta.exists() else {}
        if stored.get("items_sha256") == h and stored.get("model_key") == model_key(desc):
            wide = pd.read_csv(path)
            timings.append({"model": desc.get("name"), "domain": domain, "items": len(its), "seconds": 0.0,
                            "reused": True})
            say(f"{desc.get('name')}: {domain}: reused {path}")
        else:
            say(f"{desc.get('name')}: {domain}: {len(its)} items")
            t0 = time.perf_counter()
            wide = RUNNERS[domain](backend, its)
            atomic_write_text(path, wide.to_csv(index=False))
            atomic_write_text(meta, json.dumps({"items_sha256": h, "model_key": model_key(desc), "model": desc,
                                                 "n_items": len(its)}, default=str))
            timings.append({"model": desc.get("name"), "domain": domain, "items": len(its),
                            "seconds": round(time.perf_counter() - t0, 1), "reused": False})
        longs.append(long_rows(domain, wide, desc))
    return pd.concat(longs, ignore_index=True), desc, timings
