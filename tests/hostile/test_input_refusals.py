"""Hostile or broken input is refused before any work, as one line naming the file, field
or line, exit 2, no traceback, nothing written. Every case runs the real `twinlab` command."""
from __future__ import annotations

import csv
import os
import time
from pathlib import Path

import pytest
from cli_refusal import refused, tree, twinlab

from experiments.spec import bundled_spec_path
from stimuli.files import StimulusFileError, load_items, save_items
from studies.lakretz2021.stimuli.generate import generate_items

SPEC_TEXT = bundled_spec_path("lakretz2021_nested").read_text(encoding="utf-8")
BOMB = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{chr(98 + k)}: &{chr(98 + k)} [{', '.join(['*' + chr(97 + k)] * 9)}]\n" for k in range(8))


def items_file(tmp_path: Path, edit=None, name: str = "items.csv") -> Path:
    """A valid stimulus file from the generator, then `edit(rows)` on its rows (header first)."""
    p = tmp_path / name
    save_items(generate_items("long_nested", "test", 2, 1), p)
    with open(p, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    if edit is not None:
        edit(rows)
    with open(p, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    return p


def spec_on(tmp_path: Path, stim: Path) -> Path:
    p = tmp_path / "spec.yaml"
    text = SPEC_TEXT.replace("  generator: nested_agreement\n", "", 1)  # a file replaces the generator
    p.write_text(text.replace("stimuli:\n", f"stimuli:\n  file: {stim}\n", 1)
                 if "stimuli:\n" in text else text + f"stimuli:\n  file: {stim}\n", encoding="utf-8")
    return p


def col(rows, name):
    return rows[0].index(name)


# ---- stimulus files (stimuli/files.py) --------------------------------------------------------
def test_the_unedited_items_file_loads(tmp_path):
    assert len(load_items(items_file(tmp_path))) == 16


def test_duplicated_header_column_is_refused(tmp_path):
    p = items_file(tmp_path, lambda rows: [r.append(r[col(rows, "inner_index")]) for r in rows])
    rows_header = p.read_text().splitlines()[0]
    assert rows_header.count("inner_index") == 2
    with pytest.raises(StimulusFileError, match=r"items.csv: line 1: column\(s\) 'inner_index' appear twice"):
        load_items(p)


def test_index_written_with_an_underscore_is_not_read_as_a_number(tmp_path):
    assert int("0_3") == 3  # what the reader did before

    def edit(rows):
        rows[2][col(rows, "inner_index")] = "0_" + rows[2][col(rows, "inner_index")]
    with pytest.raises(StimulusFileError, match=r"line 3: inner_index '0_\d+' is not an integer"):
        load_items(items_file(tmp_path, edit))


def test_filler_word_equal_to_the_grammatical_word_is_refused(tmp_path):
    def edit(rows):
        words = rows[1][col(rows, "sentence")].split()
        rows[1][col(rows, "filler_index")] = "1"
        rows[1][col(rows, "filler_word")] = words[1]
    with pytest.raises(StimulusFileError, match=r"line 2: filler_word '\w+' is the word at filler_index 1 itself"):
        load_items(items_file(tmp_path, edit))


def test_item_lacking_a_dependency_the_other_items_of_its_structure_have(tmp_path):
    def edit(rows):
        rows[4][col(rows, "outer_index")] = ""
        rows[4][col(rows, "outer_alternative")] = ""
    with pytest.raises(StimulusFileError, match=r"line 5: outer_index is empty but other items of structure "
                                                r"'long_nested'"):
        load_items(items_file(tmp_path, edit))


def test_condition_of_the_wrong_length_for_its_structure(tmp_path):
    def edit(rows):
        rows[3][col(rows, "condition")] = "PS"
    with pytest.raises(StimulusFileError, match=r"line 4: condition 'PS' has 2 letter\(s\) but structure 'long_nested' "
                                                r"has 3 nouns"):
        load_items(items_file(tmp_path, edit))

    def own_structure(rows):  # a structure of the file's own: its items agree with its first
        for r in rows[1:]:
            r[col(rows, "structure")] = "mine"
        rows[5][col(rows, "condition")] = "PSPS"
    with pytest.raises(StimulusFileError, match=r"line 6: condition 'PSPS' has 4 letter\(s\) but structure 'mine' has "
                                                r"3 on line 2"):
        load_items(items_file(tmp_path, own_structure))


def test_a_broken_stimulus_file_refuses_the_spec_on_the_command_line(tmp_path):
    stim = items_file(tmp_path, lambda rows: rows[2].__setitem__(col(rows, "inner_index"), "0_3"))
    out = tmp_path / "plan.csv"
    refused("plan", str(spec_on(tmp_path, stim)), "-s", "S1", "--out", str(out),
            match=["stimuli.file", "items.csv", "line 3", "inner_index '0_3'"])
    assert not out.exists()


# ---- YAML ------------------------------------------------------------------------------------
def test_yaml_alias_bomb_is_refused_at_once(tmp_path):
    p = tmp_path / "bomb.yaml"
    p.write_text(BOMB, encoding="utf-8")
    t0 = time.monotonic()
    refused("validate", str(p), match=["bomb.yaml", "more than 100000 YAML nodes"])
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(BOMB, encoding="utf-8")
    refused("sweep", str(sweep), match=["sweep.yaml", "alias bomb"])
    assert time.monotonic() - t0 < 20  # two interpreter starts; the bomb itself expands to 387 million nodes


def test_yaml_merge_keys_are_standard_yaml(tmp_path):
    p = tmp_path / "merge.yaml"
    p.write_text(SPEC_TEXT.replace("timing:\n", "timing:\n  <<: &t {fixation_ms: 500, panel_delay_ms: 1000}\n", 1),
                 encoding="utf-8")
    r = twinlab("validate", str(p))
    assert r.returncode == 0, r.stderr
    from experiments.spec import load_spec
    timing = load_spec(p).timing
    assert (timing.panel_delay_ms, timing.fixation_ms) == (1000, 600)  # merged; the explicit key wins (standard YAML)
    # a key written twice is still refused
    p.write_text(SPEC_TEXT.replace("timing:\n", "timing:\n  fixation_ms: 500\n", 1), encoding="utf-8")
    refused("validate", str(p), match="'fixation_ms' appears twice")


# ---- input paths ------------------------------------------------------------------------------
def test_fifo_and_device_as_spec_or_stimulus_file_do_not_hang(tmp_path):
    fifo = tmp_path / "fifo_spec.yaml"
    os.mkfifo(fifo)
    refused("validate", str(fifo), match=[str(fifo), "is a pipe (FIFO)"], timeout=20)
    refused("validate", "/dev/zero", match=["/dev/zero", "is a device"], timeout=20)
    stim_fifo = tmp_path / "items.csv"
    os.mkfifo(stim_fifo)
    refused("plan", str(spec_on(tmp_path, stim_fifo)), "-s", "S1",
            match=["stimuli.file", "items.csv", "is a pipe (FIFO)"], timeout=20)
    sweep_fifo = tmp_path / "sweep.yaml"
    os.mkfifo(sweep_fifo)
    refused("sweep", str(sweep_fifo), match=["sweep.yaml", "is a pipe (FIFO)"], timeout=20)


def test_spec_path_never_falls_back_to_a_bundled_spec(tmp_path):
    missing = tmp_path / "lakretz2021_nested.yaml"
    refused("validate", str(missing), match=f"spec file '{missing}' does not exist")
    refused("plan", "lakretz2021_nested.yaml", "-s", "S1", cwd=tmp_path,
            match="spec file 'lakretz2021_nested.yaml' does not exist")
    # a bare name is a bundled spec ...
    assert twinlab("validate", "lakretz2021_nested", cwd=tmp_path).returncode == 0
    refused("validate", "no_such_spec", cwd=tmp_path, match=["no bundled spec of that name", "lakretz2021_nested"])
    # ... unless a file of that name lies here too: ambiguous, refused
    (tmp_path / "lakretz2021_nested").write_text(SPEC_TEXT, encoding="utf-8")
    refused("validate", "lakretz2021_nested", cwd=tmp_path, match="write ./lakretz2021_nested for the file")
    assert twinlab("validate", "./lakretz2021_nested", cwd=tmp_path).returncode == 0


# ---- sweep: every job checked before the first runs ---------------------------------------------
SWEEP = "spec: lakretz2021_nested\nout: out\nmodels: [smollm2]\ncontexts: [none]\nsubjects: 2\ntrials: 3\n"


@pytest.mark.parametrize("change, match", [
    (("subjects: 2", "subjects: 0"), "field 'subjects' must be from 1 to 10000, got 0"),
    (("[smollm2]", "[smollm2, {model: smollm2, threads: -5, label: "
                   "b}]"), "field 'models.1.threads' must be from 0 to 1024, got -5"),
    (("[smollm2]", "[smollm2, {model: smollm2, device: tpu, label: b}]"), "field 'models.1.device' must be cpu, cuda"),
    (("[smollm2]", "[smollm2, {model: smollm2, dtype: int3, label: b}]"), "field 'models.1.dtype' must be one of"),
    (("[smollm2]", "[smollm2, {model: smollm2, label: b}, {model: smollm2, label: "
                   "b}]"), "entries 1 and 2 both write to 'b'"),
    (("[smollm2]", "[smollm2, {model: smollm2}]"), "entries 0 and 1 both write to 'smollm2'"),
    (("[smollm2]", "[{model: smollm2, label: ..}]"), "field 'models.0.label' '..' must be one folder name"),
    (("[smollm2]", "[{model: smollm2, label: a/b}]"), "field 'models.0.label' 'a/b' must be one folder name"),
    (("[smollm2]", "[smollm2, "
                   "./no_such_model]"), "field 'models.1.model': model path './no_such_model' does not exist"),
    (("contexts: [none]", "contexts: [none, 'fewshot:nope']"), "unknown prompt set 'nope'"),
    (("contexts: [none]", "contexts: [none, none]"), "field 'contexts': entries 0 and 1 both write to 'none'"),
    (("spec: lakretz2021_nested", "spec: ./missing.yaml"), "field 'spec': spec file './missing.yaml' does not exist"),
])
def test_sweep_refuses_a_bad_job_before_any_runs(tmp_path, change, match):
    p = tmp_path / "sweep.yaml"
    p.write_text(SWEEP.replace(*change), encoding="utf-8")
    refused("sweep", str(p), match=["sweep.yaml", match])
    assert tree(tmp_path) == {"sweep.yaml": p.read_bytes()}  # nothing ran, nothing written


def test_sweep_model_folder_without_weights_says_so(tmp_path):
    model = tmp_path / "halfsaved"
    model.mkdir()
    (model / "config.json").write_text("{}", encoding="utf-8")
    (model / "tokenizer.json").write_text("{}", encoding="utf-8")
    p = tmp_path / "sweep.yaml"
    p.write_text(SWEEP.replace("[smollm2]", f"[smollm2, {model}]"), encoding="utf-8")
    refused("sweep", str(p), match=["field 'models.1.model'", "config.json but no weights"])
    refused("run-model", "lakretz2021_nested", "--model", str(model), "--out", str(tmp_path / "o"),
            match=["--model", "halfsaved", "no weights"])
    assert not (tmp_path / "out").exists() and not (tmp_path / "o").exists()


def test_sweep_executor_slurm_without_slurm_or_with_a_bad_parameter(tmp_path):
    p = tmp_path / "sweep.yaml"
    p.write_text(SWEEP + "slurm: {timeout_min: 10, gpus_per_node: 1}\n", encoding="utf-8")
    import shutil
    if shutil.which("sbatch") is None:
        refused("sweep", str(p), "--executor", "slurm", match="Slurm is not available here (no sbatch on PATH)")
    p.write_text(SWEEP + "slurm: {timeout_min: 10, partiton: gpu}\n", encoding="utf-8")
    refused("sweep", str(p), "--executor", "slurm", match="field 'slurm.partiton': not a submitit/Slurm parameter")
    p.write_text(SWEEP + "slurm: {timeout_min: -1}\n", encoding="utf-8")
    refused("sweep", str(p), "--executor", "submitit-local", match="field 'slurm.timeout_min': must be a positive "
                                                                   "number")
    refused("sweep", str(p), "--executor", "pbs", match="--executor must be local, slurm or submitit-local")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("opts, match", [
    (["--threads", "-5"], "--threads must be from 0 to 1024, got -5"),
    (["--device", "tpu"], "--device must be cpu, cuda"),
    (["--subjects", "0"], "--subjects must be from 1 to 10000, got 0"),
])
def test_run_model_applies_the_same_rules(tmp_path, opts, match):
    refused("run-model", "lakretz2021_nested", "--out", str(tmp_path / "o"), *opts, match=match)
    assert not (tmp_path / "o").exists()


# ---- reproduce: inputs checked before anything is written ---------------------------------------
def test_reproduce_refuses_bad_inputs_before_writing(tmp_path):
    out = tmp_path / "repro"
    latin1 = tmp_path / "pairs.jsonl"
    latin1.write_bytes('{"sentence_good": "The cat sleeps .", "sentence_bad": "The cat sle\u00e9p '
                       '."}\n'.encode("latin-1"))
    refused("reproduce", "hu-levy2023", "--out", str(out), "--pairs", str(latin1), "--no-agreement",
            match=["--pairs", "pairs.jsonl", "line 1, column 67: byte 0xe9 is not UTF-8"])
    refused("reproduce", "hu-levy2023", "--out", str(out), "--pairs", str(tmp_path), "--no-agreement",
            match=["--pairs", str(tmp_path), "is a folder"])
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    refused("reproduce", "hu-frank2024", "--out", str(out), "--pairs", str(fifo), match="is a pipe (FIFO)", timeout=20)
    refused("reproduce", "lampinen2024", "--out", str(out), "--items", str(tmp_path / "missing.csv"),
            match="--items " + str(tmp_path / "missing.csv") + ": does not exist")
    broken = items_file(tmp_path, lambda rows: rows[2].__setitem__(col(rows, "inner_index"), "0_3"))
    refused("reproduce", "lampinen2024", "--out", str(out), "--items", str(broken), match=["items.csv", "line 3"])
    refused("reproduce", "lampinen2024", "--out", str(out), "--humans", str(tmp_path / "nobody"),
            match="--humans")
    refused("reproduce", "hu-frank2024", "--out", str(out), "--model", "smollm2", "--model", "smollm2",
            match="both write to 'smollm2'")
    refused("reproduce", "hu-levy2023", "--out", str(out), "--threads", "-5", match="--threads must be from 0 to 1024")
    # a model given as ./folder is fine (its folder name '._mdl' stays inside --out): the next check speaks
    (tmp_path / "mdl").mkdir()
    (tmp_path / "mdl" / "config.json").write_text("{}")
    (tmp_path / "mdl" / "model.safetensors").write_bytes(b"")
    refused("reproduce", "lampinen2024", "--out", str(out), "--model", "./mdl", "--items", "missing.csv",
            cwd=tmp_path, match="--items missing.csv: does not exist")
    assert not out.exists()


def test_reproduce_header_only_human_results_refused_before_writing(tmp_path):
    from test_never_overwrite import SAMPLE

    f = tmp_path / "results.csv"
    f.write_text(SAMPLE.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    refused("reproduce", "lampinen2024", "--out", str(tmp_path / "r"), "--humans", str(f), "-n", "1", "-q",
            match=["--humans", "results.csv"])
    assert not (tmp_path / "r").exists()  # no stimuli written before the refusal


def test_reproduce_huge_items_per_condition_is_refused_at_once(tmp_path):
    t0 = time.monotonic()
    refused("reproduce", "lampinen2024", "--out", str(tmp_path / "r"), "--items-per-condition", "1000000000",
            match="--items-per-condition must be from 1 to 10000", timeout=30)
    assert time.monotonic() - t0 < 30 and not (tmp_path / "r").exists()


# ---- output folders and the display -------------------------------------------------------------
def test_read_only_out_is_refused_before_work(tmp_path):
    """Root may write anywhere, so the commands run as the unprivileged user `nobody` (a real
    read-only folder, not a simulated one)."""
    import pwd
    import shutil
    import subprocess
    import sys
    import tempfile

    from cli_refusal import ROOT

    as_nobody: list[str] = []
    if os.geteuid() == 0:  # else: already unprivileged, the read-only folder is read-only for us
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv (util-linux) to drop privileges")
        uid = pwd.getpwnam("nobody").pw_uid
        as_nobody = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    base = Path(tempfile.mkdtemp(prefix="twinlab-ro-"))
    try:
        base.chmod(0o755)
        ro = base / "ro"
        ro.mkdir(mode=0o555)
        ro.chmod(0o555)
        cases = [(["run-model", "lakretz2021_nested", "--out", str(ro / "sessions")], "is not writable"),
                 (["plan", "lakretz2021_nested", "-s", "S1", "--out", str(ro / "p.csv")], f"--out {ro / 'p.csv'}: {ro} "
                                                                                          "is not writable"),
                 (["stimuli", "generate", "--out", str(ro / "i.csv"), "--per-condition", "2"], "is not writable"),
                 (["analyze", str(ro), "--out", str(ro / "results"), "--no-mixed"], "is not writable")]
        for args, match in cases:
            r = subprocess.run([*as_nobody, sys.executable, "-c", "from experiments.cli import app; app()", *args],
                               cwd=base,
                               env={**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(base), "COLUMNS": "400"},
                               capture_output=True, text=True, timeout=60)
            assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
            assert match in r.stderr and r.stderr.count("\n") == 1, r.stderr
        assert list(ro.iterdir()) == []
    finally:
        ro.chmod(0o755)
        shutil.rmtree(base)


def test_out_or_screenshots_that_is_a_file(tmp_path):
    f = tmp_path / "a_file"
    f.write_text("x")
    refused("run-model", "lakretz2021_nested", "--out", str(f), match=f"--out {f} is a file, not a folder")
    refused("run-human", "lakretz2021_nested", "--participant", "autopilot1", "--autopilot", "--trials", "1",
            "--out", str(tmp_path / "o"), "--screenshots", str(f), match=f"--screenshots {f} is a file, not a folder")
    refused("plan", "lakretz2021_nested", "-s", "S1", "--out", str(f / "p.csv"), match=f"{f} is a file, not a folder")
    assert not (tmp_path / "o").exists() and f.read_text() == "x"


def test_run_human_without_a_display_leaves_no_session(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    import subprocess
    import sys

    from cli_refusal import ROOT
    for display in (None, ":987"):
        e = dict(env, PYTHONPATH=str(ROOT), COLUMNS="400", **({"DISPLAY": display} if display else {}))
        r = subprocess.run([sys.executable, "-c", "from experiments.cli import app; app()", "run-human",
                            "lakretz2021_nested", "--participant", "P1", "--out", str(tmp_path / "o")],
                           env=e, capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and "Traceback" not in r.stderr and r.stderr.count("\n") == 1, r.stderr
        assert "no display" in r.stderr and "nothing was written" in r.stderr
        assert not (tmp_path / "o").exists()  # no session, so none marked crashed


def test_fifo_or_device_as_data_or_lakretz_text_input(tmp_path):
    fifo = tmp_path / "results.csv"
    os.mkfifo(fifo)
    refused("analyze", str(fifo), "--out", str(tmp_path / "o"), "--no-mixed", match=[str(fifo), "is a pipe "
                                                                                                "(FIFO)"], timeout=20)
    refused("analyze", "/dev/zero", "--out", str(tmp_path / "o"), "--no-mixed", match="/dev/zero: is a "
                                                                                      "device", timeout=20)
    gold = tmp_path / "x.gold"
    gold.write_text("8\tare\tis\tx\n")
    refused("stimuli", "import", "lakretz-text", str(fifo), "--gold", str(gold), "--out", str(tmp_path / "i.csv"),
            match="is a pipe (FIFO)", timeout=20)
    refused("stimuli", "import", "lakretz-text", str(tmp_path), "--gold", str(gold), "--out", str(tmp_path / "i.csv"),
            match=f"{tmp_path}: is a folder", timeout=20)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.csv", "x.gold"]


def test_run_human_whose_window_cannot_open_says_nothing_was_written(tmp_path):
    """A display that exists but answers nothing (a socket that closes every connection): the
    window fails before the session is created, so no session is claimed to have crashed."""
    import socket
    import subprocess
    import sys
    import threading

    from cli_refusal import ROOT

    xdir = Path("/tmp/.X11-unix")
    if not xdir.is_dir():
        pytest.skip("no /tmp/.X11-unix")
    number = next(n for n in range(4242, 4342) if not (xdir / f"X{n}").exists())
    path = xdir / f"X{number}"
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(path))
    srv.listen(8)
    stop = threading.Event()

    def refuse_all() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                srv.accept()[0].close()
            except OSError:
                continue

    t = threading.Thread(target=refuse_all, daemon=True)
    t.start()
    try:
        env = {k: v for k, v in os.environ.items() if k != "WAYLAND_DISPLAY"}
        env.update(DISPLAY=f":{number}", PYTHONPATH=str(ROOT), COLUMNS="400")
        r = subprocess.run([sys.executable, "-c", "from experiments.cli import app; app()", "run-human",
                            "lakretz2021_nested", "--participant", "P1", "--out", str(tmp_path / "o")],
                           env=env, capture_output=True, text=True, timeout=120)
    finally:
        stop.set()
        t.join()
        srv.close()
        path.unlink()
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "could not start the session" in r.stderr and "nothing was written" in r.stderr
    assert "crashed" not in r.stderr and not list((tmp_path / "o").rglob("*_data.*"))
