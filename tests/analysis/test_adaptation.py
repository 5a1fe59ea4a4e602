"""The adaptation effect in reading (analysis/adaptation.py): surprisal of a region by exposure, frozen
vs adapted, beside people's reading time.

Synthetic trials with hand-computed means (a frozen model group of 2 subjects, a weight learner of 2, 2 people,
4 items x 2 levels of `ambiguity`, regions `S | b | c d`); the refusals; then one real run of the bundled model
on self_paced_reading (frozen and `--learning weights --update-on read`, 4 trials each; model, slow)."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from analysis.adaptation import AdaptationError, adaptation, adaptation_figure

FROZEN, LEARNER = "M · none · surprisal", "M · none+weights:read · surprisal"
FACTORS = {"ambiguity": ["amb", "unamb"]}
ORDERS = {1: [(1, "amb"), (2, "unamb"), (3, "amb"), (4, "unamb")],
          2: [(2, "amb"), (1, "unamb"), (4, "amb"), (3, "unamb")]}


def _base(k: int, lv: str) -> float:
    """The frozen model's surprisal of word `c` (region 3 is `c d`, `d` 1 bit): region 3 = base + 1."""
    return (10 if lv == "amb" else 4) + k


def _row(kind: str, group: str, sid: str, t: int, k: int, lv: str, **cells) -> dict:
    sentence = f"S{k}{lv[0]} b c d"
    return {"subject_kind": kind, "group": group, "subject_key": f"{group}:{sid}", "subject_id": sid,
            "model": "M" if kind == "model" else pd.NA, "protocol": "surprisal" if kind == "model" else pd.NA,
            "context_mode": cells.pop("context", pd.NA), "task": cells.pop("task", "self_paced_reading"),
            "item": str(k), "item_id": f"{k}:{lv}", "words": sentence, "ambiguity": lv, "session": 1,
            "trial_index": t, "block": "test", "role": "test", "training": False,
            "materials": json.dumps({"sentence": sentence, "regions": f"S{k}{lv[0]} | b | c d"}),
            "word_surprisal_bits": cells.pop("sur", None), "word_rts_ms": cells.pop("rts", None), **cells}


def frame(learner_task: str = "self_paced_reading", learner_surprisal: bool = True) -> pd.DataFrame:
    rows = []
    for s in (1, 2):  # the frozen group: every sentence, scored the same by both subjects
        for t, (k, lv) in enumerate((k, lv) for k in range(1, 5) for lv in ("amb", "unamb")):
            rows.append(_row("model", FROZEN, f"F{s}", t, k, lv, context="none",
                             sur=json.dumps([1.0, 1.0, _base(k, lv), 1.0])))
    deltas = {1: [0, 0.5, 2, 1.5], 2: [0, 0.5, 3, 2.5]}  # adapted = frozen - delta, trial by trial
    rts = {1: [[200, 200], [150, 150], [100, 150], [120, 120]],
           2: [[300, 300], [200, 200], [50, 200], [100, 100]]}  # 50 ms: outside the rt_range rule
    for s, order in ORDERS.items():
        for t, (k, lv) in enumerate(order):
            sur = json.dumps([1.0, 1.0, _base(k, lv) - deltas[s][t], 1.0]) if learner_surprisal else None
            rows.append(_row("model", LEARNER, f"L{s}", t, k, lv, context="none+weights:read", sur=sur,
                             task=learner_task))
            rows.append(_row("human", "human", f"H{s}", t, k, lv, rts=json.dumps([300, 300, *rts[s][t]])))
    return pd.DataFrame(rows)


