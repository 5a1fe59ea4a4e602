"""`reproduce hu-levy2023 --backend openai` against a real llama-cpp-python server on 127.0.0.1 serving the
bundled GGUF: prompt log-probabilities are used only after the probe (llama.cpp's echo fails it, so every
option is read from next-token log-probabilities, and a whole-sentence Direct score is refused with the
probe's reason and left unscored, never guessed); the scores agree with the same GGUF run in process."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

pytestmark = [pytest.mark.server, pytest.mark.slow]

llama_cpp = pytest.importorskip("llama_cpp")
pytest.importorskip("llama_cpp.server.app")

from experiments.cli import app  # noqa: E402
from model_subjects.loading import bundled_gguf  # noqa: E402
from served_support import LlamaServer  # noqa: E402
from test_served_backend import TOL, ref_next  # noqa: E402

FIX = Path(__file__).parent / "data" / "hu_levy2023" / "datasets"


def test_served_model_runs_every_experiment_after_the_probe(tmp_path):
    gguf = bundled_gguf()
    srv = LlamaServer(gguf, log=tmp_path / "server.log").start()
    try:
        out = tmp_path / "hl"
        res = CliRunner().invoke(app, ["reproduce", "hu-levy2023", "--data", str(FIX), "--items", "2", "--out",
                                       str(out), "--backend", "openai", "-B", f"url={srv.url}", "-B",
                                       f"cache_dir={tmp_path / 'served-cache'}", "--n-boot", "100", "-q"])
    finally:
        srv.stop()
    assert res.exit_code == 0, res.output
    prov = json.loads((out / "provenance.json").read_text())
    model = prov["models"][0]
    assert model["backend"] == "openai" and model["probe"] is not None
    scores = pd.read_csv(out / "tables" / "items_scores.csv", dtype={"experiment": str}, keep_default_na=False)
    scores["logprob"] = pd.to_numeric(scores["logprob"], errors="coerce")
    whole = (scores["context"] == "")
    if model["probe"]["passed"]:
        assert scores["logprob"].notna().all()
    else:  # whole sentences need prompt log-probabilities: refused with the probe's reason, not guessed
        assert scores.loc[whole, "logprob"].isna().all() and (scores.loc[whole, "unscorable"] != "").all()
        assert "report.html" in res.output or (out / "report.html").exists()
    meta = scores[~whole & scores["logprob"].notna()]
    assert set(meta["experiment"]) == {"1", "2", "3a", "3b"} and len(meta) > 0.8 * (~whole).sum()
    ref = llama_cpp.Llama(model_path=str(gguf), n_ctx=4096, logits_all=True, n_threads=1, n_threads_batch=1,
                          verbose=False)
    for r in meta.groupby(["experiment", "method", "option"]).head(1).itertuples():
        assert abs(r.logprob - ref_next(ref, r.context, r.continuation)) < TOL, r.prompt
