"""`reproduce hu-levy2023 --backend openai` against a real llama-cpp-python server on 127.0.0.1 serving the
bundled GGUF: prompt log-probabilities are used only after the probe (llama.cpp's echo fails it, so every
option is read from next-token log-probabilities); a whole-sentence Direct score follows the authors'
rule by default (`--scoring authors`: the sentence split at its first token by the server's tokenizer,
every token after it scored) and is refused with the probe's reason under `--scoring exact` (left
unscored, never guessed); the scores agree with the same GGUF run in process."""
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

    def run(out, *extra):
        return CliRunner().invoke(app, ["reproduce", "hu-levy2023", "--data", str(FIX), "--items", "2", "--out",
                                        str(out), "--backend", "openai", "-B", f"url={srv.url}", "-B",
                                        f"cache_dir={tmp_path / 'served-cache'}", "--n-boot", "100", "-q", *extra])

    try:
        res = run(tmp_path / "hl")
        exact = run(tmp_path / "hl-exact", "--scoring", "exact")
    finally:
        srv.stop()
    assert res.exit_code == 0, res.output
    assert exact.exit_code == 0, exact.output
    out = tmp_path / "hl"
    prov = json.loads((out / "provenance.json").read_text())
    model = prov["models"][0]
    assert model["backend"] == "openai" and model["probe"] is not None
    assert model["whole_sentence"] == "after-first" and prov["conventions"]["scoring"] == "authors"
    scores = pd.read_csv(out / "tables" / "items_scores.csv", dtype={"experiment": str}, keep_default_na=False)
    scores["logprob"] = pd.to_numeric(scores["logprob"], errors="coerce")
    whole = (scores["context"] == "")
    meta = scores[~whole & scores["logprob"].notna()]
    assert set(meta["experiment"]) == {"1", "2", "3a", "3b"} and len(meta) > 0.8 * (~whole).sum()
    ref = llama_cpp.Llama(model_path=str(gguf), n_ctx=4096, logits_all=True, n_threads=1, n_threads_batch=1,
                          verbose=False)
    for r in meta.groupby(["experiment", "method", "option"]).head(1).itertuples():
        assert abs(r.logprob - ref_next(ref, r.context, r.continuation)) < TOL, r.prompt
    # whole sentences (Direct 3a/3b): every token after the first, as the authors' OpenAI code summed them
    sentences = scores[whole]
    assert len(sentences) and sentences["logprob"].notna().all()
    for r in sentences.drop_duplicates("continuation").head(4).itertuples():
        first = ref.detokenize(ref.tokenize(r.continuation.encode("utf-8"), add_bos=False)[:1]).decode("utf-8")
        assert r.continuation.startswith(first) and len(first) < len(r.continuation)
        assert abs(r.logprob - ref_next(ref, first, r.continuation[len(first):])) < TOL, r.continuation
    assert prov["timings"][0]["whole_sentences_scored_after_first_token_now"] == len(set(sentences["continuation"]))
    # --scoring exact: the probe failed, so a whole sentence has no score: refused with the reason, not guessed
    ex = pd.read_csv(tmp_path / "hl-exact" / "tables" / "items_scores.csv", dtype={"experiment": str},
                     keep_default_na=False)
    ex["logprob"] = pd.to_numeric(ex["logprob"], errors="coerce")
    if model["probe"]["passed"]:
        assert ex["logprob"].notna().all()
    else:
        w = ex["context"] == ""
        assert ex.loc[w, "logprob"].isna().all() and (ex.loc[w, "unscorable"] != "").all()
        assert (ex.loc[~w, "logprob"].fillna(0).to_numpy() == scores.loc[~whole, "logprob"].fillna(0).to_numpy()).all()
