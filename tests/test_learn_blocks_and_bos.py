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

ROOT = Path(__file__).resolve().parents[1]


def twinlab(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "experiments.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env=env)


def datives(tmp_path: Path, n_adapt: int = 3, n_test: int = 2) -> Path:
    """List 1 adapts on DO sentences, list 2 on PO ones; both read the same DO and PO test sentences."""
    rows = ["item,structure,role,list,sentence"]
    for ln, s in ((1, "DO"), (2, "PO")):
        for i in range(1, n_adapt + 1):
            text = f"The coach gave the player {i} a ball." if s == "DO" else \
                f"The coach gave a ball to the player {i}."
            rows.append(f"a{ln}_{i},{s},practice,{ln},{text}")
    for ln in (1, 2):
        for i in range(1, n_test + 1):
            s = "DO" if i % 2 else "PO"
            text = f"The nurse sent the doctor {i} a note." if s == "DO" else \
                f"The nurse sent a note to the doctor {i}."
            rows.append(f"t{i},{s},test,{ln},{text}")
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