def test_the_table_is_the_hand_computed_means(tmp_path):
    a = adaptation(frame(), FACTORS, region="3")
    assert a.frozen_of == {LEARNER: FROZEN} and a.regions == ["R3 (c d)"]
    t = a.table.set_index(["ambiguity", "exposures"])
    want = {  # (frozen, adapted, adapted - frozen, people's region time, people's trials)
        ("amb", 0): (12.5, 12.5, 0.0, 500.0, 2), ("unamb", 0): (6.5, 6.0, -0.5, 350.0, 2),
        ("amb", 1): (14.5, 12.0, -2.5, 250.0, 1), ("unamb", 1): (8.5, 6.5, -2.0, 220.0, 2)}
    assert len(t) == 4
    for key, (fz, ad, diff, rt, n) in want.items():
        r = t.loc[key]
        assert (r["frozen_bits"], r["adapted_bits"], r["adaptation_bits"]) == pytest.approx((fz, ad, diff))
        assert r["trials"] == 2 and r["subjects"] == 2
        assert r["people_rt_ms"] == pytest.approx(rt) and r["people_trials"] == n
    every = adaptation(frame(), FACTORS).table  # no region named: every region (the first two never adapted)
    assert set(every["region"]) == {1, 2, 3} and every[every["region"] < 3]["adaptation_bits"].abs().max() == 0
    from analysis.adaptation import critical_region

    # the figure's region without --region: the frozen means differ by 13.5 - 7.5 = 6 bits in region 3, 0 elsewhere
    assert critical_region(every, ["ambiguity"]) == "R3 (c d)"
    path = adaptation_figure(a.table, a.factors, a.regions[0], tmp_path / "adaptation.png")
    assert path is not None and path.stat().st_size > 10_000


@pytest.mark.parametrize("change, why", [
    (lambda d: d[d["group"] != LEARNER], "no model group learns in its weights"),
    (lambda d: frame(learner_task="judgment"), "no reading task"),
    (lambda d: frame(learner_surprisal=False), "no per-word surprisal"),
    (lambda d: d[d["group"] != FROZEN], "no frozen group of the same model and protocol"),
])
def test_refused_saying_why(change, why):
    with pytest.raises(AdaptationError, match=why):
        adaptation(change(frame()), FACTORS, region="3")


@pytest.mark.model
@pytest.mark.slow
def test_a_real_learner_adapts_and_the_report_shows_it(bundled_backend, tmp_path):
    """Each region value against the protocol's own record of the row (`extra.region_surprisal_bits`): the frozen
    value is the frozen run's for the same sentence, the adapted one the learner's; a subject's first trial is read
    with the frozen weights, every later one after steps on the sentences read."""
    from analysis import api
    from analysis.load.frames import design_frame
    from experiments.session import read_rows
    from model_subjects.runner import RunConfig, run_models

    factors = {"ambiguity": ["ambiguous", "unambiguous"]}
    base = {"spec": "self_paced_reading", "protocol": "surprisal", "trials": 4, "subjects": 2}
    run_models(RunConfig(out=tmp_path / "frozen", **base), backend=bundled_backend)
    run_models(RunConfig(out=tmp_path / "adapted", learning="weights", update_on="read", lr=1e-3, **base),
               backend=bundled_backend)
    own = {}  # (run, item_id) -> region 4's surprisal as the protocol recorded it
    for run in ("frozen", "adapted"):
        for f in (tmp_path / run / "data").glob("*_data.csv"):
            for r in read_rows(f):
                own[(run, r["subject_id"], r["item_id"])] = json.loads(r["extra"])["region_surprisal_bits"][3]
    df = api.load_sessions([tmp_path / "frozen", tmp_path / "adapted"])
    a = adaptation(design_frame(df, factors)[0], factors, region="4")
    x = a.trials
    assert len(a.frozen_of) == 1 and len(x) == 8 and a.table["trials"].sum() == 8  # 2 subjects x 4 trials
    frozen = {iid: v for (run, _, iid), v in own.items() if run == "frozen"}
    for _, r in x.iterrows():
        assert r["frozen_bits"] == pytest.approx(frozen[r["item_id"]], abs=1e-4)
        assert r["adapted_bits"] == pytest.approx(own[("adapted", r["subject_id"].split(":")[-1], r["item_id"])],
                                                  abs=1e-4)
        moved = abs(r["adapted_bits"] - r["frozen_bits"])
        assert (moved < 1e-3) if r["trials_before"] == 0 else (moved > 1e-3), (r["subject_key"], r["trials_before"])
    res = api.report(df, tmp_path / "report", n_boot=50, mixed=False)
    html = (tmp_path / "report" / "report.html").read_text()
    assert "Adaptation in reading" in html and res is not None
    from analysis.adaptation import critical_region

    every = adaptation(design_frame(df, factors)[0], factors).table
    assert f"Region {critical_region(every, ['ambiguity'])} (the region whose frozen surprisal" in html
    assert (tmp_path / "report" / "tables" / "adaptation_by_exposure.csv").exists()
    assert (tmp_path / "report" / "figures" / "adaptation.png").exists()
