"""One meaning, one place: the analysis and the server's record check read the task kinds' own rules
(experiments/tasks), so they cannot disagree with the runners: completion's accepted answers, the keys
that type, the characters a target may hold."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pandas as pd
import pytest

from experiments.tasks.base import TaskError
from experiments.tasks.record import CHAR_KEYS, is_text_key, typed_text
from kinds.completion import task as completion
from kinds.completion.analysis import completion_rows
from participants.web.task_record import typing_key


def test_the_analysis_lenient_match_is_the_kinds_score():
    mats = [{"target": "bread", "accepted": ["Loaf", "buns."]}, {"target": "Dog", "accepted": "hound|pup"},
            {"target": "milk"}]
    texts = ["Bread.", "  LOAF", "buns", "bun", "", "«Hound»", "pup!", "puppy", "MILK", "milk shake", None]
    rows = [(t, m) for t in texts for m in mats]
    df = pd.DataFrame({"task": "completion", "response_text": [t for t, _ in rows],
                       "materials": [json.dumps(m) for _, m in rows]})
    got = completion_rows(df)
    for (t, m), lenient, strict in zip(rows, got["match_accepted"], got["match_target"], strict=False):
        kind = completion.score(SimpleNamespace(mat=m), t)
        if kind is None:
            assert pd.isna(lenient) and pd.isna(strict), (t, m)
        else:
            assert lenient == float(kind), (t, m)
            assert strict == float(completion.score(SimpleNamespace(mat={"target": m["target"]}), t)), (t, m)
    assert got["match_accepted"].sum() == 6 and got["match_target"].sum() == 2  # by hand: 3 + 2 + 1; Bread., MILK


@pytest.mark.parametrize("k", ["a", "ß", "ж", "A", "Ж", "backspace", "space", "period", "1", "tab", "e\u0301",
                               *CHAR_KEYS])
def test_the_servers_typing_keys_are_the_kinds(k):
    """The server's check of a posted completion record accepts the kind's typing keys as the page names
    them (lower case), and nothing else."""
    assert typing_key(k) == (is_text_key(k) and k == k.lower())


def test_a_target_holds_what_the_typing_keys_type():
    s = SimpleNamespace(max_chars=40)
    for target in ["don't", "well-known", "Straße", "a, b."]:
        completion.check_item({"target": target}, s, "item 1")
        assert typed_text([c if c.isalpha() else next(k for k, v in CHAR_KEYS.items() if v == c)
                           for c in target.lower()]) == target.lower()
    with pytest.raises(TaskError, match=r"contains '\?'.*letters and \"'-.,\""):
        completion.check_item({"target": "what?"}, s, "item 1")


def test_the_analysis_finds_the_answer_option_by_the_kinds_rule():
    """The screen position of the correct option is the option the kind scores correct ("Dog." is the
    option "dog"), not an exact string match."""
    from kinds.choice import task as choice
    from kinds.choice.analysis import choice_rows

    cases = [({"options": ["dog", "cat"], "answer": "Dog."}, [1, 0], 1),
             ({"options": ["a cat", "a dog", "a cow"], "answer": "a  COW"}, [2, 0, 1], 0),
             ({"options": ["dog", "cat"], "answer": "cat"}, [0, 1], 1),
             ({"options": ["dog", "cat"]}, [0, 1], None)]
    df = pd.DataFrame({"task": "choice", "option_order": [json.dumps(o) for _, o, _ in cases],
                       "materials": [json.dumps(m) for m, _, _ in cases]})
    got = choice_rows(df)["correct_position"].tolist()
    assert [None if pd.isna(g) else int(g) for g in got] == [p for _, _, p in cases]
    for (m, order, pos), _g in zip(cases, got, strict=False):
        if pos is not None:  # the option shown there is the one the kind scores correct
            assert choice.score(SimpleNamespace(mat=m), m["options"][order[pos]]) is True


def test_the_models_correct_option_is_the_kinds():
    """A model's margin is signed by the option the kind scores correct ("Dog." is the option "dog")."""
    from kinds.choice.model import correct_index

    trial = SimpleNamespace(mat={"options": ["cat", "dog"], "answer": "Dog."})
    assert correct_index(trial, ["cat", "dog"]) == 1
    assert correct_index(SimpleNamespace(mat={"options": ["cat", "dog"]}), ["cat", "dog"]) is None
