"""The shared session writer: crash-safe appends, sidecar, Psych-DS names, no overwrite, resume."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

from experiments.schema import COLUMN_NAMES, SchemaError
from experiments.session import SessionError, SessionExistsError, SessionWriter, read_rows, session_paths


def make(tmp_path, **kw):
    args = dict(experiment="lakretz2021_nested", subject_id="S01", session=1, subject_kind="human",
                spec_hash="abc", sequence_hash="def", n_trials=3, metadata={"participant": {"age": 30}})
    args.update(kw)
    return SessionWriter.create(tmp_path, **args)


def test_psych_ds_layout_and_rows(tmp_path):
    w = make(tmp_path)
    w.append({"subject_id": "S01", "trial_index": 0, "correct": True, "words": 'a "quoted", word'})
    w.append({"subject_id": "S01", "trial_index": 1, "correct": False})
    w.close("completed")
    csv, side = session_paths(tmp_path, "lakretz2021_nested", "S01", 1)
    assert csv.name == "study-lakretz2021nested_subject-S01_session-1_data.csv"
    assert csv.parent.name == "data"
    desc = json.loads((tmp_path / "dataset_description.json").read_text())
    assert desc["@type"] == "Dataset" and {v["name"] for v in desc["variableMeasured"]} == set(COLUMN_NAMES)
    df = pd.read_csv(csv)
    assert list(df.columns) == COLUMN_NAMES
    assert df["correct"].tolist() == [True, False]
    assert df["words"][0] == 'a "quoted", word'
    meta = json.loads(side.read_text())
    assert meta["status"] == "completed" and meta["n_trials_written"] == 2 and meta["participant"]["age"] == 30


def test_unknown_column_is_rejected(tmp_path):
    w = make(tmp_path)
    with pytest.raises(SchemaError, match="reponse"):
        w.append({"reponse": "violation"})


def test_existing_session_is_never_overwritten(tmp_path):
    w = make(tmp_path)
    w.append({"trial_index": 0})
    w.close()
    before = session_paths(tmp_path, "lakretz2021_nested", "S01", 1)[0].read_bytes()
    with pytest.raises(SessionExistsError, match="already exists.*--resume"):
        make(tmp_path)
    assert session_paths(tmp_path, "lakretz2021_nested", "S01", 1)[0].read_bytes() == before
    make(tmp_path, session=2).close()  # a new session number is fine


def test_resume_continues_and_checks_the_hash(tmp_path):
    w = make(tmp_path)
    w.append({"trial_index": 0})
    w.close("aborted")
    with pytest.raises(SessionError, match="sequence_hash"):
        make(tmp_path, resume=True, sequence_hash="other")
    w2 = make(tmp_path, resume=True)
    assert w2.next_trial_index == 1
    w2.append({"trial_index": 1})
    w2.close()
    rows = read_rows(w2.csv_path)
    assert [r["trial_index"] for r in rows] == ["0", "1"]
    meta = json.loads(w2.json_path.read_text())
    assert meta["resumes"][0]["from_trial"] == 1 and meta["resumes"][0]["previous_status"] == "aborted"


def test_kill_minus_9_loses_no_finished_row(tmp_path):
    """A child process writes rows and is SIGKILLed; every row it finished is on disk."""
    code = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {os.getcwd()!r})
        from experiments.session import SessionWriter
        w = SessionWriter.create({str(tmp_path)!r}, experiment="e", subject_id="S1", session=1,
            subject_kind="model", spec_hash="a", sequence_hash="b", n_trials=10)
        for i in range(5):
            w.append({{"trial_index": i}})
        w._fh.write("half,a,row")  # a write interrupted mid-line
        w._fh.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", code])
    assert proc.returncode == -9
    w = SessionWriter.create(tmp_path, experiment="e", subject_id="S1", session=1, subject_kind="model",
                             spec_hash="a", sequence_hash="b", n_trials=10, resume=True)
    assert w.next_trial_index == 5
    assert w.meta["resumes"][0]["dropped_partial_line"] is True
    assert w.meta["resumes"][0]["previous_status"] == "running"


def test_bad_subject_id_is_named(tmp_path):
    with pytest.raises(SessionError, match="letters and digits"):
        make(tmp_path, subject_id="S_01")


def test_write_failure_names_the_file_and_keeps_rows(tmp_path):
    w = make(tmp_path)
    w.append({"trial_index": 0})

    class FullDisk:
        def write(self, _):
            raise OSError(28, "No space left on device")

        def fileno(self):
            return 0

        def flush(self):
            pass

    real = w._fh
    w._fh = FullDisk()  # type: ignore[assignment]
    with pytest.raises(SessionError, match=r"No space left on device.*1 trial\(s\) already written are safe"):
        w.append({"trial_index": 1})
    w._fh = real
    w.close("crashed")
    assert len(read_rows(w.csv_path)) == 1


def test_context_manager_marks_aborted_on_keyboard_interrupt(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with make(tmp_path) as w:
            w.append({"trial_index": 0})
            raise KeyboardInterrupt
    meta = json.loads(w.json_path.read_text())
    assert meta["status"] == "aborted" and meta["n_trials_written"] == 1


def test_a_hard_linked_table_is_never_appended_to(tmp_path):
    """A session table with another name (a `cp -l` snapshot) is refused on resume, both names untouched:
    appending would change the snapshot too. A plain copy resumes."""
    w = make(tmp_path)
    w.append({"trial_index": 0})
    w.close("aborted")
    table = session_paths(tmp_path, "lakretz2021_nested", "S01", 1)[0]
    snapshot = tmp_path / "snapshot.csv"
    os.link(table, snapshot)
    before = table.read_bytes()
    with pytest.raises(SessionError, match=r"has 2 names \(hard links\)"):
        make(tmp_path, resume=True)
    assert table.read_bytes() == snapshot.read_bytes() == before
    snapshot.unlink()
    w2 = make(tmp_path, resume=True)
    w2.append({"trial_index": 1})
    w2.close()
    assert len(read_rows(table)) == 2
