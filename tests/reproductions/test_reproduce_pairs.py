"""Minimal pairs (BLiMP JSONL, agreement) put through the Hu & Levy protocols; Hu & Frank's tables.

(The Hu & Levy measures are tested in tests/reproductions/test_hu_levy_measures.py.)
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from experiments.cli import app
from model_subjects import get_protocol
from reproductions.common import ReproError
from reproductions.hu_frank2024 import accuracies, demand_gaps, mixed_models
from reproductions.pairs import load_blimp_jsonl, pair_trials, pairs_from_items
from studies.lakretz2021.stimuli.generate import generate_items

BLIMP = Path(__file__).parent.parent / "data" / "blimp" / "anaphor_gender_agreement.jsonl"


def test_blimp_jsonl_pairs_and_their_prompts():
    pairs = load_blimp_jsonl(BLIMP)
    assert len(pairs) == 8 and pairs[0].category == "anaphor_gender_agreement"
    first = json.loads(BLIMP.read_text().splitlines()[0])
    g, b = pair_trials(pairs[0])
    # the protocols see the whole sentences: judgment prompts each sentence, comparison both in both orders
    assert first["sentence_good"] in get_protocol("sentence_judgment:MetaInstruct").queries(g)[0].prompt
    assert first["sentence_bad"] in get_protocol("sentence_judgment:MetaInstruct").queries(b)[0].prompt
    q1, q2 = get_protocol("sentence_comparison:MetaQuestionComplex").queries(g)
    assert f"1) {first['sentence_good']} 2) {first['sentence_bad']}" in q1.prompt
    assert f"1) {first['sentence_bad']} 2) {first['sentence_good']}" in q2.prompt
    direct = get_protocol("sentence_comparison:Direct").queries(g)[0]
    assert [o.continuation for o in direct.options] == [first["sentence_good"], first["sentence_bad"]]
    agr = pairs_from_items(generate_items("long_nested", "test", 1), "inner")
    assert len(agr) == 8 and all(p.good.split()[8] != p.bad.split()[8] for p in agr)


def test_bad_blimp_lines_are_named(tmp_path):
    f = tmp_path / "bad.jsonl"
    f.write_text('{"sentence_good": "A cat runs.", "sentence_bad": "A cat run."}\nnot json\n'
                 '{"sentence_good": "A cat runs."}\n{"sentence_good": "X.", "sentence_bad": "X."}\n')
    with pytest.raises(ReproError) as err:
        load_blimp_jsonl(f)
    msg = str(err.value)
    assert "3 bad line(s)" in msg and "line 2: not JSON" in msg and "line 3: missing or empty sentence_bad" in msg
    assert "line 4: sentence_good and sentence_bad are the same" in msg
    res = CliRunner().invoke(app, ["reproduce", "hu-levy2023", "--out", str(tmp_path / "o"), "--pairs", str(f)])
    assert res.exit_code == 2 and "3 bad line(s)" in " ".join(res.output.split()) and "Traceback" not in res.output
    res = CliRunner().invoke(app, ["reproduce", "hu-frank2024", "--out", str(tmp_path / "o"), "--dependency", "x"])
    assert res.exit_code == 2 and "--dependency must be inner or outer" in " ".join(res.output.split())


def test_demand_gap_and_mixed_model_need_two_sizes():
    rng = np.random.default_rng(0)
    rows = pd.DataFrame([{"model": "m", "protocol": p, "correct": bool(rng.random() < acc), "item": f"i{k}",
                          "dataset": "agreement", "subtask": "s", "n_parameters": 135_000_000}
                         for p, acc in (("forced_choice", 0.8), ("production:completion", 0.4)) for k in range(200)])
    gaps = demand_gaps(rows, 200, 0)
    a = rows[rows.protocol == "forced_choice"].correct.mean()
    b = rows[rows.protocol == "production:completion"].correct.mean()
    expected = np.log(a / (1 - a)) - np.log(b / (1 - b))
    assert list(gaps["contrast"]) == ["production vs forced choice"]
    assert gaps["demand_gap_unsmoothed"].iloc[0] == pytest.approx(expected)
    ka, kb = a * 200, b * 200  # smoothed: log odds of (k + 0.5) / (n + 1)
    assert gaps["demand_gap"].iloc[0] == pytest.approx(
        np.log((ka + .5) / (200 - ka + .5)) - np.log((kb + .5) / (200 - kb + .5)))
    assert set(accuracies(rows, 200, 0)["method"]) == {"low demand", "high demand"}
    coefs, notes = mixed_models(rows)
    assert coefs.empty and "at least two sizes" in notes[0]


def test_the_same_model_given_twice_is_run_once_with_a_note(tmp_path):
    from reproductions.hu_frank2024 import unique_models

    (tmp_path / "m").mkdir()
    models, notes = unique_models([None, str(tmp_path / "m"), None, str(tmp_path / "m" / "..") + "/m", "org/name",
                                   "org/name"])
    assert models == [None, str(tmp_path / "m"), "org/name"]
    assert len(notes) == 3 and "given more than once" in notes[0]


def test_score_cache_has_one_writer_and_mends_a_torn_line(tmp_path):
    import os

    from reproductions.common import ReproError
    from reproductions.pairs import ScoreCache

    path = tmp_path / "cache" / "m.jsonl"
    c = ScoreCache(path)
    c.add("a", -1.5)
    c.flush()
    with pytest.raises(ReproError, match=f"pid {os.getpid()}"):
        ScoreCache(path)
    c.close()
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('["b", -2.')  # a kill in the middle of an entry
    c = ScoreCache(path)
    assert c.scores == {"a": -1.5}
    c.add("c", -3.0)
    c.close()
    again = ScoreCache(path)
    assert again.scores == {"a": -1.5, "c": -3.0}  # the next entry was not glued to the torn one
    again.close()
