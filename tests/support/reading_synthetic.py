"""Invented self-paced-reading sessions whose factor levels are declared in an order that is not alphabetical
(test support). People: RT (ms) of each word = 280 + 9 * length + subject + item + noise, and on the
critical region `effect_ms` more when `load` is `high` (declared first: [high, low]; alphabetically
`high` < `low` too, so a second factor `cue` is declared [weak, strong], the reverse of alphabetical,
with `cue_ms` more on the critical region for `weak`). Two copies of a deterministic model give surprisals
(each copy reads each item in another condition; `cue_bits` more on the critical region for `weak`).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tests.support.design_synthetic import base_row, write_session

FACTORS = {"cue": ["weak", "strong"], "load": ["high", "low"]}
SENTENCES = [("The {n} kept the old letters in a box .", "The {n} | kept | the old letters | in a box ."),
             ("The {n} found the small keys near the door .", "The {n} | found | the small keys | near the door .")]
NOUNS = ["clerk", "nurse", "pilot", "baker", "tailor", "farmer", "singer", "doctor", "lawyer", "driver", "miner",
         "sailor", "judge", "cook", "guard", "poet"]
CRITICAL = 3  # "the old letters": the region whose time the factors change


def conditions() -> list[dict[str, str]]:
    return [{"cue": c, "load": ld} for c in FACTORS["cue"] for ld in FACTORS["load"]]


def reading_design(root: Path, n_subjects: int = 12, n_items: int = 16, seed: int = 7, cue_ms: float = 60.0,
                   effect_ms: float = 0.0, region_names: list[str] | None = None, model: bool = True,
                   cue_bits: float = 0.0) -> dict:
    rng = np.random.default_rng(seed)
    conds = conditions()
    items = []
    for i in range(n_items):
        s, r = SENTENCES[i % 2]
        items.append((s.format(n=NOUNS[i % len(NOUNS)]), r.format(n=NOUNS[i % len(NOUNS)])))
    item_u = rng.normal(0, 20, n_items)
    sur = {i: rng.gamma(2.0, 2.0, len(s.split())).round(4) for i, (s, _) in enumerate(items)}
    meta = {"design": {"factors": FACTORS, "list": 1, "lists": 4, "mode": "latin_square",
                       **({"region_names": region_names} if region_names else {})}}
    for s in range(n_subjects):
        u = rng.normal(0, 30)
        rows = []
        for i, (sent, regions) in enumerate(items):
            lv = conds[(i + s) % len(conds)]
            words = sent.split()
            reg = [k + 1 for k, chunk in enumerate(regions.split("|")) for _ in chunk.split()]
            rts = []
            for w, rr in zip(words, reg, strict=False):
                extra = (cue_ms if lv["cue"] == "weak" else 0.0) + (effect_ms if lv["load"] == "high" else 0.0)
                rts.append(round(float(280 + 9 * len(w.strip(".")) + u + item_u[i] + (extra if rr == CRITICAL else 0)
                                       + rng.normal(0, 20)), 1))
            r = base_row("spr_order", f"P{s + 1:02d}", "human", i, i + 1, lv, "self_paced_reading",
                         {"sentence": sent, "regions": regions})
            r |= {"word_rts_ms": json.dumps(rts)}
            rows.append(r)
        write_session(root, "spr_order", f"P{s + 1:02d}", rows, FACTORS, meta)
    if model:
        for m in range(2):  # two deterministic copies of one model: the same surprisals
            rows = []
            for i, (sent, regions) in enumerate(items):
                lv = conds[(i + m) % len(conds)]
                r = base_row("spr_order", f"m{m + 1:02d}", "model", i, i + 1, lv, "self_paced_reading",
                             {"sentence": sent, "regions": regions})
                reg = [k + 1 for k, chunk in enumerate(regions.split("|")) for _ in chunk.split()]
                noise = np.random.default_rng([seed, i, conds.index(lv)]).normal(0, 0.5, len(reg))  # per item x cell
                bits = [round(float(x) + e + (cue_bits if lv["cue"] == "weak" and rr == CRITICAL else 0.0), 4)
                        for x, e, rr in zip(sur[i], noise, reg, strict=False)]
                r |= {"word_surprisal_bits": json.dumps(bits), "protocol": "surprisal",
                      "context_mode": "none"}
                rows.append(r)
            write_session(root, "spr_order", f"m{m + 1:02d}", rows, FACTORS, meta | {"model": "tiny-lm"})
    return {"items": items, "surprisal": sur}
