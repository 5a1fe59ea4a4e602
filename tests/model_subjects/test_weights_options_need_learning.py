"""Weights-learning options given without `--learning weights|both` are refused: a frozen model must never run
while the user believes it trained (model_subjects/weights.check_learning, one rule for run-model, sweep, the API)."""
from __future__ import annotations

import pytest

from tests.cli_refusal import refused

SPEC = "lakretz2021_demo"


@pytest.mark.parametrize("kw, option", [({"lr": 0.01}, "--lr"), ({"steps": 5}, "--steps"),
                                        ({"optimizer": "adamw"}, "--optimizer"), ({"adapter": "lora"}, "--adapter"),
                                        ({"update_on": "read"}, "--update-on"), ({"rank": 16}, "--rank"),
                                        ({"lr": float("nan")}, "--lr")])
def test_weight_options_without_weight_learning_are_refused(kw, option):
    from experiments.options import OptionError
    from model_subjects.runner import RunConfig
    from model_subjects.weights import check_learning

    with pytest.raises(OptionError, match=f"{option} given with --learning context"):
        check_learning(RunConfig(spec=SPEC, **kw))
    check_learning(RunConfig(spec=SPEC))  # the defaults: learning in context alone


def test_run_model_refuses_lr_without_learning(tmp_path):
    out = tmp_path / "out"
    for args, opt in ((["--lr", "0.01"], "--lr"), (["--steps", "3", "--optimizer", "adamw"], "--steps, --optimizer"),
                      (["--lr", "inf"], "--lr")):
        refused("run-model", SPEC, *args, "-o", str(out), match=[f"{opt} given with --learning context",
                                                                  "--learning weights"])
    assert not out.exists()
