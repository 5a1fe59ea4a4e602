"""`run-model --learn-blocks`: only the named blocks' trials change the weights (an adaptation block, then a test
block read with the adapted weights, unchanged); refused naming the spec's blocks, or without weight learning.
And what a run records and says of BOS: the surprisal protocol prepends it whatever --add-bos says."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def twinlab(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "experiments.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env=env)


def datives(tmp_path: Path, n_adapt: int = 3, n_test: int = 2) -> Path:
    """List 1 adapts on DO sentences, list 2 on PO ones; both read the same DO and PO test sentences."""
    rows = ["item,structure,role,list,sentence,regions"]
    for ln, s in ((1, "DO"), (2, "PO")):
        for i in range(1, n_adapt + 1):
            text = (f"The coach gave | the player {i} | a ball." if s == "DO" else
                    f"The coach gave | a ball | to the player {i}.")
            rows.append(f"a{ln}_{i},{s},practice,{ln},{text.replace('| ', '')},{text}")
    for ln in (1, 2):
        for i in range(1, n_test + 1):
            s = "DO" if i % 2 else "PO"
            text = (f"The nurse sent | the doctor {i} | a note." if s == "DO" else
                    f"The nurse sent | a note | to the doctor {i}.")
            rows.append(f"t{i},{s},test,{ln},{text.replace('| ', '')},{text}")
    (tmp_path / "items.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    spec = {"name": "datives", "seed": 1,
            "design": {"file": "items.csv", "factors": {"structure": ["DO", "PO"]}, "lists": "given"},
            "blocks": [{"name": "adaptation", "role": "practice", "feedback": False, "shuffle": False},
                       {"name": "test", "role": "test", "feedback": False, "shuffle": False}],
            "task": {"kind": "self_paced_reading"}, "texts": {"instructions": ["Read each sentence."]}}
    p = tmp_path / "datives.yaml"
    p.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return p


@pytest.mark.parametrize("args,named", [
    (["--learning", "weights", "--update-on", "read", "--learn-blocks", "adaptaton"], "adaptation, test"),
    (["--learn-blocks", "adaptation"], "--learning weights or both"),
])
def test_learn_blocks_refused_before_the_model_loads(tmp_path, args, named):
    r = twinlab("run-model", str(datives(tmp_path)), "--protocol", "surprisal", "-o", str(tmp_path / "s"), *args)
    assert r.returncode == 2 and "--learn-blocks" in r.stderr and named in r.stderr, r.stderr
    assert "loading model" not in r.stderr and not (tmp_path / "s").exists()


@pytest.mark.model
@pytest.mark.slow
def test_only_the_adaptation_block_teaches_and_bos_is_recorded_as_prepended(tmp_path):
    out = tmp_path / "s"
    r = twinlab("run-model", str(datives(tmp_path)), "--protocol", "surprisal", "--learning", "weights",
                "--update-on", "read", "--lr", "1e-3", "--learn-blocks", "adaptation", "--list", "1", "-o", str(out))
    assert r.returncode == 0, r.stderr[-2000:]
    assert "BOS prepended" in r.stdout, r.stdout
    csv_path = next((out / "data").glob("*_data.csv"))
    from experiments.session import read_rows

    rows = read_rows(csv_path)
    assert [x["block"] for x in rows] == ["adaptation"] * 3 + ["test"] * 2
    assert {x["context_mode"] for x in rows} == {"none+weights:read@adaptation"}
    extra = [json.loads(x["extra"]) for x in rows]
    updates = [e["weights_update"] for e in extra]
    assert [u["on"] for u in updates] == ["read"] * 3 + [None] * 2
    assert "does not teach" in updates[3]["why"]
    hashes = [e["weights_sha256"] for e in extra]
    assert len(set(hashes[:3])) == 3  # each adaptation sentence moved the weights
    assert hashes[2] == hashes[3] == hashes[4]  # the test block is read with the adapted weights, unchanged
    side = json.loads(csv_path.with_name(csv_path.name.replace("_data.csv", "_data.json")).read_text())
    assert side["bos_prepended"] is True and side["add_bos"] is False
    assert side["learning"]["blocks"] == ["adaptation"]


@pytest.mark.model
@pytest.mark.slow
def test_an_adaptation_study_end_to_end_keeps_lists_and_blocks_apart(tmp_path):
    """Both lists, frozen and adapting on the adaptation block only, analysed: each table value is the mean of
    the protocol's own records (`extra.region_surprisal_bits`) over the trials of its list, block, cell and
    exposure count, and the test block's exposures start at 0 with the adaptation block's beside them."""
    import pandas as pd

    from analysis import api
    from analysis.adaptation import adaptation
    from analysis.load.frames import design_frame
    from experiments.session import read_rows

    spec = str(datives(tmp_path, n_adapt=2, n_test=2))
    for n in (1, 2):
        for run, more in (("frozen", []), ("adapted", ["--learning", "weights", "--update-on", "read", "--lr", "1e-3",
                                                       "--learn-blocks", "adaptation"])):
            r = twinlab("run-model", spec, "--protocol", "surprisal", "--list", str(n), "--first-subject", str(n),
                        "-o", str(tmp_path / run), *more)
            assert r.returncode == 0, r.stderr[-2000:]
    own = []  # the protocol's own region-2 values, row by row
    for run in ("frozen", "adapted"):
        for f in (tmp_path / run / "data").glob("*_data.csv"):
            for x in read_rows(f):
                own.append({"run": run, "subject": x["subject_id"], "list": int(x["list"]), "block": x["block"],
                            "item_id": x["item_id"], "structure": x["structure"], "index": int(x["trial_index"]),
                            "bits": json.loads(x["extra"])["region_surprisal_bits"][1]})
    own = pd.DataFrame(own)
    factors = {"structure": ["DO", "PO"]}
    df = api.load_sessions([tmp_path / "frozen", tmp_path / "adapted"])
    a = adaptation(design_frame(df, factors)[0], factors, region="2")
    t = a.table
    assert a.split == ["list", "block"] and set(t["list"]) == {1, 2} and t["subjects"].max() == 1
    frozen = own[own["run"] == "frozen"].groupby("item_id")["bits"].mean()
    learner = own[own["run"] == "adapted"].sort_values(["subject", "index"])
    # exposures by hand: within the block, and the same structure's trials in earlier blocks
    learner["exposures"] = learner.groupby(["subject", "block", "structure"]).cumcount()
    learner["earlier"] = [int(((learner["subject"] == r.subject) & (learner["structure"] == r.structure)
                               & (learner["index"] < r.index) & (learner["block"] != r.block)).sum())
                          for r in learner.itertuples()]
    learner["frozen"] = learner["item_id"].map(frozen)
    want = learner.groupby(["list", "block", "structure", "earlier", "exposures"]).agg(
        adapted=("bits", "mean"), frozen=("frozen", "mean"), n=("bits", "size"))
    got = t.set_index(["list", "block", "structure", "earlier_blocks_exposures", "exposures"])
    assert len(got) == len(want)
    for key, w in want.iterrows():
        g = got.loc[key]
        assert g["trials"] == w["n"]
        assert g["adapted_bits"] == pytest.approx(w["adapted"], abs=1e-4)
        assert g["frozen_bits"] == pytest.approx(w["frozen"], abs=1e-4)
    test_rows = t[t["block"] == "test"]
    assert test_rows["exposures"].min() == 0
    one = test_rows[test_rows["list"] == 1]
    assert set(one[one["structure"] == "DO"]["earlier_blocks_exposures"]) == {2}
    assert set(one[one["structure"] == "PO"]["earlier_blocks_exposures"]) == {0}


def test_a_sweep_takes_learn_blocks_checked_by_the_same_rule(tmp_path):
    spec = datives(tmp_path)
    sweep = {"spec": str(spec), "out": str(tmp_path / "out"), "models": ["bundled"], "protocols": ["surprisal"],
             "learning": {"mode": "weights", "update_on": "read", "learn_blocks": ["adaptaton"]}}
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(sweep), encoding="utf-8")
    r = twinlab("sweep", str(path), "--dry-run")
    assert r.returncode == 2 and "learning.learn_blocks" in r.stderr and "adaptation, test" in r.stderr, r.stderr
    sweep["learning"]["learn_blocks"] = ["adaptation"]
    path.write_text(yaml.safe_dump(sweep), encoding="utf-8")
    r = twinlab("sweep", str(path), "--dry-run")
    assert r.returncode == 0, r.stderr
    assert "none_weights_read_adaptation" in r.stdout.replace("@", "_").replace("+", "_").replace(":", "_"), r.stdout
