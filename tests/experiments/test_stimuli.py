"""Stimulus design: agreement correctness, balance, determinism, lexicon and prompt disjointness."""
from __future__ import annotations

import collections
import re

import pytest

from stimuli.prompts import NESTED_SHOTS, PROMPT_GROUPS, PROMPT_SETS, SUCCESSIVE_SHOTS, SWAP_ORDER, interpolated_shots
from studies.lakretz2021.stimuli.generate import generate_items
from studies.lakretz2021.stimuli.lexicon import TEST, TRAINING
from studies.lakretz2021.stimuli.structures import STRUCTURES

# Independent of the builders: where each structure's subjects sit (word index), per condition letter.
SUBJECT_POSITIONS = {
    "long_nested": {"outer": 1, "inner": 4, "distractor": 7},
    "short_nested": {"outer": 1, "inner": 4},
    "single": {"outer": 1},
    "short_successive": {"outer": 1, "inner": 5},
    "long_successive": {"outer": 1, "inner": 8, "distractor": 4},
    "long_nested_more_distractors": {"outer": 1, "inner": 4, "distractor": 7},
    "long_nested_deeper": {"prefix": 1, "outer": 4, "inner": 7, "distractor": 10},
}


def number_of(word: str, lex) -> str:
    """S or P by lexicon lookup (independent of how the builder chose the form)."""
    w = word.rstrip(".").lower()
    for sg, pl in lex.nouns + lex.verbs + lex.complement_verbs:
        if w == sg:
            return "S"
        if w == pl:
            return "P"
    if w in ("people", "neighbours", "critics", "reporters"):
        return "P"
    raise AssertionError(f"{word!r} not in lexicon {lex.name}")


@pytest.mark.parametrize("structure", sorted(STRUCTURES))
@pytest.mark.parametrize("lex", [TEST, TRAINING], ids=["test", "training"])
def test_every_sentence_agrees_and_violations_disagree_exactly_at_the_verb(structure, lex):
    items = generate_items(structure, lex.name, 64, seed=3)
    st = STRUCTURES[structure]
    assert len(items) == 64 * len(st.conditions)
    for it in items:
        pos = SUBJECT_POSITIONS[structure]
        # the condition letters are the numbers of the nouns at the known positions
        for role, letter in zip(st.letters, it.condition, strict=False):
            assert number_of(it.words[pos[role]], lex) == letter, (it.sentence, role)
        for dep, (idx, correct, flipped) in it.verbs.items():
            subj_num = number_of(it.words[pos[dep]], lex)
            assert number_of(it.words[idx], lex) == subj_num, f"{it.sentence}: {dep} verb does not agree"
            assert it.words[idx].rstrip(".") == correct
            bad = it.version(dep)
            diff = [k for k in range(len(bad)) if bad[k] != it.words[k]]
            assert diff == [idx], "a violation changes exactly the critical verb"
            assert number_of(bad[idx], lex) != subj_num
            assert bad[idx].rstrip(".") == flipped == lex.flip(correct)
        assert it.words[0][0].isupper() and it.words[-1].endswith(".")


def test_long_nested_default_design_counts_and_balance():
    items = generate_items("long_nested", "test", 512, seed=1)
    assert len(items) == 4096
    by_cond = collections.Counter(it.condition for it in items)
    assert sorted(by_cond) == ["PPP", "PPS", "PSP", "PSS", "SPP", "SPS", "SSP", "SSS"]
    assert set(by_cond.values()) == {512}
    # each inner verb lemma is used equally often (+-1) within every condition
    for cond in by_cond:
        verbs = collections.Counter(
            TEST.verbs.index(next(p for p in TEST.verbs if it.verbs["inner"][1] in p))
            for it in items if it.condition == cond
        )
        assert len(verbs) == len(TEST.verbs)
        assert max(verbs.values()) - min(verbs.values()) <= 2
    # nouns inside one sentence are distinct lemmas
    for it in items:
        lemmas = [next(k for k, p in enumerate(TEST.nouns) if it.words[i].rstrip(".") in p) for i in (1, 4, 7, 11)]
        assert len(set(lemmas)) == 4, it.sentence


def test_generation_is_seeded():
    a = generate_items("long_nested", "test", 16, seed=5)
    b = generate_items("long_nested", "test", 16, seed=5)
    c = generate_items("long_nested", "test", 16, seed=6)
    assert [i.sentence for i in a] == [i.sentence for i in b]
    assert [i.sentence for i in a] != [i.sentence for i in c]


def test_training_and_test_lexicons_are_disjoint():
    assert not (TEST.words & TRAINING.words)
    train_sentences = {w.rstrip(".").lower() for s in STRUCTURES
                       for it in generate_items(s, "training", 8) for w in it.words}
    assert not (train_sentences & TEST.words)


def _content_words(line: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", line.lower())}


def test_prompts_share_no_noun_verb_or_preposition_with_the_test_lexicon():
    overlaps = {}
    for p in PROMPT_SETS.values():
        for line in p.lines:
            common = _content_words(line) & TEST.words
            if common:
                overlaps[(p.name, line)] = common
    # the paper's own successive example uses "know" (a test verb); that is the only exception
    known = {("interp_" + str(n), SUCCESSIVE_SHOTS[7]) for n in range(9) if 7 not in SWAP_ORDER[:n]}
    assert set(overlaps) == known, overlaps
    assert all(v == {"know"} for v in overlaps.values())


FUNCTION_WORDS = {"the", "that", "is", "are", "to", "a", "by", "on", "at"}


@pytest.mark.parametrize("group", ["twoshot", "eightshot"])
def test_prompts_of_one_type_have_disjoint_vocabularies_except_paper_prompt_a(group):
    names = PROMPT_GROUPS[group]
    assert len(names) == 3
    vocab = {n: set().union(*(_content_words(line) for line in PROMPT_SETS[n].lines)) - FUNCTION_WORDS for n in names}
    for a in names:
        for b in names:
            if a < b:
                assert not (vocab[a] & vocab[b]), (a, b, vocab[a] & vocab[b])


def test_prompt_shapes_and_interpolation():
    assert all(len(PROMPT_SETS[n].lines) == 2 for n in PROMPT_GROUPS["twoshot"])
    assert all(len(PROMPT_SETS[n].lines) == 8 for n in PROMPT_GROUPS["eightshot"])
    assert interpolated_shots(0) == SUCCESSIVE_SHOTS and interpolated_shots(8) == NESTED_SHOTS
    one = interpolated_shots(1)
    assert one[5] == NESTED_SHOTS[5] and sum(a != b for a, b in zip(one, SUCCESSIVE_SHOTS, strict=False)) == 1
    # plural and singular roughly balanced in the written prompts (subject = second word)
    for n in PROMPT_GROUPS["twoshot"] + PROMPT_GROUPS["eightshot"]:
        lines = PROMPT_SETS[n].lines
        plural = sum(line.split()[1].endswith("s") or line.split()[1] == "children" for line in lines)
        assert abs(plural - len(lines) / 2) <= 1, n


def test_recombined_prompts_reshuffle_the_three_handwritten_eightshot_prompts():
    import random

    pool = [line for n in PROMPT_GROUPS["eightshot"] for line in PROMPT_SETS[n].lines]
    rec = [line for n in PROMPT_GROUPS["recombined"] for line in PROMPT_SETS[n].lines]
    assert sorted(rec) == sorted(pool) and len(PROMPT_GROUPS["recombined"]) == 3
    random.Random(2024).shuffle(pool)  # the documented recipe
    assert rec == pool
