"""Built trial tables for the measures of a 2 x 2 judgment design whose factors are not called
`grammatical` (agreement x distance; the answer is `yes` for agreement match, `no` for mismatch), run by
people and by model subjects whose sidecars say what they are (deterministic copies, running context,
sampled), plus rating and lexical-decision sessions. Every number the tests check is computable by hand
from what these functions write."""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from tests.support.design_synthetic import base_row, conditions, write_session

FACTORS = {"agreement": ["match", "mismatch"], "distance": ["near", "far"]}
CONDS = conditions(FACTORS)


def model_meta(context: str = "none", temperature: float | None = None, model: str = "smol-test",
               protocol: str = "meta") -> dict:
    """A model session's sidecar as the model runner writes it (the fields subject identity reads)."""
    kind = "running" if context.startswith("running") else context.split(":", 1)[0]
    settings = {"kind": "judgment", "task_settings": {"labels": [{"value": "yes", "text": "Yes"},
                                                                 {"value": "no", "text": "No"}]}}
    if temperature is not None:
        settings |= {"decoding": "sample", "temperature": temperature}
    return {"subject_kind": "model", "model": {"name": model, "revision": "r1", "dtype": "float32"},
            "protocol": protocol, "protocol_settings": settings, "context_mode": context,
            "context": {"given": context, "kind": kind},
            "identity": {"model": model, "weights": "r1", "dtype": "float32", "protocol": settings,
                         "context_mode": context, "add_bos": True, "chat": False}}


def det_answer(item: int, cond: dict, salt: str = "") -> str:
    """A deterministic model's answer: a fixed function of the trial (item x condition)."""
    h = int(hashlib.sha256(f"{salt}{item}:{cond['agreement']}:{cond['distance']}".encode()).hexdigest(), 16)
    p_yes = 0.8 if cond["agreement"] == "match" else (0.45 if cond["distance"] == "far" else 0.25)
    return "yes" if (h % 1000) / 1000 < p_yes else "no"


def judgment_row(experiment: str, subject: str, kind: str, t: int, item: int, cond: dict, response: str | None,
                 lst: int, protocol: str = "", context: str = "", rt: float | None = None) -> dict:
    answer = "yes" if cond["agreement"] == "match" else "no"
    sent = f"item {item} {cond['agreement']} {cond['distance']} ."
    r = base_row(experiment, subject, kind, t, item, cond, "judgment", {"sentence": sent, "answer": answer}, lst)
    # the runner's old default: `grammatical` True on every row of a design without that factor
    r |= {"grammatical": "True", "correct_response": answer, "response": response or "",
          "correct": "" if response is None else str(response == answer), "response_mode": "key",
          "protocol": protocol, "context_mode": context, "rt_ms": "" if rt is None else rt}
    return r


def judgment_sessions(root: Path, n_subjects: int = 8, n_items: int = 16, kind: str = "model",
                      answer=det_answer, meta: dict | None = None, prefix: str = "M",
                      experiment: str = "agree2x2", all_conditions: bool = False) -> list[Path]:
    """Latin square over 4 lists (subject s gets list s % 4 + 1), or every item in every condition."""
    out = []
    for s in range(n_subjects):
        lst = s % 4 + 1
        rows = []
        trials = ([(i, c) for i in range(n_items) for c in CONDS] if all_conditions
                  else [(i, CONDS[(i + lst - 1) % 4]) for i in range(n_items)])
        for t, (i, c) in enumerate(trials):
            rows.append(judgment_row(experiment, f"{prefix}{s:02d}", kind, t, i, c, answer(i, c) if kind == "model"
                                     else answer(s, i, c), lst,
                                     protocol=(meta or {}).get("protocol", "") if kind == "model" else "",
                                     context=(meta or {}).get("context_mode", "") if kind == "model" else ""))
        out.append(write_session(root, experiment, f"{prefix}{s:02d}", rows, FACTORS, meta, lst))
    return out


def sampled_answer(subject: int):
    rng = np.random.default_rng(subject)
    return lambda item, cond: "yes" if rng.random() < 0.6 else "no"


