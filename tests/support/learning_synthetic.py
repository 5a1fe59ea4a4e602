"""Invented sessions of a learning design: a 2 x 2 (attractor x agreement) judgment study with a
16-trial training block with feedback, then 24 test trials (Latin square). People learn: the log odds of an
error fall by `slope` per earlier trial of the same cell. Model groups: one with a running context (it
learns more slowly) and one with context `none` (it cannot learn: its answers ignore the order).

Written in the trial-table format of docs/general_model.md (tests/support/design_synthetic.py), so the
tests can count by hand from the CSVs and refit with lme4 directly."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.support.design_synthetic import base_row, conditions, write_session

FACTORS = {"attractor": ["match", "mismatch"], "agreement": ["intact", "broken"]}
N_TRAIN, N_TEST = 16, 24


def _eta(lv: dict, exposures: int, u: float, slope: float, base: float) -> float:
    hard = lv["attractor"] == "mismatch" and lv["agreement"] == "broken"
    return base + 0.8 * hard - slope * exposures + u


def subject_rows(subject: str, kind: str, s: int, rng: np.random.Generator, slope: float, base: float,
                 protocol: str = "", context: str = "", unanswered_first: bool = False) -> list[dict]:
    conds = conditions(FACTORS)
    train = [(100 + k, conds[k % 4]) for k in rng.permutation(N_TRAIN)]
    test = [(i, conds[(i + s) % 4]) for i in rng.permutation(N_TEST)]
    u = rng.normal(0, 0.5)
    seen: dict[str, int] = {}
    rows = []
    for t, (block, (item, lv)) in enumerate([("training", x) for x in train] + [("test", x) for x in test]):
        key = "-".join(lv.values())
        exp = seen.get(key, 0)
        seen[key] = exp + 1
        p_err = 1 / (1 + np.exp(-_eta(lv, exp, u, slope, base)))
        answer = "no" if lv["agreement"] == "broken" else "yes"
        response = answer if rng.random() >= p_err else ("yes" if answer == "no" else "no")
        btrial = t if block == "training" else t - N_TRAIN
        r = base_row("mini_grammar", subject, kind, t, item, lv, "judgment",
                     {"sentence": f"The kisa {item} {key} tesipu.", "answer": answer})
        r |= {"block": block, "block_trial_index": btrial, "role": "practice" if block == "training" else "test",
              "feedback": str(block == "training"), "correct_response": answer, "response": response,
              "correct": str(response == answer), "response_mode": "key", "protocol": protocol,
              "context_mode": context,
              "rt_ms": float(np.exp(6.6 - 0.02 * t + rng.normal(0, 0.2))) if kind == "human" else ""}
        if unanswered_first and block == "test" and exp == N_TRAIN // 4 and key == "mismatch-broken":
            r |= {"response": "", "correct": "", "rt_ms": ""}  # a timeout on the first test trial of a cell
        rows.append(r)
    return rows


def learning_study(root: Path, n_people: int = 6, n_running: int = 4, n_static: int = 2, seed: int = 3,
                   slope: float = 0.35, model_slope: float = 0.15) -> Path:
    """Write the sessions under root/data; returns root."""
    rng = np.random.default_rng(seed)
    for s in range(n_people):
        write_session(root, "mini_grammar", f"P{s}", subject_rows(f"P{s}", "human", s, rng, slope, 0.9,
                                                                unanswered_first=(s == 0)), FACTORS)
    for kind, n, context, sl in (("running", n_running, "running", model_slope), ("static", n_static, "none", 0.0)):
        for s in range(n):
            sid = f"m{s:02d}-{kind}"
            meta = {"model": "tiny", "context_mode": context,  # sampled: the static group is no copy of one subject
                    **({"sampling": {"temperature": 0.7}} if context == "none" else {})}
            write_session(root, "mini_grammar", sid, subject_rows(sid, "model", s, rng, sl, 0.4,
                                                                  protocol="judgment:meta", context=context),
                          FACTORS, meta)
    return root


def first_encounters_by_hand(root: Path) -> dict[tuple[str, str, str], tuple[int, int]]:
    """(group kind, attractor, agreement) -> (errors, subjects) on each subject's first test trial of the
    cell, answered trials only, read with the csv module (an independent count)."""
    import csv

    out: dict[tuple[str, str, str], list[int]] = {}
    for f in sorted((root / "data").glob("*_data.csv")):
        with open(f, newline="", encoding="utf-8") as fh:
            rows = sorted(csv.DictReader(fh), key=lambda r: int(r["trial_index"]))
        seen = set()
        for r in rows:
            if r["block"] != "test":
                continue
            cell = (r["attractor"], r["agreement"])
            if cell in seen:
                continue
            seen.add(cell)
            if r["correct"] == "":
                continue
            who = "human" if r["subject_kind"] == "human" else r["context_mode"]
            acc = out.setdefault((who,) + cell, [0, 0])
            acc[0] += r["correct"] != "True"
            acc[1] += 1
    return {k: (v[0], v[1]) for k, v in out.items()}


__all__ = ["FACTORS", "learning_study", "first_encounters_by_hand"]
