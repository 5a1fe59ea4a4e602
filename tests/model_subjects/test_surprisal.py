"""Per-word surprisal (model_subjects/surprisal.py) against minicons' word_score_tokenized (with and
without its bow_correction) and a plain forward pass; and `run-model --protocol surprisal` end to end."""
from __future__ import annotations

import copy
import csv
import json
import math

import pytest

pytestmark = [pytest.mark.model, pytest.mark.slow]

torch = pytest.importorskip("torch")

from model_subjects.backends.registry import load_backend  # noqa: E402
from model_subjects.surprisal import SurprisalScorer, SurprisalSettings, align, region_surprisals  # noqa: E402

TOL_BITS = 1e-4
# held-in sentences: garden paths, agreement, punctuation, digits, a contraction, a long word
SENTENCES = [
    "The horse raced past the barn fell.",
    "While the man hunted the deer ran into the woods.",
    "The keys to the old cabinet are on the table.",
    "The old man the boat.",
    "The complex houses married and single soldiers and their families.",
    "In 1994, the committee didn't approve the extraordinarily bureaucratic proposal.",
    "The aunts that the guards hire calls the judge.",
]


@pytest.fixture(scope="module")
def backend():
    return load_backend(None, threads=1)


@pytest.mark.parametrize("bow", [False, True])
def test_equals_minicons_word_score_tokenized(backend, bow):
    scorer = pytest.importorskip("minicons.scorer")
    # minicons changes its tokenizer's padding side: give it its own copy
    mc = scorer.IncrementalLMScorer(backend.model, device="cpu", tokenizer=copy.deepcopy(backend.tokenizer))
    theirs = mc.word_score_tokenized(SENTENCES, tokenize_function=lambda s: s.split(), bow_correction=bow,
                                     bos_token=True, surprisal=True, base_two=True)
    ours = SurprisalScorer(backend.model, backend.tokenizer, SurprisalSettings(bow_correction=bow)).score(
        [s.split() for s in SENTENCES])
    for s, o, t in zip(SENTENCES, ours, theirs, strict=False):
        assert [w for w, _ in t] == s.split()
        assert o == pytest.approx([v for _, v in t], abs=TOL_BITS), s


def test_against_a_plain_forward_pass(backend):
    """Without the correction, a word's surprisal is -log2 of the product of its tokens' probabilities
    after BOS: tokens found by encoding the growing prefix, one unpadded pass per sentence."""
    tok = backend.tokenizer
    ours = SurprisalScorer(backend.model, tok).score([s.split() for s in SENTENCES])
    for s, got in zip(SENTENCES, ours, strict=False):
        words = s.split()
        ids = tok(s, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            lp = torch.log_softmax(
                backend.model(input_ids=torch.tensor([[tok.bos_token_id] + ids])).logits[0].double(), -1)
        bounds = [len(tok(" ".join(words[:k + 1]), add_special_tokens=False)["input_ids"]) for k in range(len(words))]
        start = 0
        for k, end in enumerate(bounds):
            ref = -sum(lp[j, ids[j]].item() for j in range(start, end)) / math.log(2)
            assert got[k] == pytest.approx(ref, abs=TOL_BITS), (s, words[k])
            start = end


def test_output_layer_on_real_positions_equals_the_full_forward_pass(backend, monkeypatch):
    import model_subjects.surprisal as mod

    fast = SurprisalScorer(backend.model, backend.tokenizer, SurprisalSettings(bow_correction=True)).score(
        [s.split() for s in SENTENCES])
    monkeypatch.setattr(mod, "PLAIN_HEAD_TYPES", set())
    full = SurprisalScorer(backend.model, backend.tokenizer, SurprisalSettings(bow_correction=True)).score(
        [s.split() for s in SENTENCES])
    for a, b in zip(fast, full, strict=False):
        assert a == pytest.approx(b, abs=1e-4)


def test_batching_does_not_change_scores(backend):
    one = [SurprisalScorer(backend.model, backend.tokenizer).score([s.split()])[0] for s in SENTENCES]
    small = SurprisalScorer(backend.model, backend.tokenizer, max_batch_tokens=40).score([s.split() for s in SENTENCES])
    for a, b in zip(one, small, strict=False):
        assert a == pytest.approx(b, abs=1e-4)


def test_bos_choice_and_context(backend):
    words = "The cat sleeps.".split()
    nobos = SurprisalScorer(backend.model, backend.tokenizer, SurprisalSettings(bos=False)).score([words])[0]
    assert nobos[0] is None and all(v is not None for v in nobos[1:])
    ctx = SurprisalScorer(backend.model, backend.tokenizer, SurprisalSettings(bos=False)).score(
        [words], ["Hello.\n"])[0]
    assert ctx[0] is not None
    ids, owner = align(backend.tokenizer, words, "Hello.\n")
    assert owner[0] == -1 and owner[-1] == 2 and len(ids) == len(owner)
    assert region_surprisals([1.0, 2.0, 3.0], [[0, 1], [2]]) == [3.0, 3.0]
    assert region_surprisals([None, 2.0], [[0, 1]]) == [None]


def test_run_model_surprisal_end_to_end(tmp_path, backend):
    from model_subjects.runner import RunConfig, Runner

    cfg = RunConfig(spec="lakretz2021_demo", protocol="surprisal:bow", trials=3, out=tmp_path)
    Runner(cfg, backend).run()
    path = next(tmp_path.rglob("*.csv"))
    rows = list(csv.DictReader(path.open()))
    side = json.loads(path.with_suffix(".json").read_text())
    assert side["protocol_settings"]["surprisal"]["bow_correction"] is True
    assert side["protocol_settings"]["surprisal"]["bos"] is True
    scorer = SurprisalScorer(backend.model, backend.tokenizer, SurprisalSettings(bow_correction=True))
    for row in rows:
        extra = json.loads(row["extra"])
        cells = extra.get("columns") or row
        bits = json.loads(cells["word_surprisal_bits"])
        words = row["words"].split(" ")
        assert len(bits) == len(words) and row["protocol"] == "surprisal:bow"
        assert bits == pytest.approx(scorer.score([words])[0], abs=1e-4)


def test_bundled_self_paced_reading_surprisal_equals_minicons(tmp_path, backend):
    """The issue's check: `run-model self_paced_reading --protocol surprisal` writes word_surprisal_bits
    equal to minicons' word_score_tokenized (bos_token=True) on the spec's sentences."""
    from experiments.spec import BUNDLED_SPECS
    from model_subjects.runner import RunConfig, Runner

    if not (BUNDLED_SPECS / "self_paced_reading.yaml").exists():
        pytest.skip("the bundled self_paced_reading spec is not on this branch")
    scorer = pytest.importorskip("minicons.scorer")
    Runner(RunConfig(spec="self_paced_reading", protocol="surprisal", trials=4, out=tmp_path), backend).run()
    rows = list(csv.DictReader(next(tmp_path.rglob("*.csv")).open()))
    mc = scorer.IncrementalLMScorer(backend.model, device="cpu", tokenizer=copy.deepcopy(backend.tokenizer))
    theirs = mc.word_score_tokenized([r["words"] for r in rows], tokenize_function=lambda s: s.split(),
                                     bos_token=True, surprisal=True, base_two=True)
    for row, t in zip(rows, theirs, strict=False):
        cells = json.loads(row["extra"]).get("columns") or row
        bits = json.loads(cells["word_surprisal_bits"])
        assert len(bits) == len(row["words"].split(" ")) == len(t)
        assert bits == pytest.approx([v for _, v in t], abs=TOL_BITS)
