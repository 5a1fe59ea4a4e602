"""`twinlab sweep`: models x contexts x protocols x subjects from YAML, resumable, local and via submitit."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from model_subjects.sweep import SweepError, cell_done, cells, load_sweep, run_sweep

ROOT = Path(__file__).resolve().parents[2]

SWEEP = """\
spec: lakretz2021_nested
out: out
models: [smollm2]
contexts: [none, "fewshot:twoshot"]
protocols: [forced_choice]
subjects: {count: 2, prefix: s}
trials: 3
"""


def _write(tmp_path: Path, text: str = SWEEP) -> Path:
    p = tmp_path / "sweep.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "experiments.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})


def test_cells_and_folders(tmp_path):
    sweep, out = load_sweep(_write(tmp_path, SWEEP.replace("[smollm2]", "[smollm2, {model: org/big, label: big}]")))
    cs = cells(sweep, out)
    assert len(cs) == 2 * 2 * 1
    assert out == tmp_path / "out"
    assert {c.out.relative_to(out).parts[0] for c in cs} == {"smollm2", "big"}
    assert cs[1].out.relative_to(out).parts[1:] == ("fewshot_twoshot", "forced_choice")
    assert not any(cell_done(sweep, c) for c in cs)


@pytest.mark.parametrize("text, field", [
    (SWEEP.replace("models: [smollm2]", "models: []"), "models"),
    (SWEEP.replace("trials: 3", "trials: 0"), "trials"),
    (SWEEP + "colour: red\n", "colour"),
    (SWEEP.replace("models: [smollm2]", "models: [{model: x, batch_size: -3}]"), "models.0"),
])
def test_bad_sweep_files_name_the_field(tmp_path, text, field):
    with pytest.raises(SweepError, match=f"sweep.yaml: field '{field}"):
        load_sweep(_write(tmp_path, text))


def test_cli_bad_file_exit_2_without_traceback(tmp_path):
    p = _write(tmp_path, SWEEP.replace("trials: 3", "trials: many"))
    r = _cli("sweep", str(p))
    assert r.returncode == 2 and "field 'trials'" in r.stderr and "Traceback" not in r.stderr
    r = _cli("sweep", str(tmp_path / "missing.yaml"))
    assert r.returncode == 2 and "no such sweep file" in r.stderr
    r = _cli("sweep", str(_write(tmp_path)), "--dry-run")
    assert r.returncode == 0 and r.stdout.count("pending") == 2


@pytest.mark.model
@pytest.mark.slow
def test_local_sweep_runs_every_cell_then_skips_finished_ones(tmp_path):
    p = _write(tmp_path)
    first = run_sweep(p, "local")
    assert len(first[0]["ran"]) == 2 and first[0]["trials_run"] == 2 * 2 * 3
    sweep, out = load_sweep(p)
    for c in cells(sweep, out):
        assert cell_done(sweep, c)
        side = json.loads(next(c.out.rglob("*subject-s02*_data.json")).read_text())
        assert side["context_mode"].startswith(c.context.split(":")[0]) and side["protocol"] == "forced_choice"
    # everything finished: nothing runs (the model is not even loaded)
    again = run_sweep(p, "local")
    assert again[0] == {"model_index": 0, "skipped": 2, "ran": [], "trials_run": 0}
    # raising `trials` continues the same sessions from their next trial
    p.write_text(SWEEP.replace("trials: 3", "trials: 4"), encoding="utf-8")
    more = run_sweep(p, "local")
    assert more[0]["trials_run"] == 2 * 2 * 1


@pytest.mark.model
@pytest.mark.slow
def test_submitit_local_executor_one_job_per_model(tmp_path):
    pytest.importorskip("submitit")
    p = _write(tmp_path, SWEEP.replace('[none, "fewshot:twoshot"]', "[none]").replace("trials: 3", "trials: 2"))
    reports = run_sweep(p, "submitit-local")
    assert len(reports) == 1 and reports[0]["trials_run"] == 2 * 2
    sweep, out = load_sweep(p)
    assert all(cell_done(sweep, c) for c in cells(sweep, out))
    assert list((out / "submitit").glob("*_result.pkl"))  # it really went through submitit


def test_a_cell_of_a_later_session_is_done_when_that_sessions_trials_are_written(tmp_path):
    """cell_done counts the sweep's own session (lakretz2021_replication: 310 trials in session 1, 270 in
    session 2; counted against session 1 a finished session 2 looked unfinished and was run again)."""
    from experiments.design_compiler import compile_sequence
    from experiments.session import session_paths
    from experiments.spec import load_spec

    text = SWEEP.replace("lakretz2021_nested", "lakretz2021_replication").replace("trials: 3", "session: 2")
    sweep, out = load_sweep(_write(tmp_path, text.replace("subjects: {count: 2, prefix: s}", "subjects: 1")))
    cell = cells(sweep, out)[0]
    exp = load_spec("lakretz2021_replication")
    n2 = len(compile_sequence(exp, "m01", session=2))
    assert n2 != len(compile_sequence(exp, "m01", session=1))  # the two sessions differ in length
    side = session_paths(cell.out, exp.name, "m01", 2)[1]
    side.parent.mkdir(parents=True)
    for written, done in ((n2 - 1, False), (n2, True)):
        side.write_text(json.dumps({"status": "completed", "n_trials_written": written}), encoding="utf-8")
        assert cell_done(sweep, cell) is done
