"""`reproduce hu-levy2023 --backend openai` against a real llama-cpp-python server on 127.0.0.1 serving the
bundled GGUF: prompt log-probabilities are used only after the probe (llama.cpp's echo fails it, so every
option is read from next-token log-probabilities); a whole-sentence Direct score follows the authors'
rule by default (`--scoring authors`: the sentence split at its first token by the server's tokenizer,
every token after it read from next-token log-probabilities, so a token outside the top N leaves it
unscorable, saying so) and is refused with the probe's reason under `--scoring exact` (left unscored,
never guessed); the scores agree with the same GGUF run in process."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

pytestmark = [pytest.mark.server, pytest.mark.slow]

llama_cpp = pytest.importorskip("llama_cpp")
pytest.importorskip("llama_cpp.server.app")

from served_support import LlamaServer  # noqa: E402
from test_served_backend import TOL, ref_next  # noqa: E402

from experiments.cli import app  # noqa: E402
from model_subjects.backends.llamacpp import new_llama  # noqa: E402
from model_subjects.loading import bundled_gguf  # noqa: E402
from model_subjects.requests import LoglikelihoodRequest  # noqa: E402
from model_subjects.served import ServedBackend  # noqa: E402

FIX = Path(__file__).parent.parent / "data" / "hu_levy2023" / "datasets"


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
        # a sentence whose every token is likely enough to be read from the top log-probabilities
        b = ServedBackend(srv.url, cache_dir=tmp_path / "served-cache", whole_sentence="after-first",
                          top_logprobs=1000)
        easy = b.loglikelihood([LoglikelihoodRequest("", EASY)])[0]
        b.close()
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
    # every request without a score says why (an option outside the server's top 20, with the authors' text
    # "...answer.\n\nYes" more often than with the paper's " Yes"); never a silent NaN
    assert (scores.loc[scores["logprob"].isna(), "unscorable"] != "").all()
    meta = scores[~whole & scores["logprob"].notna()]
    assert set(meta["experiment"]) == {"1", "2", "3a", "3b"} and len(meta) > 0.5 * (~whole).sum()
    # loaded as twinlab loads it, without extra buffer types (AMX repacking of Q4 weights crashes on AMX CPUs)
    ref = new_llama(gguf, n_ctx=4096, logits_all=True, n_threads=1, n_threads_batch=1, verbose=False)
    for r in meta.groupby(["experiment", "method", "option"]).head(1).itertuples():
        assert abs(r.logprob - ref_next(ref, r.context, r.continuation)) < TOL, r.prompt
    # whole sentences (Direct 3a/3b) under --scoring authors: every token after the first, read token by token
    # (a 135M model's sentences have tokens outside the top 20: unscorable, saying so, not the probe's refusal)
    sentences = scores[whole]
    assert len(sentences) and not sentences["unscorable"].str.contains("prompt log-probabilities").any()
    for r in sentences[sentences["logprob"].notna()].itertuples():
        first = _first(ref, r.continuation)
        assert abs(r.logprob - ref_next(ref, first, r.continuation[len(first):])) < TOL, r.continuation
    first = _first(ref, EASY)
    assert first == "Once" and easy.n_tokens == len(ref.tokenize(EASY.encode(), add_bos=False)) - 1
    assert abs(easy.logprob - ref_next(ref, first, EASY[len(first):])) < TOL
    # --scoring exact: the probe failed, so a whole sentence has no score: refused with the reason, not guessed
    ex = pd.read_csv(tmp_path / "hl-exact" / "tables" / "items_scores.csv", dtype={"experiment": str},
                     keep_default_na=False)
    ex["logprob"] = pd.to_numeric(ex["logprob"], errors="coerce")
    if not model["probe"]["passed"]:
        w = ex["context"] == ""
        assert ex.loc[w, "logprob"].isna().all() and ex.loc[w, "unscorable"].str.contains("prompt log-prob").all()
        assert json.loads((tmp_path / "hl-exact" / "provenance.json").read_text())["models"][0]["whole_sentence"] \
            == "exact"


EASY = "Once upon a time, there was a little girl."


def _first(ref, sentence: str) -> str:
    """The text of the sentence's first token, by the in-process model's tokenizer."""
    return ref.detokenize(ref.tokenize(sentence.encode("utf-8"), add_bos=False)[:1]).decode("utf-8")
