"""Cross-package data contracts: what the runners write is what the analysis reads."""
from __future__ import annotations

from analysis.load import load
from experiments.design_compiler import compile_sequence
from experiments.session import SessionWriter
from experiments.spec import load_spec


def _write(root, subject, metadata, kind="human", n=12):
    exp = load_spec("lakretz2021_nested")
    seq = compile_sequence(exp, subject)
    w = SessionWriter.create(root, experiment=exp.name, subject_id=subject, session=1, subject_kind=kind,
                             spec_hash=seq.spec_hash, sequence_hash=seq.sequence_hash, n_trials=n, metadata=metadata)
    for tr in seq.trials[:n]:
        w.append({**tr.to_row(), "subject_id": subject, "subject_kind": kind, "session": 1,
                  "spec_hash": seq.spec_hash, "sequence_hash": seq.sequence_hash,
                  "response": tr.study_record.correct_response, "correct": True})
    w.close()


def test_autopilot_sessions_are_not_analysed_as_human_data(tmp_path):
    _write(tmp_path, "S01", {"participant": {"age": 31}})
    _write(tmp_path, "autopilot1", {"autopilot": True, "data_kind": "SIMULATED"})
    df, info = load([tmp_path])
    assert set(df["subject_id"]) == {"S01"} and len(df) == 12
    assert info.exclusions and "autopilot" in info.exclusions[0]["reason"] and info.exclusions[0]["rows"] == 12
    df_all, _ = load([tmp_path], include_simulated=True)
    assert set(df_all["subject_id"]) == {"S01", "autopilot1"}


def test_sequence_rows_round_trip_through_the_loader(tmp_path):
    _write(tmp_path, "S02", {}, n=40)
    df, _ = load([tmp_path])
    seq = compile_sequence(load_spec("lakretz2021_nested"), "S02")
    assert df["words"].tolist() == [t.sentence for t in seq.trials[:40]]
    assert df["trial_index"].tolist() == list(range(40))
    assert str(df["grammatical"].dtype) == "boolean"


def test_subjects_of_one_prompt_group_form_one_analysis_group():
    import pandas as pd

    from analysis.load.prepare import group_label

    df = pd.DataFrame({
        "subject_kind": ["model"] * 4 + ["human"],
        "model": ["M"] * 4 + [None],
        "context_mode": ["fewshot:eightshot_a", "fewshot:eightshot_c", "fewshot:simple", "running", None],
        "protocol": ["forced_choice"] * 4 + [None],
    })
    assert group_label(df).tolist() == [
        "M · fewshot:eightshot · forced_choice", "M · fewshot:eightshot · forced_choice",
        "M · fewshot:simple · forced_choice", "M · running · forced_choice", "human"]
