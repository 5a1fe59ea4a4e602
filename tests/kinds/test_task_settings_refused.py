"""Every task setting and every item checked at validate time: a table of bad specs and
bad items, each refused by `twinlab validate` with exit 2, no traceback, one message naming the field; and
a protocol that cannot mean anything on the items refused by `run-model` before any model loads."""
from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import pytest
import yaml

from experiments.spec import bundled_spec_path
from tests.cli_refusal import refused, twinlab

SPECS = bundled_spec_path("cloze").parent


def make(tmp: Path, example: str, task: dict | None = None, rows: list[dict] | None = None) -> Path:
    """A copy of bundled `example` with `task` fields set and the first item row(s) replaced by `rows`."""
    data = yaml.safe_load((SPECS / f"{example}.yaml").read_text(encoding="utf-8"))
    data["task"] = {**data["task"], **(task or {})}
    items = SPECS / data["design"]["file"]
    if rows:
        table = list(csv.DictReader(io.StringIO(items.read_text(encoding="utf-8"))))
        fields = list(table[0])
        for r in rows:
            fields += [k for k in r if k not in fields]
        table[: len(rows)] = [{**table[k], **r} for k, r in enumerate(rows)]
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=fields)
        w.writeheader()
        w.writerows(table)
        (tmp / items.name).write_text(buf.getvalue(), encoding="utf-8")
    else:
        shutil.copyfile(items, tmp / items.name)
    p = tmp / f"{example}.yaml"
    p.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return p


LABELS8 = [{"value": f"v{i}", "text": f"T{i}"} for i in range(8)]
CASES = [
    # keys (settings): quit key as an answer / advance / submit key, too few keys, keys that type
    ("judgment-quit", "acceptability_yesno", {"quit_key": "f"}, None, ["task.labels", "quit key"]),
    ("judgment-8-labels", "acceptability_yesno", {"labels": LABELS8}, None, ["task.labels", "give each label a `key`"]),
    ("choice-quit", "minimal_pairs_2afc", {"option_keys": ["escape", "j"]}, None, ["task.option_keys", "quit key"]),
    ("choice-too-few-keys", "minimal_pairs_2afc", None, [{"option_3": "A third one."}], ["task.option_keys",
                                                                                          "3 options need 3 keys"]),
    ("rating-quit", "acceptability_rating", {"scale": {"points": 3, "keys": ["1", "2", "escape"]}}, None,
     ["task.scale.keys", "quit key"]),
    ("spr-advance-quit", "self_paced_reading", {"advance_key": "escape"}, None, ["task.advance_key", "quit key"]),
    ("spr-advance-answer", "self_paced_reading", {"advance_key": "f"}, None, ["task.advance_key", "comprehension"]),
    ("completion-submit-types", "cloze", {"submit_key": "a"}, None, ["task.submit_key", "types text"]),
    ("completion-submit-quit", "cloze", {"submit_key": "escape"}, None, ["task.submit_key", "quit key"]),
    # items: answers not offered, options that cannot be a choice, regions, targets
    ("judgment-answer", "acceptability_yesno", None, [{"answer": "maybe"}], ["line 2", "answer 'maybe'",
                                                                            "not a label's value"]),
    ("lexical-Word", "lexical_decision", None, [{"answer": "Word"}], ["line 2", "answer 'Word'", "nonword, word"]),
    ("choice-one-option", "minimal_pairs_2afc", None, [{"option_2": "", "answer": ""}], ["line 2", "options",
                                                                                         "at least two"]),
    ("choice-identical", "minimal_pairs_2afc", None, [{"option_2": "the keys to the cabinet are lost"}],
     ["line 2", "options", "same text"]),
    ("choice-answer", "minimal_pairs_2afc", None, [{"answer": "Neither."}], ["line 2", "answer 'Neither.'",
                                                                           "not one of the options"]),
    ("spr-regions", "self_paced_reading", None, [{"regions": "The horse | raced"}], ["line 2", "regions"]),
    ("spr-empty-region", "self_paced_reading", None,
     [{"regions": "The horse || raced past the barn fell to the ground."}], ["line 2", "regions"]),
    ("spr-question-answer", "self_paced_reading", None, [{"question_answer": "maybe"}],
     ["line 2", "question_answer 'maybe'", "question_options"]),
    ("completion-max-chars", "cloze", {"max_chars": 4}, None, ["line 2", "target 'bread'", "max_chars is 4"]),
    ("completion-untypeable", "cloze", None, [{"target": "b4"}], ["line 2", "target 'b4'", "cannot contain"]),
]


@pytest.mark.parametrize("name,example,task,rows,match", CASES, ids=[c[0] for c in CASES])
def test_validate_refuses_naming_the_field(tmp_path, name, example, task, rows, match):
    spec = make(tmp_path, example, task, rows)
    refused("validate", str(spec), match=match)


def test_the_bundled_task_examples_still_validate(tmp_path):
    for example in ("acceptability_yesno", "minimal_pairs_2afc", "acceptability_rating", "self_paced_reading",
                    "cloze", "lexical_decision"):
        r = twinlab("validate", example)
        assert r.returncode == 0, r.stdout + r.stderr


def test_forced_choice_without_a_critical_word_is_refused_before_a_model_loads(tmp_path):
    """agreement_attraction's items have no marked critical word: forced choice would compare "" with ""
    and score every trial correct. Refused at once, before the default model loads, naming the protocol, what the
    items lack and the protocols that work."""
    msg = refused("run-model", "agreement_attraction", "--protocol", "forced_choice", "--out", str(tmp_path / "out"),
                  match=["'forced_choice'", "critical word", "Protocols that work", "panel_judgment"])
    assert "'direct'" not in msg.split("Protocols that work")[1]
    assert not (tmp_path / "out").exists()


def test_judgment_direct_without_pairs_is_refused_before_a_model_loads(tmp_path):
    refused("run-model", "acceptability_yesno", "--protocol", "direct", "--out", str(tmp_path / "out"),
            match=["'judgment:direct'", "pair_sentence", "Protocols that work", "meta"])
    assert not (tmp_path / "out").exists()
