"""The adaptation table of a study of one's own (van Schijndel & Linzen's datives): two adaptation groups (list 1
reads DO sentences, list 2 PO ones, in an adaptation block, then both read the same DO and PO test sentences)
are never pooled, and exposures are counted within a block, with the earlier blocks' exposures beside them.

Synthetic trial rows with hand-computed values: a frozen model subject that read every sentence, two weight
learners (one per list), one person per list."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from analysis.adaptation import adaptation, adaptation_figure

FROZEN, LEARNER = "M · none · surprisal", "M · none+weights:read · surprisal"
FACTORS = {"structure": ["DO", "PO"]}
# (block, item, structure) in each list's order
ORDER = {1: [("adaptation", "a1", "DO"), ("adaptation", "a2", "DO"), ("test", "t1", "DO"), ("test", "t2", "PO"),
             ("test", "t3", "DO")],
         2: [("adaptation", "a3", "PO"), ("adaptation", "a4", "PO"), ("test", "t1", "DO"), ("test", "t2", "PO"),
             ("test", "t3", "DO")]}
FROZEN_BITS = {"a1": 8.0, "a2": 9.0, "a3": 7.0, "a4": 6.0, "t1": 10.0, "t2": 12.0, "t3": 11.0}  # region 3 (`c d`)
DROP = {1: [0.0, 1.0, 3.0, 0.5, 2.0], 2: [0.0, 1.0, 0.5, 4.0, 1.0]}  # frozen - adapted, trial by trial
RT = {1: [400, 380, 300, 500, 280], 2: [420, 390, 520, 310, 505]}  # people's time of region 3 (two words)


def _row(kind, group, sid, t, block, item, structure, lst, **more):
    sentence = f"S{item} b c d"
    return {"subject_kind": kind, "group": group, "subject_key": f"{group}:{sid}", "subject_id": sid,
            "model": "M" if kind == "model" else pd.NA, "protocol": "surprisal" if kind == "model" else pd.NA,
            "context_mode": more.pop("context", pd.NA), "task": "self_paced_reading", "item": item,
            "item_id": f"{item}:{structure}", "words": sentence, "structure": structure, "session": 1,
            "trial_index": t, "block": block, "role": "practice" if block == "adaptation" else "test",
            "training": block == "adaptation", "list": lst,
            "materials": json.dumps({"sentence": sentence, "regions": f"S{item} | b | c d"}),
            "word_surprisal_bits": more.pop("sur", None), "word_rts_ms": more.pop("rts", None)}


def frame() -> pd.DataFrame:
    rows = []
    every = sorted({(item, s) for o in ORDER.values() for _, item, s in o})
    for t, (item, s) in enumerate(every):
        rows.append(_row("model", FROZEN, "F1", t, "test", item, s, 1, context="none",
                         sur=json.dumps([1.0, 1.0, FROZEN_BITS[item] - 1.0, 1.0])))
    for lst, order in ORDER.items():
        for t, (block, item, s) in enumerate(order):
            adapted = FROZEN_BITS[item] - DROP[lst][t]
            rows.append(_row("model", LEARNER, f"L{lst}", t, block, item, s, lst, context="none+weights:read",
                             sur=json.dumps([1.0, 1.0, adapted - 1.0, 1.0])))
            half = RT[lst][t] / 2
            rows.append(_row("human", "human", f"H{lst}", t, block, item, s, lst,
                             rts=json.dumps([300, 300, half, half])))
    return pd.DataFrame(rows)


def test_lists_and_blocks_are_never_pooled_and_exposures_count_within_a_block(tmp_path):
    a = adaptation(frame(), FACTORS, region="3")
    t = a.table
    assert a.split == ["list", "block"]
    assert {"list", "block", "earlier_blocks_exposures"} <= set(t.columns)
    assert t["subjects"].max() == 1  # each row one learner: the two lists' learners never share a row
    key = ["list", "block", "structure", "exposures"]
    got = t.set_index(key)
    want = {  # (list, block, structure, exposures in block): (earlier blocks' exposures, frozen, adapted, people)
        (1, "adaptation", "DO", 0): (0, 8.0, 8.0, 400.0), (1, "adaptation", "DO", 1): (0, 9.0, 8.0, 380.0),
        (1, "test", "DO", 0): (2, 10.0, 7.0, 300.0), (1, "test", "PO", 0): (0, 12.0, 11.5, 500.0),
        (1, "test", "DO", 1): (2, 11.0, 9.0, 280.0),
        (2, "adaptation", "PO", 0): (0, 7.0, 7.0, 420.0), (2, "adaptation", "PO", 1): (0, 6.0, 5.0, 390.0),
        (2, "test", "DO", 0): (0, 10.0, 9.5, 520.0), (2, "test", "PO", 0): (2, 12.0, 8.0, 310.0),
        (2, "test", "DO", 1): (0, 11.0, 10.0, 505.0),
    }
    assert len(t) == len(want)
    for k, (before, fz, ad, rt) in want.items():
        r = got.loc[k]
        assert r["earlier_blocks_exposures"] == before, k
        assert (r["frozen_bits"], r["adapted_bits"], r["adaptation_bits"]) == pytest.approx((fz, ad, ad - fz)), k
        assert r["people_rt_ms"] == pytest.approx(rt) and r["people_trials"] == 1, k
    # the same-structure advantage at the first test trial of each structure, per adaptation group
    first = got.xs("test", level="block").xs(0, level="exposures")["adaptation_bits"]
    assert first[(1, "DO")] < first[(1, "PO")] and first[(2, "PO")] < first[(2, "DO")]
    path = adaptation_figure(t, a.factors, a.regions[0], tmp_path / "adaptation.png")
    assert path is not None and path.stat().st_size > 10_000


def test_without_list_and_block_columns_the_table_keeps_its_old_rows():
    d = frame().drop(columns=["list"])
    d["block"] = "test"
    t = adaptation(d, FACTORS, region="3").table
    assert "list" not in t.columns and set(t["block"]) == {"test"}
    assert t.groupby("structure")["exposures"].max().to_dict() == {"DO": 3, "PO": 2}
