"""`reproduce hu-levy2023` on the bundled model against plain transformers forward passes.

The reference scores every request on its own (its own tokenisation, no batching, cache, padding
or prefix sharing): Experiment 1 and 2 Direct log-probabilities must equal it within 1e-4, and so
must every other number the tables hold for the items checked here.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

pytestmark = [pytest.mark.model, pytest.mark.slow, pytest.mark.long]
torch = pytest.importorskip("torch")

from experiments.cli import app  # noqa: E402
from model_subjects.loading import resolve_model  # noqa: E402

FIX = Path(__file__).parent.parent / "data" / "hu_levy2023" / "datasets"


@pytest.fixture(scope="module")
def lm():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = resolve_model(None).path
    return AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval(), AutoTokenizer.from_pretrained(path)


def reference(lm, context: str, continuation: str) -> float:
    """log P(continuation | context): the trailing space joins the continuation, the whole string is
    encoded and split at the encoded context; an empty context is conditioned on the BOS token."""
    model, tok = lm
    n = len(context) - len(context.rstrip(" "))
    if n:
        context, continuation = context[:-n], context[-n:] + continuation
    # the whole text's tokens, split where the context's characters end (a trailing "\n\n" is one token at the
    # end of a text but "\n", "\n" before a word: the context's own encoding is not always a prefix)
    enc = tok(context + continuation, add_special_tokens=False, return_offsets_mapping=True)
    whole, offsets = enc["input_ids"], enc["offset_mapping"]
    assert not any(a < len(context) < b for a, b in offsets), "a token spans the context's end"
    ctx = [t for t, (a, _) in zip(whole, offsets, strict=False) if a < len(context)]
    if not ctx:
        ctx, whole = [tok.bos_token_id], [tok.bos_token_id] + whole
    with torch.no_grad():
        lp = torch.log_softmax(model(input_ids=torch.tensor([whole])).logits[0].double(), -1)
    return sum(lp[len(ctx) - 1 + j, t].item() for j, t in enumerate(whole[len(ctx):]))


def test_all_four_experiments_on_the_fixture_folder_match_plain_forward_passes(tmp_path, lm):
    out = tmp_path / "hl"
    args = ["reproduce", "hu-levy2023", "--data", str(FIX), "--out", str(out), "--items", "4", "--n-boot", "200",
            "-q", "--seed", "3"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "read DTFit: 6 items" in res.output and "running 4" in res.output
    scores = pd.read_csv(out / "tables" / "items_scores.csv", dtype={"item": str, "experiment": str},
                         keep_default_na=False)
    assert set(scores["experiment"]) == {"1", "2", "3a", "3b"}
    assert set(scores["method"]) == {"Direct", "MetaQuestionSimple", "MetaInstruct", "MetaQuestionComplex"}
    assert scores.groupby("dataset")["item"].nunique().to_dict() == {"p18": 4, "news": 4, "dtfit": 4,
                                                                   "syntaxgym": 4, "blimp": 4}
    assert "agreement" not in set(scores["dataset"])  # twinlab's own pairs only when asked
    direct12 = scores[scores["experiment"].isin(["1", "2"]) & (scores["method"] == "Direct")]
    assert len(direct12) == 4 + 4 + 4 * 2
    for r in direct12.itertuples():
        assert r.prompt == r.context + r.continuation
        assert abs(r.logprob - reference(lm, r.context, r.continuation)) < 1e-4, r.prompt
    # one of every other kind of request, too (3a/3b Direct from the start token, Meta Yes/No and 1/2)
    others = scores[~scores.index.isin(direct12.index)].groupby(["experiment", "method", "option"]).head(1)
    for r in others.itertuples():
        assert abs(r.logprob - reference(lm, r.context, r.continuation)) < 1e-4, r.prompt
    # the tables are the measures of those scores: Exp 2 Direct accuracy by hand from the scores
    d2 = direct12[direct12["experiment"] == "2"].pivot(index="item", columns="option", values="logprob")
    perf = pd.read_csv(out / "tables" / "performance.csv", dtype={"experiment": str})
    p = perf.set_index(["experiment", "dataset", "method"])
    assert p.loc[("2", "all", "Direct"), "estimate"] == pytest.approx((d2["good"] > d2["bad"]).mean())
    d1 = direct12[direct12["experiment"] == "1"]
    assert p.loc[("1", "all", "Direct"), "estimate"] == pytest.approx(d1["logprob"].mean())
    for f in ["figure2.png", "figure3.png", "figure6.png", "figure7.png", "figure8.png", "figure9.png",
              "figure10.png"]:
        assert (out / "figures" / f).stat().st_size > 10_000, f
    # provenance: data files with SHA-256, the sample, the prompts' hash; a re-run scores nothing and accumulates
    prov = json.loads((out / "provenance.json").read_text())
    corpus = FIX / "exp2" / "dtfit" / "corpus.csv"
    assert prov["files"]["data:exp2/dtfit/corpus.csv"]["sha256"] == hashlib.sha256(corpus.read_bytes()).hexdigest()
    assert prov["sample"] == {"items_per_dataset": 4, "seed": 3}
    assert len(prov["prompts_sha256"]) == 64 and prov["prompt_text"] == "authors"  # the default
    assert prov["timings"][0]["requests_computed_now"] > 0 and prov["models"][0]["name"] == "SmolLM2-135M-Instruct"
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    prov = json.loads((out / "provenance.json").read_text())
    assert [r["timings"][0]["requests_computed_now"] == 0 for r in prov["runs"]] == [False, True]
    again = pd.read_csv(out / "tables" / "items_scores.csv", dtype={"item": str, "experiment": str},
                        keep_default_na=False)
    assert again["logprob"].tolist() == scores["logprob"].tolist()


def test_blimp_jsonl_pairs_and_agreement_pairs_only_when_asked(tmp_path):
    blimp = Path(__file__).parent.parent / "data" / "blimp" / "anaphor_gender_agreement.jsonl"
    out = tmp_path / "p"
    res = CliRunner().invoke(app, ["reproduce", "hu-levy2023", "--pairs", str(blimp), "--agreement", "-n", "1",
                                   "--dependency", "inner", "--out", str(out), "--n-boot", "100", "-q",
                                   "-e", "3a,3b", "--items", "3"])
    assert res.exit_code == 0, res.output
    items = pd.read_csv(out / "tables" / "items.csv", dtype={"item": str, "experiment": str})
    assert items.groupby("dataset")["item"].nunique().to_dict() == {"anaphor_gender_agreement": 3, "agreement": 3}
    assert set(items["experiment"]) == {"3a", "3b"}


def authors_openai_match(lm, prompt: str, continuation: str, task: str) -> float:
    """utils/models.py `OpenAI_LLM.get_logprob_of_continuation`, written out on the echoed prompt's tokens (the
    model's own token strings and log-probabilities, the first token without one, as the API gave them): walk
    back from the end, prepending each token's text, until that text is *in* " " + word (a substring test for
    a string; for 3b a list of " 1"/"1", so membership), and sum the tokens walked over."""
    model, tok = lm
    ids = tok(prompt, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        lp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].double(), -1)
    tokens = [tok.decode([i]) for i in ids]
    token_logprobs = [None] + [lp[k - 1, ids[k]].item() for k in range(1, len(ids))]
    end_strs = [" " + continuation, continuation] if task == "sentence_comparison" else " " + continuation
    inds, cur_word = [], ""
    for k in range(len(tokens) - 1, -1, -1):
        cur_word = tokens[k] + cur_word
        if token_logprobs[k] is None:
            break
        inds = [k] + inds
        if cur_word in end_strs:
            break
    return sum(token_logprobs[k] for k in inds)


def test_openai_last_token_mode_is_the_authors_word_match(tmp_path, lm):
    out = tmp_path / "last"
    res = CliRunner().invoke(app, ["reproduce", "hu-levy2023", "--data", str(FIX), "--out", str(out), "--items", "2",
                                   "--n-boot", "100", "-q", "--scoring", "openai-last-token"])
    assert res.exit_code == 0, res.output
    scores = pd.read_csv(out / "tables" / "items_scores.csv", dtype={"item": str, "experiment": str},
                         keep_default_na=False)
    tasks = {"1": "word_pred", "2": "word_comparison", "3a": "sentence_judge", "3b": "sentence_comparison"}
    answers = scores[scores["context"] != ""]
    direct = (answers["method"] == "Direct") & answers["experiment"].isin(["1", "2"])  # the words: several tokens
    answers = pd.concat([answers[direct], answers[~direct].groupby(["experiment", "method", "option"]).head(1)])
    differs = 0
    for r in answers.itertuples():
        want = authors_openai_match(lm, r.prompt, r.continuation.strip(), tasks[r.experiment])
        assert abs(r.logprob - want) < 1e-4, r.prompt
        differs += abs(r.logprob - reference(lm, r.context, r.continuation)) > 1e-3
    assert differs > 0  # words of several tokens: only the last counted, unlike --scoring authors
    whole = scores[scores["context"] == ""].head(2)  # whole sentences as under the default (start token given)
    for r in whole.itertuples():
        assert abs(r.logprob - reference(lm, r.context, r.continuation)) < 1e-4
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["conventions"]["scoring"] == "openai-last-token"
    assert "last sub-token" in (out / "report.html").read_text(encoding="utf-8")
