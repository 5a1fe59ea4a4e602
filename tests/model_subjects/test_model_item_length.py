"""The longest item a model subject reads (docs/validation.md "Item length for model subjects"): a 20,000-word item
used to hold a model subject for minutes; it is refused before any model loads, naming the file, line, item and
the limit, for `run-model` and `sweep` alike. Items within the limit run as before."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest
import yaml

from experiments.options import OptionError
from experiments.spec import load_spec
from model_subjects import run_checks as RC
from tests.cli_refusal import refused


def _spec(tmp_path: Path, long_words: int) -> Path:
    rows = [{"item": f"i{i}", "a": a, "sentence": f"the item {i} is {a} .", "answer": "no_violation"}
            for i in range(1, 3) for a in ("x", "y")]
    rows[3]["sentence"] = " ".join(["word"] * long_words)
    with open(tmp_path / "items.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    spec = {"name": "longitem", "seed": 1,
            "design": {"file": "items.csv", "factors": {"a": ["x", "y"]}, "lists": "all"},
            "blocks": [{"name": "test", "role": "test"}],
            "task": {"kind": "violation_detection", "response": "panel",
                     "panel": {"labels": {"violation": "BAD", "no_violation": "GOOD"}}},
            "texts": {"instructions": ["Read."]}}
    path = tmp_path / "longitem.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def test_a_20000_word_item_is_refused_before_the_model_loads(tmp_path):
    spec = _spec(tmp_path, 20_000)
    out = tmp_path / "out"
    # the bundled model; the session files (written before the model loads) do not exist: refused before both
    refused("run-model", str(spec), "--trials", "1", "--out", str(out),
            match=["items.csv: line 5: item 'i2'", "20000 words", f"at most {RC.MAX_ITEM_WORDS} words per item"],
            timeout=300)
    assert not out.exists()


def test_the_sweep_refuses_it_too(tmp_path):
    spec = _spec(tmp_path, 20_000)
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(yaml.safe_dump({"spec": str(spec), "models": [{"backend": "transformers"}], "out": "o"}),
                     encoding="utf-8")
    refused("sweep", str(sweep), match=["items.csv: line 5: item 'i2'", "20000 words"], timeout=300)
    assert not (tmp_path / "o").exists()


def test_the_limit_by_hand(tmp_path):
    """The limit counts what the model reads: a sentence of exactly 2,000 words runs (its answer, which the
    model is scored against and never reads, is not counted: it was once refused as 2,001)."""
    RC.item_lengths(load_spec(_spec(tmp_path, RC.MAX_ITEM_WORDS)))
    with pytest.raises(OptionError, match=f"{RC.MAX_ITEM_WORDS + 1} words"):
        RC.item_lengths(load_spec(_spec(tmp_path, RC.MAX_ITEM_WORDS + 1)))


def test_a_kept_column_the_model_never_reads_does_not_count(tmp_path):
    """A design keeps columns it does not know (a source, a note); a model never reads them, so a 2,500-word
    kept column does not block the design. The texts a model reads (sentence, pair_sentence, question, ...)
    still add up."""
    path = _spec(tmp_path, 5)
    rows = list(csv.DictReader(open(tmp_path / "items.csv", encoding="utf-8")))
    for r in rows:
        r["source_note"] = " ".join(["note"] * 2_500)
    with open(tmp_path / "items.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    RC.item_lengths(load_spec(path))
    mat = {"sentence": "a " * 1200, "pair_sentence": "b " * 801, "answer": "yes", "kept": "c " * 5000}
    assert RC.item_length_problem(RC._texts(RC.read_materials(mat))).startswith("2001 words")
    # regions are the sentence's words cut into regions: counted once
    assert RC.read_materials({"sentence": "a b", "regions": ("a", "b")}) == {"sentence": "a b"}
    assert RC.item_length_problem(["x" * (RC.MAX_ITEM_CHARS + 1)]).startswith(f"{RC.MAX_ITEM_CHARS + 1} characters")
    assert RC.item_length_problem(["a b", "c d"]) is None
    assert RC.item_length_problem(list(RC._texts({"options": ("a " * 1500, ["b " * 501])}))).startswith("2001 words")


def test_a_stimulus_file_item_is_checked_too(tmp_path, monkeypatch):
    """A Lakretz-format stimulus file: its items' words (the bundled Italian example's are short: accepted)."""
    exp = load_spec("lakretz2021_italian_example")
    assert exp.stimuli.file is not None
    RC.item_lengths(exp)
    monkeypatch.setattr(RC, "MAX_ITEM_WORDS", 3)
    with pytest.raises(OptionError, match=r"lakretz2021_italian_example.tsv: item '.+': \d+ words; a model subject "
                                          "reads at most 3 words"):
        RC.item_lengths(exp)
