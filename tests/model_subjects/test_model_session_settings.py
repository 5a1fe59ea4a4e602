"""Model sessions: a finished session re-run with other settings is refused naming each difference;
a resume checks the rows it keeps against the compiled sequence (real bundled model, 2-4 trials)."""
from __future__ import annotations

import csv
import io
import json

import pytest

pytestmark = [pytest.mark.model, pytest.mark.slow]

torch = pytest.importorskip("torch")

from experiments.session import SessionError, read_rows, session_paths  # noqa: E402
from experiments.spec import load_spec  # noqa: E402
from model_subjects.backends.registry import load_backend  # noqa: E402
from model_subjects.runner import RunConfig, RunError, Runner  # noqa: E402

SPEC = "lakretz2021_nested"


@pytest.fixture(scope="module")
def backend():
    return load_backend(None, threads=1)


def run(backend, out, **kw):
    return Runner(RunConfig(spec=SPEC, out=out, **kw), backend).run()


@pytest.mark.parametrize("change, named", [
    ({"seed": 7}, ", 7 now; sequence_hash"),
    ({"context": "fewshot:twoshot"}, "context_mode"),
    ({"protocol": "direct"}, "protocol"),
])
def test_finished_session_with_other_settings_is_refused_naming_the_difference(backend, tmp_path, change, named):
    base = {"trials": 2, "protocol": "forced_choice"}
    run(backend, tmp_path, **base)
    csv_path, json_path = session_paths(tmp_path, load_spec(SPEC).name, "m01", 1)
    before = (csv_path.read_bytes(), json_path.read_bytes())
    assert run(backend, tmp_path, **base).trials_run == 0  # same settings: skipped
    with pytest.raises(RunError) as err:
        run(backend, tmp_path, **{**base, **change})
    msg = str(err.value)
    assert named in msg and str(json_path) in msg
    if "seed" in change:
        assert f"seed: {json.loads(before[1])['seed']!r} there, 7 now" in msg
    assert (csv_path.read_bytes(), json_path.read_bytes()) == before  # nothing touched


def test_resume_refuses_a_table_whose_rows_are_not_the_sequence(backend, tmp_path):
    run(backend, tmp_path, trials=3, protocol="forced_choice")
    csv_path, json_path = session_paths(tmp_path, load_spec(SPEC).name, "m01", 1)
    text = csv_path.read_text()
    rows = list(csv.reader(io.StringIO(text)))
    rows[2][rows[0].index("item_id")] = "spliced-item"  # row 2 (line 3) from another sequence
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    csv_path.write_text(buf.getvalue())
    before = csv_path.read_bytes()
    with pytest.raises(SessionError, match=r"line 3 \(row 2\): item_id is 'spliced-item'"):
        run(backend, tmp_path, trials=5, protocol="forced_choice")
    assert csv_path.read_bytes() == before
    assert json.loads(json_path.read_text())["status"] == "completed"  # the refusal left the sidecar alone
    assert len(read_rows(csv_path)) == 3


def test_a_refusal_for_one_subject_changes_no_other_subjects_session(backend, tmp_path):
    run(backend, tmp_path, subjects=2, trials=2, protocol="forced_choice")
    exp = load_spec(SPEC)
    files = [p for sid in ("m01", "m02") for p in session_paths(tmp_path, exp.name, sid, 1)]
    side2 = files[3]
    meta = json.loads(side2.read_text())
    meta["seed"] = 99  # subject 2 was written with another seed
    side2.write_text(json.dumps(meta))
    before = [p.read_bytes() for p in files]
    with pytest.raises(RunError, match="seed: 99 there"):
        run(backend, tmp_path, subjects=2, trials=4, protocol="forced_choice")  # m01 would continue
    assert [p.read_bytes() for p in files] == before  # m01's sidecar not reopened, nothing appended
