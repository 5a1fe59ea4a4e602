"""The core's defaults are general: a spec's default task kind, a trial's flat
record and the block fields of a study's cells come from what the study declares in its `__init__`
(studies/lakretz2021/__init__.py: SPEC_DEFAULTS, TRIAL_RECORD, BLOCK_FIELDS), read through the registry of
studies; the core names none of them. Each test changes the declaration and sees the core follow it."""
from __future__ import annotations

import pytest
import yaml

import studies.lakretz2021 as lakretz
from experiments.spec import SpecError, bundled_spec_path, load_spec, parse_spec
from experiments.trials import Trial, record_keys, records


def _spec(name: str) -> tuple[dict, object]:
    p = bundled_spec_path(name)
    return yaml.safe_load(p.read_text(encoding="utf-8")), p.parent


def test_a_stimuli_spec_without_a_kind_takes_the_studys_and_keeps_its_hash():
    data, base = _spec("lakretz2021_nested")
    named = load_spec(bundled_spec_path("lakretz2021_nested"))
    no_kind = parse_spec({**data, "task": {k: v for k, v in data["task"].items() if k != "kind"}}, "x", base)
    no_task = parse_spec({k: v for k, v in data.items() if k != "task"}, "x", base)
    assert named.task.kind == no_kind.task.kind == no_task.task.kind == "violation_detection"
    assert no_kind.spec_hash == named.spec_hash  # the default is hashed as if the spec named it


def test_the_default_kind_is_the_studys_declaration(monkeypatch):
    data, base = _spec("lakretz2021_nested")
    monkeypatch.setattr(lakretz, "SPEC_DEFAULTS", {"source": "stimuli", "task_kind": "forced_choice"})
    task = {k: v for k, v in data["task"].items() if k != "kind"}
    assert parse_spec({**data, "task": task}, "x", base).task.kind == "forced_choice"
    monkeypatch.delattr(lakretz, "SPEC_DEFAULTS")  # no study declares a default: the core has none
    with pytest.raises(SpecError, match=r"task\.kind: name the task kind \(one of: violation_detection"):
        parse_spec({**data, "task": task}, "x", base)


@pytest.mark.parametrize("task", [None, {"response_key": "space"}])
def test_a_design_spec_without_a_kind_is_refused_naming_the_field(task):
    data, base = _spec("acceptability_yesno")
    data = {k: v for k, v in data.items() if k != "task"} | ({"task": task} if task else {})
    with pytest.raises(SpecError) as exc:
        parse_spec(data, "acceptability_yesno.yaml", base)
    lines = str(exc.value).splitlines()
    assert lines[0] == "acceptability_yesno.yaml: invalid experiment spec (1 problem(s))"
    assert lines[1].startswith("  - task.kind: name the task kind (one of: ") and "(value:" not in lines[1]
    assert "a `design:` spec names its own" in lines[1]


def test_a_trials_record_is_the_registered_one():
    from studies.lakretz2021 import materials

    assert records() == (materials,) and lakretz.TRIAL_RECORD == "materials"
    assert record_keys() == materials.KEYS
    t = load_spec(bundled_spec_path("lakretz2021_nested"))
    from experiments.design_compiler import compile_sequence

    trial = compile_sequence(t, "S01").trials[0]
    assert trial.record_module is materials and trial.record() == dict(trial.materials)
    flat = list(trial.flat_dict())  # ids, the record's keys with `feedback` after correct_response, generic
    at = flat.index("correct_response")
    assert flat[5:at + 1] + flat[at + 2:at + 3] == list(materials.KEYS) and flat[at + 1] == "feedback"


def test_without_a_registered_record_a_general_trial_has_only_the_general_fields(monkeypatch):
    import experiments.trials as trials

    monkeypatch.setattr(trials, "records", lambda: ())
    t = Trial(experiment="x", block="b", trial_index=0, block_trial_index=0, item_id="1", feedback=True,
              item="1", task="judgment", role="test", materials=(("sentence", "a b"),))
    assert list(t.flat_dict()) == ["experiment", "block", "trial_index", "block_trial_index", "item_id",
                                   "feedback", "item", "list_number", "factors", "task", "role", "materials"]
    with pytest.raises(TypeError, match="no study registers a trial record"):
        Trial.of_record(experiment="x", block="b", trial_index=0, block_trial_index=0, item_id="1",
                        feedback=True, words=("a",))


def test_a_design_block_refuses_the_block_fields_the_study_declares(monkeypatch):
    from experiments.spec_model import Block

    assert "lexicon" in lakretz.BLOCK_FIELDS
    with pytest.raises(ValueError, match="lexicon: not used by a block with `role`"):
        Block(name="t", role="test", lexicon="training")
    monkeypatch.setattr(lakretz, "BLOCK_FIELDS", ("conditions",))
    assert Block(name="t", role="test", lexicon="training").lexicon == "training"  # no study claims it now
