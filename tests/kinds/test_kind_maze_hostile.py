"""Maze items and the A-maze generator with hostile input: the generator never writes over its own inputs (the
items, the word list), with --force or without, by name, link or record; sentences that are empty, one word,
very long, zero-width, or whose given distractors hold the word itself are refused naming the line; non-Latin
sentences are accepted with length-matched distractors."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.cli_refusal import ROOT

WORDS = "cat\nzoo\nfig\nrat\ntree\nyawn\nquiz\nsky\nmop\nbread\n"


def _gen(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "kinds.maze.model", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)


def test_the_generator_never_writes_over_its_inputs(tmp_path):
    items = tmp_path / "items.csv"
    items.write_text("item,sentence,distractors\n1,A dog ate the tree.,\n", encoding="utf-8")
    words = tmp_path / "words.txt"
    words.write_text(WORDS, encoding="utf-8")
    record_named = tmp_path / "list.distractors.json"  # OUT list.csv would write its record over this word list
    record_named.write_text(WORDS, encoding="utf-8")
    link = tmp_path / "link.csv"
    link.symlink_to(words)
    cases = [(words, words, "is the word list"), (items, words, "is the items file"),
             (tmp_path / "list.csv", record_named, "is the word list"), (link, words, "is the word list")]
    for out, listed, said in cases:
        before = {p: p.read_bytes() for p in (items, words, record_named)}
        r = _gen(str(items), str(listed), str(out), "--force")
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert said in r.stderr and "never replaces an input" in r.stderr, r.stderr
        assert {p: p.read_bytes() for p in before} == before


def _score(context, conts):
    return [-float(len(c)) - sum(ord(ch) % 7 for ch in c) for c in conts]


@pytest.mark.parametrize("sentence, distractors, said", [
    ("", "", "at least two words"),
    ("Dogs", "", "at least two words"),
    (" ".join(["word"] * 201), "", "201 words; a maze sentence has at most 200"),
    ("The " + "x" * 500 + " dog", "", "word 2 has 500 characters"),
    ("The \u200b dog", "", "word 2 ('\\u200b') has no visible character"),
    ("The dog barked.", "Dog cat", "the distractor equals its word at word 2 'dog'"),
    ("The dog barked.", "cat", "one per word after the first"),
])
def test_bad_sentences_are_refused_naming_the_line(sentence, distractors, said):
    from kinds.maze.model import Entry, GenerateError, generate_distractors

    rows = [{"item": "1", "sentence": "A cat sat.", "distractors": ""},
            {"item": "2", "sentence": sentence, "distractors": distractors}]
    vocab = [Entry(w, None) for w in WORDS.split()]
    with pytest.raises(GenerateError) as exc:
        generate_distractors(rows, _score, vocab, where="items.csv")
    assert str(exc.value).startswith("items.csv: line 3: ") and said in str(exc.value), str(exc.value)


def test_non_latin_sentences_get_length_matched_distractors():
    from kinds.maze.model import Entry, generate_distractors
    from kinds.maze.task import KIND

    vocab = [Entry(w, None) for w in ["کتاب", "دفتر", "میز", "گل", "नमक", "पानी", "घर", "کتاب"]]  # a duplicate too
    rows = [{"item": "1", "sentence": "این میز است.", "distractors": ""},
            {"item": "2", "sentence": "यह घर है", "distractors": ""}]
    out, rec = generate_distractors(rows, _score, vocab, seed=1)
    for row in out:
        ws, ds = row["sentence"].split(), row["distractors"].split()
        assert len(ds) == len(ws) - 1
        for w, d in zip(ws[1:], ds, strict=False):
            assert len(d.rstrip(".")) == len(w.rstrip(".")) and d.rstrip(".") != w.rstrip(".")
        KIND.check_item(row, None, "generated")  # the kind's own check accepts what the generator wrote
