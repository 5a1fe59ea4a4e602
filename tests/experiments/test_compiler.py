"""Compiler: determinism, hashing, counterbalancing, design balance, block constraints."""
from __future__ import annotations

import collections

import pytest

from experiments.design_compiler import compile_sequence
from experiments.spec import bundled_spec_path, load_spec, parse_spec
from experiments.trials import TrialSequence
from studies.lakretz2021.cells import block_cells
from studies.lakretz2021.stimuli.lexicon import TEST, TRAINING


@pytest.fixture(scope="module")
def exp():
    return load_spec(bundled_spec_path("lakretz2021_nested"))


@pytest.fixture(scope="module")
def seq(exp):
    return compile_sequence(exp, "S01")


def test_same_inputs_give_identical_bytes_and_hash(exp, seq):
    again = compile_sequence(load_spec(bundled_spec_path("lakretz2021_nested")), "S01")
    assert again.to_json() == seq.to_json()
    assert again.sequence_hash == seq.sequence_hash
    assert TrialSequence.from_json(seq.to_json()).to_json() == seq.to_json()


def test_different_subjects_and_seeds_differ(exp, seq):
    assert compile_sequence(exp, "S02").sequence_hash != seq.sequence_hash
    assert compile_sequence(exp, "S01", seed=7).sequence_hash != seq.sequence_hash


def test_spec_hash_changes_with_content_not_formatting(exp, tmp_path):
    text = bundled_spec_path("lakretz2021_nested").read_text()
    p = tmp_path / "same.yaml"
    p.write_text("# a comment\n" + text + "\n\n")
    assert load_spec(p).spec_hash == exp.spec_hash
    p.write_text(text.replace("word_ms: 250", "word_ms: 300"))
    assert load_spec(p).spec_hash != exp.spec_hash


def test_bundled_spec_mirrors_the_human_study(exp, seq):
    assert [b.name for b in exp.blocks] == ["training", "test"]
    t = exp.timing
    assert (t.word_ms, t.gap_ms, t.fixation_ms, t.response_ms, t.feedback_ms) == (250, 250, 600, 1500, 500)
    training = [tr for tr in seq if tr.block == "training"]
    assert len(training) == 40 and all(tr.feedback for tr in training)
    assert {tr.study_record.structure for tr in training} == set(exp.block("training").structures)
    assert all(tr.study_record.lexicon == "training" for tr in training)
    test = [tr for tr in seq if tr.block == "test"]
    assert seq.trials[:40] == tuple(training), "training comes first"
    words_test = {w.rstrip(".").lower() for tr in test for w in tr.words}
    words_train = {w.rstrip(".").lower() for tr in training for w in tr.words}
    assert not (words_train & TEST.words) and not (words_test & TRAINING.words)


def test_test_block_is_fully_crossed_and_balanced(seq):
    test = [tr for tr in seq if tr.block == "test"]
    cells = collections.Counter(
        (tr.study_record.structure, tr.condition, tr.study_record.violation_position) for tr in test
    )
    assert len(test) == 144
    for (structure, cond, viol), n in cells.items():
        assert n == 2, (structure, cond, viol)
    ln = [tr for tr in test if tr.study_record.structure == "long_nested"]
    assert collections.Counter(tr.condition for tr in ln) == {c: 6 for c in
                                                               ["SSS", "SSP", "SPS", "SPP", "PSS", "PSP", "PPS", "PPP"]}
    # grammatical trials split between the two dependencies
    g = collections.Counter(tr.study_record.dependency for tr in ln if tr.study_record.violation_position == "none")
    assert g["inner"] == g["outer"] == 8


def test_trial_fields_are_consistent(seq):
    for tr in seq:
        assert tr.words[tr.study_record.critical_index].rstrip(".") == tr.study_record.critical_word
        if tr.study_record.violation_position == "none":
            assert (tr.study_record.critical_word == tr.study_record.correct_form
                    and tr.study_record.correct_response == "no_violation")
        else:
            assert (tr.study_record.critical_word != tr.study_record.correct_form
                    and tr.study_record.correct_response == "violation")
            assert tr.study_record.alternative_word == tr.study_record.correct_form
            assert tr.study_record.dependency == tr.study_record.violation_position
    assert [tr.trial_index for tr in seq] == list(range(len(seq)))


def test_block_constraints_hold(seq, exp):
    for block in exp.blocks:
        trials = [tr for tr in seq if tr.block == block.name]
        run_v = run_s = 0
        for k, tr in enumerate(trials):
            run_v = run_v + 1 if tr.study_record.violation_position != "none" else 0
            run_s = run_s + 1 if k and trials[k - 1].study_record.structure == tr.study_record.structure else 1
            assert run_v <= block.max_consecutive_violations
            if block.max_consecutive_same_structure:
                assert run_s <= block.max_consecutive_same_structure


def test_no_item_twice_in_a_session_and_versions_rotate_across_subjects(exp):
    seqs = [compile_sequence(exp, f"S{k:02d}") for k in range(1, 4)]
    for s in seqs:
        ids = [tr.item_id for tr in s]
        assert len(ids) == len(set(ids))
    # Latin square: an item seen by two subjects is seen in different versions
    version_of = [{tr.item_id: tr.study_record.violation_position for tr in s} for s in seqs]
    shared = 0
    for a in range(3):
        for b in range(a + 1, 3):
            for item in set(version_of[a]) & set(version_of[b]):
                shared += 1
                assert version_of[a][item] != version_of[b][item]
    assert shared > 0


def test_condition_that_does_not_fit_the_structure_is_a_named_error(exp):
    from experiments.spec import SpecError

    data = exp.model_dump(mode="json")
    data["blocks"][1]["conditions"] = ["PS"]
    bad = parse_spec(data, "x.yaml")
    with pytest.raises(SpecError, match="condition.*PS.*long_nested"):
        block_cells(bad.blocks[1])


def test_stimulus_file_source_round_trip(tmp_path, exp):
    from stimuli.files import save_items
    from studies.lakretz2021.stimuli.generate import generate_items

    items = generate_items("long_nested", "test", 8) + generate_items("single", "training", 8)
    f = save_items(items, tmp_path / "items.tsv")
    data = exp.model_dump(mode="json")
    data["stimuli"] = {"file": str(f)}
    data["blocks"] = [
        {"name": "training", "lexicon": "training", "structures": ["single"], "trials": 4},
        {"name": "test", "structures": ["long_nested"], "conditions": ["PSP", "SPS"]},
    ]
    e = parse_spec(data, "from_file.yaml")
    s = compile_sequence(e, "S01")
    assert len(s) == 4 + 2 * 3
    for tr in s:
        assert tr.words[tr.study_record.critical_index].rstrip(".") == tr.study_record.critical_word
