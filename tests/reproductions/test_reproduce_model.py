"""`reproduce lampinen2024` on the bundled model against a plain per-item transformers forward pass.

The stimuli are the published-format fixtures (tests/data/lakretz_text), imported as an analyst
would (`stimuli import lakretz-text`); the reference scores every item on its own, with its own
tokenisation and no batching, cache or padding.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytestmark = [pytest.mark.model, pytest.mark.slow]
torch = pytest.importorskip("torch")

from model_subjects.loading import resolve_model  # noqa: E402
from reproductions.lampinen2024 import Options, reproduce  # noqa: E402
from stimuli.files import save_items  # noqa: E402
from studies.lakretz2021.texts import import_lakretz_text  # noqa: E402

DATA = Path(__file__).parent.parent / "data" / "lakretz_text"


def reference_logprob(model, tok, context: str, continuation: str) -> float:
    """log P(continuation | context): encode the whole string, split at the encoded context's length."""
    ctx = tok(context, add_special_tokens=False)["input_ids"]
    whole = tok(context + continuation, add_special_tokens=False)["input_ids"]
    assert whole[: len(ctx)] == ctx
    ids = torch.tensor([whole])
    with torch.no_grad():
        lp = torch.log_softmax(model(input_ids=ids).logits[0].double(), -1)
    return sum(lp[len(ctx) - 1 + j, t].item() for j, t in enumerate(whole[len(ctx):]))


def test_zero_shot_forced_choice_on_imported_fixture_matches_plain_forward_pass(tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    files = []
    for dep in ("inner", "outer"):
        items = import_lakretz_text(DATA / f"long_nested_{dep}_english.text", DATA / f"long_nested_{dep}_english.gold")
        files.append(save_items(items, tmp_path / f"{dep}.csv"))
    out = tmp_path / "repro"
    opt = Options(models=[None], out=out, items=files, prompts=["none"], n_boot=200, quiet=True)
    reproduce(opt)
    got = pd.read_csv(out / "tables" / "table_b1_long.csv")

    path = resolve_model(None).path
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    rows = []
    for f, subtask in zip(files, ("long_nested_inner_english", "long_nested_outer_english"), strict=False):
        for it in pd.read_csv(f).itertuples():
            dep = "inner" if pd.notna(it.inner_index) else "outer"
            idx = int(getattr(it, f"{dep}_index"))
            words = it.sentence.split(" ")
            prefix = " ".join(words[:idx])
            lc = reference_logprob(model, tok, prefix, " " + words[idx])
            lo = reference_logprob(model, tok, prefix, " " + getattr(it, f"{dep}_alternative"))
            rows.append({"subtask": subtask, "condition": it.condition, "error": float(not lc > lo)})
    ref = pd.DataFrame(rows).groupby(["subtask", "condition"])["error"].mean()
    mine = got.set_index(["subtask", "condition"])["error_rate"]
    assert len(ref) == 16 and set(ref.index) == set(mine.index)
    for key, value in ref.items():
        assert abs(mine[key] - value) < 1e-3, (key, mine[key], value)
    assert 0 < ref.mean() < 1  # the fixture separates the conditions (not all right or all wrong)

    # the same command again reuses every finished session and computes nothing
    first = json.loads((out / "provenance.json").read_text())
    reproduce(opt)
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["arms"] and all(a["trials_run_now"] == 0 for a in prov["arms"])
    # provenance accumulates: the first run's arms and timings are kept beside the second's
    assert len(prov["runs"]) == 2 and prov["runs"][0] == first["runs"][0]
    assert sum(a["trials_run_now"] for a in prov["runs"][0]["arms"]) > 0
    assert [a["arm"] for a in prov["runs"][1]["arms"]] == [a["arm"] for a in prov["arms"]]
    for f in files:  # the input items, by content
        rec = prov["inputs"][f"items:{f}"]
        assert rec["sha256"] == hashlib.sha256(Path(f).read_bytes()).hexdigest()
        assert prov["runs"][0]["inputs"][f"items:{f}"] == rec
    assert prov["models"][0]["weights_sha256"] and prov["models"][0]["add_bos"] is False
    assert (out / "report.html").exists() and (out / "figures" / "figure2_long_nested.png").exists()


# reproduce hu-levy2023 against plain forward passes: tests/reproductions/test_hu_levy_model.py


def test_hu_frank_cli_end_to_end_tables_agree_with_sessions(tmp_path):
    """The command runs both contrasts as sessions; its demand gap is the logit difference of its accuracies."""
    from typer.testing import CliRunner

    from experiments.cli import app

    out = tmp_path / "hf"
    res = CliRunner().invoke(app, ["reproduce", "hu-frank2024", "--out", str(out), "-n", "1", "--dependency", "inner",
                                   "--no-mixed", "--n-boot", "200", "-q"])
    assert res.exit_code == 0, res.output
    acc = pd.read_csv(out / "tables" / "accuracy.csv").set_index("protocol")
    assert set(acc.index) == {"forced_choice", "production:completion", "sentence_comparison:Direct",
                              "sentence_comparison:MetaQuestionSimple"} and (acc["n_items"] == 8).all()
    # the accuracy is the share of correct rows in the sessions the command wrote
    from analysis.load import load

    df, _ = load([out / "sessions"])
    for proto, g in df.groupby("protocol"):
        assert abs(acc.loc[proto, "accuracy"] - g["correct"].astype(float).mean()) < 1e-9
    gap = pd.read_csv(out / "tables" / "demand_gap.csv").set_index("high_demand")
    lo, hi = (acc.loc["sentence_comparison:Direct", "accuracy"],
              acc.loc["sentence_comparison:MetaQuestionSimple", "accuracy"])
    if 0 < lo < 1 and 0 < hi < 1:
        expected = np.log(lo / (1 - lo)) - np.log(hi / (1 - hi))
        assert abs(gap.loc["sentence_comparison:MetaQuestionSimple", "demand_gap_unsmoothed"] - expected) < 1e-9
    assert np.isfinite(gap["demand_gap"]).all()  # smoothed: finite also when an accuracy is 0 or 1
    assert "mixed model not fitted" in (out / "report.html").read_text()
