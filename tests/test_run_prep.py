"""The one run-preparation step (experiments/run_prep.py) every runner starts with: the spec loaded,
its sizes and the chosen list checked, with the same messages as the checks it gathers."""
from __future__ import annotations

from pathlib import Path

import pytest

from experiments.options import OptionError
from experiments.run_prep import checked_spec
from experiments.spec import SpecError, load_spec

SPEC = Path(__file__).resolve().parents[1] / "experiments" / "specs" / "agreement_attraction.yaml"


def test_a_good_spec_and_list_come_back_as_the_loaded_experiment():
    exp = checked_spec(str(SPEC), 5)
    assert exp.spec_hash == load_spec(str(SPEC)).spec_hash
    assert checked_spec(exp) is exp  # an experiment already loaded is checked, not reloaded


def test_a_list_the_design_lacks_and_a_missing_spec_are_refused_by_name():
    with pytest.raises(OptionError, match=r"--list.*from 1 to 8"):
        checked_spec(str(SPEC), 9)
    with pytest.raises(OptionError, match="has no lists"):
        checked_spec("lakretz2021_demo", 1)
    with pytest.raises(SpecError):
        checked_spec(str(SPEC.with_name("no_such_spec.yaml")))
