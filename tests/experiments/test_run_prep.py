"""The one run-preparation step (experiments/run_prep.py) every runner starts with: the spec loaded,
its sizes and the chosen list checked, with the same messages as the checks it gathers."""
from __future__ import annotations

from pathlib import Path

import pytest

from experiments.options import OptionError
from experiments.run_prep import checked_spec
from experiments.spec import SpecError, load_spec
from tests.support.patching import patch_everywhere

SPEC = Path(__file__).resolve().parents[2] / "experiments" / "specs" / "agreement_attraction.yaml"


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


def _count_compiles(monkeypatch) -> list:
    """Every call of the compiler from now on (experiments.design_compiler.compile_sequence), recorded."""
    import experiments.design_compiler as compiler

    calls: list = []
    real = compiler.compile_sequence

    def counted(*args, **kw):
        calls.append((args[1], kw.get("session"), kw.get("list_number")))
        return real(*args, **kw)

    patch_everywhere(monkeypatch, compiler, "compile_sequence", counted)
    return calls


def test_a_plan_compiles_each_subject_once_and_gives_the_compilers_sequence(monkeypatch):
    from experiments.design_compiler import compile_sequence
    from experiments.run_prep import prepare_run

    plan = prepare_run(str(SPEC), trials=5, list_number=3)
    direct = compile_sequence(plan.exp, "P07", None, session=1, list_number=3)
    calls = _count_compiles(monkeypatch)
    first = plan.sequence("P07")
    assert plan.sequence("P07") is first and plan.n_planned(first) == 5
    assert first.sequence_hash == direct.sequence_hash
    assert calls == [("P07", 1, 3)]
    assert plan.sequence("P07", list_number=None).sequence_hash != direct.sequence_hash  # P07 rotates to list 7
    assert len(calls) == 2  # another list is another sequence


def test_run_human_checks_twice_around_its_lock_but_compiles_once(monkeypatch, tmp_path):
    from participants.runner import HumanRunConfig, plan_for, prepare

    cfg = HumanRunConfig(spec=load_spec(str(SPEC)), participant="P03", out=tmp_path, list_number=2)
    calls = _count_compiles(monkeypatch)
    plan = plan_for(cfg)
    first, again = prepare(cfg, plan=plan), prepare(cfg, lambda m: None, plan)
    assert again.seq is first.seq and calls == [("P03", 1, 2)]
    assert first.seq.design["list"] == 2


def test_a_resumed_session_keeps_the_list_its_sidecar_records(tmp_path):
    import json

    from experiments.run_prep import prepare_run

    plan = prepare_run(str(SPEC))
    json_path = plan.paths(tmp_path, "P04")[1]
    json_path.parent.mkdir(parents=True)
    json_path.write_text(json.dumps({"design": {"list": 6}}), encoding="utf-8")
    assert plan.list_for(tmp_path, "P04", resume=True) == 6
    assert plan.list_for(tmp_path, "P04", resume=False) is None  # a new session: the id rotation
    assert plan.list_for(tmp_path, "P05", resume=True) is None  # nothing recorded
    assert prepare_run(str(SPEC), list_number=2).list_for(tmp_path, "P04", resume=True) == 2  # --list wins


def test_the_model_runner_and_a_sweep_compile_each_subject_once(monkeypatch, tmp_path):
    from experiments.run_prep import prepare_run
    from model_subjects.runner import RunConfig, Runner

    class Stub:  # what the Runner reads of a backend before it scores anything
        name, default_tie_margin, chat_template = "stub", 0.0, None

        def describe(self):
            return {"name": "stub", "dtype": "float32"}

    cfg = RunConfig(spec=str(SPEC), out=tmp_path, subjects=3)
    plan = prepare_run(str(SPEC))
    calls = _count_compiles(monkeypatch)
    for context in ("none", "running"):  # two cells of a sweep: one plan
        runner = Runner(RunConfig(**{**cfg.__dict__, "context": context}), Stub(), plan=plan)
        runner.prepare_subjects()
        runner.prepare_subjects()
    assert sorted(c[0] for c in calls) == ["m01", "m02", "m03"]


def test_the_runner_api_refuses_participant_fields_the_spec_lacks_as_the_cli_does(tmp_path):
    from participants.runner import HumanRunConfig, RunError, prepare

    exp = load_spec(str(SPEC))
    bad = {**{f: "1" for f in exp.participant_fields}, "shoe_size": "44"}
    with pytest.raises(RunError, match=r"--info field\(s\) shoe_size are not participant fields of"):
        prepare(HumanRunConfig(spec=exp, participant="P01", out=tmp_path, info=bad))
    assert not tmp_path.joinpath("data").exists()
    prepare(HumanRunConfig(spec=exp, participant="P01", out=tmp_path, info={f: "1" for f in exp.participant_fields}))


def test_the_protocol_check_reads_the_list_the_run_reads(monkeypatch, tmp_path):
    """run-model's protocol check (run_checks.protocol_meant) asks the trials of the list the run will ask:
    `--list 3` checks list 3 for every subject, not each subject's rotation list."""
    from model_subjects.protocols import get_protocol
    from model_subjects.run_checks import protocol_meant
    from model_subjects.runner import RunConfig

    exp = load_spec(str(SPEC))
    proto = get_protocol("violation_judgment", panel=exp.task.panel, task=exp.task)
    proto.check = lambda trial: None  # the check runs only for protocols that have one: this one passes every trial
    calls = _count_compiles(monkeypatch)
    protocol_meant(RunConfig(spec=str(SPEC), out=tmp_path, subjects=2, list_number=3), exp, proto)
    assert [c[2] for c in calls] == [3, 3], calls