def rating_model_sessions(root: Path, n_subjects: int = 2, n_items: int = 8) -> tuple[list[Path], list[dict]]:
    """Model ratings with a distribution: argmax and expected value differ (bimodal on 1 and 7)."""
    f = {"island": ["short", "long"]}
    out, recs = [], []
    for s in range(n_subjects):
        rows = []
        for t in range(n_items):
            lv = {"island": "long" if (t + s) % 2 else "short"}
            p7 = 0.55 if lv["island"] == "long" else 0.8
            p = np.array([1 - p7, 0, 0, 0, 0, 0, p7])
            argmax, expected = float(np.argmax(p) + 1), float((np.arange(1, 8) * p).sum())
            r = base_row("rate2", f"R{s}", "model", t, t, lv, "rating", {"sentence": f"s{t} ."})
            r |= {"rating": argmax, "rating_expected": expected, "response": str(int(argmax)), "protocol": "meta",
                  "context_mode": "none"}
            rows.append(r)
            recs.append({"island": lv["island"], "argmax": argmax, "expected": expected})
        meta = model_meta() | {"protocol_settings": {"kind": "rating", "task_settings": {"scale": {"points": 7}}}}
        meta["identity"] = dict(meta["identity"], subject=s)  # not copies: each sees its own items
        out.append(write_session(root, "rate2", f"R{s}", rows, f, meta))
    return out, recs


LEX = {"lexicality": ["word", "nonword"]}


def lexical_sessions(root: Path, n_items: int = 12, people: int = 3) -> dict:
    """Lexical decision: a model `direct` group (log-probabilities, no response), a model `meta` group
    answering `nonword` always, and people with RTs. Returns what was written, for hand counts."""
    rng = np.random.default_rng(7)
    written = {"lp": [], "rt": []}
    # direct: log P per character, words higher on average, with overlap
    rows = []
    for t in range(n_items * 2):
        word = t % 2 == 0
        s = ("tablex"[: 4 + t % 3]) if word else ("tbxq"[: 3 + t % 2])
        lp = float(rng.normal(-2.0 if word else -3.0, 0.7)) * len(s)
        lv = {"lexicality": "word" if word else "nonword"}
        r = base_row("ld", "D0", "model", t, t // 2, lv, "lexical_decision",
                     {"sentence": s, "answer": lv["lexicality"]})
        r |= {"words": s, "correct_response": lv["lexicality"], "response": "", "correct": "",
              "sentence_logprob": lp, "protocol": "direct", "context_mode": "none",
              "extra": '{"logprob_per_char": %r}' % (lp / len(s))}
        rows.append(r)
        written["lp"].append({"word": word, "per_char": lp / len(s)})
    write_session(root, "ld", "D0", rows, LEX, model_meta(protocol="direct") | {"protocol": "direct"})
    rows = []
    for t in range(n_items * 2):
        lv = {"lexicality": "word" if t % 2 == 0 else "nonword"}
        r = base_row("ld", "Q0", "model", t, t // 2, lv, "lexical_decision",
                     {"sentence": f"s{t}", "answer": lv["lexicality"]})
        r |= {"correct_response": lv["lexicality"], "response": "nonword",
              "correct": str(lv["lexicality"] == "nonword"), "protocol": "meta", "context_mode": "none"}
        rows.append(r)
    write_session(root, "ld", "Q0", rows, LEX, model_meta())
    for s in range(people):
        rows = []
        for t in range(n_items * 2):
            lv = {"lexicality": "word" if t % 2 == 0 else "nonword"}
            rt = float(round(np.exp(rng.normal(6.4 if lv["lexicality"] == "word" else 6.6, 0.35)), 1))
            if t == 3:
                rt = 150.0  # a fast guess: outside the trim
            if t == 5:
                rt = 4200.0  # a long pause: outside the trim
            resp = lv["lexicality"] if rng.random() < 0.85 else ("nonword" if lv["lexicality"] == "word" else "word")
            r = base_row("ld", f"P{s}", "human", t, t // 2, lv, "lexical_decision",
                         {"sentence": f"s{t}", "answer": lv["lexicality"]})
            r |= {"correct_response": lv["lexicality"], "response": resp, "correct": str(resp == lv["lexicality"]),
                  "rt_ms": rt, "response_mode": "key"}
            rows.append(r)
            written["rt"].append({"subject": f"P{s}", "lexicality": lv["lexicality"], "rt": rt,
                                  "correct": resp == lv["lexicality"]})
        write_session(root, "ld", f"P{s}", rows, LEX)
    return written
